// Atrium calendar page: month, week and day views in the browser's time zone,
// events and calendars changed through the REST API (/api/v1/calendar/...)
// with the session cookie and the page's anti-forgery token. User text goes
// into the page with textContent only.
//
// The page's scripts, one per view or feature, loaded in this order
// (templates/calendar.html, all deferred): calendar.js (this one: the state,
// dates, the REST API, the calendars, the month view and the week as a list,
// and window.AtriumCalendar, what the others share), calendar_grid.js (the
// hourly grid of the week and day views), calendar_event.js (the event
// form), calendar_people.js (attendees and their free/busy) and
// calendar_manage.js (the calendar form and import). Each adds what it
// offers to window.AtriumCalendar; the page starts once all are loaded
// (DOMContentLoaded follows the deferred scripts).
"use strict";
(function () {
  var root = document.getElementById("cal");
  if (!root) { return; }
  var API = "/api/v1";
  var TZ = (Intl.DateTimeFormat().resolvedOptions().timeZone) || "UTC";
  var ME = root.dataset.email || "";
  var DAY_CODES = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"];
  var PALETTE = ["#0b5cad", "#1b7f3b", "#a4262c", "#8a4baf", "#b35900", "#00758f", "#5c6bc0", "#6d4c41"];

  var $ = Atrium.$;
  var el = function (tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  };

  // ---- state ----
  var state = {
    view: localStorage.getItem("atrium.cal.view") || (window.matchMedia("(max-width: 40rem)").matches ? "week" : "month"),
    anchor: startOfDay(new Date()),
    calendars: [],
    hidden: readHidden(),
    events: [],
    directory: null,
    seq: 0
  };
  if (["month", "week", "day"].indexOf(state.view) < 0) { state.view = "month"; }

  function readHidden() {
    try { return JSON.parse(localStorage.getItem("atrium.cal.hidden") || "[]"); } catch (e) { return []; }
  }
  function saveHidden() { localStorage.setItem("atrium.cal.hidden", JSON.stringify(state.hidden)); }

  // ---- dates (local time = the browser's time zone) ----
  function startOfDay(d) { return new Date(d.getFullYear(), d.getMonth(), d.getDate()); }
  function addDays(d, n) { return new Date(d.getFullYear(), d.getMonth(), d.getDate() + n, d.getHours(), d.getMinutes()); }
  function addMonths(d, n) { return new Date(d.getFullYear(), d.getMonth() + n, 1); }
  function startOfWeek(d) { var s = startOfDay(d); return addDays(s, -((s.getDay() + 6) % 7)); } // Monday
  function sameDay(a, b) { return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate(); }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function ymd(d) { return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()); }
  function localInput(d) { return ymd(d) + "T" + pad(d.getHours()) + ":" + pad(d.getMinutes()); }
  // rfc3339 writes a local time with the zone's offset at that instant.
  function rfc3339(d) {
    var off = -d.getTimezoneOffset();
    var sign = off >= 0 ? "+" : "-";
    off = Math.abs(off);
    return localInput(d) + ":" + pad(d.getSeconds()) + sign + pad(Math.floor(off / 60)) + ":" + pad(off % 60);
  }
  function parseYMD(s) { var p = s.split("-"); return new Date(+p[0], +p[1] - 1, +p[2]); }
  function parseLocal(s) { // "YYYY-MM-DDTHH:MM" in local time
    var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(s || "");
    return m ? new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]) : null;
  }
  var fmtTime = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
  var fmtMonth = new Intl.DateTimeFormat(undefined, { month: "long", year: "numeric" });
  var fmtDayLong = new Intl.DateTimeFormat(undefined, { weekday: "long", day: "numeric", month: "long", year: "numeric" });
  var fmtDayShort = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", month: "short" });
  var fmtWeekday = new Intl.DateTimeFormat(undefined, { weekday: "short" });
  var fmtDate = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "long", year: "numeric" });

  // range is the period the view shows: [start, end) local midnights, and the
  // days of its grid.
  function range() {
    var a = state.anchor, start, end, gridStart, gridEnd;
    if (state.view === "month") {
      start = new Date(a.getFullYear(), a.getMonth(), 1);
      end = addMonths(start, 1);
      gridStart = startOfWeek(start);
      gridEnd = startOfWeek(addDays(end, 6));
    } else if (state.view === "week") {
      gridStart = start = startOfWeek(a);
      gridEnd = end = addDays(start, 7);
    } else {
      gridStart = start = startOfDay(a);
      gridEnd = end = addDays(start, 1);
    }
    return { start: start, end: end, gridStart: gridStart, gridEnd: gridEnd };
  }

  function periodTitle(r) {
    if (state.view === "month") { return fmtMonth.format(r.start); }
    if (state.view === "day") { return fmtDayLong.format(r.start); }
    var last = addDays(r.end, -1);
    if (fmtDate.formatRange) { return "Week of " + fmtDate.formatRange(r.start, last); }
    return "Week of " + fmtDate.format(r.start) + " – " + fmtDate.format(last);
  }

  // ---- the REST API ----
  // api calls the REST API (Atrium.fetchJSON, under API).
  function api(method, path, body, headers) { return Atrium.fetchJSON(method, API + path, body, headers); }
  var showError = Atrium.showError;
  function flash(text) {
    var f = $("cal-flash");
    f.textContent = text;
    f.hidden = !text;
  }

  // ---- calendars ----
  function calById(id) {
    for (var i = 0; i < state.calendars.length; i++) { if (state.calendars[i].id === id) { return state.calendars[i]; } }
    return null;
  }
  function colorOf(id) {
    var c = calById(id);
    var col = c && c.color;
    if (col && /^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/.test(col)) { return col.slice(0, 7); }
    var i = state.calendars.indexOf(c);
    return PALETTE[(i < 0 ? 0 : i) % PALETTE.length];
  }
  function loadCalendars() {
    return api("GET", "/calendar/calendars").then(function (cals) {
      state.calendars = (cals || []).slice().sort(function (a, b) {
        if (a.is_default !== b.is_default) { return a.is_default ? -1 : 1; }
        return a.name.localeCompare(b.name);
      });
      renderCalendars();
    });
  }
  function renderCalendars() {
    var list = $("cal-list");
    list.replaceChildren();
    state.calendars.forEach(function (c) {
      var li = el("li");
      li.style.setProperty("--cal-color", colorOf(c.id));
      var lab = el("label", "check");
      var box = el("input");
      box.type = "checkbox";
      box.checked = state.hidden.indexOf(c.id) < 0;
      box.addEventListener("change", function () {
        state.hidden = state.hidden.filter(function (x) { return x !== c.id; });
        if (!box.checked) { state.hidden.push(c.id); }
        saveHidden();
        renderView();
      });
      lab.append(box, el("span", "cal-swatch"), el("span", "cal-name", c.name));
      var tools = el("span", "cal-tools");
      var edit = el("button", "link", "Edit");
      edit.type = "button";
      edit.setAttribute("aria-label", "Edit calendar " + c.name);
      edit.addEventListener("click", function () { C.openCalendarDialog(c, edit); });
      var exp = el("a", "cal-link", "Export");
      exp.href = API + "/calendar/calendars/" + encodeURIComponent(c.id) + "/export.ics";
      exp.setAttribute("download", "");
      exp.setAttribute("aria-label", "Export calendar " + c.name + " (.ics)");
      tools.append(edit, exp);
      li.append(lab, tools);
      list.append(li);
    });
    [$("ev-cal"), $("cal-import-into")].forEach(function (sel) {
      var keep = sel.value;
      sel.replaceChildren();
      state.calendars.forEach(function (c) {
        var o = el("option", null, c.name);
        o.value = c.id;
        sel.append(o);
      });
      if (keep && calById(keep)) { sel.value = keep; }
    });
  }

  // ---- events ----
  function loadEvents() {
    var r = range();
    var seq = ++state.seq;
    $("cal-view").setAttribute("aria-busy", "true");
    var q = "?start=" + encodeURIComponent(rfc3339(r.gridStart)) + "&end=" + encodeURIComponent(rfc3339(r.gridEnd));
    return api("GET", "/calendar/events" + q).then(function (evs) {
      if (seq !== state.seq) { return; }
      state.events = (evs || []).filter(function (e) { return !e.cancelled; });
      showError($("cal-error"), null);
      renderView();
    }, function (err) {
      if (seq !== state.seq) { return; }
      state.events = [];
      renderView();
      showError($("cal-error"), err);
    });
  }

  // span gives an event's local [start, end) for placing it on days; all-day
  // events keep their dates whatever the offset they are sent with.
  function span(ev) {
    if (ev.all_day) {
      var s = parseYMD(ev.start.slice(0, 10));
      var e = parseYMD(ev.end.slice(0, 10));
      if (e <= s) { e = addDays(s, 1); }
      return { start: s, end: e };
    }
    var st = new Date(ev.start), en = new Date(ev.end);
    if (en <= st) { en = new Date(st.getTime() + 1); }
    return { start: st, end: en };
  }
  function eventsOn(day) {
    var next = addDays(day, 1);
    return state.events.filter(function (ev) {
      if (state.hidden.indexOf(ev.calendar_id) >= 0) { return false; }
      var s = span(ev);
      return s.start < next && s.end > day;
    }).sort(function (a, b) {
      if (a.all_day !== b.all_day) { return a.all_day ? -1 : 1; }
      return span(a).start - span(b).start || a.title.localeCompare(b.title);
    });
  }
  function timeLabel(ev, day) {
    if (ev.all_day) { return "All day"; }
    var s = span(ev);
    if (s.start < day) { return "…" + fmtTime.format(s.end); }
    return fmtTime.format(s.start);
  }

  function eventButton(ev, day, long) {
    var b = el("button", "cal-ev" + (ev.all_day ? " allday" : ""));
    b.type = "button";
    b.style.setProperty("--cal-color", colorOf(ev.calendar_id));
    var t = el("span", "cal-ev-time", timeLabel(ev, day));
    var title = el("span", "cal-ev-title", ev.title);
    b.append(t, document.createTextNode(" "), title);
    if (long) {
      var s = span(ev);
      if (!ev.all_day) { t.textContent = fmtTime.format(s.start) + " – " + fmtTime.format(s.end); }
      if (ev.location) { b.append(el("span", "cal-ev-where", ev.location)); }
    }
    if (ev.is_recurring) { b.append(el("span", "sr-only", " (repeats)")); }
    b.addEventListener("click", function () { C.openEventDialog(ev, b); });
    return b;
  }

  function renderView() {
    var r = range();
    $("cal-period").textContent = periodTitle(r);
    document.querySelectorAll(".cal-views button").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.view === state.view));
    });
    var view = $("cal-view");
    view.replaceChildren();
    view.className = "cal-view cal-" + state.view;
    var today = startOfDay(new Date());
    if (state.view === "month") {
      var head = el("div", "cal-weekdays");
      head.setAttribute("aria-hidden", "true");
      for (var i = 0; i < 7; i++) { head.append(el("span", null, fmtWeekday.format(addDays(r.gridStart, i)))); }
      view.append(head);
      var grid = el("ol", "cal-grid");
      for (var d = r.gridStart; d < r.gridEnd; d = addDays(d, 1)) {
        grid.append(dayCell(d, today, d.getMonth() !== r.start.getMonth(), false));
      }
      view.append(grid);
    } else if (state.view === "week" && phone.matches) {
      // A week of hourly columns does not fit a phone: the days as a list.
      var cols = el("ol", "cal-cols");
      for (var w = r.start; w < r.end; w = addDays(w, 1)) {
        cols.append(dayCell(w, today, false, true));
      }
      view.append(cols);
    } else {
      view.append(C.timeGrid(r, today));
    }
    view.setAttribute("aria-busy", "false");
  }


  // A phone shows the week as a list of days, not hourly columns.
  var phone = window.matchMedia("(max-width: 40rem)");

  function dayCell(d, today, outside, long) {
    var li = el("li", "cal-day" + (outside ? " outside" : "") + (sameDay(d, today) ? " today" : ""));
    var label = fmtDayLong.format(d);
    var h = el("h3", "cal-day-h");
    var go = el("button", "link cal-daynum");
    go.type = "button";
    if (long) {
      go.append(el("span", null, fmtDayShort.format(d)));
    } else {
      var num = el("span", null, String(d.getDate()));
      num.setAttribute("aria-hidden", "true");
      go.append(num, el("span", "sr-only", label));
    }
    if (sameDay(d, today)) { go.append(el("span", "sr-only", " (today)")); }
    if (sameDay(d, today)) { go.setAttribute("aria-current", "date"); }
    var day = new Date(d.getTime());
    go.addEventListener("click", function () { state.view = "day"; state.anchor = day; persistView(); refresh(); });
    if (state.view === "day") { go.disabled = true; }
    h.append(go);
    li.append(h);
    var evs = eventsOn(d);
    if (evs.length) {
      var ul = el("ul", "cal-evs");
      evs.forEach(function (ev) { var i = el("li"); i.append(eventButton(ev, d, long)); ul.append(i); });
      li.append(ul);
    } else if (long) {
      li.append(el("p", "muted cal-none", "No events"));
    }
    return li;
  }

  function persistView() { localStorage.setItem("atrium.cal.view", state.view); }
  function refresh() { renderView(); return loadEvents(); }

  function move(n) {
    var a = state.anchor;
    if (state.view === "month") { state.anchor = new Date(a.getFullYear(), a.getMonth() + n, 1); }
    else if (state.view === "week") { state.anchor = addDays(a, 7 * n); }
    else { state.anchor = addDays(a, n); }
    refresh();
  }

  // ---- what the page's other scripts share ----
  var C = window.AtriumCalendar = {
    $: $, API: API, DAY_CODES: DAY_CODES, ME: ME, PALETTE: PALETTE, TZ: TZ, el: el, api: api, showError: showError, flash: flash,
    state: state, addDays: addDays, startOfDay: startOfDay, sameDay: sameDay, ymd: ymd, localInput: localInput,
    rfc3339: rfc3339, parseYMD: parseYMD, parseLocal: parseLocal, range: range, span: span, eventsOn: eventsOn,
    eventButton: eventButton, colorOf: colorOf, loadCalendars: loadCalendars, loadEvents: loadEvents,
    fmtTime: fmtTime, fmtDayLong: fmtDayLong, fmtDayShort: fmtDayShort, persistView: persistView, refresh: refresh
  };

  // ---- wiring, once the page's other scripts are loaded ----
  document.addEventListener("DOMContentLoaded", function () {
    $("cal-prev").addEventListener("click", function () { move(-1); });
    $("cal-next").addEventListener("click", function () { move(1); });
    $("cal-today").addEventListener("click", function () { state.anchor = startOfDay(new Date()); refresh(); });
    $("cal-new").addEventListener("click", function () { C.openNew($("cal-new")); });
    document.querySelectorAll(".cal-views button").forEach(function (b) {
      b.addEventListener("click", function () { state.view = b.dataset.view; persistView(); refresh(); });
    });
    $("ev-tz").textContent = "Times are in your time zone, " + TZ + ".";
    // Crossing the phone width switches the week between hourly columns and a list.
    phone.addEventListener("change", function () { if (state.view === "week") { renderView(); } });

    renderView();
    loadCalendars().then(loadEvents, function (err) {
      showError($("cal-error"), err);
      $("cal-view").setAttribute("aria-busy", "false");
    });
  });
})();
