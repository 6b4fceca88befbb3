// The NewsQA question-writing task page (annotation/templates/annotation/tasks/newsqa_question.html).
(function () {
  var form = document.getElementById("task-form");
  if (!form) return;
  form.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
  });
})();
