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
})();
