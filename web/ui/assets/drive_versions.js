// Atrium web app, the drive page (see drive.js): a file's versions, to
// download or restore.
"use strict";
(function () {
  var D = window.AtriumDrive;
  if (!D) { return; }
  var el = Atrium.el, fmtSize = Atrium.bytes, call = D.call, api = D.api, say = D.say, showError = D.showError,
    refresh = D.refresh, openDialog = Atrium.openDialog;

  // ---- versions ----
  var versionsDlg = document.getElementById("dlg-versions");
  var versionsItem = null;
  function openVersions(it) {
    versionsItem = it;
    document.getElementById("dlg-versions-h").textContent = "Versions of “" + it.name + "”";
    openDialog(versionsDlg);
    versionsDlg.querySelector("[data-close]").focus();
    loadVersions();
  }
  function loadVersions() {
    var rows = document.getElementById("version-rows");
    rows.replaceChildren();
    call("GET", api + "/" + encodeURIComponent(versionsItem.id) + "/versions").then(function (vs) {
      (vs || []).slice().sort(function (a, b) { return b.version - a.version; }).forEach(function (v) {
        var tr = el("tr");
        var label = el("td", null, "Version " + v.version);
        if (v.is_head) { label.appendChild(document.createTextNode(" ")); label.appendChild(el("span", { "class": "badge" }, "Current")); }
        tr.appendChild(label);
        tr.appendChild(el("td", null, fmtSize(v.size_bytes)));
        var when = el("td");
        when.appendChild(el("time", { datetime: v.created_at }, new Date(v.created_at).toLocaleString()));
        tr.appendChild(when);
        var act = el("td", { "class": "act" });
        var dl = el("button", { type: "button", "class": "secondary small", "aria-label": "Download version " + v.version }, "Download");
        dl.addEventListener("click", function () {
          call("GET", api + "/" + encodeURIComponent(versionsItem.id) + "/versions/" + encodeURIComponent(v.id) + "/download").then(function (l) {
            var a = el("a", { href: l.url, download: versionsItem.name });
            document.body.appendChild(a);
            a.click();
            a.remove();
          }, function (err) { showError(versionsDlg, err.message); });
        });
        act.appendChild(dl);
        if (!v.is_head) {
          act.appendChild(document.createTextNode(" "));
          var b = el("button", { type: "button", "class": "secondary small", "aria-label": "Restore version " + v.version }, "Restore");
          b.addEventListener("click", function () {
            call("POST", api + "/" + encodeURIComponent(versionsItem.id) + "/versions/" + encodeURIComponent(v.id) + "/restore").then(function () {
              say("Version " + v.version + " of “" + versionsItem.name + "” is restored.");
              loadVersions();
              versionsDlg.querySelector("[data-close]").focus();
              refresh();
            }, function (err) { showError(versionsDlg, err.message); });
          });
          act.appendChild(b);
        }
        tr.appendChild(act);
        rows.appendChild(tr);
      });
    }, function (err) { showError(versionsDlg, err.message); });
  }

  D.openVersions = openVersions;
})();
