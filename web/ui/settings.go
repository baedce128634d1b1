package ui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/identity"
)

// settingsData is the settings page: the person's credentials and sessions.
type settingsData struct {
	Email     string
	WebDAVURL string
	DAVURL    string
	// ServerURL is the address the desktop and mobile sync clients take.
	ServerURL string

	// NewAppPassword and NewToken are shown once, right after creation.
	NewAppPassword      string
	NewAppPasswordLabel string
	NewToken            string
	NewTokenName        string

	AppPasswords []identity.AppPassword
	Tokens       []identity.Token
	Sessions     []identity.Session
	Scopes       []scopeOption
	TTLs         []ttlOption

	TwoFactor twoFactorData

	// Reauth: the session signed in long enough ago that making a credential
	// or turning two-factor sign-in on asks for the password again (the
	// forms show a field for it).
	Reauth bool

	// Section names the form an error belongs to.
	Section string
}

type scopeOption struct {
	Name    string
	Checked bool
}

type ttlOption struct {
	Days     int
	Label    string
	Selected bool
}

var ttlChoices = []ttlOption{{7, "7 days", false}, {30, "30 days", true}, {90, "90 days", false}, {365, "1 year", false}, {0, "Never", false}}

// listLimit bounds the lists of the page (the REST API pages through more).
const listLimit = 100

// flashes are the confirmations a redirect may ask for (?done=...).
var flashes = map[string]string{
	"password-changed":     "Your password is changed. Your other sessions were signed out; your app passwords and tokens keep working.",
	"app-password-revoked": "The app password is revoked.",
	"token-revoked":        "The token is revoked.",
	"session-revoked":      "The session is signed out.",
	"two-factor-off":       "Two-factor sign-in is off. You sign in with your password alone.",
}

// settingsPage loads the page's lists.
func (u *UI) settingsPage(r *http.Request, v *viewer) (settingsData, error) {
	ctx := r.Context()
	ids := u.cfg.Identity
	d := settingsData{Email: v.User.Email, WebDAVURL: u.cfg.PublicURL + "/webdav/", DAVURL: u.cfg.PublicURL + "/dav/", ServerURL: u.cfg.PublicURL}
	var err error
	pr := app.PageRequest{Limit: listLimit}
	if d.AppPasswords, err = ids.MyAppPasswords(ctx, v.P, pr); err != nil {
		return d, err
	}
	if d.Tokens, err = ids.MyTokens(ctx, v.P, pr); err != nil {
		return d, err
	}
	if d.Sessions, err = ids.Sessions(ctx, v.P, pr); err != nil {
		return d, err
	}
	if d.TwoFactor, err = u.twoFactorSection(r, v); err != nil {
		return d, err
	}
	for _, sc := range v.P.Scopes.List() {
		d.Scopes = append(d.Scopes, scopeOption{Name: sc})
	}
	d.TTLs = ttlChoices
	d.Reauth = ids.NeedsReauthentication(v.P)
	return d, nil
}

// checkPassword runs a check of the account password (check), counted toward
// the failed sign-in limits of the viewer's account like a sign-in: refused
// while the account is blocked from this client, a wrong password counted.
func (u *UI) checkPassword(r *http.Request, v *viewer, check func() error) error {
	lim := u.cfg.Limiter
	if lim != nil {
		if wait := lim.Blocked(r, v.User.Email); wait > 0 {
			secs := max(int((wait+time.Second-1)/time.Second), 1)
			return &app.Error{Code: app.ERateLimited, RetryAfter: secs,
				Message: "Too many wrong passwords. Try again in " + strconv.Itoa(secs) + " seconds."}
		}
	}
	err := check()
	if lim != nil && app.ErrorCode(err) == app.EValidation {
		lim.Failed(r, v.User.Email)
	}
	return err
}

// confirmFirst gives a form's account password (confirm_password, shown when
// the session's sign-in is not recent) to the session before a sensitive
// change; a form without one goes on, and the change itself says whether it
// needed it.
func (u *UI) confirmFirst(r *http.Request, v *viewer) error {
	pw := r.PostFormValue("confirm_password")
	if pw == "" {
		return nil
	}
	return u.checkPassword(r, v, func() error {
		err := u.cfg.Identity.ConfirmPassword(r.Context(), v.P, pw)
		if errors.Is(err, identity.ErrWrongPassword) {
			return app.Invalid("body.confirm_password", "is not your account password", nil)
		}
		return err
	})
}

func (u *UI) showSettings(w http.ResponseWriter, r *http.Request, v *viewer, code int, flash, errMsg string, edit func(*settingsData)) {
	d, err := u.settingsPage(r, v)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	if edit != nil {
		edit(&d)
	}
	u.render(w, r, code, "settings", page{Title: "Settings", V: v, Flash: flash, Error: errMsg, Data: d})
}

func (u *UI) settings(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	flash := flashes[q.Get("done")]
	if q.Get("done") == "password-changed-revoked" {
		apps, _ := strconv.Atoi(q.Get("apps"))
		toks, _ := strconv.Atoi(q.Get("tokens"))
		flash = "Your password is changed. Your other sessions were signed out, and " + plural(apps, "app password", "app passwords") + " and " +
			plural(toks, "personal access token", "personal access tokens") + " were revoked."
	}
	u.showSettings(w, r, v, http.StatusOK, flash, "", nil)
}

// done redirects to the settings page with a confirmation (Post/Redirect/Get).
func done(w http.ResponseWriter, r *http.Request, what, anchor string) {
	http.Redirect(w, r, "/settings?done="+what+"#"+anchor, http.StatusSeeOther)
}

func (u *UI) changePassword(w http.ResponseWriter, r *http.Request, v *viewer) {
	current, next := r.PostFormValue("current_password"), r.PostFormValue("new_password")
	if next != r.PostFormValue("repeat_password") {
		u.showSettings(w, r, v, http.StatusUnprocessableEntity, "", "The two new passwords differ.", func(d *settingsData) { d.Section = "password" })
		return
	}
	revoke := r.PostFormValue("revoke_credentials") != ""
	var rev identity.Revoked
	err := u.checkPassword(r, v, func() error {
		var err error
		rev, err = u.cfg.Identity.ChangePassword(r.Context(), v.P, identity.ChangePasswordInput{Current: current, Next: next, RevokeCredentials: revoke})
		return err
	})
	if err != nil {
		u.settingsError(w, r, v, err, "password")
		return
	}
	if revoke {
		http.Redirect(w, r, "/settings?done=password-changed-revoked&apps="+strconv.Itoa(rev.AppPasswords)+"&tokens="+strconv.Itoa(rev.Tokens)+"#password", http.StatusSeeOther)
		return
	}
	done(w, r, "password-changed", "password")
}

// settingsError shows the settings page again with the error of a form.
func (u *UI) settingsError(w http.ResponseWriter, r *http.Request, v *viewer, err error, section string) {
	code := status(err)
	if code >= 500 {
		u.fail(w, r, v, err)
		return
	}
	retryAfter(w, err)
	u.showSettings(w, r, v, code, "", message(err), func(d *settingsData) { d.Section = section })
}

// createAppPassword makes an app password and shows it once (this response is
// the only place it appears, so it is not a redirect).
func (u *UI) createAppPassword(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.confirmFirst(r, v); err != nil {
		u.settingsError(w, r, v, err, "app-passwords")
		return
	}
	secret, a, err := u.cfg.Identity.CreateMyAppPassword(r.Context(), v.P, r.PostFormValue("label"))
	if err != nil {
		u.settingsError(w, r, v, err, "app-passwords")
		return
	}
	u.showSettings(w, r, v, http.StatusOK, "", "", func(d *settingsData) {
		d.NewAppPassword, d.NewAppPasswordLabel = secret, a.Label
	})
}

func (u *UI) revokeAppPassword(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.cfg.Identity.RevokeAppPassword(r.Context(), v.P, r.PathValue("id")); err != nil {
		u.settingsError(w, r, v, err, "app-passwords")
		return
	}
	done(w, r, "app-password-revoked", "app-passwords")
}

// createToken makes a personal access token and shows it once.
func (u *UI) createToken(w http.ResponseWriter, r *http.Request, v *viewer) {
	_ = r.ParseForm()
	var ttl time.Duration
	if days := strings.TrimSpace(r.PostFormValue("ttl_days")); days != "" {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			u.settingsError(w, r, v, app.Invalid("body.ttl_seconds", "choose one of the offered lifetimes", days), "tokens")
			return
		}
		ttl = time.Duration(n) * 24 * time.Hour
	}
	scopes := r.PostForm["scope"]
	if len(scopes) == 0 {
		u.settingsError(w, r, v, app.Invalid("body.scopes", "choose at least one scope", nil), "tokens")
		return
	}
	if err := u.confirmFirst(r, v); err != nil {
		u.settingsError(w, r, v, err, "tokens")
		return
	}
	secret, t, err := u.cfg.Identity.CreateMyToken(r.Context(), v.P, identity.CreateMyTokenInput{Name: r.PostFormValue("name"), Scopes: scopes, TTL: ttl})
	if err != nil {
		u.settingsError(w, r, v, err, "tokens")
		return
	}
	u.showSettings(w, r, v, http.StatusOK, "", "", func(d *settingsData) { d.NewToken, d.NewTokenName = secret, t.Name })
}

func (u *UI) revokeToken(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.cfg.Identity.RevokeToken(r.Context(), v.P, r.PathValue("id")); err != nil {
		u.settingsError(w, r, v, err, "tokens")
		return
	}
	done(w, r, "token-revoked", "tokens")
}

// revokeSession signs a session out; revoking the current one is signing out.
func (u *UI) revokeSession(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	if err := u.cfg.Identity.RevokeSession(r.Context(), v.P, id); err != nil {
		u.settingsError(w, r, v, err, "sessions")
		return
	}
	if id == v.P.CredentialID {
		u.clearCookie(w, u.cookieName())
		http.Redirect(w, r, "/signin?done=signed-out", http.StatusSeeOther)
		return
	}
	done(w, r, "session-revoked", "sessions")
}
