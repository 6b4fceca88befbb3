// Active time on a task page: seconds the page was visible and the worker did something in
// the last 30 s. Written into the form's active_time_s field when it is submitted.
(function () {
  var active = 0, lastInput = Date.now(), IDLE_MS = 30000;
  ["mousemove", "mousedown", "keydown", "scroll", "input", "touchstart"].forEach(function (name) {
    document.addEventListener(name, function () { lastInput = Date.now(); }, { passive: true });
  });
  setInterval(function () {
    if (document.visibilityState === "visible" && Date.now() - lastInput < IDLE_MS) active += 1;
  }, 1000);
  document.addEventListener("submit", function (event) {
    var field = event.target.querySelector('input[name="active_time_s"]');
    if (field) field.value = String(active);
  }, true);
})();
