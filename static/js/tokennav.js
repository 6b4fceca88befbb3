// Keyboard moves over a document's selectable tokens (.tok), shared by the span pickers
// (spans.js, reco.js). Tokens are words and punctuation (one character per token in
// Chinese); sentences end at . ! ? 。！？ (closing quotes included) or a line break.
//   ← →            one token            Ctrl+← Ctrl+→   one phrase (to the next , ; : or sentence end)
//   Home End       start / end of the sentence          Ctrl+Home Ctrl+End   start / end of the document
//   [ ]            previous / next sentence             s   select the sentence under the cursor
// Shift with any move extends the selection from where it started.
window.TokenNav = (function () {
  var SENTENCE_END = /^[.!?。！？…]+["'”’」』)）]*$/;
  var PHRASE_END = /^[,;:，；：、—]+$/;

  function breaksAfter(tok) {
    var next = tok.nextSibling;
    return !!(next && next.nodeType === 3 && next.textContent.indexOf("\n") !== -1);
  }
  function endsSentence(toks, i) {
    var text = toks[i].textContent.trim();
    return i === toks.length - 1 || SENTENCE_END.test(text) || breaksAfter(toks[i]);
  }
  function endsPhrase(toks, i) {
    return endsSentence(toks, i) || PHRASE_END.test(toks[i].textContent.trim());
  }
  function sentenceStart(toks, i) {
    while (i > 0 && !endsSentence(toks, i - 1)) i -= 1;
    return i;
  }
  function sentenceEnd(toks, i) {
    while (i < toks.length - 1 && !endsSentence(toks, i)) i += 1;
    return i;
  }

  // The token index a key moves the cursor to from ``cursor`` (null: not a move key).
  function target(toks, cursor, e) {
    var last = toks.length - 1, at = cursor === null ? 0 : cursor, i;
    var ctrl = e.ctrlKey || e.metaKey;
    if (!toks.length) return null;
    if (e.key === "ArrowRight" && !ctrl) return cursor === null ? 0 : Math.min(last, at + 1);
    if (e.key === "ArrowLeft" && !ctrl) return cursor === null ? 0 : Math.max(0, at - 1);
    if (e.key === "ArrowRight") {          // to the end of this phrase, or of the next one
      i = at;
      if (endsPhrase(toks, i) && i < last) i += 1;
      while (i < last && !endsPhrase(toks, i)) i += 1;
      return i;
    }
    if (e.key === "ArrowLeft") {           // to the start of this phrase, or of the one before
      i = at;
      if (i > 0 && endsPhrase(toks, i - 1)) i -= 1;
      while (i > 0 && !endsPhrase(toks, i - 1)) i -= 1;
      return i;
    }
    if (e.key === "Home") return ctrl ? 0 : sentenceStart(toks, at);
    if (e.key === "End") return ctrl ? last : sentenceEnd(toks, at);
    if (e.key === "]") return Math.min(last, sentenceEnd(toks, at) + 1);
    if (e.key === "[") {
      i = sentenceStart(toks, at);
      return i === at && i > 0 ? sentenceStart(toks, i - 1) : i;
    }
    return null;
  }

  // Handle a keydown on a token list: ``state`` holds {anchor, cursor}; returns true when
  // the key was a move (the caller repaints), after moving the cursor (and the anchor).
  function handle(toks, state, e) {
    if (e.key === "s" && !e.ctrlKey && !e.metaKey && !e.altKey) {
      var at = state.cursor === null ? 0 : state.cursor;
      state.anchor = sentenceStart(toks, at); state.cursor = sentenceEnd(toks, at);
      e.preventDefault(); e.stopPropagation();
      return true;
    }
    var next = target(toks, state.cursor, e);
    if (next === null) return false;
    e.preventDefault(); e.stopPropagation();
    if (e.shiftKey) { if (state.anchor === null) state.anchor = state.cursor === null ? next : state.cursor; }
    else { state.anchor = next; }
    state.cursor = next;
    toks[next].scrollIntoView({ block: "nearest" });
    return true;
  }

  return { target: target, handle: handle, sentenceStart: sentenceStart, sentenceEnd: sentenceEnd };
})();
