// The invitation and password reset pages (templates/account.html): the form
// sets the password through the public accept endpoint its data-action names,
// then links to sign-in. A page whose link is not valid has no form.
"use strict";
(function () {
  var A = window.Atrium, f = A.$("f");
  if (!f) { return; }
  f.addEventListener("submit", function (e) {
    e.preventDefault();
    var m = A.$("m"), p1 = A.$("p1").value, p2 = A.$("p2").value;
    m.className = "flash err";
    if (p1 !== p2) { m.textContent = "The two passwords differ."; return; }
    var rv = A.$("revoke"), body = { password: p1 };
    if (rv) { body.revoke_credentials = rv.checked; }
    A.request("POST", f.dataset.action, body).then(function (r) {
      if (!r.ok) { m.textContent = A.problemText(r); return; }
      var b = r.body || {};
      m.className = "flash ok";
      m.textContent = "Done. You can now sign in as " + (b.email || "you") + (rv && rv.checked ?
        ". Your app passwords and access tokens are revoked: create new ones for your devices. " :
        " and create app passwords for your devices. ");
      var a = document.createElement("a"); a.href = "/"; a.textContent = "Sign in"; m.appendChild(a);
      f.remove();
    });
  });
})();
