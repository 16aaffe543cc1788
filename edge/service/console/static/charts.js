// edge console: the charts of the History and Status pages, drawn with the vendored uPlot
// (static/vendor/uplot, from the npm registry; no CDN: the box is offline). The data is in the page
// (a <script type="application/json"> the server wrote); each chart is kept in window.edgeCharts
// under its element's id, so a test can read back what was drawn.
"use strict";
window.edgeCharts = {};
(function () {
  if (!window.uPlot) { return; }
  var COLORS = ["#0b5cad", "#c0392b", "#2e8b57", "#8e44ad", "#d35400", "#16a085", "#7f8c8d"];

  function json(id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }
  function width(el) { return Math.max(280, Math.min(el.clientWidth || 320, 1100)); }
  // align -1 / 1: two series of bars side by side at each x (used left of received), 0: centred
  function bars(align) { return uPlot.paths.bars({ size: [align ? 0.4 : 0.7, 40], gap: 1, align: align || 0 }); }

  function draw(el, opts, data) {
    opts.width = width(el);
    opts.height = opts.height || 220;
    opts.legend = { live: false };
    el.textContent = "";
    var chart = new uPlot(opts, data, el);
    window.edgeCharts[el.id] = chart;
    return chart;
  }
  window.addEventListener("resize", function () {
    Object.keys(window.edgeCharts).forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { window.edgeCharts[id].setSize({ width: width(el), height: window.edgeCharts[id].height }); }
    });
  });
  function epoch(iso) { return Date.parse(iso) / 1000; }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  // the History x axis: ticks on whole days only, said as ISO dates (never hours or US dates)
  var DAY_AXIS = {
    incrs: [86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400, 91 * 86400, 182 * 86400, 364 * 86400],
    values: function (u, splits) {
      return splits.map(function (s) {
        var d = new Date(s * 1000);
        return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate());
      });
    },
    space: 70
  };

  // History: used and received per day or week (bars) and the stock at each bucket's end (line).
  var history = json("chart-data");
  var hel = document.getElementById("chart-history");
  if (history && hel && history.buckets.length) {
    var xs = history.buckets.map(function (b) { return epoch(b.start); });
    if (history.sku) {
      var unit = history.unit ? " (" + history.unit + ")" : "";
      draw(hel, {
        title: "Used and received per " + history.by + ", stock at the end of each" + unit,
        scales: { x: { time: true }, stock: { auto: true } },
        series: [{ label: "Start of " + history.by },
          { label: "Used", stroke: COLORS[1], fill: "rgba(192,57,43,0.6)", paths: bars(-1), points: { show: false } },
          { label: "Received", stroke: COLORS[2], fill: "rgba(46,139,87,0.6)", paths: bars(1), points: { show: false } },
          { label: "Stock", stroke: COLORS[0], width: 2, scale: "stock" }],
        axes: [DAY_AXIS, { label: "per " + history.by }, { side: 1, scale: "stock", label: "stock", grid: { show: false } }]
      }, [xs, history.buckets.map(function (b) { return b.used; }),
        history.buckets.map(function (b) { return b.received; }),
        history.buckets.map(function (b) { return b.stock; })]);
    } else {
      draw(hel, {
        title: "Records per " + history.by + (history.location ? " at " + history.location : " (every item") +
          (history.location ? " (" : "; ") + "undone records and undos left out)",
        scales: { x: { time: true } },
        series: [{ label: "Start of " + history.by },
          { label: "Records", stroke: COLORS[0], fill: "rgba(11,92,173,0.4)", paths: bars(), points: { show: false } }],
        axes: [DAY_AXIS, { label: "records" }]
      }, [xs, history.buckets.map(function (b) { return b.records; })]);
    }
  }

  // Status: the ring's samples over the chosen window.
  var board = json("board-data");
  if (!board) { return; }
  var t = board.t;
  function line(id, title, unitLabel, named, range) {
    var el = document.getElementById(id);
    var names = Object.keys(named);
    if (!el || !t.length || !names.length) { return; }
    draw(el, {
      title: title,
      scales: range ? { x: { time: true }, y: { range: range } } : { x: { time: true } },
      series: [{ label: "Time" }].concat(names.map(function (n, i) {
        var s = named[n];
        return { label: n, stroke: s.color || COLORS[i % COLORS.length], width: s.width || 1.5, dash: s.dash,
          spanGaps: false };
      })),
      axes: [{}, { label: unitLabel }]
    }, [t].concat(names.map(function (n) { return named[n].values; })));
  }
  var zones = {};
  Object.keys(board.zones).forEach(function (z) { zones[z] = { values: board.zones[z] }; });
  line("chart-temperature", "Temperature by zone", "°C", zones);
  line("chart-memory", "Memory in use, and where the reserve starts", "MiB", {
    "In use": { values: board.mem_used_mib, color: COLORS[0], width: 2 },
    "Reserve starts": { values: board.reserve_mib, color: COLORS[1], dash: [6, 4] } });
  var load = { "CPU": { values: board.cpu_pct, color: COLORS[0] } };
  if (board.npu_pct) { load.NPU = { values: board.npu_pct, color: COLORS[3] }; }
  line("chart-load", "Load", "%", load, [0, 100]);
  var tel = document.getElementById("chart-turns");
  if (tel && board.turns_per_hour.length) {
    draw(tel, {
      title: "Turns per hour",
      scales: { x: { time: true } },
      series: [{ label: "Hour" }, { label: "Turns", stroke: COLORS[2], fill: "rgba(46,139,87,0.5)", paths: bars(), points: { show: false } }],
      axes: [{}, { label: "turns" }]
    }, [board.turns_per_hour.map(function (h) { return h.t; }), board.turns_per_hour.map(function (h) { return h.turns; })]);
  }
}());
