package web

import (
	"html/template"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"atrium/app"
	"atrium/app/partner"
)

var accountTmpl = template.Must(template.New("a").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Title}} — Atrium</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#222}
label,input,button{display:block;width:100%;box-sizing:border-box}input{font:inherit;padding:.5rem;margin:.3rem 0 1rem;border:1px solid #999;border-radius:4px}
button{font:inherit;padding:.6rem;background:#0b5cad;color:#fff;border:0;border-radius:4px;cursor:pointer}.msg{padding:.6rem;border-radius:4px;margin-top:1rem}
.ok{background:#e6f4ea}.err{background:#fdecea}</style></head><body>
<h1>{{.Title}}</h1><p>{{.Intro}}</p>
{{if .Invalid}}<p class="msg err">This link is not valid: it may have expired or been used already. Ask for a new one (“Forgot password?” on the sign-in page).</p>{{else}}
<form id="f" method="post" data-action="{{.Action}}">
<label for="p1">New password (at least 10 characters)</label><input id="p1" name="password" type="password" minlength="10" required autocomplete="new-password">
<label for="p2">Repeat the password</label><input id="p2" type="password" minlength="10" required autocomplete="new-password">
{{if .Reset}}<fieldset style="border:1px solid #ccc;border-radius:4px;margin:0 0 1rem;padding:.6rem"><legend>Your devices and scripts</legend>
<p style="margin-top:0">Setting a new password signs out every browser. {{if or .Reset.AppPasswords .Reset.Tokens}}These keep working unless you revoke them:</p>
<ul>{{range .Reset.AppPasswords}}<li>App password “{{.Label}}”</li>{{end}}{{range .Reset.Tokens}}<li>Access token “{{.Name}}”</li>{{end}}</ul>
<label style="display:flex;gap:.5rem;align-items:flex-start"><input id="revoke" type="checkbox" style="width:auto;margin:.3rem 0 0"> Also revoke all of them: my account may be compromised.</label>{{else}}You have no app passwords or access tokens.</p>{{end}}
</fieldset>{{end}}
<button type="submit">{{.Button}}</button></form>{{end}}<div id="m" role="status"></div>
<script src="/account.js"></script></body></html>`))

// accountJS posts the form to the API; kept as a separate script so the page's
// Content-Security-Policy can forbid inline script.
const accountJS = `document.getElementById("f").addEventListener("submit", async function (e) {
  e.preventDefault();
  var m = document.getElementById("m"), p1 = document.getElementById("p1").value, p2 = document.getElementById("p2").value;
  m.className = "msg err";
  if (p1 !== p2) { m.textContent = "The two passwords differ."; return; }
  var rv = document.getElementById("revoke"), body = {password: p1};
  if (rv) { body.revoke_credentials = rv.checked; }
  var r = await fetch(this.dataset.action, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  var b = await r.json().catch(function () { return {}; });
  if (r.ok) {
    m.className = "msg ok"; m.textContent = "Done. You can now sign in as " + (b.email || "you") + (rv && rv.checked ? ". Your app passwords and access tokens are revoked: create new ones for your devices. " : " and create app passwords for your devices. ");
    var a = document.createElement("a"); a.href = "/"; a.textContent = "Sign in"; m.appendChild(a);
    this.remove(); return;
  }
  m.textContent = b.detail || ("Something went wrong (" + r.status + ").");
});`

type accountDoc struct {
	Title, Intro, Button, Action string
	// Reset lists, on a password reset's page, what keeps working.
	Reset *partner.ResetInfo
	// Invalid: the link's token is unknown, used or expired.
	Invalid bool
}

// accountPage serves the page a person opens from an invitation or password reset
// e-mail: it sets the password through the public accept endpoints.
func (s *Server) accountPage(kind string) gin.HandlerFunc {
	return func(c *gin.Context) {
		token := c.Param("token")
		d := accountDoc{Title: "Accept your invitation", Intro: "Choose a password for your new Atrium account.",
			Button: "Accept and set password", Action: "/api/v1/invitations/" + url.PathEscape(token) + "/accept"}
		status := http.StatusOK
		if kind == "reset" {
			d = accountDoc{Title: "Reset your password", Intro: "Choose a new password for your Atrium account.",
				Button: "Set new password", Action: "/api/v1/password-resets/" + url.PathEscape(token) + "/accept"}
			if wait := s.linkTokenBlocked(c.Request); wait > 0 {
				s.tooManyFailures(wait).write(c.Writer, requestIDFrom(c.Request.Context()))
				return
			}
			info, err := s.cfg.Partner.PasswordResetInfo(c.Request.Context(), token)
			switch {
			case app.ErrorCode(err) == app.ENotFound:
				s.linkTokenFailed(c.Request)
				d.Invalid, status = true, http.StatusNotFound
			case err != nil:
				s.problems.fromError(err).write(c.Writer, requestIDFrom(c.Request.Context()))
				return
			default:
				d.Intro = "Choose a new password for " + info.Email + "."
				d.Reset = &info
			}
		}
		c.Header("Content-Type", "text/html; charset=utf-8")
		c.Header("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'")
		c.Header("X-Frame-Options", "DENY")
		c.Header("Referrer-Policy", "no-referrer")
		c.Header("Cache-Control", "no-store")
		c.Status(status)
		_ = accountTmpl.Execute(c.Writer, d)
	}
}

func serveAccountJS(c *gin.Context) {
	c.Header("Content-Type", "text/javascript; charset=utf-8")
	c.String(http.StatusOK, accountJS)
}
