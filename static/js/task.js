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
// Ctrl+Enter), a button, a link or a <summary> (Enter opens the guidelines there, it
// does not send the answer): "1 then Enter" picks the first answer and sends it.
(function () {
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Enter" || e.defaultPrevented) return;
    var form = document.querySelector("form[data-enter-submits]"), t = e.target;
    if (!form || /^(BUTTON|A|SUMMARY|SELECT)$/.test(t.tagName) || t.isContentEditable) return;
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

// A worker at work keeps their task: while they do something on the page, it renews the
// task's lease (every third of it), so the answer they are writing is not refused as late.
// A page left alone lets the lease run out and the task go back to the pool. When the
// task cannot be kept (its time ran out, it was released, the session ended) the page
// says so at once, before the worker writes more.
(function () {
  var lease = document.getElementById("task-lease"), box = document.getElementById("lease-lost");
  if (!lease || !box) return;
  var gettext = window.gettext || function (s) { return s; };
  var interpolate = window.interpolate || function (f, a) { return f.replace("%s", a[0]); };
  // renewed every `every` ms; the first time sooner when the lease is half gone already
  var every = parseInt(lease.dataset.renewS, 10) * 1000, lastInput = 0, pending = false;
  var renewed = Date.now() - every + parseInt(lease.dataset.firstS, 10) * 1000;
  ["mousemove", "mousedown", "keydown", "scroll", "input", "touchstart"].forEach(function (name) {
    document.addEventListener(name, function () { lastInput = Date.now(); }, { passive: true });
  });
  function lost(text) {
    box.textContent = text; box.hidden = false; clearInterval(timer);
  }
  function renew() {
    // not due yet, nothing done since the last renewal, or one still on its way (a slow
    // server: its answer has not set `renewed` yet, so this tick would send a second)
    if (pending || Date.now() - renewed < every || lastInput <= renewed) return;
    var sent = Date.now(), token = "";
    try { token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"]; }
    catch (err) { token = ""; }
    pending = true;
    fetch(lease.dataset.renewUrl, {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRFToken": token, "Accept": "application/json" },
    }).then(function (response) {
      pending = false;
      if (response.ok && !response.redirected) { renewed = sent; return; }
      if (response.redirected) {  // to the login page: the session ended
        lost(gettext("You have been logged out: this answer cannot be saved. Log in again to go on working."));
      } else if (response.status === 409) {
        response.json().then(function (data) {
          lost(interpolate(gettext("This answer can no longer be saved: %s."), [data.error]));
        });
      }
    }).catch(function () { pending = false; /* offline for now: the next tick tries again */ });
  }
  var timer = setInterval(renew, Math.min(every, 15000));
})();

// A reload does not lose the answer being written (a phone reloads a tab it had put away,
// a finger pulls to refresh, F5): as the worker types, the task form's text fields are kept
// in this tab's sessionStorage, and when the same task page loads again with those fields
// as the server sent them, they are filled in again. So are the hidden fields marked
// data-draft that hold a selection (NewsQA's answer spans, ReCO's evidence): the page's
// selection script sends "input" when the worker changes it, and gets "change" on them
// when they were filled in again, to show the selection. One task's at a time, in this tab
// only; typing on another task page replaces it.
(function () {
  var form = document.getElementById("task-form"), KEY = "crowdqa-unsent-answer";
  if (!form || form.closest("fieldset[disabled]")) return;
  var here = location.pathname, store;
  try { store = window.sessionStorage; store.getItem(KEY); } catch (err) { return; }
  function fields() {
    return Array.prototype.filter.call(form.elements, function (f) {
      return f.name && (f.tagName === "TEXTAREA" || (f.tagName === "INPUT" && (f.type === "text" ||
        (f.type === "hidden" && f.hasAttribute("data-draft")))));
    });
  }
  var kept = null;
  try { kept = JSON.parse(store.getItem(KEY) || "null"); } catch (err) { kept = null; }
  if (kept && kept.path === here && kept.values) {
    var seen = {}, selections = [];
    fields().forEach(function (f) {
      var n = seen[f.name] || 0, values = kept.values[f.name];
      seen[f.name] = n + 1;
      var value = values && values[n];
      if (typeof value === "string" && value !== f.value && f.value === f.defaultValue) {
        f.value = value;
        if (f.type === "hidden") selections.push(f);
        else f.dispatchEvent(new Event("input", { bubbles: true }));  // its live checks run
      }
    });
    // all of a selection's fields are back before its script reads them
    selections.forEach(function (f) { f.dispatchEvent(new Event("change", { bubbles: true })); });
  }
  form.addEventListener("input", function () {
    var values = {};
    fields().forEach(function (f) { (values[f.name] = values[f.name] || []).push(f.value); });
    try { store.setItem(KEY, JSON.stringify({ path: here, values: values })); } catch (err) { /* full */ }
  });
})();
