// Atrium web app: the drive page. The server renders the lists; the page's
// scripts make changes through the REST API and tus (the session cookie
// authenticates, X-CSRF-Token guards every change), then re-read the page's
// list. User text only ever goes into the DOM as text.
//
// The scripts, one per feature, loaded in this order (templates/drive.html,
// all deferred): drive.js (this one: the list, its menu and actions, and
// window.AtriumDrive, what the others share), drive_move.js (the folder
// picker of move and copy), drive_share.js (the sharing dialog),
// drive_view.js (the viewer of images, text and PDF), drive_versions.js (a
// file's versions) and drive_upload.js (uploads with tus, drag and drop). Each
// adds its entry point to window.AtriumDrive; the actions call them there.
"use strict";
(function () {
  var root = document.getElementById("drive");
  if (!root) { return; }
  var view = root.dataset.view;
  var folderID = root.dataset.folder || "";
  var canWrite = root.dataset.canWrite === "true";
  var statusLine = document.getElementById("drive-status");
  var api = "/api/v1/drive";

  // ---- helpers ----
  var el = Atrium.el, fmtSize = Atrium.bytes;
  function say(msg) {
    statusLine.textContent = "";
    // A change of text a moment later is announced even when it repeats.
    setTimeout(function () { statusLine.textContent = msg; }, 30);
  }
  // call sends a request to the REST API; it resolves with the JSON body (or
  // null) and rejects with an Error whose message is readable.
  var call = Atrium.fetchJSON;
  // showError shows msg in the dialog's error box.
  function showError(dlg, msg) { Atrium.showError(dlg.querySelector("p.flash.err"), msg); }

  // refresh re-reads the page and replaces its list and storage figures.
  var refreshing = null;
  function refresh() {
    if (refreshing) { return refreshing; }
    refreshing = fetch(location.href, { credentials: "same-origin" }).then(function (res) {
      if (!res.ok) { throw new Error("reload " + res.status); }
      return res.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      // The last item of a later page is gone: show the page before.
      var here = new URL(location.href), pg = Number(here.searchParams.get("page") || 1);
      if (pg > 1 && !doc.querySelector("#drive-list tbody tr")) {
        here.searchParams.set("page", String(pg - 1));
        location.replace(here.toString());
        return;
      }
      ["drive-list", "drive-storage"].forEach(function (id) {
        var fresh = doc.getElementById(id), old = document.getElementById(id);
        if (fresh && old) { old.replaceWith(document.importNode(fresh, true)); }
      });
      var et = document.getElementById("empty-trash");
      if (et) { et.hidden = !document.querySelector("#drive-list tbody tr"); }
      enhanceList();
    }).catch(function () {
      say("The list could not be updated. Reload the page.");
    }).then(function () { refreshing = null; });
    return refreshing;
  }

  function rowOf(id) {
    var rows = document.querySelectorAll("#drive-list tr[data-id]");
    for (var i = 0; i < rows.length; i++) { if (rows[i].dataset.id === id) { return rows[i]; } }
    return null;
  }
  function item(row) {
    return { id: row.dataset.id, name: row.dataset.name, folder: row.dataset.folder === "true", fav: row.dataset.fav === "true", perm: row.dataset.perm, mime: row.dataset.mime || "", edit: row.dataset.edit === "true" };
  }
  // Images the server previews, and text shown as is.
  var previewImages = ["image/jpeg", "image/png", "image/gif", "image/webp", "image/tiff", "image/bmp"];
  function isText(mime) { return /^text\//.test(mime) || mime === "application/json" || mime === "application/xml"; }
  function isPdf(mime) { return mime === "application/pdf"; }
  function viewable(it) { return !it.folder && (previewImages.indexOf(it.mime) >= 0 || isText(it.mime) || isPdf(it.mime)); }
  // focusRow puts the focus back on a row's menu button after a change (the
  // list was replaced), or on the heading when the row is gone.
  function focusRow(id) {
    var r = id && rowOf(id);
    var b = r && r.querySelector(".item-menu-btn");
    if (b) { b.focus(); return; }
    var h = document.getElementById("drive-h");
    h.setAttribute("tabindex", "-1");
    h.focus();
  }

  // ---- dialogs ----
  // Modal; focus returns to the control that opened them (Atrium.openDialog).
  var openDialog = Atrium.openDialog;

  // ---- the actions menu ----
  var menu = document.getElementById("item-menu");
  var menuRow = null, menuBtn = null;
  var showActs = {
    folder: function (it) {
      var a = ["rename", "move", "copy", "favorite", "delete"];
      if (!it.folder) { a.splice(3, 0, "versions"); }
      a.unshift("download");
      if (it.folder) { a.unshift("open"); }
      if (viewable(it)) { a.unshift("view"); }
      if (it.edit) { a.unshift("edit"); }
      if (it.perm === "owner" || it.perm === "") { a.splice(1, 0, "share"); }
      return a;
    },
    search: function (it) { return showActs.folder(it); },
    favorites: function (it) { return showActs.folder(it); },
    shared: function (it) {
      return (it.edit ? ["edit"] : []).concat(viewable(it) ? ["view"] : [], it.folder ? ["open", "download", "copy"] : ["download", "copy"]);
    },
    trash: function () { return ["restore", "purge"]; }
  };
  function menuItems() { return Array.prototype.slice.call(menu.querySelectorAll("button:not([hidden])")); }
  function openMenu(btn) {
    closeMenu();
    menuRow = btn.closest("tr");
    menuBtn = btn;
    var it = item(menuRow);
    var acts = (showActs[view] || showActs.folder)(it);
    menu.querySelectorAll("button").forEach(function (b) {
      b.parentNode.hidden = b.hidden = acts.indexOf(b.dataset.act) < 0;
      if (b.dataset.act === "favorite") { b.textContent = it.fav ? "Remove from favourites" : "Add to favourites"; }
    });
    menu.setAttribute("aria-label", "Actions for " + it.name);
    menu.hidden = false;
    var r = btn.getBoundingClientRect();
    var top = window.scrollY + r.bottom + 4;
    var left = window.scrollX + r.right - menu.offsetWidth;
    if (r.bottom + menu.offsetHeight + 8 > window.innerHeight && r.top > menu.offsetHeight + 8) {
      top = window.scrollY + r.top - menu.offsetHeight - 4;
    }
    menu.style.top = top + "px";
    menu.style.left = Math.max(8, left) + "px";
    btn.setAttribute("aria-expanded", "true");
    menuItems()[0].focus();
  }
  function closeMenu(refocus) {
    if (menu.hidden) { return; }
    menu.hidden = true;
    if (menuBtn) {
      menuBtn.setAttribute("aria-expanded", "false");
      if (refocus) { menuBtn.focus(); }
    }
  }
  menu.addEventListener("keydown", function (e) {
    var items = menuItems(), i = items.indexOf(document.activeElement);
    if (e.key === "ArrowDown") { items[(i + 1) % items.length].focus(); e.preventDefault(); }
    else if (e.key === "ArrowUp") { items[(i - 1 + items.length) % items.length].focus(); e.preventDefault(); }
    else if (e.key === "Home") { items[0].focus(); e.preventDefault(); }
    else if (e.key === "End") { items[items.length - 1].focus(); e.preventDefault(); }
    else if (e.key === "Escape") { closeMenu(true); e.preventDefault(); }
    else if (e.key === "Tab") { closeMenu(false); }
  });
  document.addEventListener("click", function (e) {
    if (!menu.hidden && !menu.contains(e.target) && e.target.closest(".item-menu-btn") !== menuBtn) { closeMenu(false); }
  });
  menu.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-act]");
    if (!b) { return; }
    var it = item(menuRow);
    closeMenu(false);
    // Dialogs return the focus to the row's menu button.
    menuBtn.focus();
    actions[b.dataset.act](it);
  });

  // ---- grid view with thumbnails of images ----
  var gridToggle = document.getElementById("grid-toggle");
  var grid = false;
  try { grid = localStorage.getItem("atrium.drive.grid") === "1"; } catch (e) { grid = false; }
  var thumbObserver = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (en) {
      if (en.isIntersecting) { thumbObserver.unobserve(en.target); loadThumb(en.target); }
    });
  }, { rootMargin: "200px" }) : null;
  function loadThumb(row) {
    var it = item(row);
    call("GET", api + "/" + encodeURIComponent(it.id) + "/thumbnail?size=256").then(function (t) {
      var img = el("img", { src: t.url, alt: "", "class": "thumb", loading: "lazy" });
      img.addEventListener("error", function () { img.remove(); });
      var ico = row.querySelector(".col-name .ico");
      if (ico) { ico.replaceWith(img); }
    }, function () { /* no thumbnail: the icon stays */ });
  }
  function applyGrid() {
    var table = document.querySelector("#drive-list table.files");
    if (gridToggle) { gridToggle.setAttribute("aria-pressed", grid ? "true" : "false"); }
    if (!table) { return; }
    table.classList.toggle("grid", grid);
    if (!grid) { return; }
    table.querySelectorAll("tbody tr").forEach(function (row) {
      if (row.dataset.thumb || previewImages.indexOf(row.dataset.mime) < 0) { return; }
      row.dataset.thumb = "1";
      if (thumbObserver) { thumbObserver.observe(row); } else { loadThumb(row); }
    });
  }
  if (gridToggle) {
    gridToggle.hidden = false;
    gridToggle.addEventListener("click", function () {
      grid = !grid;
      try { localStorage.setItem("atrium.drive.grid", grid ? "1" : "0"); } catch (e) { /* not remembered */ }
      applyGrid();
    });
  }

  function enhanceList() {
    applyGrid();
    document.querySelectorAll("#drive-list .item-menu-btn").forEach(function (b) {
      b.hidden = false;
      b.addEventListener("click", function () {
        if (!menu.hidden && menuBtn === b) { closeMenu(true); return; }
        openMenu(b);
      });
      b.addEventListener("keydown", function (e) {
        if (e.key === "ArrowDown") { e.preventDefault(); openMenu(b); }
      });
    });
  }

  // ---- actions ----
  var nameDlg = document.getElementById("dlg-name");
  var nameForm = document.getElementById("form-name");
  var nameInput = document.getElementById("name-input");
  var nameSubmit = null;
  function askName(title, label, ok, value, submit) {
    document.getElementById("dlg-name-h").textContent = title;
    document.getElementById("name-label").textContent = label;
    document.getElementById("name-ok").textContent = ok;
    nameInput.value = value || "";
    nameSubmit = submit;
    openDialog(nameDlg);
    nameInput.focus();
    // Select the name without its extension, for renaming.
    var dot = value ? value.lastIndexOf(".") : -1;
    nameInput.setSelectionRange(0, dot > 0 ? dot : nameInput.value.length);
  }
  nameForm.addEventListener("submit", function (e) {
    e.preventDefault();
    var v = nameInput.value.trim();
    if (!v) { showError(nameDlg, "Enter a name."); return; }
    var btn = document.getElementById("name-ok");
    btn.disabled = true;
    nameSubmit(v).then(function (id) {
      nameDlg.close();
      return refresh().then(function () { focusRow(id); });
    }, function (err) { showError(nameDlg, err.message); nameInput.focus(); }).then(function () { btn.disabled = false; });
  });

  var confirmDlg = document.getElementById("dlg-confirm");
  var confirmAct = null;
  function confirmThen(title, text, ok, act) {
    document.getElementById("dlg-confirm-h").textContent = title;
    document.getElementById("dlg-confirm-p").textContent = text;
    document.getElementById("confirm-ok").textContent = ok;
    confirmAct = act;
    openDialog(confirmDlg);
    confirmDlg.querySelector("[data-close]").focus();
  }
  confirmDlg.querySelector("form").addEventListener("submit", function (e) {
    e.preventDefault();
    var btn = document.getElementById("confirm-ok");
    btn.disabled = true;
    confirmAct().then(function (msg) {
      confirmDlg.close();
      say(msg);
      return refresh().then(function () { focusRow(null); });
    }, function (err) { showError(confirmDlg, err.message); }).then(function () { btn.disabled = false; });
  });

  var actions = {
    open: function (it) { location.href = "/drive/" + encodeURIComponent(it.id); },
    edit: function (it) { location.href = "/drive/edit/" + encodeURIComponent(it.id); },
    download: function (it) {
      // A file: the server answers with a redirect to a fresh presigned URL.
      // A folder: the server streams it as a ZIP archive.
      var a = it.folder ?
        el("a", { href: "/drive/" + encodeURIComponent(it.id) + "/download.zip", download: it.name + ".zip" }) :
        el("a", { href: "/drive/" + encodeURIComponent(it.id) + "/download", download: it.name });
      document.body.appendChild(a);
      a.click();
      a.remove();
    },
    rename: function (it) {
      askName("Rename “" + it.name + "”", "New name", "Rename", it.name, function (name) {
        return call("PATCH", api + "/" + encodeURIComponent(it.id) + "/rename", { name: name }).then(function (f) {
          say("Renamed to “" + f.name + "”.");
          return f.id;
        });
      });
    },
    "delete": function (it) {
      confirmThen("Move “" + it.name + "” to the trash?", "You can restore it from the trash until the trash is emptied.", "Move to trash", function () {
        return call("POST", api + "/" + encodeURIComponent(it.id) + "/trash").then(function () { return "“" + it.name + "” is in the trash."; });
      });
    },
    restore: function (it) {
      call("POST", api + "/" + encodeURIComponent(it.id) + "/restore").then(function (f) {
        say("“" + f.name + "” is restored.");
        return refresh().then(function () { focusRow(null); });
      }, function (err) { say(err.message); });
    },
    purge: function (it) {
      confirmThen("Delete “" + it.name + "” permanently?", "This cannot be undone.", "Delete permanently", function () {
        return call("DELETE", api + "/" + encodeURIComponent(it.id)).then(function () { return "“" + it.name + "” is deleted."; });
      });
    },
    favorite: function (it) {
      call("POST", api + "/" + encodeURIComponent(it.id) + "/favorite").then(function (f) {
        say(f.is_favorite ? "“" + f.name + "” is a favourite." : "“" + f.name + "” is no longer a favourite.");
        return refresh().then(function () { focusRow(it.id); });
      }, function (err) { say(err.message); });
    },
    view: function (it) { D.openViewer(it); },
    versions: function (it) { D.openVersions(it); },
    move: function (it) { D.pickFolder(it, "move"); },
    copy: function (it) { D.pickFolder(it, "copy"); },
    share: function (it) { D.openShare(it); }
  };

  var newFolder = document.getElementById("new-folder");
  if (newFolder) {
    newFolder.hidden = false;
    newFolder.addEventListener("click", function () {
      askName("New folder", "Folder name", "Create", "", function (name) {
        var body = { name: name };
        if (folderID) { body.parent_id = folderID; }
        return call("POST", api + "/folders", body).then(function (f) {
          say("Folder “" + f.name + "” created.");
          return f.id;
        });
      });
    });
  }

  var emptyTrash = document.getElementById("empty-trash");
  if (emptyTrash) {
    emptyTrash.hidden = false;
    emptyTrash.addEventListener("click", function () {
      confirmThen("Empty the trash?", "Everything in the trash is deleted permanently. This cannot be undone.", "Empty trash", function () {
        return call("DELETE", api + "/trash").then(function () { return "The trash is empty."; });
      });
    });
  }

  // ---- what the page's other scripts share ----
  var D = window.AtriumDrive = {
    view: view, folderID: folderID, canWrite: canWrite, api: api, say: say, call: call, showError: showError,
    refresh: refresh, item: item, focusRow: focusRow, isText: isText, isPdf: isPdf, actions: actions
  };

  enhanceList();
})();
