// Atrium web app, the drive page (see drive.js): the folder picker of the
// Move and Copy actions, browsing the person's folders through the REST API.
"use strict";
(function () {
  var D = window.AtriumDrive;
  if (!D) { return; }
  var el = Atrium.el, call = D.call, api = D.api, say = D.say, showError = D.showError, refresh = D.refresh,
    focusRow = D.focusRow, openDialog = Atrium.openDialog, view = D.view, folderID = D.folderID;

  // ---- the folder picker (move, copy) ----
  var moveDlg = document.getElementById("dlg-move");
  var picker = { item: null, mode: "move", at: "", path: [] };
  function pickFolder(it, mode) {
    picker.item = it;
    picker.mode = mode;
    document.getElementById("dlg-move-h").textContent = (mode === "move" ? "Move “" : "Copy “") + it.name + "”";
    document.getElementById("move-ok").textContent = mode === "move" ? "Move here" : "Copy here";
    openDialog(moveDlg);
    browseTo(view === "folder" ? folderID : "", null);
  }
  function browseTo(id) {
    var list = document.getElementById("picker-list");
    var crumbs = document.getElementById("picker-crumbs");
    showError(moveDlg, "");
    list.replaceChildren(el("li", { "class": "muted" }, "Loading…"));
    var path = id ? api + "/browse/" + encodeURIComponent(id) : api + "/browse";
    call("GET", path + "?is_folder=true&per_page=500&sort_by=name&sort_order=asc").then(function (fc) {
      picker.at = id;
      crumbs.replaceChildren();
      var trail = [{ id: "", name: "My files" }].concat(fc.breadcrumbs || []);
      trail.forEach(function (c, i) {
        var li = el("li");
        if (i === trail.length - 1) {
          li.appendChild(el("span", { "aria-current": "location" }, c.name));
        } else {
          var b = el("button", { type: "button", "class": "link" }, c.name);
          b.addEventListener("click", function () { browseTo(c.id); });
          li.appendChild(b);
        }
        crumbs.appendChild(li);
      });
      list.replaceChildren();
      var n = 0;
      (fc.items || []).forEach(function (f) {
        if (!f.is_folder || f.id === picker.item.id) { return; }
        n++;
        var b = el("button", { type: "button", "class": "picker-folder" });
        b.appendChild(el("span", { "class": "ico ico-folder", "aria-hidden": "true" }));
        b.appendChild(document.createTextNode(f.name));
        b.setAttribute("aria-label", "Open folder " + f.name);
        b.addEventListener("click", function () { browseTo(f.id); });
        var li = el("li");
        li.appendChild(b);
        list.appendChild(li);
      });
      if (!n) { list.appendChild(el("li", { "class": "muted" }, "No folders here.")); }
      var first = list.querySelector("button") || document.getElementById("move-ok");
      first.focus();
    }, function (err) { list.replaceChildren(); showError(moveDlg, err.message); });
  }
  moveDlg.querySelector("form").addEventListener("submit", function (e) {
    e.preventDefault();
    var it = picker.item, to = picker.at;
    var req = picker.mode === "move" ?
      call("PATCH", api + "/" + encodeURIComponent(it.id) + "/move", { target_folder_id: to }) :
      call("POST", api + "/" + encodeURIComponent(it.id) + "/copy" + (to ? "?target_folder_id=" + encodeURIComponent(to) : ""));
    req.then(function (f) {
      moveDlg.close();
      say((picker.mode === "move" ? "Moved “" : "Copied as “") + f.name + "”.");
      return refresh().then(function () { focusRow(f.id); });
    }, function (err) { showError(moveDlg, err.message); });
  });

  D.pickFolder = pickFolder;
})();
