// The calendar page's tasks (VTODO): a due-date list of the calendars that
// hold tasks, with done and undone, through the REST extension
// /api/v1/calendar/calendars/{id}/tasks. New tasks go to the first calendar
// that holds tasks (the default one, unless it holds events only).
"use strict";
(function () {
  var list = document.getElementById("task-list");
  if (!list) { return; }
  var form = document.getElementById("task-new");
  var none = document.getElementById("task-none");
  var errBox = document.getElementById("tasks-error");
  var target = null; // the calendar new tasks go to
  var base = "/api/v1/calendar/calendars/";

  // refused shows why the server refused r, naming the form's fields.
  function refused(r) {
    Atrium.showError(errBox, Atrium.problemText(r, function (f) { return { title: "New task", due: "Due" }[f] || f; }));
  }

  // dueText is how a due date reads: the date alone for an all-day one.
  function dueText(t) {
    if (!t.due) { return ""; }
    var d = new Date(t.due);
    var opts = t.all_day ? { timeZone: "UTC", weekday: "short", day: "numeric", month: "short", year: "numeric" } :
      { weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" };
    return "Due " + d.toLocaleString(undefined, opts);
  }

  function item(t) {
    var li = document.createElement("li");
    if (t.completed) { li.className = "done"; }
    var box = document.createElement("input");
    box.type = "checkbox";
    box.checked = t.completed;
    box.id = "task-" + t.calendar_id + "-" + t.uid;
    box.setAttribute("aria-label", "Done: " + t.title);
    box.addEventListener("change", function () {
      box.disabled = true;
      Atrium.request("PATCH", base + encodeURIComponent(t.calendar_id) + "/tasks/" + encodeURIComponent(t.uid), { completed: box.checked })
        .then(function (r) {
          box.disabled = false;
          if (!r.ok) { box.checked = !box.checked; refused(r); return; }
          load();
        });
    });
    var text = document.createElement("label");
    text.className = "task-text";
    text.htmlFor = box.id;
    var title = document.createElement("span");
    title.className = "task-title";
    title.textContent = t.title || "(no title)";
    text.appendChild(title);
    if (t.due) {
      var due = document.createElement("span");
      due.className = "task-due";
      due.textContent = dueText(t);
      if (!t.completed && new Date(t.due) < new Date()) { due.className += " overdue"; }
      text.appendChild(due);
    }
    var del = document.createElement("button");
    del.type = "button";
    del.className = "secondary small";
    del.textContent = "Delete";
    del.setAttribute("aria-label", "Delete task " + t.title);
    del.addEventListener("click", function () {
      del.disabled = true;
      Atrium.request("DELETE", base + encodeURIComponent(t.calendar_id) + "/tasks/" + encodeURIComponent(t.uid)).then(function (r) {
        if (!r.ok) { del.disabled = false; refused(r); return; }
        load();
      });
    });
    li.appendChild(box);
    li.appendChild(text);
    li.appendChild(del);
    return li;
  }

  function load() {
    Atrium.request("GET", "/api/v1/calendar/calendars").then(function (r) {
      if (!r.ok) { refused(r); return; }
      var cals = (r.body || []).filter(function (c) { return !c.components || c.components.indexOf("VTODO") >= 0; });
      target = cals.length ? cals[0].id : null;
      form.hidden = !target;
      return Promise.all(cals.map(function (c) { return Atrium.request("GET", base + encodeURIComponent(c.id) + "/tasks"); }))
        .then(function (answers) {
          var tasks = [];
          answers.forEach(function (a) {
            if (!a.ok) { refused(a); return; }
            tasks = tasks.concat(a.body || []);
          });
          // Pending first by due date (none last), then done: as each calendar's list.
          tasks.sort(function (a, b) {
            if (a.completed !== b.completed) { return a.completed ? 1 : -1; }
            if (!a.due !== !b.due) { return a.due ? -1 : 1; }
            if (a.due && b.due && a.due !== b.due) { return new Date(a.due) - new Date(b.due); }
            return a.title.localeCompare(b.title);
          });
          list.replaceChildren.apply(list, tasks.map(item));
          none.hidden = tasks.length > 0;
        });
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    errBox.hidden = true;
    var title = form.elements.title.value.trim();
    if (!title) {
      errBox.textContent = "New task: give it a title.";
      errBox.hidden = false;
      form.elements.title.focus();
      return;
    }
    var body = { title: title };
    if (form.elements.due.value) { body.due = form.elements.due.value; }
    var btn = form.querySelector("button[type=submit]");
    btn.disabled = true;
    Atrium.request("POST", base + encodeURIComponent(target) + "/tasks", body).then(function (r) {
      btn.disabled = false;
      if (!r.ok) { refused(r); return; }
      form.reset();
      form.elements.title.focus();
      load();
    });
  });

  load();
})();
