// Atrium web app: small enhancements only; every form works without script.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // Copy buttons: shown only when script runs; copy the named field's value.
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var f = document.getElementById(b.dataset.copy);
      if (!f) { return; }
      var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 2000); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(f.value).then(done, function () { f.select(); });
      } else {
        f.select();
        try { document.execCommand("copy"); done(); } catch (e) { /* the field stays selected */ }
      }
    });
  });
  // A field shown once is selected when focused, for copying by hand.
  document.querySelectorAll("input[readonly]").forEach(function (f) {
    f.addEventListener("focus", function () { f.select(); });
  });
});
