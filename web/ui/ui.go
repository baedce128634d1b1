// Package ui is Atrium's web app: server-rendered pages for people, signed in
// with their account password and a session cookie. Every page, style and script
// is embedded in the binary; no request leaves the origin and no build step is
// needed. The pages act through the same app services as the REST API.
//
// Adding a page: write its template in templates/, its handler in a file of its
// own, add its routes to Routes and handle them in New, and, when it belongs in
// the navigation, add one line to navItems (nav.go).
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/contacts"
	"atrium/app/drive"
	"atrium/app/identity"
	"atrium/app/partner"
	"atrium/app/webhooks"
	"atrium/web/problem"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Cookie names: the session, and the anti-forgery token of the forms shown
// before sign-in (sign-in, forgotten password), sent twice: cookie and field.
const (
	SessionCookie = "atrium_session"
	// SecureSessionCookie is the session cookie's name when the public URL
	// is https: the __Host- prefix makes browsers insist that it is Secure,
	// for the whole host (Path=/) and set by this host alone (no Domain).
	SecureSessionCookie = "__Host-atrium_session"
	PreCSRFCookie       = "atrium_csrf"
	// CSRFField is the form field (and CSRFHeader the header) carrying the
	// anti-forgery token of a state-changing request.
	CSRFField  = "csrf"
	CSRFHeader = "X-CSRF-Token"
)

// ContentSecurityPolicy is sent with every response of the web app: no inline
// script or style, nothing from another origin, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

// SignInLimiter counts failed sign-ins (and password reset requests) against
// the server's failed sign-in limits. Package web provides it.
type SignInLimiter interface {
	// Blocked returns how long until account may try again from r; 0: now.
	Blocked(r *http.Request, account string) time.Duration
	// Failed counts a failed attempt of account from r.
	Failed(r *http.Request, account string)
	// Succeeded clears the failures of account from r after a sign-in.
	Succeeded(r *http.Request, account string)
	// CodeBlocked and CodeFailed are Blocked and Failed of the second step
	// (a two-factor code), which also counts the account's wrong codes from
	// every address.
	CodeBlocked(r *http.Request, account string) time.Duration
	CodeFailed(r *http.Request, account string)
	// LinkTokenBlocked and LinkTokenFailed are the limit of the address on
	// unknown tokens of e-mailed links (the password reset page), which are
	// counted as failed sign-ins: guessing a token is guessing a credential.
	LinkTokenBlocked(r *http.Request) time.Duration
	LinkTokenFailed(r *http.Request)
}

// Config is what the web app needs.
type Config struct {
	PublicURL string
	Identity  *identity.Service
	Partner   *partner.Service
	// Drive serves the drive's pages; nil: the pages answer 404.
	Drive *drive.Service
	// Contacts serves the contacts page; nil: the page says it is unavailable.
	Contacts *contacts.Service
	// Webhooks serves the admin's webhooks page; nil: the page answers 404.
	Webhooks *webhooks.Service
	Log      *slog.Logger
	// Limiter counts failed sign-ins; nil: no limit.
	Limiter SignInLimiter
	// ClientIP is the client address a request is counted against (sessions
	// record it); nil: the connection's.
	ClientIP func(*http.Request) string
	// WriteProblem answers an error as the REST API does (its problem type
	// URIs, the request id as instance), for the pages whose refusals are
	// problems; nil: a problem without the request id.
	WriteProblem func(http.ResponseWriter, *http.Request, error)
	// RequestID is the id of a request, as the logs name it; nil: none.
	RequestID func(*http.Request) string
	// StoreOrigin is the origin (scheme://host[:port]) of the object store
	// when download URLs point at it ([blob] s3_public_endpoint): the drive
	// page may fetch them (connect-src: its text and PDF viewers) and a
	// shared link's page show them (img-src). Empty: downloads are the
	// node's, of the page's own origin.
	StoreOrigin string
}

// Route is one route of the web app, in the router's (gin's) syntax.
type Route struct{ Method, Path string }

// page is one route of the web app's table: a method, a net/http pattern
// ({name} a segment, a trailing / a subtree), and its handler.
type pageRoute struct {
	method, pattern string
	h               http.HandlerFunc
}

// table is the web app's one route table: New serves it, Routes lists it for
// the router.
func (u *UI) table() []pageRoute {
	r := []pageRoute{
		{"GET", "/{$}", u.home},
		{"GET", "/signin", u.signInPage},
		{"POST", "/signin", u.signIn},
		{"GET", "/signin/code", u.codePage},
		{"POST", "/signin/code", u.verifyCode},
		{"POST", "/signout", u.signed(u.signOut)},
		{"GET", "/forgot", u.forgotPage},
		{"GET", "/invite/{token}", u.invitePage},
		{"GET", "/reset/{token}", u.resetPage},
		{"GET", "/account.js", u.accountScript},
		{"POST", "/forgot", u.forgot},
		{"GET", "/settings", u.signed(u.settings)},
		{"POST", "/settings/password", u.signed(u.changePassword)},
		{"POST", "/settings/app-passwords", u.signed(u.createAppPassword)},
		{"POST", "/settings/app-passwords/{id}/revoke", u.signed(u.revokeAppPassword)},
		{"POST", "/settings/tokens", u.signed(u.createToken)},
		{"POST", "/settings/tokens/{id}/revoke", u.signed(u.revokeToken)},
		{"POST", "/settings/sessions/{id}/revoke", u.signed(u.revokeSession)},
		{"POST", "/settings/two-factor/setup", u.signed(u.setUpTwoFactor)},
		{"POST", "/settings/two-factor/enable", u.signed(u.enableTwoFactor)},
		{"POST", "/settings/two-factor/recovery-codes", u.signed(u.regenerateRecoveryCodes)},
		{"POST", "/settings/two-factor/disable", u.signed(u.disableTwoFactor)},
		// A sync client's sign-in (Login Flow v2, web/nextcloud): approve the device.
		{"GET", "/connect/{token}", u.signed(u.connectPage)},
		{"POST", "/connect/{token}", u.signed(u.connect)},
	}
	if u.cfg.Drive != nil {
		r = append(r,
			pageRoute{"GET", "/drive", u.signed(u.driveRoot)},
			pageRoute{"GET", "/drive/shared", u.signed(u.driveListView("shared", "Shared with me", u.cfg.Drive.SharedWithMe))},
			pageRoute{"GET", "/drive/trash", u.signed(u.driveListView("trash", "Trash", u.cfg.Drive.TrashList))},
			// Favourites: the person's marked items from anywhere in their drive.
			pageRoute{"GET", "/drive/favorites", u.signed(u.driveListView("favorites", "Favourites", u.cfg.Drive.Favorites))},
			pageRoute{"GET", "/drive/search", u.signed(u.driveSearch)},
			pageRoute{"GET", "/drive/{id}", u.signed(u.driveFolderPage)},
			// download and download.zip (one pattern, so that /drive/edit/{id} is the more specific).
			pageRoute{"GET", "/drive/{id}/{what}", u.signed(u.driveItemGet)},
			pageRoute{"GET", "/drive/edit/{id}", u.signed(u.driveEdit)},
			// The page of a shared link, for anyone with its token.
			pageRoute{"GET", "/s/{token}", u.sharePage},
			pageRoute{"GET", "/s/{token}/f/{folder_id}", u.sharePage},
			pageRoute{"GET", "/s/{token}/download", u.shareRedirect(false)},
			pageRoute{"GET", "/s/{token}/preview", u.shareRedirect(true)},
		)
	}
	return append(r,
		pageRoute{"GET", "/contacts", u.signed(u.contactsPage)},
		pageRoute{"GET", "/contacts/directory", u.signed(u.contactsDirectory)},
		pageRoute{"GET", "/calendar", u.signed(u.calendar)},
		pageRoute{"GET", "/admin/webhooks", u.admin(u.adminWebhooks)},
		pageRoute{"GET", "/admin/webhooks/{id}", u.admin(u.adminWebhook)},
		pageRoute{"GET", "/admin/principals", u.admin(u.adminPrincipals)},
		pageRoute{"GET", "/partner", u.signed(u.partnerList)},
		pageRoute{"GET", "/partner/{id}", u.signed(u.partnerOrg)},
		pageRoute{"GET", "/admin", u.admin(u.adminUsers)},
		pageRoute{"GET", "/admin/teams", u.admin(u.adminTeams)},
		pageRoute{"GET", "/admin/usage", u.admin(u.adminUsage)},
		pageRoute{"GET", "/admin/audit", u.admin(u.adminAudit)},
		pageRoute{"GET", "/problems", u.problemIndex},
		pageRoute{"GET", "/problems/{code}", u.problemPage},
		pageRoute{"GET", "/assets/", u.asset},
	)
}

// Routes are the routes to mount the web app's handler on, in the router's
// syntax: the table's patterns with {name} as :name, a subtree as /*file
// (GET also HEAD, as net/http serves it).
func (u *UI) Routes() []Route {
	var out []Route
	for _, r := range u.table() {
		p := strings.TrimSuffix(r.pattern, "{$}")
		var segs []string
		for _, seg := range strings.Split(p, "/") {
			if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
				seg = ":" + strings.Trim(seg, "{}")
			}
			segs = append(segs, seg)
		}
		p = strings.Join(segs, "/")
		if strings.HasSuffix(p, "/") && p != "/" {
			p += "*file"
		}
		out = append(out, Route{r.method, p})
		if r.method == http.MethodGet && strings.HasSuffix(p, "*file") {
			out = append(out, Route{http.MethodHead, p})
		}
	}
	return out
}

// homePath is where a signed-in person lands: their files.
const homePath = "/drive"

// UI is the web app's handler.
type UI struct {
	cfg    Config
	log    *slog.Logger
	origin string // scheme://host of the public URL
	secure bool   // cookies are Secure (the public URL is https)
	pages  map[string]*template.Template
	assets http.Handler
	mux    *http.ServeMux
	cop    *http.CrossOriginProtection
	// resetSlots bounds the password reset requests handled at once, after
	// their answers (forgot).
	resetSlots chan struct{}
	// store is the origin of the object store's URLs (Config.StoreOrigin),
	// "" when none; csp is the site-wide policy, with the store's origin in
	// connect-src when there is one.
	store, csp string
}

// New builds the web app.
func New(cfg Config) *UI {
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	u := &UI{cfg: cfg, log: cfg.Log, pages: parsePages(), resetSlots: make(chan struct{}, 2)}
	if pu, err := url.Parse(cfg.PublicURL); err == nil {
		u.origin = pu.Scheme + "://" + pu.Host
		u.secure = pu.Scheme == "https"
	}
	u.csp = ContentSecurityPolicy
	if o, ok := webOrigin(cfg.StoreOrigin); ok {
		u.store = o
		u.csp = strings.Replace(u.csp, "connect-src 'self'", "connect-src 'self' "+o, 1)
	}
	u.cop = http.NewCrossOriginProtection()
	if u.origin != "" {
		if err := u.cop.AddTrustedOrigin(u.origin); err != nil {
			u.log.Warn("web app: public_url is not a usable origin", "origin", u.origin, "err", err)
		}
	}
	sub, _ := fs.Sub(assetFS, "assets")
	u.assets = http.StripPrefix("/assets/", http.FileServerFS(sub))

	if cfg.Drive != nil {
		parseDriveEditPage(u.pages)
	}
	parsePartnerPages(u.pages)
	m := http.NewServeMux()
	for _, r := range u.table() {
		m.HandleFunc(r.method+" "+r.pattern, r.h)
	}
	u.mux = m
	return u
}

// ServeHTTP serves the web app with its security headers.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", u.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	u.mux.ServeHTTP(w, r)
}

func (u *UI) asset(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-cache")
	u.assets.ServeHTTP(w, r)
}

// viewer is the signed-in person of a request.
type viewer struct {
	P      *app.Principal
	Secret string // the session's secret (the cookie)
	CSRF   string
	User   identity.User
	Org    identity.Organization
}

// IsAdmin reports whether the person administers its organisation.
func (v *viewer) IsAdmin() bool { return v.P.Scopes.Has(app.ScopeAdmin) }

// IsResellerStaff reports whether the person may run its reseller
// organisation's customers.
func (v *viewer) IsResellerStaff() bool {
	return v.P.ResellerDepth >= 1 && v.P.Scopes.Has(app.ScopePartnerOrgsRead)
}

type viewerKey struct{}

// SessionCookieName is the name of the session cookie of a server at
// publicURL: SecureSessionCookie on https, else SessionCookie.
func SessionCookieName(publicURL string) string {
	if strings.HasPrefix(strings.ToLower(publicURL), "https://") {
		return SecureSessionCookie
	}
	return SessionCookie
}

// cookieName is the name of this server's session cookie.
func (u *UI) cookieName() string {
	if u.secure {
		return SecureSessionCookie
	}
	return SessionCookie
}

// session returns the signed-in person of r, or nil (and why) when there is none.
func (u *UI) session(r *http.Request) (*viewer, error) {
	c, err := r.Cookie(u.cookieName())
	if err != nil || c.Value == "" {
		return nil, app.Errorf(app.EUnauthorized, "Not signed in.")
	}
	ctx := r.Context()
	p, err := u.cfg.Identity.AuthenticateSession(ctx, c.Value)
	if err != nil {
		return nil, err
	}
	org, usr, err := u.cfg.Identity.Profile(ctx, p)
	if err != nil {
		return nil, err
	}
	return &viewer{P: p, Secret: c.Value, CSRF: u.cfg.Identity.SessionCSRF(c.Value), User: *usr, Org: org}, nil
}

// signed wraps a handler of signed-in people: a GET without a session goes to
// the sign-in page and back; a state-changing request must come from this
// origin and carry the session's anti-forgery token (else 403).
func (u *UI) signed(next func(http.ResponseWriter, *http.Request, *viewer)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		post := r.Method != http.MethodGet && r.Method != http.MethodHead
		if post && !u.sameOrigin(r) {
			u.forbidden(w, r, nil, "This request did not come from a page of this server.")
			return
		}
		v, err := u.session(r)
		if err != nil {
			code := app.ErrorCode(err)
			if code != app.EUnauthorized && code != app.EForbidden && code != app.EOrgSuspended {
				u.fail(w, r, nil, err)
				return
			}
			u.clearCookie(w, u.cookieName())
			if post {
				u.forbidden(w, r, nil, "You are signed out. Sign in again and retry.")
				return
			}
			http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if post {
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			token := r.Header.Get(CSRFHeader)
			if token == "" {
				token = r.PostFormValue(CSRFField)
			}
			if !u.cfg.Identity.CheckSessionCSRF(v.Secret, token) {
				u.forbidden(w, r, v, "The form has expired or did not come from this server. Reload the page and try again.")
				return
			}
		} else {
			u.setSession(w, v.Secret) // in use: the cookie lasts another idle period
		}
		next(w, r.WithContext(context.WithValue(r.Context(), viewerKey{}, v)), v)
	}
}

// sameOrigin refuses a request a browser says comes from another origin
// (net/http's CrossOriginProtection: Sec-Fetch-Site, else Origin against the
// Host), unless its Origin is the public URL's (a reverse proxy may change the
// Host). A request with neither header (not a browser's) passes: the
// anti-forgery token still protects it.
func (u *UI) sameOrigin(r *http.Request) bool { return u.cop.Check(r) == nil }

// preCSRF returns the anti-forgery token of the forms shown before sign-in,
// setting its cookie when the browser has none.
func (u *UI) preCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(PreCSRFCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	t := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: PreCSRFCookie, Value: t, Path: "/", HttpOnly: true, Secure: u.secure, SameSite: http.SameSiteLaxMode})
	return t
}

// checkPreCSRF checks a form shown before sign-in: same origin, and the field
// equal to the cookie.
func (u *UI) checkPreCSRF(r *http.Request) bool {
	if !u.sameOrigin(r) {
		return false
	}
	c, err := r.Cookie(PreCSRFCookie)
	if err != nil || len(c.Value) != 64 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue(CSRFField))) == 1
}

// setSession sends the session cookie. The browser keeps it as long as the
// session may stay idle (at most its maximum age): a page of a signed-in
// person sends it again, so that it lasts while it is used and goes with the
// server's session when it is not.
func (u *UI) setSession(w http.ResponseWriter, secret string) {
	pol := u.cfg.Identity.SessionPolicy()
	life := min(pol.Idle, pol.MaxAge)
	http.SetCookie(w, &http.Cookie{Name: u.cookieName(), Value: secret, Path: "/", MaxAge: int(life / time.Second),
		HttpOnly: true, Secure: u.secure, SameSite: http.SameSiteLaxMode})
}

func (u *UI) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: u.secure, SameSite: http.SameSiteLaxMode})
}

// localPath returns next when it is a path of this server (the return path of
// a deep link after sign-in), else "": never another origin (no open redirect).
func localPath(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return ""
	}
	if strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return ""
	}
	p, err := url.Parse(next)
	if err != nil || p.Scheme != "" || p.Host != "" || p.User != nil || p.Opaque != "" {
		return ""
	}
	if p.Path == "/signin" || p.Path == "/signout" {
		return ""
	}
	return next
}

func (u *UI) clientIP(r *http.Request) string {
	if u.cfg.ClientIP != nil {
		return u.cfg.ClientIP(r)
	}
	return r.RemoteAddr
}

// status is the HTTP status of an app error on a page.
func status(err error) int {
	st, _ := problem.Status(app.ErrorCode(err), pageStatuses)
	return st
}

// pageStatuses are the pages' own statuses for codes the shared table
// (web/problem) answers otherwise: a form that could not be understood is
// shown again as one with invalid input.
var pageStatuses = map[string]int{app.EBadRequest: http.StatusUnprocessableEntity}

// fieldLabels name the inputs of the pages in error messages.
var fieldLabels = map[string]string{
	"body.current_password": "Current password",
	"body.new_password":     "New password",
	"body.label":            "Device name",
	"body.name":             "Token name",
	"body.ttl_seconds":      "Expires",
	"body.code":             "Authentication code",
	"body.proof":            "Authentication code or password",
	"body.password":         "Account password",
	"body.confirm_password": "Account password",
}

// message is what a person reads of an app error.
func message(err error) string {
	var e *app.Error
	if !errors.As(err, &e) || e.Code == app.EInternal {
		return "Something went wrong on the server. Try again later."
	}
	if len(e.Fields) == 0 {
		return e.Message
	}
	var parts []string
	for _, f := range e.Fields {
		l, ok := fieldLabels[f.Location]
		if !ok {
			l = strings.TrimPrefix(f.Location, "body.")
		}
		parts = append(parts, l+": "+f.Message+".")
	}
	return strings.Join(parts, " ")
}
