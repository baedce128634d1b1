// Atrium web app: the drive page. The server renders the lists; this script
// makes changes through the REST API and tus (the session cookie authenticates,
// X-CSRF-Token guards every change), then re-reads the page's list. User text
// only ever goes into the DOM as text.
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
    view: function (it) { openViewer(it); },
    versions: function (it) { openVersions(it); },
    move: function (it) { pickFolder(it, "move"); },
    copy: function (it) { pickFolder(it, "copy"); },
    share: function (it) { openShare(it); }
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

  // ---- sharing ----
  var shareDlg = document.getElementById("dlg-share");
  var shareItem = null;
  function openShare(it) {
    shareItem = it;
    document.getElementById("dlg-share-h").textContent = "Share “" + it.name + "”";
    document.getElementById("new-link").hidden = true;
    document.getElementById("share-link").value = "";
    document.getElementById("link-expiry").value = "";
    document.getElementById("link-expiry").min = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
    document.getElementById("person-expiry").value = "";
    document.getElementById("person-expiry").min = document.getElementById("link-expiry").min;
    loadTeams();
    openDialog(shareDlg);
    document.getElementById("create-link").focus();
    loadShares();
  }
  function loadShares() {
    var list = document.getElementById("share-list");
    list.replaceChildren(el("li", { "class": "muted" }, "Loading…"));
    call("GET", api + "/" + encodeURIComponent(shareItem.id) + "/shares").then(function (shares) {
      list.replaceChildren();
      (shares || []).forEach(function (s) {
        var li = el("li");
        var who = shareRecipient(s);
        var what = (s.share_link ? "Link" : who) + " (" + (s.permission === "edit" ? "can edit" : "can view") + ")";
        var text = el("span", { "class": "share-what" }, what);
        li.appendChild(text);
        if (s.share_link) { li.appendChild(el("code", null, s.share_link)); }
        if (s.expires_at) { li.appendChild(el("span", { "class": "muted" }, " · until " + new Date(s.expires_at).toLocaleDateString())); }
        var b = el("button", { type: "button", "class": "danger", "aria-label": "Revoke " + (s.share_link ? "link " + s.share_link : "share with " + who) }, "Revoke");
        b.addEventListener("click", function () {
          call("DELETE", api + "/" + encodeURIComponent(shareItem.id) + "/shares/" + encodeURIComponent(s.id)).then(function () {
            say("The share is revoked.");
            loadShares();
            document.getElementById("create-link").focus();
          }, function (err) { showError(shareDlg, err.message); });
        });
        li.appendChild(b);
        list.appendChild(li);
      });
      if (!list.children.length) { list.appendChild(el("li", { "class": "muted" }, "Not shared yet.")); }
    }, function (err) { list.replaceChildren(); showError(shareDlg, err.message); });
  }
  // shareRecipient names who a share is with, as the list shows it.
  function shareRecipient(s) {
    if (s.shared_with_team) { return "Team " + s.shared_with_team.name; }
    if (s.shared_with_organization) { return "Everyone in the organisation"; }
    if (s.shared_with) { return s.shared_with.display_name || s.shared_with.email; }
    return "";
  }
  // The teams of the organisation, read each time the dialog opens.
  function loadTeams() {
    var sel = document.getElementById("share-team");
    return call("GET", "/api/v1/drive/share-teams").then(function (teams) {
      sel.replaceChildren();
      (teams || []).forEach(function (t) { sel.appendChild(el("option", { value: t.id }, t.name)); });
      if (!sel.children.length) { sel.appendChild(el("option", { value: "", disabled: "disabled" }, "Your organisation has no teams yet")); }
    }, function (err) { showError(shareDlg, err.message); });
  }
  function shareTo() {
    var to = document.getElementById("share-to").value, email = document.getElementById("share-email");
    document.getElementById("share-email-field").hidden = to !== "person";
    document.getElementById("share-team-field").hidden = to !== "team";
    email.required = to === "person";
  }
  document.getElementById("share-to").addEventListener("change", shareTo);
  function expiryOf(input) {
    if (!input.value) { return undefined; }
    // The end of the chosen day, in the person's time zone.
    return new Date(input.value + "T23:59:59").toISOString();
  }
  document.getElementById("create-link").addEventListener("click", function () {
    showError(shareDlg, "");
    var body = { create_link: true, permission: document.getElementById("link-perm").value };
    var exp = expiryOf(document.getElementById("link-expiry"));
    if (exp) { body.expires_at = exp; }
    call("POST", api + "/" + encodeURIComponent(shareItem.id) + "/shares", body).then(function (s) {
      var f = document.getElementById("share-link");
      f.value = s.share_link;
      document.getElementById("new-link").hidden = false;
      f.focus();
      say("Link created.");
      loadShares();
    }, function (err) { showError(shareDlg, err.message); });
  });
  document.getElementById("copy-link").addEventListener("click", function () {
    var f = document.getElementById("share-link"), b = this;
    var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 2000); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(f.value).then(done, function () { f.select(); });
    } else {
      f.select();
      try { document.execCommand("copy"); done(); } catch (e) { /* selected for copying by hand */ }
    }
  });
  document.getElementById("share-person").addEventListener("submit", function (e) {
    e.preventDefault();
    showError(shareDlg, "");
    var email = document.getElementById("share-email"), to = document.getElementById("share-to").value;
    var team = document.getElementById("share-team");
    var body = { permission: document.getElementById("person-perm").value }, whom;
    if (to === "team") {
      if (!team.value) { showError(shareDlg, "Choose a team."); team.focus(); return; }
      body.team_id = team.value;
      whom = "the team " + team.options[team.selectedIndex].text;
    } else if (to === "organization") {
      body.organization = true;
      whom = "everyone in the organisation";
    } else {
      body.email = email.value.trim();
      whom = body.email;
    }
    var exp = expiryOf(document.getElementById("person-expiry"));
    if (exp) { body.expires_at = exp; }
    call("POST", api + "/" + encodeURIComponent(shareItem.id) + "/shares", body).then(function () {
      say("Shared with " + whom + ".");
      email.value = "";
      loadShares();
    }, function (err) { showError(shareDlg, err.message); (to === "team" ? team : to === "person" ? email : document.getElementById("share-to")).focus(); });
  });

  // ---- the viewer: images (the server's preview) and text ----
  var viewDlg = document.getElementById("dlg-view");
  var viewBody = document.getElementById("view-body");
  var viewItem = null;
  function openViewer(it) {
    viewItem = it;
    document.getElementById("dlg-view-h").textContent = it.name;
    viewBody.replaceChildren(el("p", { "class": "muted" }, "Loading…"));
    openDialog(viewDlg);
    document.getElementById("view-download").focus();
    var id = encodeURIComponent(it.id);
    if (isText(it.mime)) {
      call("GET", api + "/" + id + "/download").then(function (l) {
        // The first 256 KB are shown; the whole file downloads.
        return fetch(l.url, { headers: { Range: "bytes=0-262143" } }).then(function (res) {
          if (!res.ok) { throw new Error("The file could not be read (" + res.status + ")."); }
          return res.text().then(function (t) {
            var m = /\/(\d+)$/.exec(res.headers.get("Content-Range") || "");
            return { text: t, cut: res.status === 206 && !!m && Number(m[1]) > 262144 };
          });
        });
      }).then(function (r) {
        var pre = el("pre", { "class": "view-text", tabindex: "0", "aria-label": "Content of " + it.name }, r.text);
        viewBody.replaceChildren(pre);
        if (r.cut) { viewBody.appendChild(el("p", { "class": "muted" }, "Only the beginning is shown: download the file to read it all.")); }
      }, function (err) { viewBody.replaceChildren(); showError(viewDlg, err.message); });
      return;
    }
    if (isPdf(it.mime)) { showPdf(it); return; }
    call("POST", api + "/" + id + "/preview-token").then(function (t) {
      var img = el("img", { src: t.preview_url, alt: it.name, "class": "view-image" });
      img.addEventListener("error", function () { showError(viewDlg, "The preview could not be made. Download the file instead."); img.remove(); });
      viewBody.replaceChildren(img);
    }, function (err) { viewBody.replaceChildren(); showError(viewDlg, err.message); });
  }
  document.getElementById("view-download").addEventListener("click", function () { actions.download(viewItem); });
  viewDlg.addEventListener("close", function () { closePdf(); viewBody.replaceChildren(); });

  // ---- the PDF viewer: pdf.js (web/ui/assets/vendor, see
  // scripts/refresh-web-vendor.sh), loaded the first time a PDF is opened ----
  var pdfjsLoad = null, pdf = null;
  function loadPdfjs() {
    if (!pdfjsLoad) {
      pdfjsLoad = import("/assets/vendor/pdf.min.mjs").then(function (m) {
        m.GlobalWorkerOptions.workerSrc = "/assets/vendor/pdf.worker.min.mjs";
        return m;
      });
      pdfjsLoad.catch(function () { pdfjsLoad = null; });
    }
    return pdfjsLoad;
  }
  function closePdf() {
    if (!pdf) { return; }
    if (pdf.task) { pdf.task.destroy(); }
    pdf = null;
  }
  function showPdf(it) {
    closePdf();
    var mine = pdf = { page: 1, pages: 0, doc: null, task: null, rendering: null, item: it };
    call("GET", api + "/" + encodeURIComponent(it.id) + "/download").then(function (l) {
      return loadPdfjs().then(function (pdfjs) {
        if (pdf !== mine) { return null; }
        // No eval (pdf.js 5+ has none), no WebAssembly (the page's CSP has no
        // 'wasm-unsafe-eval'): its JavaScript decoders; fonts a PDF does not
        // embed are drawn with system fonts.
        mine.task = pdfjs.getDocument({ url: l.url, useWasm: false, useSystemFonts: true, enableXfa: false, isEvalSupported: false });
        return mine.task.promise;
      }, function () { throw new Error("The PDF viewer could not be loaded. Download the file instead."); });
    }).then(function (doc) {
      if (!doc || pdf !== mine) { return; }
      mine.doc = doc;
      mine.pages = doc.numPages;
      var bar = el("div", { "class": "pdf-bar" });
      mine.prev = el("button", { type: "button", "class": "secondary small", id: "pdf-prev" }, "Previous page");
      mine.count = el("span", { id: "pdf-count", "class": "pdf-count", "aria-live": "polite" });
      mine.next = el("button", { type: "button", "class": "secondary small", id: "pdf-next" }, "Next page");
      bar.append(mine.prev, mine.count, mine.next);
      mine.canvas = el("canvas", { "class": "pdf-page", role: "img" });
      mine.sheet = el("div", { "class": "pdf-sheet", tabindex: "0", "aria-label": "Pages of " + it.name + ": arrow keys turn the pages" });
      mine.sheet.appendChild(mine.canvas);
      viewBody.replaceChildren(bar, mine.sheet);
      mine.prev.addEventListener("click", function () { turnPdf(mine, -1); });
      mine.next.addEventListener("click", function () { turnPdf(mine, 1); });
      mine.sheet.addEventListener("keydown", function (e) {
        var d = { ArrowLeft: -1, PageUp: -1, ArrowRight: 1, PageDown: 1 }[e.key];
        if (e.key === "Home") { d = 1 - mine.page; } else if (e.key === "End") { d = mine.pages - mine.page; }
        if (d) { e.preventDefault(); turnPdf(mine, d); }
      });
      renderPdf(mine);
    }).catch(function (err) {
      if (pdf !== mine) { return; }
      viewBody.replaceChildren();
      var msg = err && err.name === "InvalidPDFException" ? "This file is not a PDF the viewer can read. Download it instead." : (err && err.message) || "The PDF could not be shown.";
      showError(viewDlg, msg);
    });
  }
  function turnPdf(v, d) {
    var n = Math.min(v.pages, Math.max(1, v.page + d));
    if (n === v.page) { return; }
    v.page = n;
    renderPdf(v);
  }
  function renderPdf(v) {
    var n = v.page;
    v.count.textContent = "Page " + n + " of " + v.pages;
    v.canvas.setAttribute("aria-label", "Page " + n + " of " + v.pages + " of " + v.item.name);
    // A disabled button cannot keep the focus: it moves to the other one.
    var focused = document.activeElement;
    v.prev.disabled = n <= 1;
    v.next.disabled = n >= v.pages;
    if (focused === v.prev && v.prev.disabled && !v.next.disabled) { v.next.focus(); }
    if (focused === v.next && v.next.disabled && !v.prev.disabled) { v.prev.focus(); }
    if (v.rendering) { v.rendering.cancel(); }
    v.doc.getPage(n).then(function (page) {
      if (pdf !== v || v.page !== n) { return; }
      var base = page.getViewport({ scale: 1 });
      var width = Math.max(320, v.sheet.clientWidth || 800) * (window.devicePixelRatio || 1);
      var vp = page.getViewport({ scale: Math.min(4, width / base.width) });
      v.canvas.width = Math.floor(vp.width);
      v.canvas.height = Math.floor(vp.height);
      v.rendering = page.render({ canvas: v.canvas, viewport: vp });
      return v.rendering.promise.then(function () {
        v.rendering = null;
        v.canvas.dataset.page = String(n);
      });
    }).catch(function (err) {
      if (err && err.name === "RenderingCancelledException") { return; }
      if (pdf === v) { showError(viewDlg, "Page " + n + " could not be shown."); }
    });
  }

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

  enhanceList();

  // ---- uploads (tus) ----
  var uploadsBox = document.getElementById("uploads");
  if (!uploadsBox || !canWrite) { return; }
  var uploadList = document.getElementById("upload-list");
  var totalBar = document.getElementById("upload-total");
  var totalText = document.getElementById("upload-total-text");
  var clearBtn = document.getElementById("uploads-clear");
  var uploads = [];
  var conflictQueue = [], conflictAll = null, conflictOpen = false;

  function updateTotal() {
    var sent = 0, total = 0, active = 0;
    uploads.forEach(function (u) {
      if (u.state === "cancelled") { return; }
      sent += u.sent; total += u.size;
      if (u.state === "uploading" || u.state === "paused" || u.state === "waiting") { active++; }
    });
    totalBar.value = total ? Math.floor(sent * 100 / total) : (uploads.length ? 100 : 0);
    totalText.textContent = fmtSize(sent) + " of " + fmtSize(total) + (active ? " · " + active + " in progress" : " · done");
    clearBtn.hidden = !uploads.some(function (u) { return u.finished; });
    if (!active && !conflictQueue.length && !conflictOpen) {
      refresh();
      var failed = uploads.filter(function (u) { return u.state === "failed"; }).length;
      var msg = failed ? failed + (failed === 1 ? " upload failed." : " uploads failed.") : "Uploads finished.";
      if (msg !== lastSummary) { lastSummary = msg; say(msg); }
    } else {
      lastSummary = "";
    }
  }
  var lastSummary = "";
  function setState(u, state, text) {
    u.state = state;
    u.statusEl.textContent = text;
    u.finished = ["done", "skipped", "cancelled", "failed"].indexOf(state) >= 0;
    u.pauseBtn.hidden = !(state === "uploading" || state === "paused" || state === "failed");
    var verb = state === "paused" ? "Resume" : state === "failed" ? "Retry" : "Pause";
    u.pauseBtn.textContent = verb;
    u.pauseBtn.setAttribute("aria-label", verb + " upload of " + u.label);
    u.cancelBtn.hidden = u.finished || state === "conflict";
    u.li.className = "upload " + state;
  }
  function uploadID(u) { return u.tus.url ? u.tus.url.split("/").pop() : ""; }

  // smallUpload is the largest file sent whole with its upload's creation.
  var smallUpload = 64 * 1024;

  // startUpload uploads a file into the folder parent (resumably: a file
  // uploaded before into the same folder resumes where it stopped).
  function startUpload(file, parent, label) {
    var u = { file: file, size: file.size, sent: 0, state: "waiting", label: label || file.name, parent: parent, status: "" };
    u.li = el("li", { "class": "upload" });
    var name = el("span", { "class": "upload-name" }, u.label);
    u.bar = el("progress", { max: "100", value: "0", "aria-label": "Upload of " + u.label });
    u.statusEl = el("span", { "class": "upload-state" });
    u.pauseBtn = el("button", { type: "button", "class": "secondary small" }, "Pause");
    u.cancelBtn = el("button", { type: "button", "class": "secondary small", "aria-label": "Cancel upload of " + u.label }, "Cancel");
    u.li.append(name, u.bar, u.statusEl, u.pauseBtn, u.cancelBtn);
    uploadList.appendChild(u.li);
    uploads.push(u);
    uploadsBox.hidden = false;

    var meta = { filename: file.name, filetype: file.type || "" };
    if (parent) { meta.parent_id = parent; }
    u.tus = new window.tus.Upload(file, {
      endpoint: api + "/tus/",
      retryDelays: [0, 1000, 3000, 5000, 10000, 20000],
      chunkSize: 16 * 1024 * 1024,
      // A small file's bytes go with the request that creates its upload
      // (the creation-with-upload extension): one request instead of two.
      // A larger one's go in PATCH requests of their own, which resume where
      // a broken one stopped; a broken creation is sent again whole.
      uploadDataDuringCreation: file.size <= smallUpload,
      metadata: meta,
      headers: { "X-CSRF-Token": Atrium.csrfToken() },
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      fingerprint: function (f) {
        return Promise.resolve(["atrium-drive", parent || "root", f.name, f.type, f.size, f.lastModified].join("/"));
      },
      onShouldRetry: function (err) {
        var s = err.originalResponse ? err.originalResponse.getStatus() : 0;
        // A refusal (quota, size, permission) does not change by retrying.
        return !(s >= 400 && s < 500 && s !== 409 && s !== 423) && s !== 507 && s !== 501;
      },
      onAfterResponse: function (req, res) {
        var st = res.getHeader("Atrium-Upload-Status");
        if (st) { u.status = st; }
      },
      onProgress: function (sent, total) {
        u.sent = sent;
        u.bar.value = total ? Math.floor(sent * 100 / total) : 100;
        if (u.state === "uploading") { u.statusEl.textContent = fmtSize(sent) + " of " + fmtSize(total); }
        updateTotal();
      },
      onSuccess: function () {
        u.sent = u.size;
        u.bar.value = 100;
        if (u.status === "conflict") {
          setState(u, "conflict", "The name is taken");
          conflictQueue.push(u);
          nextConflict();
        } else {
          setState(u, "done", "Uploaded");
        }
        updateTotal();
      },
      onError: function (err) {
        var msg = "Upload failed.";
        var res = err.originalResponse;
        if (res) {
          var body = null;
          try { body = JSON.parse(res.getBody()); } catch (e) { body = null; }
          msg = Atrium.problemText({ status: res.getStatus(), body: body });
        } else if (!navigator.onLine) {
          msg = "The connection is lost. Resume when it is back.";
          setState(u, "paused", msg);
          updateTotal();
          return;
        }
        setState(u, "failed", msg);
        updateTotal();
      }
    });
    u.pauseBtn.addEventListener("click", function () {
      if (u.state === "paused" || u.state === "failed") {
        setState(u, "uploading", "Resuming…");
        u.tus.start();
      } else {
        u.tus.abort();
        setState(u, "paused", "Paused");
      }
      updateTotal();
      u.pauseBtn.focus();
    });
    u.cancelBtn.addEventListener("click", function () {
      u.tus.abort(true).catch(function () { /* the server drops it within a day */ });
      setState(u, "cancelled", "Cancelled");
      updateTotal();
      clearBtn.hidden ? totalBar.focus() : clearBtn.focus();
    });
    setState(u, "uploading", "Starting…");
    u.tus.findPreviousUploads().then(function (prev) {
      if (prev.length) { u.tus.resumeFromPreviousUpload(prev[0]); }
      if (u.state === "uploading") { u.tus.start(); }
    });
    updateTotal();
  }

  // The conflict of a completed upload: skip, rename or overwrite (asked once
  // per upload, or once for all).
  var conflictDlg = document.getElementById("dlg-conflict");
  function nextConflict() {
    if (conflictOpen || !conflictQueue.length) { return; }
    var u = conflictQueue[0];
    if (conflictAll) { resolve(u, conflictAll); return; }
    conflictOpen = true;
    document.getElementById("dlg-conflict-h").textContent = "“" + u.file.name + "” already exists";
    document.getElementById("dlg-conflict-p").textContent = "This folder already has an item named “" + u.file.name +
      "”. Overwrite makes the upload a new version of that file; Rename keeps both, the upload with a number added to its name; Skip drops the upload.";
    document.getElementById("conflict-all").checked = false;
    document.getElementById("conflict-all").parentNode.hidden = conflictQueue.length < 2;
    openDialog(conflictDlg);
    conflictDlg.querySelector('button[value="rename"]').focus();
  }
  conflictDlg.addEventListener("close", function () {
    if (!conflictOpen) { return; }
    conflictOpen = false;
    var u = conflictQueue[0];
    var how = conflictDlg.returnValue || "skip";
    if (["skip", "rename", "overwrite"].indexOf(how) < 0) { how = "skip"; }
    if (document.getElementById("conflict-all").checked) { conflictAll = how; }
    conflictDlg.returnValue = "";
    resolve(u, how);
  });
  function resolve(u, how) {
    call("POST", api + "/tus/" + encodeURIComponent(uploadID(u)) + "/resolve?strategy=" + how).then(function (r) {
      var n = (r && r.file && r.file.name) || u.file.name;
      setState(u, how === "skip" ? "skipped" : "done", how === "skip" ? "Skipped" : how === "rename" ? "Uploaded as “" + n + "”" : "Uploaded as a new version");
    }, function (err) {
      setState(u, "failed", err.message);
    }).then(function () {
      conflictQueue.shift();
      updateTotal();
      nextConflict();
    });
  }

  // Leaving the page stops the uploads (they resume when the same files are
  // chosen again in the same folder): the browser asks first.
  window.addEventListener("beforeunload", function (e) {
    if (uploads.some(function (u) { return u.state === "uploading"; })) { e.preventDefault(); e.returnValue = ""; }
  });

  // Folders of a folder upload are made (or found) before their files.
  var folderCache = {};
  function ensureFolder(parent, name) {
    var key = (parent || "root") + "/" + name.toLowerCase();
    if (!folderCache[key]) {
      var body = { name: name };
      if (parent) { body.parent_id = parent; }
      folderCache[key] = call("POST", api + "/folders", body).then(function (f) { return f.id; }, function (err) {
        if (err.status !== 409) { throw err; }
        var path = parent ? api + "/browse/" + encodeURIComponent(parent) : api + "/browse";
        return call("GET", path + "?is_folder=true&per_page=500&q=" + encodeURIComponent(name)).then(function (fc) {
          var hit = (fc.items || []).filter(function (f) { return f.is_folder && f.name.toLowerCase() === name.toLowerCase(); })[0];
          if (!hit) { throw new Error("“" + name + "” is taken by a file."); }
          return hit.id;
        });
      });
    }
    return folderCache[key];
  }
  function folderOf(rel) {
    var parts = rel.split("/").slice(0, -1).filter(Boolean);
    return parts.reduce(function (p, name) {
      return p.then(function (parent) { return ensureFolder(parent, name); });
    }, Promise.resolve(folderID));
  }
  function uploadFiles(files) {
    if (!window.tus || !window.tus.isSupported) { say("This browser cannot upload here."); return; }
    var list = Array.prototype.slice.call(files);
    if (!list.length) { return; }
    say(list.length === 1 ? "Uploading “" + list[0].name + "”." : "Uploading " + list.length + " files.");
    list.forEach(function (f) {
      var rel = f.relPath || f.webkitRelativePath || "";
      if (rel && rel.indexOf("/") > 0) {
        folderOf(rel).then(function (parent) { startUpload(f, parent, rel); }, function (err) { say(err.message); });
      } else {
        startUpload(f, folderID, f.name);
      }
    });
  }
  ["upload-files", "upload-folder"].forEach(function (id) {
    var input = document.getElementById(id);
    if (!input) { return; }
    input.addEventListener("change", function () {
      uploadFiles(input.files);
      input.value = "";
    });
  });
  clearBtn.addEventListener("click", function () {
    uploads = uploads.filter(function (u) {
      if (u.finished) { u.li.remove(); return false; }
      return true;
    });
    if (!uploads.length) { uploadsBox.hidden = true; document.getElementById("upload-files").focus(); } else { totalBar.focus(); }
    updateTotal();
  });

  // Drag and drop onto the list: files, and folders with their contents.
  var dropDepth = 0;
  function dropZone() { return document.getElementById("drive-list"); }
  document.addEventListener("dragenter", function (e) {
    if (!e.dataTransfer || Array.prototype.indexOf.call(e.dataTransfer.types, "Files") < 0) { return; }
    dropDepth++;
    dropZone().classList.add("dropping");
  });
  document.addEventListener("dragleave", function () {
    dropDepth = Math.max(0, dropDepth - 1);
    if (!dropDepth) { dropZone().classList.remove("dropping"); }
  });
  document.addEventListener("dragover", function (e) {
    if (e.dataTransfer && Array.prototype.indexOf.call(e.dataTransfer.types, "Files") >= 0) { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; }
  });
  document.addEventListener("drop", function (e) {
    if (!e.dataTransfer) { return; }
    e.preventDefault();
    dropDepth = 0;
    dropZone().classList.remove("dropping");
    var entries = [];
    Array.prototype.forEach.call(e.dataTransfer.items || [], function (it) {
      var en = it.webkitGetAsEntry ? it.webkitGetAsEntry() : null;
      if (en) { entries.push(en); }
    });
    if (!entries.length) { uploadFiles(e.dataTransfer.files); return; }
    Promise.all(entries.map(function (en) { return walk(en, ""); })).then(function (lists) {
      uploadFiles([].concat.apply([], lists));
    });
  });
  // walk lists the files of a dropped entry, with their relative paths.
  function walk(entry, prefix) {
    if (entry.isFile) {
      return new Promise(function (ok) {
        entry.file(function (f) { f.relPath = prefix + f.name; ok([f]); }, function () { ok([]); });
      });
    }
    var reader = entry.createReader(), all = [];
    return new Promise(function (ok) {
      (function more() {
        reader.readEntries(function (batch) {
          if (!batch.length) {
            Promise.all(all.map(function (c) { return walk(c, prefix + entry.name + "/"); })).then(function (l) { ok([].concat.apply([], l)); });
            return;
          }
          all = all.concat(Array.prototype.slice.call(batch));
          more();
        }, function () { ok([]); });
      })();
    });
  }
})();
