// Atrium web app, the drive page (see drive.js): the sharing dialog, with
// links, people, teams and the whole organisation; its shares listed and
// revocable.
"use strict";
(function () {
  var D = window.AtriumDrive;
  if (!D) { return; }
  var el = Atrium.el, call = D.call, api = D.api, say = D.say, showError = D.showError,
    openDialog = Atrium.openDialog;

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

  D.openShare = openShare;
})();
