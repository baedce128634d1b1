// Atrium admin pages of webhooks and service principals: every change goes
// through the REST API (/api/v1/webhooks/..., /api/v1/developer/...) with the
// session cookie and its X-CSRF-Token. User text reaches the DOM only through
// textContent and form values. A secret is shown once, in the secret dialog.
"use strict";
(function () {

  var $ = Atrium.$;

  // call sends a request to the REST API and resolves with {status, ok, body}.
  var call = Atrium.request;

  // problemText is what a person reads of a failed request.
  var problemText = Atrium.problemText;

  function showError(box, text) { Atrium.showError(box, text, true); }
  function clearError(box) { Atrium.showError(box, ""); }

  // Dialogs: opened modal; focus returns to the control that opened them
  // (Atrium.openDialog).
  var openDialog = Atrium.openDialog;
  var closeDialog = Atrium.closeDialog;

  // The secret dialog shows a secret once; Done reloads the page.
  function showSecret(title, label, note, value) {
    var d = $("secret-dialog");
    $("secret-dialog-h").textContent = title;
    $("secret-label").textContent = label;
    $("secret-note").textContent = note;
    $("secret-value").value = value;
    d.showModal();
    $("secret-value").focus();
  }
  var secretDone = $("secret-done");
  if (secretDone) {
    secretDone.addEventListener("click", function () {
      $("secret-value").value = "";
      closeDialog($("secret-dialog"));
      location.reload();
    });
    $("secret-dialog").addEventListener("cancel", function (ev) { ev.preventDefault(); });
  }

  // Confirmed actions: buttons with data-confirm (the URL), data-method,
  // data-title, data-text, data-ok and, when the answer carries a secret to
  // show once, data-secret (its field).
  var pending = null;
  document.querySelectorAll("button[data-confirm]").forEach(function (b) {
    b.addEventListener("click", function () {
      pending = b;
      $("confirm-dialog-h").textContent = b.dataset.title;
      $("confirm-dialog-text").textContent = b.dataset.text;
      $("confirm-ok").textContent = b.dataset.ok;
      clearError($("confirm-error"));
      openDialog($("confirm-dialog"), $("confirm-dialog").querySelector("[data-close]"));
    });
  });
  var ok = $("confirm-ok");
  if (ok) {
    ok.addEventListener("click", function () {
      var b = pending;
      if (!b) { return; }
      ok.disabled = true;
      call(b.dataset.method || "POST", b.dataset.confirm).then(function (r) {
        ok.disabled = false;
        if (!r.ok) { showError($("confirm-error"), problemText(r)); return; }
        closeDialog($("confirm-dialog"));
        if (b.dataset.secret) {
          showSecret(b.dataset.secretTitle, b.dataset.secretLabel,
            "Copy it now: it is shown only this once. The previous secret no longer signs deliveries.", (r.body || {})[b.dataset.secret] || "");
          return;
        }
        location.reload();
      });
    });
  }

  // Pause and resume.
  document.querySelectorAll("button[data-patch]").forEach(function (b) {
    b.addEventListener("click", function () {
      b.disabled = true;
      call("PATCH", b.dataset.patch, { is_active: b.dataset.active === "true" }).then(function (r) {
        b.disabled = false;
        if (!r.ok) { showError($("hooks-error"), problemText(r)); return; }
        location.reload();
      });
    });
  });

  // New webhook.
  var newHook = $("new-hook");
  if (newHook) {
    var hd = $("hook-dialog");
    newHook.addEventListener("click", function () {
      $("hook-form").reset();
      clearError($("hook-form-error"));
      openDialog(hd, $("hook-url"));
    });
    $("hook-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var f = ev.target;
      var events = Array.prototype.map.call(f.querySelectorAll('input[name="event"]:checked'), function (c) { return c.value; });
      var btn = f.querySelector('button[type="submit"]');
      btn.disabled = true;
      call("POST", "/api/v1/webhooks/subscriptions", { url: f.url.value.trim(), description: f.description.value.trim(), events: events })
        .then(function (r) {
          btn.disabled = false;
          if (!r.ok) { showError($("hook-form-error"), problemText(r)); return; }
          closeDialog(hd);
          showSecret("Webhook created", "Signing secret",
            "Copy the signing secret now: it is shown only this once. Your receiver checks each delivery's X-Service-Signature-256 with it.",
            r.body.signing_secret || "");
        });
    });
  }

  // Replay a failed or skipped delivery, then follow it until it is settled.
  document.querySelectorAll("button[data-replay]").forEach(function (b) {
    b.addEventListener("click", function () {
      b.disabled = true;
      var id = b.dataset.deliveryId;
      var list = b.dataset.replay.replace(/\/[^/]+\/replay$/, "");
      call("POST", b.dataset.replay).then(function (r) {
        if (!r.ok) { b.disabled = false; showError($("hooks-error"), problemText(r)); return; }
        var st = $("hooks-status");
        st.textContent = "Replaying the delivery…";
        st.hidden = false;
        var tries = 0;
        var poll = function () {
          tries++;
          call("GET", list + "?limit=100").then(function (lr) {
            var d = ((lr.body || {}).items || []).filter(function (x) { return x.id === id; })[0];
            var settled = d && d.status !== "pending" && d.status !== "retrying";
            if (settled || tries >= 20) {
              location.hash = "d-" + id;
              location.reload();
              return;
            }
            setTimeout(poll, 1000);
          });
        };
        setTimeout(poll, 500);
      });
    });
  });
  // The delivery named in the address is opened.
  if (location.hash.indexOf("#d-") === 0) {
    var li = document.getElementById(location.hash.slice(1));
    var det = li && li.querySelector("details");
    if (det) { det.open = true; li.scrollIntoView(); }
  }

  // New service principal.
  var newSP = $("new-principal");
  if (newSP) {
    var pd = $("principal-dialog");
    newSP.addEventListener("click", function () {
      $("principal-form").reset();
      clearError($("principal-form-error"));
      openDialog(pd, $("principal-name"));
    });
    $("principal-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var f = ev.target;
      var scopes = Array.prototype.map.call(f.querySelectorAll('input[name="scope"]:checked'), function (c) { return c.value; });
      if (!f.name.value.trim()) { showError($("principal-form-error"), "Name: enter a name."); return; }
      if (scopes.length === 0) { showError($("principal-form-error"), "Scopes: choose at least one scope."); return; }
      var btn = f.querySelector('button[type="submit"]');
      btn.disabled = true;
      call("POST", "/api/v1/developer/service-principals", { name: f.name.value.trim(), scopes: scopes }).then(function (r) {
        btn.disabled = false;
        if (!r.ok) { showError($("principal-form-error"), problemText(r)); return; }
        closeDialog(pd);
        location.reload();
      });
    });
  }

  // New token of a service principal: shown once.
  var td = $("token-dialog");
  var tokenURL = "";
  document.querySelectorAll("button[data-new-token]").forEach(function (b) {
    b.addEventListener("click", function () {
      tokenURL = b.dataset.newToken;
      $("token-form").reset();
      $("token-dialog-h").textContent = "New token for " + b.dataset.name;
      clearError($("token-form-error"));
      openDialog(td, $("token-name"));
    });
  });
  if (td) {
    $("token-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var f = ev.target;
      var days = parseInt(f.ttl_days.value, 10) || 0;
      var btn = f.querySelector('button[type="submit"]');
      btn.disabled = true;
      call("POST", tokenURL, { name: f.name.value.trim(), ttl_seconds: days * 86400 }).then(function (r) {
        btn.disabled = false;
        if (!r.ok) { showError($("token-form-error"), problemText(r)); return; }
        closeDialog(td);
        showSecret("New token", "Token",
          "Copy the token now: it is shown only this once. Programs send it as Authorization: Bearer followed by the token.",
          r.body.token || "");
      });
    });
  }
})();
