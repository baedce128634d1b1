// Atrium calendar page (see calendar.js): the event form, to create, change
// or delete an event, its repeat rule (RFC 5545 RRULE) and which of a
// series' occurrences a change is for.
"use strict";
(function () {
  var C = window.AtriumCalendar;
  if (!C) { return; }
  var $ = C.$, API = C.API, DAY_CODES = C.DAY_CODES, TZ = C.TZ, addDays = C.addDays, api = C.api, flash = C.flash,
    localInput = C.localInput, parseLocal = C.parseLocal, parseYMD = C.parseYMD, range = C.range,
    rfc3339 = C.rfc3339, showError = C.showError, span = C.span, startOfDay = C.startOfDay, state = C.state,
    ymd = C.ymd, refresh = C.refresh;

  // ---- the event form ----
  var form = {
    dialog: $("ev-dialog"), f: $("ev-form"), title: $("ev-title"), cal: $("ev-cal"), allDay: $("ev-allday"),
    start: $("ev-start"), end: $("ev-end"), location: $("ev-location"), desc: $("ev-desc"),
    freq: $("ev-freq"), interval: $("ev-interval"), stop: $("ev-stop"), until: $("ev-until"), count: $("ev-count"),
    error: $("ev-error"), scope: $("ev-scope"), del: $("ev-delete"), exp: $("ev-export"),
    editing: null, // {ev, detail}
    attendees: [],
    rruleOrig: "", rruleDirty: false, opener: null
  };

  function setAllDay(on) {
    var sv = form.start.value, ev = form.end.value;
    if (on && form.start.type !== "date") {
      form.start.type = "date"; form.end.type = "date";
      form.start.value = sv.slice(0, 10);
      // The form shows the last day; the API takes the day after.
      form.end.value = (ev || sv).slice(0, 10);
    } else if (!on && form.start.type !== "datetime-local") {
      form.start.type = "datetime-local"; form.end.type = "datetime-local";
      form.start.value = sv ? sv.slice(0, 10) + "T09:00" : "";
      form.end.value = ev ? ev.slice(0, 10) + "T10:00" : "";
    }
    form.allDay.checked = on;
  }

  function recurUI() {
    var f = form.freq.value;
    $("ev-recur-more").hidden = !f || f === "CUSTOM";
    $("ev-days").hidden = f !== "WEEKLY";
    $("ev-until-wrap").hidden = form.stop.value !== "until";
    $("ev-count-wrap").hidden = form.stop.value !== "count";
    var rule = buildRRule();
    $("ev-rule").textContent = rule ? "Rule: " + rule : "";
  }

  function dayBoxes() { return Array.prototype.slice.call(document.querySelectorAll("#ev-days input")); }

  // buildRRule writes the RFC 5545 RRULE of the repeat fields ("" when it
  // does not repeat).
  function buildRRule() {
    var f = form.freq.value;
    if (!f) { return ""; }
    if (f === "CUSTOM") { return form.rruleOrig; }
    var parts = ["FREQ=" + f];
    var n = parseInt(form.interval.value, 10);
    if (n > 1) { parts.push("INTERVAL=" + n); }
    if (f === "WEEKLY") {
      var days = dayBoxes().filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
      if (days.length) { parts.push("BYDAY=" + days.join(",")); }
    }
    if (form.stop.value === "count") {
      var c = parseInt(form.count.value, 10);
      if (c > 0) { parts.push("COUNT=" + c); }
    } else if (form.stop.value === "until" && form.until.value) {
      if (form.allDay.checked) {
        parts.push("UNTIL=" + form.until.value.replace(/-/g, ""));
      } else {
        var u = parseYMD(form.until.value);
        u = new Date(u.getFullYear(), u.getMonth(), u.getDate(), 23, 59, 59);
        parts.push("UNTIL=" + u.toISOString().replace(/[-:]/g, "").replace(/\.\d+/, ""));
      }
    }
    return parts.join(";");
  }

  function parseRRule(rule, start) {
    form.rruleOrig = rule || "";
    form.freq.value = ""; form.interval.value = "1"; form.stop.value = ""; form.until.value = ""; form.count.value = "10";
    dayBoxes().forEach(function (b) { b.checked = b.value === DAY_CODES[start.getDay()]; });
    form.freq.querySelector('option[value="CUSTOM"]').hidden = true;
    if (!rule) { return; }
    var kv = {};
    rule.split(";").forEach(function (p) { var i = p.indexOf("="); if (i > 0) { kv[p.slice(0, i).toUpperCase()] = p.slice(i + 1); } });
    var known = { FREQ: 1, INTERVAL: 1, BYDAY: 1, UNTIL: 1, COUNT: 1, WKST: 1 };
    var simple = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"].indexOf(kv.FREQ) >= 0;
    Object.keys(kv).forEach(function (k) { if (!known[k]) { simple = false; } });
    if (kv.BYDAY && (kv.FREQ !== "WEEKLY" || !/^(MO|TU|WE|TH|FR|SA|SU)(,(MO|TU|WE|TH|FR|SA|SU))*$/.test(kv.BYDAY))) { simple = false; }
    if (!simple) {
      var o = form.freq.querySelector('option[value="CUSTOM"]');
      o.hidden = false;
      o.textContent = "Custom rule (kept as is)";
      form.freq.value = "CUSTOM";
      return;
    }
    form.freq.value = kv.FREQ;
    if (kv.INTERVAL) { form.interval.value = kv.INTERVAL; }
    if (kv.BYDAY) {
      form.daysTouched = true;
      var days = kv.BYDAY.split(",");
      dayBoxes().forEach(function (b) { b.checked = days.indexOf(b.value) >= 0; });
    }
    if (kv.COUNT) { form.stop.value = "count"; form.count.value = kv.COUNT; }
    else if (kv.UNTIL) {
      form.stop.value = "until";
      var m = /^(\d{4})(\d{2})(\d{2})(T(\d{2})(\d{2})(\d{2})(Z?))?$/.exec(kv.UNTIL);
      if (m) {
        var d = m[4] && m[8] ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[5], +m[6], +m[7])) : new Date(+m[1], +m[2] - 1, +m[3]);
        form.until.value = ymd(d);
      }
    }
  }

  function defaultStart() {
    var r = range(), now = new Date();
    var s;
    if (now >= r.start && now < r.end) {
      s = new Date(now.getFullYear(), now.getMonth(), now.getDate(), now.getHours() + 1, 0);
    } else {
      s = new Date(r.start.getFullYear(), r.start.getMonth(), r.start.getDate(), 9, 0);
    }
    return s;
  }

  function openDialog(d, opener) {
    form.opener = opener || null;
    d.showModal();
  }
  var closeDialog = Atrium.closeDialog;
  [$("ev-dialog"), $("cal-dialog")].forEach(function (d) {
    d.addEventListener("close", function () {
      var o = d === form.dialog ? form.opener : C.cdState.opener;
      if (o && document.body.contains(o)) { o.focus(); } else { $("cal-new").focus(); }
    });
  });

  function resetForm() {
    form.f.reset();
    showError(form.error, null);
    $("ev-confirm").hidden = true;
    form.attendees = [];
    C.renderAttendees();
    form.rruleDirty = false;
    form.daysTouched = false;
    setAllDay(false);
  }

  function openNew(opener, at) {
    resetForm();
    form.editing = null;
    $("ev-h").textContent = "New event";
    var s = at || defaultStart();
    form.start.value = localInput(s);
    form.end.value = localInput(new Date(s.getTime() + 3600e3));
    var def = state.calendars.filter(function (c) { return state.hidden.indexOf(c.id) < 0; })[0] || state.calendars[0];
    if (def) { form.cal.value = def.id; }
    form.cal.disabled = false;
    parseRRule("", s);
    form.scope.hidden = true;
    form.del.hidden = true;
    form.exp.hidden = true;
    $("ev-recur").disabled = false;
    recurUI();
    openDialog(form.dialog, opener);
    form.title.focus();
    C.loadDirectory();
  }

  function openEventDialog(ev, opener) {
    resetForm();
    form.editing = { ev: ev, detail: null };
    $("ev-h").textContent = "Edit event";
    form.title.value = ev.title;
    form.cal.value = ev.calendar_id;
    form.cal.disabled = true;
    var s = span(ev);
    if (ev.all_day) {
      setAllDay(true);
      form.start.value = ymd(s.start);
      form.end.value = ymd(addDays(s.end, -1));
    } else {
      form.start.value = localInput(s.start);
      form.end.value = localInput(s.end);
    }
    form.location.value = ev.location || "";
    var occ = !!ev.occurrence_date;
    form.scope.hidden = !occ;
    form.f.querySelector('input[name="scope"][value="this"]').checked = true;
    form.del.hidden = false;
    form.exp.hidden = false;
    form.exp.href = API + "/calendar/calendars/" + encodeURIComponent(ev.calendar_id) + "/events/" + encodeURIComponent(ev.uid) + "/event.ics";
    parseRRule("", s.start);
    scopeUI();
    recurUI();
    openDialog(form.dialog, opener);
    form.title.focus();
    C.loadDirectory();
    api("GET", "/calendar/calendars/" + encodeURIComponent(ev.calendar_id) + "/events/" + encodeURIComponent(ev.uid)).then(function (det) {
      if (!form.editing || form.editing.ev !== ev) { return; }
      form.editing.detail = det;
      if (!form.desc.value) { form.desc.value = det.description || ""; }
      var startForRule = det.start ? new Date(det.start) : s.start;
      if (!form.rruleDirty) { parseRRule(det.rrule || "", startForRule); }
      form.attendees = (det.attendees || []).map(function (a) { return { email: a.email, name: a.name || "" }; });
      C.renderAttendees();
      scopeUI();
      recurUI();
    }, function (err) { showError(form.error, err); });
  }

  // scopeUI: repeat rules are changed on the series (or the following), not on
  // one occurrence.
  function scopeUI() {
    var sc = currentScope();
    $("ev-recur").disabled = !!(form.editing && form.editing.ev.occurrence_date && sc === "this");
  }
  function currentScope() {
    var r = form.f.querySelector('input[name="scope"]:checked');
    return r ? r.value : "this";
  }

  function timesFromForm() {
    if (form.allDay.checked) {
      if (!form.start.value) { return { error: "Start: enter a date." }; }
      var sd = parseYMD(form.start.value);
      var ed = form.end.value ? parseYMD(form.end.value) : sd;
      if (ed < sd) { return { error: "End: the last day is before the first." }; }
      return { start: ymd(sd), end: ymd(addDays(ed, 1)), allDay: true };
    }
    var s = parseLocal(form.start.value), e = parseLocal(form.end.value);
    if (!s) { return { error: "Start: enter a date and a time." }; }
    if (!e) { return { error: "End: enter a date and a time." }; }
    if (e <= s) { return { error: "End: must be after the start." }; }
    return { start: rfc3339(s), end: rfc3339(e), allDay: false, s: s, e: e };
  }

  form.f.addEventListener("submit", function (e) {
    e.preventDefault();
    showError(form.error, null);
    var title = form.title.value.trim();
    if (!title) { showError(form.error, new Error("Title: enter a title.")); form.title.focus(); return; }
    var t = timesFromForm();
    if (t.error) { showError(form.error, new Error(t.error)); return; }
    if (form.freq.value === "WEEKLY" && !dayBoxes().some(function (b) { return b.checked; })) {
      showError(form.error, new Error("Repeat: choose at least one day.")); return;
    }
    var body = {
      title: title, start: t.start, end: t.end, all_day: t.allDay,
      location: form.location.value, description: form.desc.value
    };
    if (!t.allDay) { body.timezone = TZ; }
    var attendees = form.attendees.map(function (a) { return a.name ? { email: a.email, name: a.name } : { email: a.email }; });
    var rule = buildRRule();
    var p, ed = form.editing, calId = form.cal.value;
    var save = $("ev-save");
    save.disabled = true;
    if (!ed) {
      if (rule) { body.rrule = rule; }
      if (attendees.length) { body.attendees = attendees; }
      p = api("POST", "/calendar/calendars/" + encodeURIComponent(calId) + "/events", body);
    } else {
      body.attendees = attendees;
      var base = "/calendar/calendars/" + encodeURIComponent(ed.ev.calendar_id) + "/events/" + encodeURIComponent(ed.ev.uid);
      if (ed.ev.occurrence_date) {
        body.scope = currentScope();
        if (body.scope !== "this" && form.rruleDirty) { body.rrule = rule; }
        p = api("PUT", base + "/occurrences/" + encodeURIComponent(ed.ev.occurrence_date), body);
      } else {
        if (form.rruleDirty || rule !== form.rruleOrig) { body.rrule = rule; }
        var etag = ed.detail && ed.detail.etag;
        p = fetchPut(base, body, etag);
      }
    }
    p.then(function () {
      save.disabled = false;
      closeDialog(form.dialog);
      flash(ed ? "The event is saved." : "The event is created.");
      if (!ed && t.s && (t.s < range().gridStart || t.s >= range().gridEnd)) { state.anchor = startOfDay(t.s); }
      refresh();
    }, function (err) {
      save.disabled = false;
      showError(form.error, err);
    });
  });

  function fetchPut(path, body, etag) {
    return api("PUT", path, body, etag ? { "If-Match": '"' + etag.replace(/"/g, "") + '"' } : {}).catch(function (err) {
      if (err.status === 412) { throw new Error("Someone changed this event meanwhile. Close the form and open the event again."); }
      throw err;
    });
  }

  $("ev-cancel").addEventListener("click", function () { closeDialog(form.dialog); });
  form.allDay.addEventListener("change", function () { setAllDay(form.allDay.checked); recurUI(); C.busy(); });
  form.start.addEventListener("change", function () {
    // Moving the start keeps the length.
    if (!form.allDay.checked) {
      var s = parseLocal(form.start.value), e = parseLocal(form.end.value);
      if (s && (!e || e <= s)) { form.end.value = localInput(new Date(s.getTime() + 3600e3)); }
    } else if (form.end.value < form.start.value) {
      form.end.value = form.start.value;
    }
    followStart();
    C.busy();
  });
  form.end.addEventListener("change", function () { C.busy(); });
  ["ev-freq", "ev-interval", "ev-stop", "ev-until", "ev-count"].forEach(function (id) {
    $(id).addEventListener("change", function () {
      form.rruleDirty = true;
      if (id === "ev-freq" && form.freq.value !== "CUSTOM") { form.freq.querySelector('option[value="CUSTOM"]').hidden = true; followStart(); }
      recurUI();
    });
  });
  $("ev-days").addEventListener("change", function () { form.rruleDirty = true; form.daysTouched = true; recurUI(); });
  // followStart: until the person picks the days of a weekly rule, the rule
  // repeats on the start's weekday.
  function followStart() {
    if (form.daysTouched || form.freq.value === "CUSTOM") { return; }
    var v = form.start.value;
    if (!v) { return; }
    var code = DAY_CODES[parseYMD(v.slice(0, 10)).getDay()];
    dayBoxes().forEach(function (b) { b.checked = b.value === code; });
    recurUI();
  }
  form.scope.addEventListener("change", scopeUI);

  form.del.addEventListener("click", function () {
    var ed = form.editing;
    if (!ed) { return; }
    var sc = ed.ev.occurrence_date ? currentScope() : "all";
    $("ev-confirm-text").textContent = sc === "this" ? "Delete only this occurrence?" :
      sc === "this_and_following" ? "Delete this occurrence and all the following?" : "Delete this event" + (ed.ev.is_recurring ? " and all its occurrences?" : "?");
    $("ev-confirm").hidden = false;
    $("ev-confirm-yes").focus();
  });
  $("ev-confirm-no").addEventListener("click", function () { $("ev-confirm").hidden = true; form.del.focus(); });
  $("ev-confirm-yes").addEventListener("click", function () {
    var ed = form.editing;
    var base = "/calendar/calendars/" + encodeURIComponent(ed.ev.calendar_id) + "/events/" + encodeURIComponent(ed.ev.uid);
    var p = ed.ev.occurrence_date ?
      api("DELETE", base + "/occurrences/" + encodeURIComponent(ed.ev.occurrence_date) + "?delete_scope=" + currentScope()) :
      api("DELETE", base);
    p.then(function () {
      closeDialog(form.dialog);
      flash("The event is deleted.");
      refresh();
    }, function (err) { $("ev-confirm").hidden = true; showError(form.error, err); });
  });

  C.form = form;
  C.timesFromForm = timesFromForm;
  C.openNew = openNew;
  C.openEventDialog = openEventDialog;
})();
