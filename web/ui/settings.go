package ui

import (
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
	"password-changed":     "Your password is changed. Your other sessions were signed out.",
	"app-password-revoked": "The app password is revoked.",
	"token-revoked":        "The token is revoked.",
	"session-revoked":      "The session is signed out.",
	"two-factor-off":       "Two-factor sign-in is off. You sign in with your password alone.",
}

// settingsPage loads the page's lists.
func (u *UI) settingsPage(r *http.Request, v *viewer) (settingsData, error) {
	ctx := r.Context()
	ids := u.cfg.Identity
	d := settingsData{Email: v.User.Email, WebDAVURL: u.cfg.PublicURL + "/webdav/", DAVURL: u.cfg.PublicURL + "/dav/"}
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
	return d, nil
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
	u.showSettings(w, r, v, http.StatusOK, flashes[r.URL.Query().Get("done")], "", nil)
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
	if err := u.cfg.Identity.ChangePassword(r.Context(), v.P, current, next); err != nil {
		u.settingsError(w, r, v, err, "password")
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
	u.showSettings(w, r, v, code, "", message(err), func(d *settingsData) { d.Section = section })
}

// createAppPassword makes an app password and shows it once (this response is
// the only place it appears, so it is not a redirect).
func (u *UI) createAppPassword(w http.ResponseWriter, r *http.Request, v *viewer) {
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
		u.clearCookie(w, SessionCookie)
		http.Redirect(w, r, "/signin?done=signed-out", http.StatusSeeOther)
		return
	}
	done(w, r, "session-revoked", "sessions")
}
