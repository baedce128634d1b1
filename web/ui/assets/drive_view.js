// Atrium web app, the drive page (see drive.js): the viewer of images (the
// server's preview), text (its beginning) and PDF (pdf.js, loaded the first
// time a PDF is opened).
"use strict";
(function () {
  var D = window.AtriumDrive;
  if (!D) { return; }
  var el = Atrium.el, call = D.call, api = D.api, showError = D.showError, openDialog = Atrium.openDialog,
    isText = D.isText, isPdf = D.isPdf, actions = D.actions;

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

  D.openViewer = openViewer;
})();
