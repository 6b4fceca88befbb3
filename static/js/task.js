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

// Enter submits a form marked data-enter-submits from anywhere but a text area (there
// Ctrl+Enter), a button or a link: "1 then Enter" picks the first answer and sends it.
(function () {
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Enter" || e.defaultPrevented) return;
    var form = document.querySelector("form[data-enter-submits]"), t = e.target;
    if (!form || t.tagName === "BUTTON" || t.tagName === "A") return;
    if (t.tagName === "TEXTAREA" && !(e.ctrlKey || e.metaKey)) return;
    e.preventDefault(); form.requestSubmit();
  });
})();

// A refused submit says what is missing next to the field: the browser's own check of a
// required field shows the message of the field's group (data-missing on the fieldset or
// the control) in a .field-error beside it, instead of a bubble that may not show at all.
(function () {
  function place(control) {
    return control.closest("[data-missing]") || control.closest("fieldset") || control.parentElement;
  }
  document.addEventListener("invalid", function (e) {
    var control = e.target, where = place(control);
    if (!where || !control.form || control.form.id !== "task-form") return;
    e.preventDefault();
    var box = where.querySelector(":scope > .field-error[data-client]");
    if (!box) {
      box = document.createElement("p");
      box.className = "field-error"; box.setAttribute("data-client", "");
      box.setAttribute("role", "alert");
      box.dataset.testid = "client-error-" + control.name;
      where.appendChild(box);
    }
    box.textContent = (where.dataset && where.dataset.missing) || control.dataset.missing ||
      control.validationMessage;
    var first = control.form.querySelector("input:invalid, select:invalid, textarea:invalid");
    if (first === control) control.focus();
  }, true);
  document.addEventListener("change", function (e) {
    var where = e.target.closest && place(e.target);
    var box = where && where.querySelector(":scope > .field-error[data-client]");
    if (box && e.target.checkValidity()) box.remove();
  });
})();
// "g" opens and closes the guidelines (outside text fields).
document.addEventListener("keydown", function (e) {
  if (e.key === "g" && !/^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) && !e.target.isContentEditable) {
    var d = document.querySelector("details.guidelines");
    if (d) d.open = !d.open;
  }
});
