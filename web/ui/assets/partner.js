// Atrium reseller console (/partner): every change goes through the partner
// REST API (/api/v1/partner/...) with the session cookie and its X-CSRF-Token.
// Forms and buttons name their operation in data-api and data-method; a button
// with data-confirm-title asks first in the confirmation dialog. User text
// reaches the DOM only through textContent and form values.
"use strict";
(function () {
  var flashKey = "atrium.partner.flash";

  var $ = Atrium.$;

  // newKey is a fresh Idempotency-Key.
  function newKey() {
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }

  // call sends a request to the REST API and resolves with {status, ok, body}.
  var call = Atrium.request;

  // labelOf is the visible label of a field of form, for error messages.
  function labelOf(form, name) {
    var f = form && form.querySelector('[name="' + CSS.escape(name) + '"]');
    var l = f && f.id && document.querySelector('label[for="' + CSS.escape(f.id) + '"]');
    return l ? l.textContent : name;
  }

  // problemText is what a person reads of a failed request, each invalid
  // field of form (when given) by its label.
  function problemText(r, form) {
    return Atrium.problemText(r, form ? function (name) { return labelOf(form, name); } : null);
  }

  function showError(box, text) { Atrium.showError(box, text, true); }

  function markInvalid(form, r) {
    form.querySelectorAll("[aria-invalid]").forEach(function (f) { f.removeAttribute("aria-invalid"); });
    ((r.body && r.body.errors) || []).forEach(function (e) {
      var f = form.querySelector('[name="' + CSS.escape((e.location || "").replace(/^body\./, "")) + '"]');
      if (f) { f.setAttribute("aria-invalid", "true"); }
    });
  }

  // done keeps msg for the next page, then goes there (default: this one again).
  function done(msg, url) { Atrium.keepFlash(flashKey, msg, url); }

  // Dialogs: modal; focus returns to the control that opened them
  // (Atrium.openDialog).
  var openDialog = Atrium.openDialog;
  document.querySelectorAll("[data-open]").forEach(function (b) {
    var d = $(b.dataset.open);
    b.addEventListener("click", function () { openDialog(d, d.querySelector("input, select")); });
    b.hidden = false;
  });

  // collect reads a form into its JSON body: numbers for data-number fields,
  // empty data-omit-empty fields left out.
  function collect(form) {
    var body = {};
    form.querySelectorAll("input[name], select[name], textarea[name]").forEach(function (f) {
      if (f.type === "checkbox") { body[f.name] = f.checked; return; }
      var v = f.value.trim();
      if (f.hasAttribute("data-omit-empty") && v === "") { return; }
      if (f.hasAttribute("data-number")) { body[f.name] = v === "" ? 0 : Number(v); return; }
      body[f.name] = v;
    });
    return body;
  }

  // checkSeats explains, before anything is sent, a seat count the server
  // would refuse: below the seat floor, or above the plan's maximum.
  function checkSeats(form, body) {
    var n = body.seats;
    if (!Number.isInteger(n) || n < 1) { return "Seats: give a whole number, at least 1."; }
    var floor = Number(form.dataset.floor), most = Number(form.dataset.max);
    if (n < floor) { return form.dataset.floorText + " Delete users or withdraw invitations first to go lower."; }
    if (most && n > most) { return "The plan allows at most " + most + " seats: change the plan first for more."; }
    return "";
  }

  document.querySelectorAll("form[data-api]").forEach(function (form) {
    var box = form.querySelector("[data-error]");
    var last = { key: "", body: "" };
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var body = collect(form);
      if (box) { box.hidden = true; }
      if (form.dataset.floor !== undefined) {
        var why = checkSeats(form, body);
        if (why) {
          form.querySelector('[name="seats"]').setAttribute("aria-invalid", "true");
          showError(box, why);
          return;
        }
      }
      var headers = {};
      if (form.hasAttribute("data-idem")) {
        // A resend of the same body (say, after a lost answer) keeps its key.
        var text = JSON.stringify(body);
        if (text !== last.body) { last = { key: newKey(), body: text }; }
        headers["Idempotency-Key"] = last.key;
      }
      // A {field} in the form's message is what the field shows (a choice's
      // label); in its path, the field's value, taken out of the body.
      var doneText = (form.dataset.done || "Saved.").replace(/\{(\w+)\}/g, function (_, k) {
        var f = form.querySelector('[name="' + k + '"]');
        return f && f.selectedOptions && f.selectedOptions[0] ? f.selectedOptions[0].textContent : (f ? f.value : "");
      });
      var path = form.dataset.api.replace(/\{(\w+)\}/g, function (_, k) {
        var v = body[k];
        delete body[k];
        return encodeURIComponent(v || "");
      });
      var submit = form.querySelector('button[type="submit"]');
      submit.disabled = true;
      call(form.dataset.method || "POST", path, body, headers).then(function (r) {
        submit.disabled = false;
        if (!r.ok) {
          markInvalid(form, r);
          showError(box, problemText(r, form));
          return;
        }
        if (form.dataset.next === "org" && r.body && r.body.id) {
          done("The organisation " + r.body.name + " is created. Its admin " + body.admin_email + " is invited by e-mail.", "/partner/" + encodeURIComponent(r.body.id));
          return;
        }
        done(doneText);
      });
    });
  });

  // Buttons acting at once or, with data-confirm-title, after confirmation.
  var confirmDlg = $("confirm-dialog"), pending = null;
  function act(b, box) {
    var body = b.dataset.body ? JSON.parse(b.dataset.body) : undefined;
    b.disabled = true;
    return call(b.dataset.method || "POST", b.dataset.api, body).then(function (r) {
      b.disabled = false;
      if (!r.ok) {
        if (box) { showError(box, problemText(r)); } else { showFlashError(problemText(r)); }
        return false;
      }
      done(b.dataset.done || "Done.");
      return true;
    });
  }
  function showFlashError(text) {
    var el = $("partner-flash");
    if (!el) { return; }
    el.className = "flash err";
    el.setAttribute("role", "alert");
    el.textContent = text;
    el.hidden = false;
    el.scrollIntoView({ block: "nearest" });
  }
  document.querySelectorAll("button[data-api]").forEach(function (b) {
    b.addEventListener("click", function () {
      if (!b.dataset.confirmTitle || !confirmDlg) { act(b); return; }
      pending = b;
      $("confirm-h").textContent = b.dataset.confirmTitle;
      $("confirm-text").textContent = b.dataset.confirmText || "";
      var ok = $("confirm-ok");
      ok.textContent = b.dataset.confirmButton || "Confirm";
      ok.className = b.classList.contains("danger") || /^(Suspend|Delete)/.test(ok.textContent) ? "danger" : "";
      openDialog(confirmDlg, confirmDlg.querySelector("[data-close]"));
    });
    b.hidden = false;
  });
  if (confirmDlg) {
    $("confirm-ok").addEventListener("click", function () {
      if (!pending) { return; }
      var b = pending;
      act(b, confirmDlg.querySelector("[data-error]")).then(function (ok) { if (ok) { pending = null; } });
    });
  }

  Atrium.showFlash(flashKey, $("partner-flash"));
})();
