// ReCO evidence form: document tabs and one evidence span in one document, by mouse or
// keyboard. The page sends each document as plain text; a document is cut into selectable
// tokens when it is first shown (one Chinese character, a run of other letters or digits, or
// one punctuation mark: annotation.stages.reco.document_tokens, the same classes). Tokens
// carry exact character offsets (data-s, data-e: Unicode code points, as the server counts)
// into their document, so the evidence is [first token's s, last token's e].
(function () {
  var gettext = window.gettext || function (s) { return s; };  // i18n/catalog.js (base.html)
  var interpolate = window.interpolate || function (f, a) { return f.replace("%s", a[0]); };
  var CJK = "\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF";
  var TOKEN = new RegExp("[" + CJK + "]|(?:(?![" + CJK + "])[\\p{L}\\p{N}_])+|[^\\p{L}\\p{N}_\\s]", "gu");

  function codePoints(s) { var n = 0; for (var _ of s) n++; return n; }

  // Replace the text of ``el`` by token spans (once); returns the element.
  function tokenize(el) {
    if (el.dataset.tokenized) return el;
    var text = el.textContent, frag = document.createDocumentFragment();
    var pos = 0, offset = 0, i = 0, m;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(text)) !== null) {
      if (m.index > pos) {
        var gap = text.slice(pos, m.index);
        frag.appendChild(document.createTextNode(gap));
        offset += codePoints(gap);
      }
      var tok = document.createElement("span"), length = codePoints(m[0]);
      tok.className = "tok";
      tok.dataset.i = i++;
      tok.dataset.s = offset;
      tok.dataset.e = offset + length;
      tok.textContent = m[0];
      frag.appendChild(tok);
      offset += length;
      pos = m.index + m[0].length;
    }
    if (pos < text.length) frag.appendChild(document.createTextNode(text.slice(pos)));
    el.textContent = "";
    el.appendChild(frag);
    el.dataset.tokenized = "1";
    return el;
  }

  var form = document.getElementById("task-form");
  var tabs = Array.prototype.slice.call(form.querySelectorAll(".doc-tab"));
  var panels = Array.prototype.slice.call(form.querySelectorAll(".doc-panel"));
  var field = { doc: document.getElementById("ev-doc"), start: document.getElementById("ev-start"),
                end: document.getElementById("ev-end") };
  var shown = { none: document.getElementById("evidence-none"), where: document.getElementById("evidence-where"),
                text: document.getElementById("evidence-text"), clear: document.getElementById("evidence-clear") };
  var evidence = null;                    // {doc, first, last} token indexes
  var active = 0, anchor = null, cursor = null, dragging = false, touch = false;

  function tokensOf(n) { return Array.prototype.slice.call(tokenize(textOf(n)).querySelectorAll(".tok")); }
  function textOf(n) { return panels[n].querySelector(".doc-text"); }
  function range() {
    return anchor === null ? null : [Math.min(anchor, cursor), Math.max(anchor, cursor)];
  }

  function paint() {
    panels.forEach(function (panel, n) {
      if (!textOf(n).dataset.tokenized) return;  // never shown: nothing to paint
      var r = n === active ? range() : null;
      tokensOf(n).forEach(function (t, i) {
        t.classList.toggle("selecting", !!r && i >= r[0] && i <= r[1]);
        t.classList.toggle("cursor", n === active && i === cursor);
        t.classList.toggle("chosen", !!evidence && evidence.doc === n && i >= evidence.first && i <= evidence.last);
      });
    });
    tabs.forEach(function (tab, n) { tab.classList.toggle("has-evidence", !!evidence && evidence.doc === n); });
  }

  function sync() {
    if (!evidence) {
      field.doc.value = field.start.value = field.end.value = "";
      shown.none.hidden = false; shown.text.hidden = shown.clear.hidden = true; shown.where.textContent = "";
      return;
    }
    var toks = tokensOf(evidence.doc), first = toks[evidence.first], last = toks[evidence.last];
    field.doc.value = String(evidence.doc);
    field.start.value = first.dataset.s;
    field.end.value = last.dataset.e;
    var span = document.createRange();
    span.setStartBefore(first); span.setEndAfter(last);
    shown.text.textContent = span.toString();
    shown.where.textContent = interpolate(gettext("(document %s)"), [evidence.doc + 1]);
    shown.none.hidden = true; shown.text.hidden = shown.clear.hidden = false;
  }

  function changed() {  // the worker changed the evidence: task.js keeps it as a draft
    field.end.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function take() {
    var r = range();
    if (!r) return;
    evidence = { doc: active, first: r[0], last: r[1] };
    anchor = null;
    sync(); paint(); changed();
  }

  function show(n) {
    if (n < 0 || n >= panels.length) return;
    active = n; anchor = cursor = null;
    tokenize(textOf(n));
    panels.forEach(function (p, k) { p.hidden = k !== n; });
    tabs.forEach(function (t, k) { t.setAttribute("aria-selected", k === n ? "true" : "false"); });
    paint();
  }

  function indexOf(node) {
    var el = node && (node.nodeType === 1 ? node : node.parentElement);
    var tok = el && el.closest(".tok");
    return tok ? parseInt(tok.dataset.i, 10) : null;
  }

  tabs.forEach(function (tab, n) {
    tab.addEventListener("click", function () { show(n); textOf(n).focus(); });
  });
  panels.forEach(function (panel, n) {
    var text = textOf(n);
    // A finger cannot drag over the text (it scrolls): on a touch screen the first tap
    // marks where the evidence starts and the second where it ends; a third starts again.
    text.addEventListener("pointerdown", function (e) { touch = e.pointerType !== "mouse"; });
    text.addEventListener("mousedown", function (e) {
      var i = indexOf(e.target);
      if (i === null) return;
      e.preventDefault();
      text.focus({ preventScroll: true });  // a scroll would move the text under the pointer
      if (touch && anchor === null && evidence && evidence.doc === n &&
          evidence.first === evidence.last) {
        anchor = evidence.first;  // the first tap's token: this tap ends the evidence
      }
      if ((e.shiftKey || touch) && anchor !== null) { cursor = i; } else { anchor = cursor = i; }
      dragging = true; paint();
    });
    text.addEventListener("mouseover", function (e) {
      if (!dragging || touch) return;
      var i = indexOf(e.target);
      if (i !== null) { cursor = i; paint(); }
    });
    text.addEventListener("keydown", function (e) {
      var st = { anchor: anchor, cursor: cursor };   // word, phrase, sentence moves: tokennav.js
      if (window.TokenNav.handle(tokensOf(n), st, e)) {
        anchor = st.anchor; cursor = st.cursor; paint();
      } else if (e.key === "Enter" && !e.ctrlKey && !e.metaKey) {
        e.preventDefault(); take();
      }
    });
  });
  document.addEventListener("mouseup", function () {
    if (dragging) { dragging = false; take(); }
  });
  shown.clear.addEventListener("click", function () {
    evidence = null; sync(); paint(); changed();
  });

  form.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      if (range()) take();
      form.requestSubmit(form.querySelector('[data-testid="submit"]'));
    }
  });
  form.addEventListener("submit", function (e) {
    if (e.submitter && e.submitter.name === "reject") return;
    if (range()) take();
    if (!evidence) {
      e.preventDefault();
      shown.none.textContent = gettext("select the evidence in one document first, or reject the question.");
      shown.none.classList.add("error");
    }
  });

  // After a refused submission the page comes back with the posted evidence, and after a
  // reload task.js fills in the draft's: restore it.
  function load() {
    var doc = parseInt(field.doc.value, 10);
    if (!isNaN(doc) && panels[doc]) {
      var toks = tokensOf(doc), first = null, last = null;
      toks.forEach(function (t, i) {
        if (first === null && t.dataset.s === field.start.value) first = i;
        if (t.dataset.e === field.end.value) last = i;
      });
      if (first !== null && last !== null && last >= first) {
        evidence = { doc: doc, first: first, last: last };
        show(doc);
      }
    } else if (field.doc.value === "") {
      evidence = null;
    }
    tokenize(textOf(active));
    sync(); paint();
  }
  [field.doc, field.start, field.end].forEach(function (f) { f.addEventListener("change", load); });
  load();
})();
