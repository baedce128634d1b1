package ui

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/identity"
)

type signInData struct {
	Email string
	Next  string
}

// home opens the web app: the home page when signed in, else the sign-in form.
func (u *UI) home(w http.ResponseWriter, r *http.Request) {
	if _, err := u.session(r); err == nil {
		http.Redirect(w, r, homePath, http.StatusSeeOther)
		return
	}
	u.showSignIn(w, r, http.StatusOK, "", signInData{})
}

func (u *UI) signInPage(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if _, err := u.session(r); err == nil {
		if next == "" {
			next = homePath
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	flash := ""
	switch r.URL.Query().Get("done") {
	case "signed-out":
		flash = "You are signed out."
	case "expired":
		flash = "The sign-in has expired. Sign in again with your password."
	}
	u.showSignIn(w, r, http.StatusOK, "", signInData{Next: next}, flash)
}

// A refused sign-in is the form again, with the reason, answered 200: a
// browser reports a page answered 4xx as a console error, and the page is a
// form to fill in again, not a failure to load.
func (u *UI) showSignIn(w http.ResponseWriter, r *http.Request, code int, errMsg string, d signInData, flash ...string) {
	p := page{Title: "Sign in", CSRF: u.preCSRF(w, r), Error: errMsg, Data: d}
	if len(flash) > 0 {
		p.Flash = flash[0]
	}
	u.render(w, r, code, "signin", p)
}

// signIn checks the e-mail address and account password and starts a session.
// Failures count toward the failed sign-in limits.
func (u *UI) signIn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !u.checkPreCSRF(r) {
		u.forbidden(w, r, nil, "The sign-in form has expired or did not come from this server. Reload the page and try again.")
		return
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	d := signInData{Email: email, Next: localPath(r.PostFormValue("next"))}
	if u.cfg.Limiter != nil {
		if wait := u.cfg.Limiter.Blocked(r, email); wait > 0 {
			secs := max(int((wait+time.Second-1)/time.Second), 1)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			u.showSignIn(w, r, http.StatusOK, "Too many failed sign-in attempts. Try again in "+strconv.Itoa(secs)+" seconds.", d)
			return
		}
	}
	res, err := u.cfg.Identity.BeginSignIn(r.Context(), identity.SignInInput{Email: email, Password: r.PostFormValue("password"),
		UserAgent: r.UserAgent(), Address: u.clientIP(r)})
	if err != nil {
		switch app.ErrorCode(err) {
		case app.EUnauthorized:
			if u.cfg.Limiter != nil {
				u.cfg.Limiter.Failed(r, email)
			}
			u.showSignIn(w, r, http.StatusOK, "The e-mail address or password is not correct.", d)
		case app.EOrgSuspended:
			u.showSignIn(w, r, http.StatusOK, "Your organisation is suspended. Ask your provider to activate it.", d)
		case app.EForbidden:
			u.showSignIn(w, r, http.StatusOK, "Your account is suspended. Ask your administrator to activate it.", d)
		default:
			u.log.Error("sign in", "err", err)
			u.showSignIn(w, r, http.StatusInternalServerError, message(err), d)
		}
		return
	}
	if res.Challenge != "" {
		// Two-factor sign-in: no session until the code passes, and the
		// failures of the account are not cleared by the password alone.
		u.setChallenge(w, res.Challenge)
		to := "/signin/code"
		if d.Next != "" {
			to += "?next=" + url.QueryEscape(d.Next)
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	if u.cfg.Limiter != nil {
		u.cfg.Limiter.Succeeded(r, email)
	}
	u.setSession(w, res.Secret)
	next := d.Next
	if next == "" {
		next = homePath
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signOut ends the session.
func (u *UI) signOut(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.cfg.Identity.SignOut(r.Context(), v.P); err != nil && app.ErrorCode(err) != app.ENotFound {
		u.fail(w, r, v, err)
		return
	}
	u.clearCookie(w, u.cookieName())
	http.Redirect(w, r, "/signin?done=signed-out", http.StatusSeeOther)
}

type forgotData struct {
	Email string
	Sent  bool
}

func (u *UI) forgotPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	u.render(w, r, http.StatusOK, "forgot", page{Title: "Forgot password", CSRF: u.preCSRF(w, r), Data: forgotData{}})
}

// forgot sends the password reset e-mail; the answer is the same whether or not
// the address exists, and so is its time: the address is looked up and the
// e-mail sent after the answer, never before it. Requests count toward the
// failed sign-in limits (of the address "reset:<e-mail>"), so that nobody
// floods a mailbox.
func (u *UI) forgot(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !u.checkPreCSRF(r) {
		u.forbidden(w, r, nil, "The form has expired or did not come from this server. Reload the page and try again.")
		return
	}
	email := strings.TrimSpace(r.PostFormValue("email"))
	if email == "" {
		u.render(w, r, http.StatusUnprocessableEntity, "forgot", page{Title: "Forgot password", CSRF: u.preCSRF(w, r),
			Error: "Enter the e-mail address of your account.", Data: forgotData{}})
		return
	}
	key := "reset:" + email
	if u.cfg.Limiter == nil || u.cfg.Limiter.Blocked(r, key) == 0 {
		if u.cfg.Limiter != nil {
			u.cfg.Limiter.Failed(r, key)
		}
		ctx := context.WithoutCancel(r.Context())
		go func() {
			u.resetSlots <- struct{}{}
			defer func() { <-u.resetSlots }()
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := u.cfg.Partner.RequestPasswordReset(ctx, email); err != nil {
				u.log.Error("password reset request", "err", err)
			}
		}()
	}
	u.render(w, r, http.StatusOK, "forgot", page{Title: "Forgot password", CSRF: u.preCSRF(w, r), Data: forgotData{Email: email, Sent: true}})
}
