// Atrium calendar page (see calendar.js): the week and day views, an hourly
// grid with the events side by side where they overlap and the current time
// across today.
"use strict";
(function () {
  var C = window.AtriumCalendar;
  if (!C) { return; }
  var $ = C.$, addDays = C.addDays, el = C.el, eventButton = C.eventButton, eventsOn = C.eventsOn,
    fmtDayLong = C.fmtDayLong, fmtDayShort = C.fmtDayShort, fmtTime = C.fmtTime, sameDay = C.sameDay, span = C.span,
    startOfDay = C.startOfDay, state = C.state, ymd = C.ymd, persistView = C.persistView, refresh = C.refresh;

  // ---- week and day views: an hourly grid ----
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
        C.openNew($("cal-new"), new Date(day.getFullYear(), day.getMonth(), day.getDate(), 0, Math.max(0, Math.min(min, 1410))));
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

  C.timeGrid = timeGrid;
})();
