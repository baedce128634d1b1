// Atrium contacts page: every change goes through the REST API
// (/api/v1/contacts/...) with the session cookie and its X-CSRF-Token. User
// text reaches the DOM only through textContent and form values.
"use strict";
(function () {
  var api = "/api/v1/contacts";
  var flashKey = "atrium.contacts.flash";

  var $ = Atrium.$;

  // call sends a request to the REST API and resolves with {status, ok, body, etag}.
  var call = Atrium.request;
  // problemText is what a person reads of a failed request.
  var problemText = Atrium.problemText;

  // reloadWith reloads the page (or goes to url) and shows msg at its top.
  function reloadWith(msg, url) { Atrium.keepFlash(flashKey, msg, url); }

  // Dialogs: opened modal, focus returns to the control that opened them
  // (Atrium.openDialog).
  var openDialog = Atrium.openDialog;
  var closeDialog = Atrium.closeDialog;

  // ---- The contact form ----

  var form, dlg, editing = null; // editing: {book, id, etag} or null for a new contact
  var kinds = {
    email: { set: "c-emails", label: "Email", remove: "Remove e-mail address", fields: ["type", "value"] },
    phone: { set: "c-phones", label: "Phone", remove: "Remove phone number", fields: ["type", "value"] },
    address: { set: "c-addresses", label: "", remove: "Remove postal address", fields: ["type", "street", "city", "region", "postal_code", "country"] }
  };
  var seq = 0;

  // renumber names each row's fields: "Email", "Email 2", … and their ids.
  function renumber(kind) {
    var k = kinds[kind];
    var rows = $(k.set).querySelectorAll(".multi-row");
    rows.forEach(function (row, i) {
      var n = i + 1;
      row.querySelectorAll("div > label").forEach(function (l) {
        var f = l.parentNode.querySelector("[data-field]");
        if (!f.id) { f.id = "c-" + kind + "-" + (++seq); }
        l.htmlFor = f.id;
        var base = l.dataset.base || l.textContent;
        l.dataset.base = base;
        if (f.dataset.field === "type") {
          l.textContent = rows.length > 1 ? "Type " + n : "Type";
          if (kind === "address") { l.textContent = "Address type" + (rows.length > 1 ? " " + n : ""); }
        } else if (f.dataset.field === "value") {
          l.textContent = n > 1 ? k.label + " " + n : k.label;
        } else {
          l.textContent = rows.length > 1 ? base + " " + n : base;
        }
      });
      row.querySelector("[data-remove]").setAttribute("aria-label", k.remove + (rows.length > 1 ? " " + n : ""));
    });
  }

  function addRow(kind, value, focus) {
    var tpl = $("row-" + kind);
    var row = tpl.content.firstElementChild.cloneNode(true);
    var sel = row.querySelector('select[data-field="type"]');
    if (value) {
      var t = (value.type || "").toLowerCase();
      if (t && !Array.prototype.some.call(sel.options, function (o) { return o.value === t; })) {
        var o = document.createElement("option");
        o.value = t; o.textContent = t;
        sel.appendChild(o);
      }
      if (t) { sel.value = t; }
      row.querySelectorAll("input[data-field]").forEach(function (f) { f.value = value[f.dataset.field] || ""; });
    }
    row.querySelector("[data-remove]").addEventListener("click", function () {
      var set = row.parentNode;
      row.remove();
      renumber(kind);
      var next = set.querySelector("input") || $(kinds[kind].set).querySelector("[data-add]");
      next.focus();
    });
    $(kinds[kind].set).querySelector(".rows").appendChild(row);
    renumber(kind);
    if (focus) { row.querySelector("input").focus(); }
  }

  function clearErrors() {
    form.querySelectorAll(".field-error").forEach(function (e) { e.remove(); });
    form.querySelectorAll("[aria-invalid]").forEach(function (f) {
      f.removeAttribute("aria-invalid");
      var d = (f.getAttribute("aria-describedby") || "").split(" ").filter(function (x) { return x && x.indexOf("err-") !== 0; });
      if (d.length) { f.setAttribute("aria-describedby", d.join(" ")); } else { f.removeAttribute("aria-describedby"); }
    });
    $("contact-error").hidden = true;
  }

  function fieldError(field, msg) {
    var p = document.createElement("p");
    p.className = "field-error";
    p.id = "err-" + (++seq);
    p.textContent = msg.charAt(0).toUpperCase() + msg.slice(1) + (/[.!?]$/.test(msg) ? "" : ".");
    field.setAttribute("aria-invalid", "true");
    var d = field.getAttribute("aria-describedby");
    field.setAttribute("aria-describedby", d ? d + " " + p.id : p.id);
    field.insertAdjacentElement("afterend", p);
  }

  function resetForm() {
    form.reset();
    clearErrors();
    Object.keys(kinds).forEach(function (k) { $(kinds[k].set).querySelector(".rows").textContent = ""; });
  }

  // collect reads the form into a ContactCreate body; where maps each sent
  // row back to its element, for the errors of the API.
  function collect() {
    var where = {};
    var body = {
      first_name: $("c-first").value, last_name: $("c-last").value, display_name: $("c-display").value,
      organization: $("c-org").value, job_title: $("c-title").value, birthday: $("c-birthday").value.trim(), notes: $("c-notes").value
    };
    [["email", "emails"], ["phone", "phones"], ["address", "addresses"]].forEach(function (p) {
      var list = [];
      $(kinds[p[0]].set).querySelectorAll(".multi-row").forEach(function (row) {
        var item = {}, empty = true;
        row.querySelectorAll("[data-field]").forEach(function (f) {
          item[f.dataset.field] = f.value;
          if (f.tagName === "INPUT" && f.value.trim() !== "") { empty = false; }
        });
        if (empty) { return; }
        where["body." + p[1] + "[" + list.length + "]"] = row;
        list.push(item);
      });
      body[p[1]] = list;
    });
    return { body: body, where: where };
  }

  // showErrors puts each error of a 422 beside its field; the rest above the form.
  function showErrors(r, where) {
    var rest = [];
    var errs = (r.body && r.body.errors) || [];
    var first = null;
    errs.forEach(function (e) {
      var loc = e.location || "";
      var field = form.querySelector('[data-loc="' + CSS.escape(loc) + '"]');
      var m = /^(body\.\w+\[\d+\])(?:\.(\w+))?$/.exec(loc);
      if (!field && m && where[m[1]]) {
        var row = where[m[1]];
        field = row.querySelector('[data-field="' + (m[2] || "value") + '"]') || row.querySelector("input");
      }
      if (!field && /^body\.(emails|phones|addresses)$/.test(loc)) {
        field = form.querySelector('[data-loc="' + loc + '"] [data-add]');
      }
      if (field) {
        fieldError(field, e.message);
        if (!first) { first = field; }
      } else {
        rest.push(e.message);
      }
    });
    var box = $("contact-error");
    if (rest.length || !errs.length) {
      box.textContent = errs.length ? "Check the contact: " + rest.join("; ") + "." : problemText(r);
      box.hidden = false;
    } else {
      box.textContent = "Check the marked fields.";
      box.hidden = false;
    }
    if (first) { first.focus(); } else { box.focus(); }
  }

  function openNew() {
    editing = null;
    resetForm();
    $("contact-dialog-h").textContent = "New contact";
    addRow("email");
    addRow("phone");
    openDialog(dlg, $("c-first"));
  }

  function openEdit(li) {
    var book = li.dataset.book, id = li.dataset.id;
    call("GET", api + "/books/" + encodeURIComponent(book) + "/" + encodeURIComponent(id)).then(function (r) {
      if (!r.ok) { alertList(problemText(r)); return; }
      var c = r.body;
      editing = { book: book, id: id, etag: r.etag };
      resetForm();
      $("contact-dialog-h").textContent = "Edit " + c.display_name;
      $("c-first").value = c.first_name || "";
      $("c-last").value = c.last_name || "";
      var derived = ((c.first_name || "").trim() + " " + (c.last_name || "").trim()).trim();
      $("c-display").value = c.display_name === derived ? "" : (c.display_name || "");
      $("c-org").value = c.organization || "";
      $("c-title").value = c.job_title || "";
      $("c-birthday").value = c.birthday || "";
      $("c-notes").value = c.notes || "";
      (c.emails || []).forEach(function (e) { addRow("email", e); });
      (c.phones || []).forEach(function (p) { addRow("phone", p); });
      (c.addresses || []).forEach(function (a) { addRow("address", a); });
      if (!(c.emails || []).length) { addRow("email"); }
      if (!(c.phones || []).length) { addRow("phone"); }
      openDialog(dlg, $("c-first"));
    });
  }

  function save(ev) {
    ev.preventDefault();
    clearErrors();
    var got = collect();
    var btn = $("contact-save");
    btn.disabled = true;
    var req;
    if (editing) {
      req = call("PUT", api + "/books/" + encodeURIComponent(editing.book) + "/" + encodeURIComponent(editing.id), got.body,
        editing.etag ? { "If-Match": editing.etag } : {});
    } else {
      req = call("POST", api + "/books/" + encodeURIComponent(list.dataset.book), got.body);
    }
    req.then(function (r) {
      btn.disabled = false;
      if (r.ok) {
        reloadWith((editing ? "Saved " : "Added ") + r.body.display_name + ".");
        return;
      }
      if (r.status === 412) {
        $("contact-error").textContent = "Someone changed this contact since you opened it. Cancel and open it again to see the changes.";
        $("contact-error").hidden = false;
        return;
      }
      showErrors(r, got.where);
    });
  }

  // alertList shows a problem above the list.
  function alertList(msg) {
    var el = $("import-summary");
    el.textContent = "";
    var p = document.createElement("p");
    p.className = "flash err";
    p.textContent = msg;
    el.appendChild(p);
  }

  // ---- Delete ----

  var delDlg, deleting = null;
  function openDelete(li) {
    deleting = li;
    $("delete-dialog-text").textContent = li.dataset.name + " will be deleted from " + (li.dataset.bookName || "your address book") + ". This cannot be undone.";
    $("delete-error").hidden = true;
    openDialog(delDlg, $("delete-confirm").nextElementSibling);
  }
  function confirmDelete() {
    var li = deleting;
    call("DELETE", api + "/books/" + encodeURIComponent(li.dataset.book) + "/" + encodeURIComponent(li.dataset.id)).then(function (r) {
      if (r.ok) { reloadWith("Deleted " + li.dataset.name + "."); return; }
      $("delete-error").textContent = problemText(r);
      $("delete-error").hidden = false;
    });
  }

  // ---- Favourites ----

  function toggleFavorite(li, btn) {
    btn.disabled = true;
    call("POST", api + "/books/" + encodeURIComponent(li.dataset.book) + "/" + encodeURIComponent(li.dataset.id) + "/favorite").then(function (r) {
      btn.disabled = false;
      if (!r.ok) { alertList(problemText(r)); return; }
      var on = !!r.body.is_favorite;
      btn.setAttribute("aria-pressed", on ? "true" : "false");
      btn.textContent = on ? "★" : "☆";
    });
  }

  // ---- Move ----

  function move(ev) {
    ev.preventDefault();
    var ids = [];
    list.querySelectorAll("input.pick:checked").forEach(function (c) { ids.push(c.closest("li").dataset.id); });
    if (!ids.length) { alertList("Select the contacts to move first."); return; }
    var sel = $("move-target");
    var target = sel.options[sel.selectedIndex];
    call("POST", api + "/books/" + encodeURIComponent(list.dataset.book) + "/move", { contact_ids: ids, target_book_id: sel.value }).then(function (r) {
      if (!r.ok) { alertList(problemText(r)); return; }
      var moved = (r.body.moved || []).length, failed = (r.body.failed || []).length;
      var msg = "Moved " + moved + (moved === 1 ? " contact" : " contacts") + " to " + target.textContent + ".";
      if (failed) { msg += " " + failed + " could not be moved (they changed meanwhile)."; }
      reloadWith(msg);
    });
  }

  // ---- Address books ----

  function createBook(ev) {
    ev.preventDefault();
    var name = $("new-book-name"), err = $("new-book-error");
    err.hidden = true;
    name.removeAttribute("aria-invalid");
    call("POST", api + "/books", { name: name.value }).then(function (r) {
      if (r.ok) { reloadWith("Created the address book " + r.body.name + ".", "/contacts?book=" + encodeURIComponent(r.body.id)); return; }
      var e = r.body && r.body.errors && r.body.errors[0];
      err.textContent = e ? e.message.charAt(0).toUpperCase() + e.message.slice(1) + "." : problemText(r);
      err.hidden = false;
      name.setAttribute("aria-invalid", "true");
      name.setAttribute("aria-describedby", "new-book-error");
      name.focus();
    });
  }

  var bookDlg;
  function deleteBook(btn) {
    if (!bookDlg) {
      // The delete dialog is reused with the book's words.
      bookDlg = delDlg;
    }
    deleting = null;
    $("delete-dialog-h").textContent = "Delete address book?";
    $("delete-dialog-text").textContent = "The address book " + btn.dataset.name + " and every contact in it will be deleted. This cannot be undone.";
    $("delete-error").hidden = true;
    bookDlg.dataset.book = btn.dataset.book;
    openDialog(bookDlg, $("delete-confirm").nextElementSibling);
  }
  function confirmDeleteBook() {
    call("DELETE", api + "/books/" + encodeURIComponent(delDlg.dataset.book)).then(function (r) {
      if (r.ok) { reloadWith("Deleted the address book.", "/contacts"); return; }
      $("delete-error").textContent = problemText(r);
      $("delete-error").hidden = false;
    });
  }

  // ---- Export and import of the whole book, done by the server ----

  var maxImportBytes = 10 * 1024 * 1024;

  function exportBook() {
    var a = document.createElement("a");
    a.href = api + "/books/" + encodeURIComponent(list.dataset.book) + "/export";
    a.download = "";
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  function importFile() {
    var input = $("import-file");
    var file = input.files && input.files[0];
    if (!file) { return; }
    var out = $("import-summary");
    var btn = $("import-book");
    if (file.size > maxImportBytes) {
      summary(file.name, null, "The file is larger than 10 MiB: split it and import the parts.");
      input.value = "";
      return;
    }
    out.textContent = "Importing " + file.name + "…";
    btn.disabled = true;
    call("POST", api + "/books/" + encodeURIComponent(list.dataset.book) + "/import", file, { "Content-Type": "text/vcard" }).then(function (r) {
      if (r.ok && r.body) { summary(file.name, r.body, ""); } else { summary(file.name, null, problemText(r)); }
    }).finally(function () { btn.disabled = false; input.value = ""; });
  }

  // summary shows the outcome of an import: res is the server's BookImportResult,
  // or null with why the file was refused.
  function summary(name, res, refused) {
    var out = $("import-summary");
    out.textContent = "";
    var box = document.createElement("div");
    var failed = res ? res.failed_count : 0;
    box.className = "flash " + (!res || failed ? "err" : "ok");
    var p = document.createElement("p");
    if (!res) {
      p.textContent = name + " was not imported: " + refused;
    } else {
      var done = res.created + res.updated + res.unchanged, total = done + failed;
      var parts = [];
      if (res.created) { parts.push(res.created + " new"); }
      if (res.updated) { parts.push(res.updated + " updated"); }
      if (res.unchanged) { parts.push(res.unchanged + " unchanged"); }
      p.textContent = "Imported " + done + " of " + total + (total === 1 ? " contact" : " contacts") + " from " + name + "." +
        (parts.length ? " (" + parts.join(", ") + ")" : "") +
        (failed ? " " + failed + " could not be imported:" : "");
    }
    box.appendChild(p);
    if (res && res.failed.length) {
      var ul = document.createElement("ul");
      res.failed.slice(0, 50).forEach(function (f) {
        var li = document.createElement("li");
        li.textContent = "Card " + (f.index + 1) + (f.uid ? " (" + f.uid + ")" : "") + ": " + f.reason;
        ul.appendChild(li);
      });
      box.appendChild(ul);
      if (res.failed_count > 50) {
        var more = document.createElement("p");
        more.textContent = "and " + (res.failed_count - 50) + " more.";
        box.appendChild(more);
      }
    }
    if (res && res.created + res.updated > 0) {
      var a = document.createElement("a");
      a.href = location.pathname + location.search;
      a.textContent = "Show the imported contacts";
      box.appendChild(a);
    }
    out.appendChild(box);
  }

  // addFromDirectory copies a person of the directory into the default book.
  function addFromDirectory(btn) {
    var d = btn.dataset;
    btn.disabled = true;
    call("POST", api + "/books/" + encodeURIComponent(d.book), {
      first_name: d.first, last_name: d.last, display_name: d.name, emails: d.email ? [{ type: "work", value: d.email }] : []
    }).then(function (r) {
      btn.disabled = false;
      var out = $("contacts-flash");
      out.classList.toggle("err", !r.ok);
      out.classList.toggle("ok", r.ok);
      out.textContent = r.ok ? "Added " + r.body.display_name + " to your contacts." : problemText(r);
      out.hidden = false;
    }, function () { btn.disabled = false; });
  }

  var list;
  document.addEventListener("DOMContentLoaded", function () {
    Atrium.showFlash(flashKey, $("contacts-flash"));
    list = $("contacts-list");
    if (!list) { // the directory
      document.querySelectorAll("button[data-act=add-person]").forEach(function (b) {
        b.hidden = false;
        b.addEventListener("click", function () { addFromDirectory(b); });
      });
      return;
    }
    form = $("contact-form");
    dlg = $("contact-dialog");
    delDlg = $("delete-dialog");
    document.querySelectorAll("#contacts-tools, #new-book, #move-form, #delete-book, input.pick, .contact-list [data-act]").forEach(function (e) { e.hidden = false; });

    $("new-contact").addEventListener("click", openNew);
    form.addEventListener("submit", save);
    form.querySelectorAll("[data-add]").forEach(function (b) {
      b.addEventListener("click", function () { addRow(b.dataset.add, null, true); });
    });
    list.addEventListener("click", function (ev) {
      var btn = ev.target.closest("button[data-act]");
      if (!btn) { return; }
      var li = btn.closest("li");
      if (btn.dataset.act === "edit") { openEdit(li); }
      if (btn.dataset.act === "delete") { delDlg.dataset.book = ""; $("delete-dialog-h").textContent = "Delete contact?"; openDelete(li); }
      if (btn.dataset.act === "fav") { toggleFavorite(li, btn); }
    });
    $("delete-confirm").addEventListener("click", function () {
      if (deleting) { confirmDelete(); } else if (delDlg.dataset.book) { confirmDeleteBook(); }
    });
    $("new-book").addEventListener("submit", createBook);
    if ($("delete-book")) { $("delete-book").addEventListener("click", function () { deleteBook($("delete-book")); }); }
    if ($("move-form")) { $("move-form").addEventListener("submit", move); }
    $("import-file").addEventListener("change", importFile);
    $("import-book").addEventListener("click", function () { $("import-file").click(); });
    $("export-book").addEventListener("click", exportBook);
  });
})();
