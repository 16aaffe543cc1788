// edge console: the only script. A chosen CSV file is sent as its bytes (base64 in a hidden
// field of the ordinary form POST: no upload library on the box), so the box decodes it exactly as
// `edge inventory import` decodes a file.
"use strict";
document.querySelectorAll("input[type=file][data-bytes]").forEach(function (input) {
  input.addEventListener("change", function () {
    var bytes = document.getElementById(input.dataset.bytes);
    var name = document.getElementById(input.dataset.name);
    var file = input.files && input.files[0];
    if (!bytes || !name) { return; }
    bytes.value = "";
    name.value = "";
    if (!file) { return; }
    file.arrayBuffer().then(function (buffer) {
      var b = new Uint8Array(buffer), s = "";
      for (var i = 0; i < b.length; i += 32768) {
        s += String.fromCharCode.apply(null, b.subarray(i, i + 32768));
      }
      bytes.value = btoa(s);
      name.value = file.name;
    });
  });
});

// The Live page: one list entry per turn, filled in as its events arrive (server-sent events).
(function () {
  var state = document.getElementById("live-state");
  var list = document.getElementById("turns");
  if (!state || !list || !window.EventSource) { return; }
  var turns = {};
  function field(li, name, label, text) {
    var p = li.querySelector("[data-field=" + name + "]");
    if (!p) {
      p = document.createElement("p");
      p.dataset.field = name;
      var b = document.createElement("b");
      b.textContent = label + ": ";
      p.appendChild(b);
      p.appendChild(document.createElement("span"));
      li.appendChild(p);
    }
    p.lastChild.textContent = text;
  }
  function turn(id) {
    if (!turns[id]) {
      var li = document.createElement("li");
      li.id = "turn-" + id;
      li.className = "turn";
      var h = document.createElement("h2");
      h.textContent = "Turn " + id;
      li.appendChild(h);
      list.insertBefore(li, list.firstChild);
      turns[id] = li;
    }
    return turns[id];
  }
  var show = {
    wake: function (li, e) { field(li, "wake", "Wake word", e.wake_word + " (" + e.score + ")"); },
    partial: function (li, e) { field(li, "partial", "Hearing", e.text); },
    transcript: function (li, e) { field(li, "transcript", "Heard", e.text); },
    intent: function (li, e) {
      var slots = Object.keys(e.slots).filter(function (k) { return e.slots[k] !== null; })
        .map(function (k) { return k + "=" + e.slots[k]; }).join(", ");
      field(li, "intent", "Meant", e.intent + (slots ? " (" + slots + ")" : "") + ", by " + e.source);
    },
    reply: function (li, e) { field(li, "reply", "Reply", e.text); },
    no_speech: function (li, e) { field(li, "reply", "Reply", "(no speech)"); },
    error: function (li, e) { field(li, "error", "Error in " + e.stage, e.message); },
    turn_end: function (li, e) {
      var parts = Object.keys(e.latency_ms).map(function (k) { return k.replace(/_ms$/, "") + " " + e.latency_ms[k]; });
      field(li, "timings", "Timings (ms)", parts.join(", ") || "—");
    }
  };
  var source = new EventSource(state.dataset.events);
  source.onopen = function () { state.textContent = "Connected: waiting for turns."; };
  source.onerror = function () { state.textContent = "Disconnected: reconnecting…"; };
  source.onmessage = function (m) {
    var e = JSON.parse(m.data);
    if (e.turn_id && show[e.type]) { show[e.type](turn(e.turn_id), e); }
  };
}());
