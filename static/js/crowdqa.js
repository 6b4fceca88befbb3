// Behaviour shared by every page (loaded by templates/base.html after htmx). The
// Content-Security-Policy allows no inline script, handler or eval, so it lives here.
(function () {
  // <input data-select-on-click>: a click selects the whole value (links to copy).
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (t instanceof HTMLInputElement && t.hasAttribute("data-select-on-click")) t.select();
  });

  // hx-post on a field with data-hx-own-value sends that field's own value under its
  // name, not the values of every same-named field of its form (htmx includes the form).
  document.addEventListener("htmx:configRequest", function (e) {
    var elt = e.detail.elt;
    if (elt && elt.hasAttribute && elt.hasAttribute("data-hx-own-value") && elt.name) {
      e.detail.parameters[elt.name] = elt.value;
    }
  });

  // The language switch on a task or inspection page: what the worker wrote so far goes
  // with it (config/i18n.language_set keeps it in the session) and the page in the other
  // language shows it again, instead of an empty form.
  document.addEventListener("submit", function (e) {
    var lang = e.target;
    if (!(lang instanceof HTMLFormElement) || !lang.classList.contains("language-switch")) return;
    var form = document.getElementById("task-form") || document.getElementById("inspection-form");
    if (!form) return;
    var data = {};
    new FormData(form).forEach(function (value, key) {
      if (typeof value !== "string" || key === "csrfmiddlewaretoken" || key === "active_time_s") return;
      (data[key] = data[key] || []).push(value);
    });
    var input = lang.querySelector("input[name=unsent_answer]");
    if (!input) {
      input = document.createElement("input");
      input.type = "hidden"; input.name = "unsent_answer";
      lang.appendChild(input);
    }
    input.value = JSON.stringify(data);
  });
})();
