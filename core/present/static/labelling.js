/* ragassay label: keyboard shortcuts of the labelling queue. Number keys give the rubric's values, s skips,
   u undoes the last label, ? shows the keys. Every action is also a button or a link: this only clicks them. */
(function () {
  "use strict";
  var busy = false;
  function click(element) {
    if (element && !busy) { busy = true; element.click(); }
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) { return; }
    var key = event.key;
    if (/^[1-9]$/.test(key)) {
      var button = document.querySelector('#label-form button[data-key="' + key + '"]');
      if (button) { event.preventDefault(); click(button); }
    } else if (key === "s") {
      event.preventDefault(); click(document.getElementById("skip"));
    } else if (key === "u") {
      event.preventDefault(); click(document.getElementById("undo"));
    } else if (key === "?") {
      event.preventDefault();
      var help = document.getElementById("help");
      if (help) { help.hidden = !help.hidden; }
    }
  });
  var link = document.getElementById("help-link");
  if (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      var help = document.getElementById("help");
      help.hidden = !help.hidden;
    });
  }
}());
