// Atrium web app: small enhancements only; every form works without script.
// Loaded on every page before the page's own script (both deferred, in
// document order), it gives those scripts what they share: window.Atrium.
"use strict";
// A button of type "button" does something only once a script took it on:
// such buttons stay hidden (app.css, html.js-wait) until the page's scripts
// have run, so that a click during the page's load is not lost.
document.addEventListener("DOMContentLoaded", function () { document.documentElement.classList.remove("js-wait"); });
window.Atrium = (function () {
  function token() { return (document.querySelector('meta[name="csrf-token"]') || {}).content || ""; }

  // request sends a request to the REST API with the session cookie and, on a
  // change, the page's anti-forgery token. body is sent as JSON, or as it is
  // when it is a Blob or FormData (headers may name its type). It resolves
  // with {status, ok, body, etag} (body: the parsed JSON, or null) and never
  // rejects: status is 0 when the server could not be reached.
  function request(method, path, body, headers) {
    var h = { "Accept": "application/json, application/problem+json" };
    if (method !== "GET" && method !== "HEAD") { h["X-CSRF-Token"] = token(); }
    var payload;
    if (body instanceof Blob || body instanceof FormData) {
      payload = body;
    } else if (body !== undefined) {
      h["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    Object.keys(headers || {}).forEach(function (k) { h[k] = headers[k]; });
    var unreachable = { status: 0, ok: false, body: null, etag: "" };
    return fetch(path, { method: method, headers: h, credentials: "same-origin", body: payload })
      .then(function (res) {
        return res.text().then(function (t) {
          var data = null;
          try { data = t ? JSON.parse(t) : null; } catch (e) { data = null; }
          return { status: res.status, ok: res.ok, body: data, etag: res.headers.get("ETag") || "" };
        });
      })
      .catch(function () { return unreachable; });
  }

  // keepFlash keeps msg (under key) for the next page, then goes to url, or
  // reloads this one; showFlash shows the message kept under key in el, once.
  function keepFlash(key, msg, url) {
    try { sessionStorage.setItem(key, msg); } catch (e) { /* private mode: no message */ }
    if (url) { location.assign(url); } else { location.reload(); }
  }
  function showFlash(key, el) {
    var msg = null;
    try { msg = sessionStorage.getItem(key); sessionStorage.removeItem(key); } catch (e) { msg = null; }
    if (el && msg) { el.textContent = msg; el.hidden = false; }
  }

  // problemText is what a person reads of a failed request r ({status, body},
  // as request resolves): that the server cannot be reached, that the
  // session has ended, or the problem's detail (else its title) and what
  // each of its errors says of a field. label(name), when given, turns a
  // field's name (its location without body., query., header. or path.)
  // into the page's label for it. When the detail already says what an error
  // says (the server's "The request is not valid: ..."), the errors alone
  // are shown.
  function problemText(r, label) {
    if (r.status === 0) { return "The server cannot be reached. Check your connection and try again."; }
    if (r.status === 401) { return "You are signed out. Reload the page and sign in again."; }
    var b = r.body && typeof r.body === "object" ? r.body : {};
    var msg = b.detail || b.title || ("The server answered " + r.status + ". Try again.");
    var errs = (b.errors || []).filter(function (e) { return e && e.message; });
    if (errs.length) {
      var restated = errs.some(function (e) { return msg.indexOf(e.message) >= 0; });
      msg = (restated ? "" : sentence(msg) + " ") + errs.map(function (e) {
        var name = (e.location || "").replace(/^(body|query|header|path)\./, "");
        return (name ? (label ? label(name) : name) + ": " : "") + e.message.replace(/\.$/, "");
      }).join("; ") + ".";
    }
    if (r.status === 403) { msg = sentence(msg) + " If you signed in again since this page opened, reload it."; }
    return msg;
  }
  function sentence(s) { return /[.!?]$/.test(s) ? s : s + "."; }

  // fetchJSON is request for a page that prefers a rejected promise: it
  // resolves with the parsed JSON (null for 204) and rejects with an Error
  // whose message is problemText's, its status beside it (0: unreachable).
  function fetchJSON(method, path, body, headers) {
    return request(method, path, body, headers).then(function (r) {
      if (r.ok) { return r.status === 204 ? null : r.body; }
      var err = new Error(problemText(r));
      err.status = r.status;
      throw err;
    });
  }

  // openDialog shows the dialog d as a modal, its alerts (error boxes)
  // emptied and hidden, and puts the focus on focus when given. Its
  // [data-close] buttons close it, as Escape does; the browser then gives the
  // focus back to what had it when the dialog opened (a modal dialog's
  // previously focused element, in HTML).
  function openDialog(d, focus) {
    d.querySelectorAll('[role="alert"]').forEach(function (p) { p.textContent = ""; p.hidden = true; });
    d.showModal();
    if (focus) { focus.focus(); }
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("dialog [data-close]");
    if (b) { b.closest("dialog").close(); }
  });

  // closeDialog closes the dialog d if it is open.
  function closeDialog(d) { if (d && d.open) { d.close(); } }

  // $ is the element with the id.
  function $(id) { return document.getElementById(id); }

  // el makes an element: attrs is its class name (a string) or its
  // attributes (an object); text, when given, its text (never HTML).
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (typeof attrs === "string") {
      if (attrs) { e.className = attrs; }
    } else if (attrs) {
      Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }

  // showError puts msg (a string or an Error) in the message box and shows
  // it, or empties and hides the box when msg is empty; focus moves the
  // focus to the box (it needs a tabindex) so that the message is read next.
  function showError(box, msg, focus) {
    if (!box) { return; }
    var text = msg ? (msg.message || String(msg)) : "";
    box.textContent = text;
    box.hidden = !text;
    if (text && focus) { box.focus(); }
  }

  // bytes is a size as people read it, in decimal units (1 KB = 1,000 bytes,
  // as the server's pages write them).
  function bytes(n) {
    if (n < 1000) { return n + " B"; }
    var units = ["KB", "MB", "GB", "TB"], i = -1;
    do { n /= 1000; i++; } while (n >= 1000 && i < units.length - 1);
    return (n < 10 ? n.toFixed(1) : Math.round(n)) + " " + units[i];
  }

  // csrfToken is the page's anti-forgery token, for requests made by a
  // library (tus-js-client) rather than request. The rest is the pages'
  // toolkit: requests and their errors, dialogs, elements, sizes.
  return {
    request: request, fetchJSON: fetchJSON, problemText: problemText, openDialog: openDialog, closeDialog: closeDialog,
    keepFlash: keepFlash, showFlash: showFlash, csrfToken: token, $: $, el: el, showError: showError, bytes: bytes
  };
})();
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
