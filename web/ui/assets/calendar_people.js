// Atrium calendar page (see calendar.js): the attendees of the event form,
// chosen from the organisation's directory, and their free/busy on the
// chosen day.
"use strict";
(function () {
  var C = window.AtriumCalendar;
  if (!C) { return; }
  var $ = C.$, ME = C.ME, addDays = C.addDays, api = C.api, el = C.el, fmtDayLong = C.fmtDayLong,
    fmtTime = C.fmtTime, parseYMD = C.parseYMD, rfc3339 = C.rfc3339, showError = C.showError,
    startOfDay = C.startOfDay, state = C.state, form = C.form, timesFromForm = C.timesFromForm;

  // ---- attendees and free/busy ----
  function loadDirectory() {
    if (state.directory) { return; }
    state.directory = [];
    api("GET", "/contacts/directory").then(function (list) {
      state.directory = list || [];
      var dl = $("ev-directory");
      dl.replaceChildren();
      state.directory.forEach(function (p) {
        if (p.email === ME) { return; }
        var o = el("option");
        o.value = p.email;
        o.label = p.display_name || p.email;
        o.textContent = (p.display_name || p.email);
        dl.append(o);
      });
    }, function () { state.directory = []; });
  }
  function findPerson(text) {
    var t = text.trim().toLowerCase();
    if (!t) { return null; }
    var m = /<([^>]+)>\s*$/.exec(text);
    if (m) { t = m[1].trim().toLowerCase(); }
    var hit = (state.directory || []).filter(function (p) {
      return p.email.toLowerCase() === t || (p.display_name || "").toLowerCase() === t;
    })[0];
    if (hit) { return { email: hit.email, name: hit.display_name || "" }; }
    if (/^[^\s@]+@[^\s@]+$/.test(t)) { return { email: t, name: "" }; }
    return null;
  }
  $("ev-person-add").addEventListener("click", addPerson);
  $("ev-person").addEventListener("keydown", function (e) { if (e.key === "Enter") { e.preventDefault(); addPerson(); } });
  function addPerson() {
    var input = $("ev-person");
    var p = findPerson(input.value);
    if (!p) { showError(form.error, new Error("Invite: pick someone of your organisation or type an e-mail address.")); input.focus(); return; }
    showError(form.error, null);
    if (!form.attendees.some(function (a) { return a.email.toLowerCase() === p.email.toLowerCase(); })) { form.attendees.push(p); }
    input.value = "";
    renderAttendees();
    input.focus();
  }
  function renderAttendees() {
    var ul = $("ev-attendees");
    ul.replaceChildren();
    form.attendees.forEach(function (a, i) {
      var li = el("li");
      li.append(el("span", null, a.name ? a.name + " <" + a.email + ">" : a.email));
      var rm = el("button", "link", "Remove");
      rm.type = "button";
      rm.setAttribute("aria-label", "Remove " + (a.name || a.email));
      rm.addEventListener("click", function () { form.attendees.splice(i, 1); renderAttendees(); $("ev-person").focus(); });
      li.append(rm);
      ul.append(li);
    });
    busy();
  }
  var busySeq = 0;
  // busy shows the free/busy of the attendees on the chosen day, and whether
  // they are busy at the chosen time.
  function busy() {
    var box = $("ev-busy");
    var seq = ++busySeq;
    if (!form.attendees.length) { box.replaceChildren(); return; }
    var day = form.start.value ? parseYMD(form.start.value.slice(0, 10)) : startOfDay(new Date());
    var t = timesFromForm();
    var emails = form.attendees.map(function (a) { return a.email; });
    api("POST", "/calendar/freebusy", { attendees: emails, start: rfc3339(day), end: rfc3339(addDays(day, 1)) }).then(function (fb) {
      if (seq !== busySeq) { return; }
      box.replaceChildren();
      box.append(el("h3", null, "Busy on " + fmtDayLong.format(day)));
      var ul = el("ul");
      var found = {};
      (fb.attendees || []).forEach(function (a) { found[a.email.toLowerCase()] = a; });
      form.attendees.forEach(function (p) {
        var li = el("li");
        var a = found[p.email.toLowerCase()];
        var who = p.name || p.email;
        if (!a) {
          li.textContent = who + ": not in your organisation, no free/busy.";
        } else {
          var own = form.editing;
          var clash = false;
          var times = (a.busy || []).map(function (iv) {
            var s = new Date(iv.start), e = new Date(iv.end);
            if (t.s && s < t.e && e > t.s) { clash = true; }
            return fmtTime.format(s) + "–" + fmtTime.format(e);
          });
          li.append(el("strong", null, who + ": "));
          li.append(document.createTextNode(times.length ? "busy " + times.join(", ") : "free all day"));
          if (clash) { li.append(el("span", "badge cal-clash", own ? "busy at this time (maybe this event)" : "busy at this time")); }
          var bar = el("span", "cal-busybar");
          bar.setAttribute("aria-hidden", "true");
          (a.busy || []).forEach(function (iv) {
            var s = Math.max(0, (new Date(iv.start) - day) / 864e5), e = Math.min(1, (new Date(iv.end) - day) / 864e5);
            var seg = el("span");
            seg.style.left = (s * 100) + "%";
            seg.style.width = Math.max(0.5, (e - s) * 100) + "%";
            bar.append(seg);
          });
          li.append(bar);
        }
        ul.append(li);
      });
      box.append(ul);
    }, function (err) {
      if (seq !== busySeq) { return; }
      box.replaceChildren(el("p", "muted", "Free/busy unavailable: " + err.message));
    });
  }

  C.busy = busy;
  C.loadDirectory = loadDirectory;
  C.renderAttendees = renderAttendees;
})();
