// Batch inspection: the running accuracy from the ticked rules, computed as the server does
// (collector.filters.inspection): each distinct rule adds its weight (strict 1, loose 0.5),
// an item counts at most 1; accuracy = 1 - errors / sampled; the batch passes only above
// the threshold. Only the button the rule allows is enabled.
(function () {
  var gettext = window.gettext || function (s) { return s; };  // i18n/catalog.js (base.html)
  var form = document.getElementById("inspection-form");
  if (!form) return;
  var threshold = parseFloat(form.dataset.threshold), sampled = parseInt(form.dataset.sampled, 10);
  var accept = form.querySelector('[value="accept"]'), back = form.querySelector('[value="return"]');
  var shown = document.getElementById("accuracy"), count = document.getElementById("errors-count");
  var text = document.getElementById("verdict-text");

  function update() {
    var perItem = {};
    form.querySelectorAll("input[data-item]:checked").forEach(function (box) {
      // weights in halves, so the sums stay exact integers
      perItem[box.dataset.item] = (perItem[box.dataset.item] || 0) + Math.round(parseFloat(box.dataset.weight) * 2);
    });
    var halves = 0;
    Object.keys(perItem).forEach(function (k) { halves += Math.min(perItem[k], 2); });
    // accuracy > threshold  <=>  (2 * sampled - halves) > 2 * sampled * threshold
    var passes = (2 * sampled - halves) > 2 * sampled * threshold + 1e-9;
    var accuracy = 1 - halves / 2 / sampled;
    shown.textContent = (accuracy * 100).toFixed(1) + "%";
    count.textContent = String(halves / 2);
    shown.className = passes ? "ok" : "bad";
    text.textContent = passes ? gettext("passes: Accept the batch.") :
      gettext("not above the threshold: Return the batch (untick a mark set by mistake to accept).");
    accept.disabled = !passes;
    back.disabled = passes;
  }
  form.addEventListener("change", update);
  update();
})();
