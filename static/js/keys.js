// Single-key shortcuts: an element with data-key="x" is clicked when x is pressed outside
// a text field; the "next task" form answers to "n".
(function () {
  function typing(target) {
    // a focused radio button or checkbox takes no text: its form's keys still work
    if (target && target.tagName === "INPUT" && /^(radio|checkbox|button|submit)$/.test(target.type)) return false;
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    // CSS.escape: a key such as " or \ would make the selector invalid (a thrown error)
    var target = document.querySelector('[data-key="' + CSS.escape(event.key) + '"]');
    if (!target && event.key === "n") target = document.querySelector('[data-testid="next-task"]');
    if (target) { event.preventDefault(); target.click(); }
  });
})();
