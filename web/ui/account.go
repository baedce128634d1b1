package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"atrium/app"
	"atrium/app/partner"
)

// The pages a person opens from an invitation or password reset e-mail
// (/invite/{token}, /reset/{token}): they set the password through the public
// accept endpoints of the REST API (assets/account.js posts the form), so the
// page needs no session and no anti-forgery token; the link's token is the
// credential. The link's URL holds it: the page sends no Referer, is never
// cached or framed, and allows no form submission but its script's request.

// accountCSP is the pages' policy: the site-wide one, with no form target.
const accountCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// accountData is an invitation or password reset page.
type accountData struct {
	Intro, Button string
	// Action is the accept endpoint the form posts the password to.
	Action string
	// Reset lists, on a password reset's page, what keeps working.
	Reset *partner.ResetInfo
	// Invalid: the link's token is unknown, used or expired.
	Invalid bool
}

// invitePage serves the page of an invitation: choose a password.
func (u *UI) invitePage(w http.ResponseWriter, r *http.Request) {
	d := accountData{Intro: "Choose a password for your new Atrium account.", Button: "Accept and set password",
		Action: "/api/v1/invitations/" + url.PathEscape(r.PathValue("token")) + "/accept"}
	u.renderAccount(w, r, http.StatusOK, "Accept your invitation", d)
}

// resetPage serves the page of a password reset: choose a new password,
// seeing what keeps working. Unknown tokens count as failed sign-ins of the
// address (guessing a token is guessing a credential); past the limit, 429.
func (u *UI) resetPage(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	d := accountData{Intro: "Choose a new password for your Atrium account.", Button: "Set new password",
		Action: "/api/v1/password-resets/" + url.PathEscape(token) + "/accept"}
	if u.cfg.Limiter != nil {
		if wait := u.cfg.Limiter.LinkTokenBlocked(r); wait > 0 {
			secs := max(int((wait+time.Second-1)/time.Second), 1)
			u.writeProblem(w, r, &app.Error{Code: app.ERateLimited, RetryAfter: secs,
				Message: "Too many failed sign-in attempts; try again in " + strconv.Itoa(secs) + " seconds."})
			return
		}
	}
	code := http.StatusOK
	info, err := u.cfg.Partner.PasswordResetInfo(r.Context(), token)
	switch {
	case app.ErrorCode(err) == app.ENotFound:
		if u.cfg.Limiter != nil {
			u.cfg.Limiter.LinkTokenFailed(r)
		}
		d.Invalid, code = true, http.StatusNotFound
	case err != nil:
		u.writeProblem(w, r, err)
		return
	default:
		d.Intro = "Choose a new password for " + info.Email + "."
		d.Reset = &info
	}
	u.renderAccount(w, r, code, "Reset your password", d)
}

func (u *UI) renderAccount(w http.ResponseWriter, r *http.Request, code int, title string, d accountData) {
	h := w.Header()
	h.Set("Content-Security-Policy", accountCSP)
	h.Set("Referrer-Policy", "no-referrer")
	u.render(w, r, code, "account", page{Title: title, Outside: true, Data: d})
}

// accountScript serves assets/account.js at the address pages served before
// the web app had its assets loaded it from (/account.js).
func (u *UI) accountScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeFileFS(w, r, assetFS, "assets/account.js")
}
