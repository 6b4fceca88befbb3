// Span selection over the article's word tokens, by mouse or keyboard. Each token carries
// its exact character offsets (data-s, data-e) so a span is [first token's s, last's e].
(function () {
  var gettext = window.gettext || function (s) { return s; };  // i18n/catalog.js (base.html)
  var article = document.getElementById("article");
  var tokens = Array.prototype.slice.call(article.querySelectorAll(".tok"));
  var payload = document.getElementById("payload");
  var list = document.getElementById("spans");
  var empty = document.getElementById("no-spans");
  var form = document.getElementById("task-form");
  var spans = [];            // [[firstTokenIndex, lastTokenIndex], ...]
  var st = { anchor: null, cursor: null }, dragging = false;   // selection: anchor .. cursor

  function range() {
    if (st.anchor === null) return null;
    return [Math.min(st.anchor, st.cursor), Math.max(st.anchor, st.cursor)];
  }
  function paint() {
    var r = range();
    tokens.forEach(function (t, i) {
      t.classList.toggle("selecting", !!r && i >= r[0] && i <= r[1]);
      t.classList.toggle("cursor", i === st.cursor);
      t.classList.toggle("chosen", spans.some(function (s) { return i >= s[0] && i <= s[1]; }));
    });
  }
  function text(s) {
    // As the article has it: a space only where its tokens have a gap between them
    // ("Examplestan (CNN)", not "( CNN )"); a line break shows as a space.
    var out = "";
    for (var k = s[0]; k <= s[1]; k++) {
      if (k > s[0] && tokens[k].dataset.s !== tokens[k - 1].dataset.e) out += " ";
      out += tokens[k].textContent;
    }
    return out;
  }
  function sync() {
    spans.sort(function (a, b) { return a[0] - b[0]; });
    payload.value = JSON.stringify({ spans: spans.map(function (s) {
      return [parseInt(tokens[s[0]].dataset.s, 10), parseInt(tokens[s[1]].dataset.e, 10)];
    }) });
    list.innerHTML = "";
    spans.forEach(function (s, k) {
      var li = document.createElement("li");
      li.textContent = "“" + text(s) + "” ";
      var rm = document.createElement("button");
      rm.type = "button"; rm.textContent = gettext("remove"); rm.className = "link-dark";
      rm.addEventListener("click", function () { spans.splice(k, 1); sync(); paint(); changed(); });
      li.appendChild(rm);
      list.appendChild(li);
    });
    empty.hidden = spans.length > 0;
  }
  function changed() {  // the worker changed the spans: task.js keeps them as a draft
    payload.dispatchEvent(new Event("input", { bubbles: true }));
  }
  function addSelection() {
    var r = range();
    if (!r) return;
    spans = spans.filter(function (s) { return s[1] < r[0] || s[0] > r[1]; });
    spans.push(r);
    st.anchor = null;
    sync(); paint(); changed();
  }
  function indexOf(node) {
    var el = node && (node.nodeType === 1 ? node : node.parentElement);
    var tok = el && el.closest(".tok");
    return tok ? parseInt(tok.dataset.i, 10) : null;
  }

  // A finger cannot drag over the words (it scrolls): on a touch screen the first tap
  // marks where the span starts and the second where it ends; a third starts again.
  var touch = false;
  article.addEventListener("pointerdown", function (e) { touch = e.pointerType !== "mouse"; });
  article.addEventListener("mousedown", function (e) {
    var i = indexOf(e.target);
    if (i === null) return;
    e.preventDefault();
    article.focus({ preventScroll: true });  // a scroll would move the text under the pointer
    var extend = e.shiftKey || (touch && st.anchor === st.cursor);
    if (extend && st.anchor !== null) { st.cursor = i; } else { st.anchor = st.cursor = i; }
    dragging = true; paint();
  });
  article.addEventListener("mouseover", function (e) {
    if (!dragging || touch) return;
    var i = indexOf(e.target);
    if (i !== null) { st.cursor = i; paint(); }
  });
  document.addEventListener("mouseup", function () { dragging = false; });
  article.addEventListener("keydown", function (e) {
    if (window.TokenNav.handle(tokens, st, e)) {
      paint();
    } else if (e.key === "Enter" && !e.ctrlKey && !e.metaKey) {
      e.preventDefault(); addSelection();
    } else if (e.key === "Backspace") {
      e.preventDefault(); spans.pop(); sync(); paint(); changed();
    }
  });
  document.getElementById("add-span").addEventListener("click", addSelection);
  form.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      if (range()) addSelection();
      form.requestSubmit(form.querySelector('[data-testid="submit"]'));
    }
  });
  form.addEventListener("submit", function (e) {
    var flag = e.submitter && e.submitter.name === "flag";
    if (!flag && range()) addSelection();
    if (!flag && !spans.length) {
      e.preventDefault();
      empty.textContent = gettext("Select at least one span first, or choose one of the other two buttons.");
      empty.classList.add("error");
    }
  });
  // A pre-filled answer (a refused submit, a correction, a draft task.js filled in again
  // after a reload): its spans back on the tokens.
  function load() {
    spans = [];
    try {
      (JSON.parse(payload.value || "{}").spans || []).forEach(function (span) {
        var first = null, last = null;
        tokens.forEach(function (t, i) {
          if (first === null && parseInt(t.dataset.s, 10) >= span[0]) first = i;
          if (parseInt(t.dataset.e, 10) <= span[1]) last = i;
        });
        if (first !== null && last !== null && last >= first) spans.push([first, last]);
      });
    } catch (err) { spans = []; }
    sync(); paint();
  }
  payload.addEventListener("change", load);
  load();
})();
