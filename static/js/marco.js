// The MS MARCO curation page (annotation/templates/annotation/tasks/marco_curate.html).
(function () {
  // Ticking "the passages conflict" moves to the reason, which it makes required.
  var box = document.getElementById("conflict"), reason = document.getElementById("conflict_reason");
  if (box && reason) {
    var sync = function () { reason.required = box.checked; };
    box.addEventListener("change", function () { sync(); if (box.checked) reason.focus(); });
    sync();
  }
})();
