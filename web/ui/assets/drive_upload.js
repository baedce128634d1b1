// Atrium web app, the drive page (see drive.js): uploads with tus (resumable,
// the files of a folder in their folders), their progress and conflicts, and
// drag and drop onto the list. Only where the person may add files.
"use strict";
(function () {
  var D = window.AtriumDrive;
  if (!D) { return; }
  var el = Atrium.el, fmtSize = Atrium.bytes, call = D.call, api = D.api, say = D.say, refresh = D.refresh,
    openDialog = Atrium.openDialog, folderID = D.folderID, canWrite = D.canWrite;

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
