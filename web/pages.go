package web

import (
	"html/template"
	"net/http"
	"net/url"
	"sort"

	"github.com/gin-gonic/gin"

	"atrium/app"
	"atrium/app/partner"
)

// problemDocs explains each problem code to a person who follows a `type` URI.
var problemDocs = map[string]string{
	"unauthorized":              "No valid credential was sent. Send Authorization: Bearer with a personal access token, service principal token or JWT (or, on the file mount and DAV endpoints, HTTP Basic with your e-mail address and an app password).",
	"forbidden":                 "The credential is valid but may not do this.",
	"insufficient_scope":        "The token lacks the scope the operation needs. Create a token with that scope.",
	"feature_not_in_plan":       "The organisation's plan does not include this feature (for example drive). Change the plan.",
	"no_bound_user":             "The endpoint acts for a user, and the token has none. Use a PAT or a service principal bound to a user.",
	"org_suspended":             "The organisation is suspended: its users and tokens are refused until a reseller activates it. Its data is kept.",
	"read_only":                 "The target is read-only for you (for example the Shared with me folder of the file mount).",
	"reauthentication_required": "The web session signed in more than 10 minutes ago: making an app password or a token, or turning two-factor sign-in on, asks for the account password again (Settings shows a field for it).",
	"not_found":                 "No such resource, or it is not visible to you.",
	"conflict":                  "The request conflicts with the current state (for example a name already taken).",
	"idempotency_key_reused":    "The Idempotency-Key was used within 24 hours with a different request body. Use a new key.",
	"seat_floor":                "The seat count asked for is below the active users plus pending invitations.",
	"precondition_failed":       "If-Match does not match the current ETag. Fetch the resource again, merge, and retry with the new ETag.",
	"payload_too_large":         "The request body is too large.",
	"validation_failed":         "The request is not valid; the errors array names each invalid input with its location.",
	"locked":                    "The resource is locked (by a WebDAV client or the online editor).",
	"cursor_expired":            "The pagination cursor is older than 24 hours (or than the kept change log). Restart from the first page.",
	"invalid_cursor":            "The pagination cursor was not issued by this server for this list. Restart from the first page.",
	"idempotency_in_flight":     "A request with the same Idempotency-Key is still being processed. Wait for Retry-After seconds and retry.",
	"quota_exceeded":            "The storage quota would be exceeded.",
	"editor_unavailable":        "The online editor is not available for this: no editor (Collabora Online or ONLYOFFICE) is configured on this server ([editor] url), the editor cannot open this file type, or, for save-as-odf, LibreOffice (soffice) is not installed.",
	"no_preview":                "The server cannot make a thumbnail or preview of this file type (images only: JPEG, PNG, GIF, WebP, TIFF, BMP). Download the file instead.",
	"index_rebuilding":          "The search index is being rebuilt (after an upgrade, a restore, or when it was missing or damaged). Search is back when it is done: retry after Retry-After seconds. Browsing and downloads work meanwhile.",
	"bad_request":               "The request could not be understood (for example malformed JSON).",
	"unavailable":               "The service is temporarily unavailable. Retry later.",
	"internal":                  "An unexpected error occurred on the server. The instance field holds the request id to give to support.",
	"method_not_allowed":        "The HTTP method is not allowed on this path.",
	"not_acceptable":            "The server cannot produce a response in a format the Accept header allows.",
	"unsupported_media_type":    "The request body's content type is not supported.",
	"rate_limited":              "Too many requests, failed sign-ins or connections from this credential or address ([limits] in the configuration). Wait for Retry-After seconds.",
	"timeout":                   "The request took longer than the server allows ([limits] request_timeout). Retry later, or narrow the request (a smaller page, a narrower range).",
	"not_implemented":           "Not implemented on this server.",
	"bad_gateway":               "The WebDAV Destination of a COPY or MOVE is on another server or outside the file mount.",
	"url_expired":               "The presigned URL has expired. Ask the API for a new one.",
}

var problemTmpl = template.Must(template.New("p").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Title}} — Atrium problems</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:.1em .3em;border-radius:3px}
table{border-collapse:collapse}td{padding:.2rem .8rem .2rem 0;vertical-align:top}a{color:#0b5cad}</style></head><body>
{{if .Code}}<p><a href="../problems">All problem types</a></p><h1><code>{{.Code}}</code></h1><p>HTTP status {{.Status}}</p><p>{{.Doc}}</p>
{{else}}<h1>Atrium problem types</h1><p>Every error response is <code>application/problem+json</code> (RFC 9457) whose <code>type</code> links here.</p>
<table>{{range .List}}<tr><td><a href="problems/{{.Code}}"><code>{{.Code}}</code></a></td><td>{{.Status}}</td><td>{{.Doc}}</td></tr>{{end}}</table>{{end}}
</body></html>`))

type problemDoc struct {
	Code   string
	Status int
	Doc    string
	Title  string
	List   []problemDoc
}

func (s *Server) problemPage(c *gin.Context) {
	code := c.Param("code")
	status, ok := ProblemCodes()[code]
	if !ok {
		if _, known := problemDocs[code]; !known {
			s.problems.make(http.StatusNotFound, "", "No such problem type.").write(c.Writer, requestIDFrom(c.Request.Context()))
			return
		}
		status = http.StatusForbidden
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	_ = problemTmpl.Execute(c.Writer, problemDoc{Code: code, Status: status, Doc: problemDocs[code], Title: code})
}

func (s *Server) problemIndex(c *gin.Context) {
	var list []problemDoc
	for code, status := range ProblemCodes() {
		list = append(list, problemDoc{Code: code, Status: status, Doc: problemDocs[code]})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Code < list[j].Code })
	c.Header("Content-Type", "text/html; charset=utf-8")
	_ = problemTmpl.Execute(c.Writer, problemDoc{Title: "Problem types", List: list})
}

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
