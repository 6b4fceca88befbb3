// The judgment import form (annotation/templates/annotation/judgment/import.html).
(function () {
  var form = document.querySelector('[data-testid="judgment-import"]');
  if (!form) return;
  // Rows left empty are not sent: one system name per attached file.
  form.addEventListener("submit", function () {
    form.querySelectorAll(".row").forEach(function (row) {
      var file = row.querySelector('input[type="file"]'), name = row.querySelector('input[type="text"]');
      if (!file.files.length && !name.value) { file.disabled = true; name.disabled = true; }
    });
  });
})();
