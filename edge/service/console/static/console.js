// edge console: the only script. A chosen CSV file is read into the form's text field, so the
// preview is an ordinary form POST (no upload library on the box).
"use strict";
document.querySelectorAll("input[type=file][data-fills]").forEach(function (input) {
  input.addEventListener("change", function () {
    var target = document.getElementById(input.dataset.fills);
    var file = input.files && input.files[0];
    if (!target || !file) { return; }
    file.text().then(function (text) { target.value = text; });
  });
});
