// Atrium web app: the organisation admin's pages (/admin users, /admin/teams,
// /admin/audit). They call the REST API (/api/v1/admin/..., /api/v1/audit)
// with the session cookie and the page's anti-forgery token; user text goes
// into the page with textContent only.
"use strict";
(function () {
  // api calls the REST API (Atrium.fetchJSON, under /api/v1).
  function api(method, path, body, headers) { return Atrium.fetchJSON(method, "/api/v1" + path, body, headers); }

  var $ = Atrium.$, el = Atrium.el, show = Atrium.showError;
  var flashTimer;
  function flash(msg) {
    show($("adm-error"), "");
    var f = $("adm-flash");
    show(f, msg);
    clearTimeout(flashTimer);
    flashTimer = setTimeout(function () { show(f, ""); }, 8000);
  }
  function fail(err) { show($("adm-flash"), ""); show($("adm-error"), err.message || String(err)); }
  function when(iso) {
    if (!iso) { return "never"; }
    var d = new Date(iso);
    return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  }
  function timeEl(iso) {
    if (!iso) { return document.createTextNode("never"); }
    var t = el("time", "", when(iso));
    t.dateTime = iso;
    return t;
  }
  // labelCells gives every cell its column's name (data-label), which the
  // phone layout shows before it when the rows become cards.
  function labelCells(table) {
    var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) { return th.textContent.trim(); });
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      Array.prototype.forEach.call(tr.children, function (td, i) { if (heads[i]) { td.dataset.label = heads[i]; } });
    });
  }
  function fullName(u) { return [u.first_name, u.last_name].filter(Boolean).join(" "); }
  function randomKey() {
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }

  // Dialogs: opened with the element to focus; closing returns the focus to
  // whatever opened them (Atrium.openDialog).
  var openDialog = Atrium.openDialog;

  // confirm opens the confirmation dialog: what will happen, Cancel, and a
  // named confirm button that runs run(); its error stays in the dialog.
  function confirmAction(o) {
    var d = $("confirm-dialog"), ok = $("confirm-ok");
    $("confirm-h").textContent = o.title;
    $("confirm-text").textContent = o.text;
    ok.textContent = o.button;
    ok.className = o.danger === false ? "" : "danger-solid";
    ok.disabled = false;
    ok.onclick = function () {
      ok.disabled = true;
      Promise.resolve().then(o.run).then(function () { d.close(); }, function (err) {
        show($("confirm-error"), err.message);
        ok.disabled = false;
      });
    };
    openDialog(d, d.querySelector("[data-close]"));
  }

  // Action menus: a button opens a list of menu items; arrows move, Escape
  // closes and returns to the button.
  var openMenu = null;
  function closeMenu(focusButton) {
    if (!openMenu) { return; }
    var m = openMenu;
    openMenu = null;
    m.menu.remove();
    m.button.setAttribute("aria-expanded", "false");
    if (focusButton) { m.button.focus(); }
  }
  document.addEventListener("click", function (e) {
    if (openMenu && !openMenu.menu.contains(e.target) && e.target !== openMenu.button) { closeMenu(false); }
  });
  function menuButton(label, items) {
    var b = el("button", "icon", "⋯");
    b.type = "button";
    b.setAttribute("aria-label", label);
    b.setAttribute("aria-haspopup", "menu");
    b.setAttribute("aria-expanded", "false");
    b.addEventListener("click", function () {
      var was = openMenu && openMenu.button === b;
      closeMenu(false);
      if (was) { return; }
      var ul = el("ul", "menu");
      ul.setAttribute("role", "menu");
      ul.setAttribute("aria-label", label);
      items.forEach(function (it) {
        var li = el("li");
        li.setAttribute("role", "none");
        var mb = el("button", it.danger ? "danger-item" : "", it.label);
        mb.type = "button";
        mb.setAttribute("role", "menuitem");
        mb.tabIndex = -1;
        mb.addEventListener("click", function () { closeMenu(false); it.run(b); });
        li.appendChild(mb);
        ul.appendChild(li);
      });
      ul.addEventListener("keydown", function (e) {
        var all = Array.prototype.slice.call(ul.querySelectorAll("button"));
        var i = all.indexOf(document.activeElement);
        if (e.key === "ArrowDown") { all[(i + 1) % all.length].focus(); e.preventDefault(); }
        else if (e.key === "ArrowUp") { all[(i - 1 + all.length) % all.length].focus(); e.preventDefault(); }
        else if (e.key === "Home") { all[0].focus(); e.preventDefault(); }
        else if (e.key === "End") { all[all.length - 1].focus(); e.preventDefault(); }
        else if (e.key === "Escape" || e.key === "Tab") { closeMenu(e.key === "Escape"); if (e.key === "Escape") { e.preventDefault(); } }
      });
      document.body.appendChild(ul);
      var r = b.getBoundingClientRect();
      var top = window.scrollY + r.bottom + 4;
      if (r.bottom + ul.offsetHeight + 8 > window.innerHeight && r.top > ul.offsetHeight + 8) {
        top = window.scrollY + r.top - ul.offsetHeight - 4;
      }
      ul.style.top = top + "px";
      ul.style.left = Math.max(8, window.scrollX + r.right - ul.offsetWidth) + "px";
      b.setAttribute("aria-expanded", "true");
      openMenu = { button: b, menu: ul };
      ul.querySelector("button").focus();
    });
    return b;
  }

  // pager runs a cursor list: pages are fetched with the cursor of the page
  // before; Previous goes back through the cursors seen.
  function pager(prev, next, fetchPage) {
    var cursors = [""], at = 0, nextCursor = null;
    function load() {
      return fetchPage(cursors[at]).then(function (pg) {
        nextCursor = pg && pg.has_more ? pg.next_cursor : null;
        prev.disabled = at === 0;
        next.disabled = !nextCursor;
        prev.parentNode.hidden = prev.disabled && next.disabled;
        return pg;
      });
    }
    prev.addEventListener("click", function () { if (at > 0) { at--; load().catch(fail); } });
    next.addEventListener("click", function () {
      if (!nextCursor) { return; }
      cursors = cursors.slice(0, at + 1);
      cursors.push(nextCursor);
      at++;
      load().catch(fail);
    });
    return {
      reload: load,
      reset: function () { cursors = [""]; at = 0; return load(); }
    };
  }

  function qs(params) {
    var parts = [];
    Object.keys(params).forEach(function (k) {
      if (params[k] !== "" && params[k] !== undefined && params[k] !== null) { parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(params[k])); }
    });
    return parts.length ? "?" + parts.join("&") : "";
  }

  // Every user of the organisation (for pickers and names), up to 500.
  function allUsers() {
    var out = [];
    function more(cursor) {
      return api("GET", "/admin/users" + qs({ limit: 100, cursor: cursor })).then(function (pg) {
        out = out.concat(pg.items || []);
        if (pg.has_more && pg.next_cursor && out.length < 500) { return more(pg.next_cursor); }
        return out;
      });
    }
    return more("");
  }

  var statusNames = { active: "Active", invited: "Invited", suspended: "Suspended" };

  // ---- /admin: users ----
  function usersPage(root) {
    var self = root.dataset.self;
    var body = $("users-body"), table = $("users-table");
    var filter = { q: "", status: "" };
    var list = pager($("users-prev"), $("users-next"), function (cursor) {
      table.setAttribute("aria-busy", "true");
      return api("GET", "/admin/users" + qs({ limit: 50, q: filter.q, status: filter.status, cursor: cursor })).then(function (pg) {
        render(pg.items || []);
        labelCells(table);
        table.setAttribute("aria-busy", "false");
        return pg;
      });
    });

    function render(users) {
      body.textContent = "";
      $("users-empty").hidden = users.length > 0;
      users.forEach(function (u) {
        var tr = el("tr");
        tr.dataset.email = u.email;
        tr.appendChild(el("td", "col-email", u.email));
        tr.appendChild(el("td", "", fullName(u) || "—"));
        tr.appendChild(el("td", "", u.role_slug === "admin" ? "Admin" : "Member"));
        var st = el("td");
        st.appendChild(el("span", "badge status-" + u.status, u.status));
        if (u.two_factor) {
          st.appendChild(document.createTextNode(" "));
          st.appendChild(el("span", "badge on", "2FA"));
        }
        tr.appendChild(st);
        var last = el("td");
        last.appendChild(timeEl(u.last_sign_in_at));
        tr.appendChild(last);
        var act = el("td", "act");
        act.appendChild(menuButton("Actions for " + u.email, actions(u)));
        tr.appendChild(act);
        body.appendChild(tr);
      });
    }

    function act(u, path, done) {
      // The message once the list shows the change (a test, or a person, reads both).
      return api("POST", "/admin/users/" + encodeURIComponent(u.id) + path).then(function () { return list.reload(); }).then(function () { flash(done); });
    }
    function role(u, slug) {
      return api("POST", "/admin/users/" + encodeURIComponent(u.id) + "/change-role", { role_slug: slug }).then(function () {
        return list.reload();
      }).then(function () {
        flash((slug === "admin" ? "Made " + u.email + " an admin." : "Made " + u.email + " a member."));
      });
    }

    function actions(u) {
      var items = [];
      var isSelf = u.id === self;
      if (u.status === "invited") {
        items.push({ label: "Resend invitation", run: function () { act(u, "/resend-invitation", "The invitation is sent to " + u.email + " again.").catch(fail); } });
      }
      if (u.status === "active") {
        items.push({ label: "Reset password", run: function () { act(u, "/reset-password", "A password reset link is sent to " + u.email + ".").catch(fail); } });
      }
      if (!isSelf && u.status === "active") {
        items.push({ label: "Suspend", danger: true, run: function () {
          confirmAction({ title: "Suspend " + u.email + "?", button: "Suspend user",
            text: "Their web sessions end and every password, app password and token of theirs is refused at once. Their files, contacts and calendars are kept, and their seat is freed. You can activate them again later.",
            run: function () { return act(u, "/suspend", u.email + " is suspended."); } });
        } });
      }
      if (u.two_factor && u.status !== "invited") {
        items.push({ label: "Turn off two-factor sign-in", run: function () {
          confirmAction({ title: "Turn off two-factor sign-in for " + u.email + "?", button: "Turn off",
            text: "For a person who lost their authenticator and their recovery codes: they sign in with their password alone until they set two-factor sign-in up again in their settings. They are told by e-mail.",
            run: function () { return act(u, "/reset-two-factor", "Two-factor sign-in is off for " + u.email + "."); } });
        } });
      }
      if (u.status === "suspended") {
        items.push({ label: "Activate", run: function () { act(u, "/activate", u.email + " is active again.").catch(fail); } });
      }
      if (!isSelf && u.status !== "invited") {
        if (u.role_slug === "admin") {
          items.push({ label: "Make member", run: function () {
            confirmAction({ title: "Make " + u.email + " a member?", button: "Make member",
              text: "They lose the administration pages and the admin scope at once; their tokens narrow to what a member may do.",
              run: function () { return role(u, "member"); } });
          } });
        } else {
          items.push({ label: "Make admin", run: function () {
            confirmAction({ title: "Make " + u.email + " an admin?", button: "Make admin", danger: false,
              text: "They can then manage every user, team, webhook and setting of the organisation, and read its audit log.",
              run: function () { return role(u, "admin"); } });
          } });
        }
      }
      if (!isSelf) {
        items.push({ label: "Delete", danger: true, run: function () {
          confirmAction({ title: "Delete " + u.email + "?", button: "Delete user",
            text: "This deletes the user and their data for good: their files and folders in the drive (with older versions and trash), their contacts and calendars, their app passwords, access tokens and sessions. Their storage stops counting against the quota. This cannot be undone.",
            run: function () {
              return api("DELETE", "/admin/users/" + encodeURIComponent(u.id)).then(function () { return list.reload(); }).then(function () { flash(u.email + " is deleted."); });
            } });
        } });
      }
      if (!items.length) { items.push({ label: "No actions on your own account", run: function () {} }); }
      return items;
    }

    $("user-filter").addEventListener("submit", function (e) {
      e.preventDefault();
      filter.q = $("user-q").value.trim();
      filter.status = $("user-status").value;
      list.reset().catch(fail);
    });
    $("user-status").addEventListener("change", function () { $("user-filter").requestSubmit(); });

    // The invitation dialog: one or more people, each its own POST with an
    // Idempotency-Key made for this submission.
    var dlg = $("invite-dialog"), rows = $("invite-rows"), n = 1;
    var first = rows.querySelector(".invite-row").cloneNode(true);
    function addRow() {
      n++;
      var row = first.cloneNode(true);
      row.querySelector("legend").textContent = "Person " + n;
      row.querySelectorAll("input, select").forEach(function (f) {
        var base = f.id.replace(/-\d+$/, "");
        f.id = base + "-" + n;
        if (f.tagName === "INPUT") { f.value = ""; }
        f.required = false;
      });
      row.querySelectorAll("label").forEach(function (l) {
        var base = l.htmlFor.replace(/-\d+$/, "");
        l.htmlFor = base + "-" + n;
        l.textContent = l.textContent + " (person " + n + ")";
      });
      var rm = el("button", "secondary small", "Remove person " + n);
      rm.type = "button";
      rm.addEventListener("click", function () { row.remove(); $("invite-more").focus(); });
      row.appendChild(rm);
      rows.appendChild(row);
      row.querySelector("input").focus();
    }
    $("invite-more").addEventListener("click", addRow);
    $("invite-open").addEventListener("click", function () {
      rows.querySelectorAll(".invite-row").forEach(function (r, i) { if (i > 0) { r.remove(); } });
      $("invite-form").reset();
      n = 1;
      openDialog(dlg, $("inv-email-1"));
    });
    $("invite-form").addEventListener("submit", function (e) {
      e.preventDefault();
      var err = $("invite-error"), btn = $("invite-submit");
      var people = [];
      rows.querySelectorAll(".invite-row").forEach(function (r) {
        var f = r.querySelectorAll("input, select");
        var email = f[0].value.trim();
        if (email) { people.push({ row: r, body: { email: email, first_name: f[1].value.trim(), last_name: f[2].value.trim(), role_slug: f[3].value } }); }
      });
      if (!people.length) { show(err, "Enter the e-mail address of the person to invite."); $("inv-email-1").focus(); return; }
      show(err, "");
      btn.disabled = true;
      var key = randomKey(), done = [], failed = [];
      people.reduce(function (p, person, i) {
        return p.then(function () {
          return api("POST", "/admin/users", person.body, { "Idempotency-Key": key + "-" + i }).then(function () {
            done.push(person.body.email);
            person.row.remove();
          }, function (e2) { failed.push(person.body.email + ": " + e2.message); });
        });
      }, Promise.resolve()).then(function () {
        btn.disabled = false;
        if (done.length) { flash("Invited " + done.join(", ") + "."); list.reset().catch(fail); }
        if (failed.length) {
          if (!rows.querySelector(".invite-row")) { addRow(); }
          show(err, (done.length ? "Invited " + done.join(", ") + ". " : "") + "Not invited — " + failed.join(" "));
          return;
        }
        dlg.close();
      });
    });

    list.reset().catch(fail);
  }

  // ---- /admin/teams ----
  function teamsPage() {
    var body = $("teams-body"), table = $("teams-table"), current = null, users = null;
    var list = pager($("teams-prev"), $("teams-next"), function (cursor) {
      table.setAttribute("aria-busy", "true");
      return api("GET", "/admin/teams" + qs({ limit: 20, cursor: cursor })).then(function (pg) {
        render(pg.items || []);
        labelCells(table);
        table.setAttribute("aria-busy", "false");
        return pg;
      });
    });
    function render(teams) {
      body.textContent = "";
      $("teams-empty").hidden = teams.length > 0;
      teams.forEach(function (t) {
        var tr = el("tr");
        if (current && current.id === t.id) { tr.className = "current"; current = t; }
        tr.appendChild(el("td", "", t.name));
        tr.appendChild(el("td", "", String(t.member_count)));
        var act = el("td", "act");
        var mb = el("button", "secondary small", "Members");
        mb.type = "button";
        mb.setAttribute("aria-label", "Members of " + t.name);
        mb.addEventListener("click", function () { openMembers(t); });
        act.appendChild(mb);
        act.appendChild(document.createTextNode(" "));
        act.appendChild(menuButton("Actions for team " + t.name, [
          { label: "Rename", run: function () {
            $("rename-name").value = t.name;
            $("rename-form").dataset.team = t.id;
            openDialog($("rename-dialog"), $("rename-name"));
          } },
          { label: "Delete", danger: true, run: function () {
            confirmAction({ title: "Delete the team " + t.name + "?", button: "Delete team",
              text: "The team and its membership list are deleted. Its " + t.member_count + " members stay in the organisation with their data.",
              run: function () {
                return api("DELETE", "/admin/teams/" + encodeURIComponent(t.id)).then(function () {
                  if (current && current.id === t.id) { current = null; $("members").hidden = true; }
                  flash("The team " + t.name + " is deleted.");
                  return list.reload();
                });
              } });
          } }
        ]));
        tr.appendChild(act);
        body.appendChild(tr);
      });
    }
    $("team-create").addEventListener("submit", function (e) {
      e.preventDefault();
      var name = $("team-name").value.trim();
      if (!name) { fail(new Error("Enter the team's name.")); $("team-name").focus(); return; }
      api("POST", "/admin/teams", { name: name }, { "Idempotency-Key": randomKey() }).then(function (t) {
        $("team-name").value = "";
        flash("The team " + t.name + " is created.");
        return list.reset().then(function () { openMembers(t); });
      }).catch(fail);
    });
    $("rename-form").addEventListener("submit", function (e) {
      e.preventDefault();
      var id = this.dataset.team, name = $("rename-name").value.trim();
      api("PATCH", "/admin/teams/" + encodeURIComponent(id), { name: name }).then(function (t) {
        $("rename-dialog").close();
        flash("The team is renamed to " + t.name + ".");
        if (current && current.id === id) { current = t; $("members-h").textContent = "Members of " + t.name; }
        return list.reload();
      }).catch(function (err) { show($("rename-error"), err.message); });
    });

    function loadMembers() {
      var t = current;
      return api("GET", "/admin/teams/" + encodeURIComponent(t.id) + "/members?limit=100").then(function (pg) {
        var ul = $("members-list"), members = pg.items || [], inTeam = {};
        ul.textContent = "";
        $("members-empty").hidden = members.length > 0;
        members.forEach(function (m) {
          inTeam[m.user_id] = true;
          var li = el("li");
          var who = el("span", "who-line");
          who.appendChild(el("span", "cname", fullName(m) || m.email));
          who.appendChild(el("span", "sub", m.email));
          li.appendChild(who);
          var rm = el("button", "danger", "Remove");
          rm.type = "button";
          rm.setAttribute("aria-label", "Remove " + m.email + " from " + t.name);
          rm.addEventListener("click", function () {
            api("DELETE", "/admin/teams/" + encodeURIComponent(t.id) + "/members/" + encodeURIComponent(m.user_id)).then(function () {
              flash(m.email + " is removed from " + t.name + ".");
              return Promise.all([loadMembers(), list.reload()]);
            }).then(function () { $("members-h").focus(); }).catch(fail);
          });
          li.appendChild(rm);
          ul.appendChild(li);
        });
        var sel = $("member-user");
        sel.textContent = "";
        (users || []).filter(function (u) { return !inTeam[u.id]; }).forEach(function (u) {
          var o = el("option", "", u.email + (fullName(u) ? " (" + fullName(u) + ")" : ""));
          o.value = u.id;
          sel.appendChild(o);
        });
        sel.disabled = !sel.options.length;
        $("member-add").querySelector("button").disabled = !sel.options.length;
      });
    }
    // loadShares lists what is shared with the team: the item, its owner,
    // the permission and the expiry.
    function loadShares() {
      var t = current;
      return api("GET", "/admin/teams/" + encodeURIComponent(t.id) + "/shares").then(function (shares) {
        var ul = $("team-shares");
        ul.textContent = "";
        shares = shares || [];
        $("team-shares-empty").hidden = shares.length > 0;
        shares.forEach(function (s) {
          var li = el("li");
          var what = el("span", "who-line");
          what.appendChild(el("span", "cname", s.file_name + (s.is_folder ? " (folder)" : "")));
          what.appendChild(el("span", "sub", "Shared by " + s.owner_name + " · " + (s.permission === "edit" ? "can edit" : "can view") +
            (s.expires_at ? " · until " + new Date(s.expires_at).toLocaleDateString() : "")));
          li.appendChild(what);
          ul.appendChild(li);
        });
      });
    }
    function openMembers(t) {
      current = t;
      body.querySelectorAll("tr").forEach(function (tr) { tr.classList.remove("current"); });
      $("members-h").textContent = "Members of " + t.name;
      var ready = users ? Promise.resolve() : allUsers().then(function (us) { users = us; });
      ready.then(function () { return Promise.all([loadMembers(), loadShares()]); }).then(function () {
        $("members").hidden = false;
        $("members-h").focus();
      }).catch(fail);
    }
    $("member-add").addEventListener("submit", function (e) {
      e.preventDefault();
      var id = $("member-user").value, t = current;
      if (!id || !t) { return; }
      api("POST", "/admin/teams/" + encodeURIComponent(t.id) + "/members", { user_id: id }).then(function (m) {
        flash(m.email + " is added to " + t.name + ".");
        return Promise.all([loadMembers(), list.reload()]);
      }).then(function () { $("member-user").focus(); }).catch(fail);
    });
    list.reset().catch(fail);
  }

  // ---- /admin/audit ----
  function auditPage() {
    var body = $("audit-body"), table = $("audit-table"), names = {}, filter = {};
    var list = pager($("audit-prev"), $("audit-next"), function (cursor) {
      table.setAttribute("aria-busy", "true");
      var q = { limit: 50, cursor: cursor };
      Object.keys(filter).forEach(function (k) { q[k] = filter[k]; });
      return api("GET", "/audit" + qs(q)).then(function (pg) {
        render(pg.items || []);
        labelCells(table);
        table.setAttribute("aria-busy", "false");
        return pg;
      });
    });
    function actor(id) {
      if (!id) { return "the system"; }
      if (names[id]) { return names[id]; }
      if (id.indexOf("sp:") === 0) { return "service principal " + id.slice(3); }
      return id;
    }
    function render(entries) {
      body.textContent = "";
      $("audit-empty").hidden = entries.length > 0;
      entries.forEach(function (e) {
        var tr = el("tr");
        var t = el("td", "nowrap");
        t.appendChild(timeEl(e.created_at));
        tr.appendChild(t);
        tr.appendChild(el("td", "", e.module));
        var a = el("td");
        a.appendChild(el("code", "", e.action));
        if (e.changed_fields && e.changed_fields.length) { a.appendChild(el("span", "bar-sub", "changed: " + e.changed_fields.join(", "))); }
        tr.appendChild(a);
        tr.appendChild(el("td", "", actor(e.actor_id)));
        var target = e.target_type ? e.target_type + " " + (names[e.target_id] || e.target_id) : "—";
        tr.appendChild(el("td", "", target));
        body.appendChild(tr);
      });
    }
    function iso(v) { if (!v) { return ""; } var d = new Date(v); return isNaN(d) ? "" : d.toISOString().replace(/\.\d+Z$/, "Z"); }
    $("audit-filter").addEventListener("submit", function (e) {
      e.preventDefault();
      filter = { module: $("audit-module").value, actor_id: $("audit-actor").value, since: iso($("audit-since").value), until: iso($("audit-until").value) };
      list.reset().catch(fail);
    });
    var teams = api("GET", "/admin/teams?limit=100").then(function (pg) {
      (pg.items || []).forEach(function (t) { names[t.id] = t.name; });
    }, function () { /* names stay ids */ });
    var people = allUsers().then(function (us) {
      var sel = $("audit-actor");
      us.forEach(function (u) {
        names[u.id] = u.email;
        var o = el("option", "", u.email);
        o.value = u.id;
        sel.appendChild(o);
      });
    }, function () { /* names stay ids */ });
    Promise.all([teams, people]).then(function () { return list.reset(); }).catch(fail);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var root;
    if ((root = $("admin-users"))) { usersPage(root); }
    else if ($("admin-teams")) { teamsPage(); }
    else if ($("admin-audit")) { auditPage(); }
  });
})();
