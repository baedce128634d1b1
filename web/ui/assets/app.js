// Atrium web app: small enhancements only; every form works without script.
// Loaded on every page before the page's own script (both deferred, in
// document order), it gives those scripts what they share: window.Atrium.
"use strict";
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

  // csrfToken is the page's anti-forgery token, for requests made by a
  // library (tus-js-client) rather than request.
  return { request: request, keepFlash: keepFlash, showFlash: showFlash, csrfToken: token };
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
