// Atrium calendar page: month, week and day views in the browser's time zone,
// events and calendars changed through the REST API (/api/v1/calendar/...)
// with the session cookie and the page's anti-forgery token. User text goes
// into the page with textContent only.
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
      edit.addEventListener("click", function () { openCalendarDialog(c, edit); });
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
    b.addEventListener("click", function () { openEventDialog(ev, b); });
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
      view.append(timeGrid(r, today));
    }
    view.setAttribute("aria-busy", "false");
  }

  // ---- week and day views: an hourly grid ----
  var phone = window.matchMedia("(max-width: 40rem)");
  var WORK_HOUR = 7; // the grid opens scrolled to this hour
  var fmtHour = new Intl.DateTimeFormat(undefined, { hour: "numeric" });
  var tg = { key: "", top: 0, nowTimer: 0, gen: 0 };

  // minutes gives the minutes since day's midnight of a time, clamped to the day.
  function minutesIn(t, day) {
    var next = addDays(day, 1);
    if (t <= day) { return 0; }
    if (t >= next) { return (next - day) / 60000; }
    return (t - day) / 60000;
  }

  // layout places the timed events of a day side by side where they overlap:
  // each gets a column of its cluster (events that overlap one another, even
  // through others) and the number of columns of that cluster.
  function layout(evs, day) {
    var items = evs.map(function (ev) {
      var s = span(ev);
      var a = minutesIn(s.start, day), b = minutesIn(s.end, day);
      return { ev: ev, a: a, b: Math.max(b, a + 20), col: 0, cols: 1 }; // at least 20 minutes tall
    }).sort(function (x, y) { return x.a - y.a || y.b - x.b; });
    var cluster = [], ends = [], clusterEnd = -1;
    var close = function () {
      cluster.forEach(function (it) { it.cols = ends.length; });
      cluster = []; ends = [];
    };
    items.forEach(function (it) {
      if (it.a >= clusterEnd) { close(); clusterEnd = -1; }
      var c = 0;
      while (c < ends.length && ends[c] > it.a) { c++; }
      ends[c] = it.b;
      it.col = c;
      cluster.push(it);
      clusterEnd = Math.max(clusterEnd, it.b);
    });
    close();
    return items;
  }

  function dayHeading(d, today) {
    var h = el("h3", "cal-tg-dayh" + (sameDay(d, today) ? " today" : ""));
    var go = el("button", "link cal-daynum");
    go.type = "button";
    go.append(el("span", null, fmtDayShort.format(d)));
    if (sameDay(d, today)) { go.append(el("span", "sr-only", " (today)")); go.setAttribute("aria-current", "date"); }
    var day = new Date(d.getTime());
    go.addEventListener("click", function () { state.view = "day"; state.anchor = day; persistView(); refresh(); });
    if (state.view === "day") { go.disabled = true; }
    h.append(go);
    return h;
  }

  function timeGrid(r, today) {
    var days = [];
    for (var d = r.start; d < r.end; d = addDays(d, 1)) { days.push(d); }
    var n = days.length;
    var box = el("div", "cal-tg cal-tg-" + n);
    box.style.setProperty("--cal-days", String(n));

    // The days' headings and their all-day events.
    var head = el("div", "cal-tg-head");
    var allday = el("div", "cal-tg-allday");
    var lab = el("div", "cal-tg-gutter cal-tg-alllabel", "All day");
    head.append(el("div", "cal-tg-gutter"));
    allday.append(lab);
    days.forEach(function (day) {
      head.append(dayHeading(day, today));
      var cell = el("div", "cal-tg-allcell");
      var evs = eventsOn(day).filter(function (ev) { return ev.all_day || span(ev).start < day && span(ev).end > addDays(day, 1); });
      if (evs.length) {
        var ul = el("ul", "cal-evs");
        ul.setAttribute("aria-label", "All day, " + fmtDayLong.format(day));
        evs.forEach(function (ev) { var i = el("li"); i.append(eventButton(ev, day, false)); ul.append(i); });
        cell.append(ul);
      }
      allday.append(cell);
    });

    // The hours, a column per day.
    var scroll = el("div", "cal-tg-scroll");
    // Scrolled by keyboard too, even when it holds no event to tab to.
    scroll.tabIndex = 0;
    scroll.setAttribute("role", "region");
    scroll.setAttribute("aria-label", "Hours of " + (n === 1 ? "the day" : "the week"));
    var body = el("div", "cal-tg-body");
    var hours = el("div", "cal-tg-hours");
    hours.setAttribute("aria-hidden", "true");
    for (var h = 0; h < 24; h++) {
      var row = el("div", "cal-tg-hour", h ? fmtHour.format(new Date(2000, 0, 1, h)) : "");
      row.dataset.hour = String(h);
      hours.append(row);
    }
    body.append(hours);
    days.forEach(function (day) {
      var col = el("div", "cal-tg-col" + (sameDay(day, today) ? " today" : ""));
      col.setAttribute("role", "group");
      col.setAttribute("aria-label", fmtDayLong.format(day));
      col.dataset.day = ymd(day);
      var timed = eventsOn(day).filter(function (ev) { return !ev.all_day && !(span(ev).start < day && span(ev).end > addDays(day, 1)); });
      layout(timed, day).forEach(function (it) {
        var b = eventButton(it.ev, day, true);
        b.classList.add("cal-tg-ev");
        var t = b.querySelector(".cal-ev-time");
        if (it.b - it.a < 45) { // one line: the start and the title
          b.classList.add("short");
          t.textContent = it.a > 0 ? fmtTime.format(span(it.ev).start) : "…";
        } else { // the title first, then the times
          b.querySelector(".cal-ev-title").after(t);
        }
        b.style.top = (it.a / 14.4) + "%";
        b.style.height = ((it.b - it.a) / 14.4) + "%";
        b.style.left = (100 * it.col / it.cols) + "%";
        b.style.width = (100 / it.cols) + "%";
        col.append(b);
      });
      // A click on an empty slot starts a new event there (the half hour).
      col.addEventListener("click", function (e) {
        if (e.target !== col) { return; }
        var rect = col.getBoundingClientRect();
        var min = Math.floor((e.clientY - rect.top) / rect.height * 48) * 30;
        openNew($("cal-new"), new Date(day.getFullYear(), day.getMonth(), day.getDate(), 0, Math.max(0, Math.min(min, 1410))));
      });
      body.append(col);
    });
    var now = el("div", "cal-tg-now");
    now.setAttribute("aria-hidden", "true");
    body.append(now);
    scroll.append(body);
    box.append(head, allday, scroll);

    // Keep the scroll position while the same period re-renders (events
    // loaded); a new period opens at working hours.
    var key = state.view + ymd(r.start);
    var top = tg.key === key ? tg.top : -1;
    tg.key = key;
    requestAnimationFrame(function () {
      var hour = body.querySelector('.cal-tg-hour[data-hour="' + WORK_HOUR + '"]');
      // A quarter hour above the working hour's line, so its label (nudged
      // up onto the line) is not cut off at the top.
      scroll.scrollTop = top >= 0 ? top : (hour ? Math.max(0, hour.offsetTop - Math.round(hour.offsetHeight / 4)) : 0);
      tg.top = scroll.scrollTop;
      scroll.addEventListener("scroll", function () { tg.top = scroll.scrollTop; });
    });
    placeNow(now, body, ++tg.gen);
    return box;
  }

  // placeNow draws the current time across today's column, if it is shown.
  function placeNow(line, body, gen) {
    if (gen !== tg.gen) { return; } // a later render took over
    clearTimeout(tg.nowTimer);
    var now = new Date();
    var cols = Array.prototype.slice.call(body.querySelectorAll(".cal-tg-col"));
    var i = cols.map(function (c) { return c.dataset.day; }).indexOf(ymd(now));
    line.hidden = i < 0;
    if (i >= 0) {
      var n = cols.length;
      line.style.top = (minutesIn(now, startOfDay(now)) / 14.4) + "%";
      line.style.left = "calc(var(--cal-gutter) + (100% - var(--cal-gutter)) * " + i + " / " + n + ")";
      line.style.width = "calc((100% - var(--cal-gutter)) / " + n + ")";
    }
    tg.nowTimer = setTimeout(function () { placeNow(line, body, gen); }, 60000);
  }

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
      var o = d === form.dialog ? form.opener : cdState.opener;
      if (o && document.body.contains(o)) { o.focus(); } else { $("cal-new").focus(); }
    });
  });

  function resetForm() {
    form.f.reset();
    showError(form.error, null);
    $("ev-confirm").hidden = true;
    form.attendees = [];
    renderAttendees();
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
    loadDirectory();
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
    loadDirectory();
    api("GET", "/calendar/calendars/" + encodeURIComponent(ev.calendar_id) + "/events/" + encodeURIComponent(ev.uid)).then(function (det) {
      if (!form.editing || form.editing.ev !== ev) { return; }
      form.editing.detail = det;
      if (!form.desc.value) { form.desc.value = det.description || ""; }
      var startForRule = det.start ? new Date(det.start) : s.start;
      if (!form.rruleDirty) { parseRRule(det.rrule || "", startForRule); }
      form.attendees = (det.attendees || []).map(function (a) { return { email: a.email, name: a.name || "" }; });
      renderAttendees();
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
  form.allDay.addEventListener("change", function () { setAllDay(form.allDay.checked); recurUI(); busy(); });
  form.start.addEventListener("change", function () {
    // Moving the start keeps the length.
    if (!form.allDay.checked) {
      var s = parseLocal(form.start.value), e = parseLocal(form.end.value);
      if (s && (!e || e <= s)) { form.end.value = localInput(new Date(s.getTime() + 3600e3)); }
    } else if (form.end.value < form.start.value) {
      form.end.value = form.start.value;
    }
    followStart();
    busy();
  });
  form.end.addEventListener("change", busy);
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

  // ---- wiring ----
  $("cal-prev").addEventListener("click", function () { move(-1); });
  $("cal-next").addEventListener("click", function () { move(1); });
  $("cal-today").addEventListener("click", function () { state.anchor = startOfDay(new Date()); refresh(); });
  $("cal-new").addEventListener("click", function () { openNew($("cal-new")); });
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
})();
