// Atrium calendar page (see calendar.js): the calendar form (create, rename,
// recolour, delete a calendar) and the import of an iCalendar file.
"use strict";
(function () {
  var C = window.AtriumCalendar;
  if (!C) { return; }
  var $ = C.$, PALETTE = C.PALETTE, TZ = C.TZ, api = C.api, colorOf = C.colorOf, el = C.el, flash = C.flash,
    loadCalendars = C.loadCalendars, loadEvents = C.loadEvents, showError = C.showError, state = C.state,
    refresh = C.refresh, closeDialog = Atrium.closeDialog;

  // ---- the calendar form ----
  var cdState = { editing: null, opener: null };
  function openCalendarDialog(cal, opener) {
    cdState.editing = cal;
    cdState.opener = opener;
    $("cd-form").reset();
    showError($("cd-error"), null);
    $("cd-confirm").hidden = true;
    $("cd-h").textContent = cal ? "Edit calendar" : "New calendar";
    $("cd-name").value = cal ? cal.name : "";
    $("cd-color").value = cal ? colorOf(cal.id) : PALETTE[state.calendars.length % PALETTE.length];
    $("cd-zone").value = cal ? cal.timezone : TZ;
    $("cd-delete").hidden = !cal || cal.is_default;
    var zl = $("cd-zones");
    if (!zl.children.length && Intl.supportedValuesOf) {
      try { Intl.supportedValuesOf("timeZone").forEach(function (z) { var o = el("option"); o.value = z; zl.append(o); }); } catch (e) { /* no list */ }
    }
    $("cal-dialog").showModal();
    $("cd-name").focus();
  }
  $("cal-add").addEventListener("click", function () { openCalendarDialog(null, $("cal-add")); });
  $("cd-cancel").addEventListener("click", function () { closeDialog($("cal-dialog")); });
  $("cd-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var name = $("cd-name").value.trim();
    if (!name) { showError($("cd-error"), new Error("Name: enter a name.")); $("cd-name").focus(); return; }
    var body = { name: name, color: $("cd-color").value, timezone: $("cd-zone").value.trim() };
    var cal = cdState.editing;
    var p = cal ? api("PATCH", "/calendar/calendars/" + encodeURIComponent(cal.id), body) : api("POST", "/calendar/calendars", body);
    p.then(function (c) {
      closeDialog($("cal-dialog"));
      flash(cal ? "The calendar is saved." : "The calendar “" + c.name + "” is created.");
      return loadCalendars().then(refresh);
    }, function (err) { showError($("cd-error"), err); });
  });
  $("cd-delete").addEventListener("click", function () { $("cd-confirm").hidden = false; $("cd-confirm-yes").focus(); });
  $("cd-confirm-no").addEventListener("click", function () { $("cd-confirm").hidden = true; $("cd-delete").focus(); });
  $("cd-confirm-yes").addEventListener("click", function () {
    var cal = cdState.editing;
    api("DELETE", "/calendar/calendars/" + encodeURIComponent(cal.id)).then(function () {
      cdState.opener = $("cal-add");
      closeDialog($("cal-dialog"));
      flash("The calendar is deleted.");
      return loadCalendars().then(refresh);
    }, function (err) { $("cd-confirm").hidden = true; showError($("cd-error"), err); });
  });

  // ---- import ----
  $("cal-import").addEventListener("submit", function (e) {
    e.preventDefault();
    var file = $("cal-import-file").files[0];
    var out = $("cal-import-result");
    out.replaceChildren();
    if (!file) { out.append(el("p", "flash err", "Choose an .ics file first.")); return; }
    var fd = new FormData();
    fd.append("file", file, file.name);
    out.append(el("p", "muted", "Importing " + file.name + "…"));
    api("POST", "/calendar/calendars/" + encodeURIComponent($("cal-import-into").value) + "/import", fd).then(function (r) {
      out.replaceChildren();
      out.append(el("p", "flash ok", "Imported " + r.imported + ", updated " + r.updated + ", skipped " + r.skipped +
        ((r.errors || []).length ? ", " + r.errors.length + " not imported" : "") + "."));
      var lists = [["Not imported", r.errors || []], ["Repaired", r.fixes || []]];
      lists.forEach(function (l) {
        if (!l[1].length) { return; }
        var d = el("details");
        d.append(el("summary", null, l[0] + " (" + l[1].length + ")"));
        var ul = el("ul");
        l[1].slice(0, 100).forEach(function (x) { ul.append(el("li", null, (x.uid ? x.uid + ": " : "") + x.message)); });
        d.append(ul);
        out.append(d);
      });
      $("cal-import").reset();
      loadEvents();
    }, function (err) {
      out.replaceChildren(el("p", "flash err", "Import failed: " + err.message));
    });
  });

  C.openCalendarDialog = openCalendarDialog;
  C.cdState = cdState;
})();
