package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"atrium/app/identity"
	"atrium/web/ui"
	"atrium/webtest"
	"atrium/wire"
)

// A token manages its user's credentials only with credentials:manage, and a
// token made by a token never outlives it; an app password, which does not
// expire, is never made by a token that does.
func TestCredentialsNeedTheirScope(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	c := s.Bootstrap("Cred Org", "cred@example.test", "member")
	narrow := s.Token("cred@example.test", "drive:read")
	var made struct {
		Token     string
		ExpiresAt *time.Time `json:"expires_at"`
	}
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: c.Token,
		Body: map[string]any{"name": "manager", "scopes": []string{"drive:read", "credentials:manage"}, "ttl_seconds": 3600}})
	res.Decode(t, &made)
	if res.StatusCode != 201 || made.ExpiresAt == nil {
		t.Fatalf("a token with credentials:manage: %d %s", res.StatusCode, res.Body)
	}
	manager := made.Token
	res = s.Do(webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: c.Token, Body: map[string]any{"name": "full, 1 h", "ttl_seconds": 3600}})
	res.Decode(t, &made)
	fullHour := made.Token
	req := func(method, path, token string, body any) webtest.Request {
		return webtest.Request{Method: method, Path: path, Token: token, Body: body}
	}
	s.Run(t, []webtest.Scenario{
		{Name: "without the scope: no new token", Request: req("POST", "/api/v1/me/tokens", narrow, map[string]any{"name": "forever", "scopes": []string{"drive:read"}}),
			Status: 403, Problem: "insufficient_scope", Contains: []string{"credentials:manage"}},
		{Name: "without the scope: no token list", Request: req("GET", "/api/v1/me/tokens", narrow, nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "without the scope: no session list", Request: req("GET", "/api/v1/me/sessions", narrow, nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "without the scope: no app password list", Request: req("GET", "/api/v1/me/app-passwords", narrow, nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "without the scope: no revocation", Request: req("DELETE", "/api/v1/me/app-passwords/x", narrow, nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "with the scope: listed", Request: req("GET", "/api/v1/me/tokens", manager, nil), Status: 200},
		{Name: "longer than its parent", Request: req("POST", "/api/v1/me/tokens", manager, map[string]any{"name": "longer", "scopes": []string{"drive:read"}, "ttl_seconds": 7200}),
			Status: 422, Problem: "validation_failed", Contains: []string{"body.ttl_seconds", "outlive"}},
		{Name: "an expiring token makes no app password", Request: req("POST", "/api/v1/me/app-passwords", fullHour, map[string]any{}),
			Status: 403, Problem: "forbidden", Contains: []string{"does not expire"}},
		{Name: "a token without expiry makes one", Request: req("POST", "/api/v1/me/app-passwords", c.Token, map[string]any{}), Status: 201},
	})
	// Asked for no expiry, a token's child expires with it.
	res = s.Do(req("POST", "/api/v1/me/tokens", manager, map[string]any{"name": "child", "scopes": []string{"drive:read"}}))
	res.Decode(t, &made)
	if res.StatusCode != 201 || made.ExpiresAt == nil || time.Until(*made.ExpiresAt) > time.Hour || time.Until(*made.ExpiresAt) < 50*time.Minute {
		t.Fatalf("a token's child without a lifetime: %d %s", res.StatusCode, res.Body)
	}
}

// A password reset offers to revoke every app password, token and JWT of the
// account; without it they keep working (and the page says which). Either
// way every web session ends.
func TestPasswordResetRevokesCredentials(t *testing.T) {
	t.Parallel()
	for _, revoke := range []bool{false, true} {
		t.Run("revoke="+strconv.FormatBool(revoke), func(t *testing.T) {
			t.Parallel()
			s := webtest.New(t)
			w := &partnerWorld{s: s}
			c := person(t, s, "Reset Org", "reset@example.test", "member")
			ctx := context.Background()
			_, jwtOut := oauth(t, s, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
				"subject_token": {c.Token}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}, "", "")
			jwt, _ := jwtOut["access_token"].(string)
			if jwt == "" {
				t.Fatalf("token exchange: %v", jwtOut)
			}
			b := newBrowser(t, s)
			b.mustSignIn("reset@example.test", testPassword)
			if err := s.Main.Partner.RequestPasswordReset(ctx, "reset@example.test"); err != nil {
				t.Fatal(err)
			}
			token := w.lastToken(t, "reset@example.test", "reset")
			webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: "/reset/" + token}), webtest.Scenario{Status: 200,
				Contains: []string{"reset@example.test", "These keep working unless you revoke them", "App password", "Access token", `id="revoke"`}})
			webtest.Check(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/password-resets/" + token + "/accept",
				Body: map[string]any{"password": "a new password 1", "revoke_credentials": revoke}}), webtest.Scenario{Status: 200})
			want := 200
			if revoke {
				want = 401
			}
			if st := propfind(s, "reset@example.test", c.AppPassword); st != want && !(want == 200 && st == 207) {
				t.Errorf("app password after the reset: %d, want %d", st, want)
			}
			for name, tok := range map[string]string{"PAT": c.Token, "JWT": jwt} {
				if st := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: tok}).StatusCode; st != want {
					t.Errorf("%s after the reset: %d, want %d", name, st, want)
				}
			}
			if p := b.get("/settings"); p.StatusCode == 200 {
				t.Errorf("the web session outlived the reset")
			}
			if revoke {
				// A JWT issued after the revocation works (in a later second:
				// a JWT's iat is in whole seconds, and one of the second of
				// the revocation is refused).
				s.Clock.Advance(2 * time.Second)
				fresh := s.Token("reset@example.test")
				st, out := oauth(t, s, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
					"subject_token": {fresh}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}, "", "")
				if tok, _ := out["access_token"].(string); st != 200 || s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: tok}).StatusCode != 200 {
					t.Errorf("a JWT issued after the revocation: %d %v", st, out)
				}
			}
		})
	}
}

// Made-up link tokens are looked up before any password is hashed, and count
// as failed sign-ins of the address: past the limit, 429.
func TestLinkTokenGuessesAreLimited(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	body := map[string]any{"password": "a long enough password"}
	limited := 0
	for i := range 60 {
		path := "/api/v1/password-resets/" + strings.Repeat("0", 40) + strconv.Itoa(i) + "/accept"
		if i%2 == 1 {
			path = "/api/v1/invitations/" + strings.Repeat("1", 40) + strconv.Itoa(i) + "/accept"
		}
		res := s.Do(webtest.Request{Method: "POST", Path: path, Body: body})
		switch res.StatusCode {
		case 404:
			if limited > 0 {
				t.Fatalf("guess %d: 404 after a 429", i)
			}
		case 429:
			limited++
			if res.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		default:
			t.Fatalf("guess %d: %d %s", i, res.StatusCode, res.Body)
		}
	}
	if limited != 10 { // DefaultLimits.AuthFailuresPerIP is 50
		t.Fatalf("%d guesses of 60 limited, want the 10 past the 50th", limited)
	}
	// The page a reset link opens counts too, and is limited as well.
	if st := s.Do(webtest.Request{Method: "GET", Path: "/reset/nosuchtoken"}).StatusCode; st != 429 {
		t.Fatalf("the reset page from a limited address: %d", st)
	}
}

// Settings: wrong current passwords count toward the failed sign-in limits,
// and a session whose sign-in is older than identity.RecentSignIn gives the
// password again before it makes a credential or turns two-factor sign-in on.
func TestSettingsPasswordChecks(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Settings Org", "set@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("set@example.test", testPassword)

	// Fresh from sign-in: no password asked.
	if p := b.get("/settings"); strings.Contains(p.Body, `name="confirm_password"`) {
		t.Fatal("a fresh session is asked for its password")
	}
	if p := b.post("/settings/tokens", url.Values{"name": {"fresh"}, "scope": {"drive:read"}, "ttl_days": {"7"}}); !strings.Contains(p.Body, "New token") {
		t.Fatalf("a fresh session makes a token: %d %s", p.StatusCode, p.Body)
	}

	s.Clock.Advance(identity.RecentSignIn + time.Minute)
	p := b.get("/settings")
	if n := strings.Count(p.Body, `name="confirm_password"`); n < 3 {
		t.Fatalf("%d password fields on the settings page of an older session, want one per sensitive form", n)
	}
	for _, f := range []struct {
		path string
		form url.Values
	}{
		{"/settings/tokens", url.Values{"name": {"later"}, "scope": {"drive:read"}, "ttl_days": {"7"}}},
		{"/settings/app-passwords", url.Values{"label": {"Laptop"}}},
		{"/settings/two-factor/setup", url.Values{}},
	} {
		if p := b.post(f.path, f.form); p.StatusCode != 403 && !strings.Contains(p.Body, "account password again") {
			t.Errorf("%s without the password: %d", f.path, p.StatusCode)
		}
	}
	if p := b.post("/settings/app-passwords", url.Values{"label": {"Laptop"}, "confirm_password": {"wrong password!"}}); !strings.Contains(p.Body, "not your account password") {
		t.Errorf("a wrong confirmation: %d", p.StatusCode)
	}
	if p := b.post("/settings/app-passwords", url.Values{"label": {"Laptop"}, "confirm_password": {testPassword}}); !strings.Contains(p.Body, "New app password") {
		t.Errorf("a right confirmation: %d", p.StatusCode)
	}
	// Confirmed: the next change needs no password for a while.
	if p := b.post("/settings/tokens", url.Values{"name": {"after"}, "scope": {"drive:read"}, "ttl_days": {"7"}}); !strings.Contains(p.Body, "New token") {
		t.Errorf("right after a confirmation: %d", p.StatusCode)
	}

	// Wrong current passwords on the password form count as failed sign-ins
	// (one was counted above): past the limit even the right one waits.
	for i := range 9 {
		p := b.post("/settings/password", url.Values{"current_password": {"guess " + strconv.Itoa(i) + "!!"}, "new_password": {"another password"}, "repeat_password": {"another password"}})
		if !strings.Contains(p.Body, "current password") {
			t.Fatalf("wrong password %d: %d", i, p.StatusCode)
		}
	}
	p = b.post("/settings/password", url.Values{"current_password": {testPassword}, "new_password": {"another password"}, "repeat_password": {"another password"}})
	if p.StatusCode != 429 || !strings.Contains(p.Body, "Too many wrong passwords") {
		t.Fatalf("the right password after 10 wrong ones: %d", p.StatusCode)
	}
	// And sign-in from this client is held up as well.
	if p := newBrowser(t, s).signIn("set@example.test", testPassword); p.StatusCode == 303 {
		t.Fatal("signed in right after 10 wrong passwords in settings")
	}
}

// The session cookie lives as long as the session may stay idle, not its
// whole maximum age, and is sent again by each page; on https its name has
// the __Host- prefix (Secure, the whole host, no Domain).
func TestSessionCookieLifetimeAndPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scheme, name string
		secure       bool
	}{{"http", ui.SessionCookie, false}, {"https", ui.SecureSessionCookie, true}} {
		t.Run(tc.scheme, func(t *testing.T) {
			t.Parallel()
			s := webtest.New(t, func(c *wire.Config) {
				c.PublicURL = tc.scheme + "://" + c.Listen
				c.Web.SessionIdle, c.Web.SessionMaxAge = 2*time.Hour, 72*time.Hour
			})
			person(t, s, "Cookie Org", "jar@example.test", "member")
			// By hand, not with a cookie jar: a jar sends no Secure cookie over
			// the test's plain HTTP.
			signin := s.Do(webtest.Request{Method: "GET", Path: "/signin"})
			var pre *http.Cookie
			for _, c := range signin.Cookies() {
				if c.Name == ui.PreCSRFCookie {
					pre = c
				}
			}
			m := csrfRE.FindStringSubmatch(string(signin.Body))
			if pre == nil || m == nil {
				t.Fatalf("sign-in page: no anti-forgery cookie or field")
			}
			form := url.Values{"email": {"jar@example.test"}, "password": {testPassword}, "csrf": {m[1]}}
			req, _ := http.NewRequest("POST", s.URL+"/signin", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(pre)
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			raw, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw.Body.Close()
			res := &webtest.Response{Response: raw}
			check := func(res *webtest.Response, what string) string {
				t.Helper()
				for _, c := range res.Cookies() {
					if c.Name == tc.name {
						if c.MaxAge != 7200 || !c.HttpOnly || c.Secure != tc.secure || c.Path != "/" || c.Domain != "" {
							t.Errorf("%s: cookie %+v, want Max-Age 7200 (the idle limit), HttpOnly, Secure %v, Path /, no Domain", what, c, tc.secure)
						}
						return c.Value
					}
				}
				t.Fatalf("%s: no cookie %s in %v", what, tc.name, res.Header.Values("Set-Cookie"))
				return ""
			}
			secret := check(res, "sign-in")
			page := s.Do(webtest.Request{Method: "GET", Path: "/settings", Header: map[string]string{"Cookie": tc.name + "=" + secret}})
			if page.StatusCode != 200 {
				t.Fatalf("settings with the cookie: %d", page.StatusCode)
			}
			check(page, "a page")
		})
	}
}

// Answers that carry secrets or people's data are kept by no cache and never
// sniffed; the pages reached by a link's token and the file mount's folder
// listing cannot be framed.
func TestSafeHeaders(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	c := s.Bootstrap("Header Org", "hdr@example.test", "member")
	for _, tc := range []struct {
		name string
		req  webtest.Request
		want map[string]string
	}{
		{"a new token", webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: c.Token, Body: map[string]any{"name": "t"}},
			map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}},
		{"a new app password", webtest.Request{Method: "POST", Path: "/api/v1/me/app-passwords", Token: c.Token, Body: map[string]any{}},
			map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}},
		{"an upload URL", webtest.Request{Method: "POST", Path: "/api/v1/drive/upload", Token: c.Token,
			Body: map[string]any{"name": "a.txt", "size": 3, "mime_type": "text/plain"}},
			map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}},
		{"any API answer", webtest.Request{Method: "GET", Path: "/api/v1/me", Token: c.Token},
			map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}},
		{"the invitation page", webtest.Request{Method: "GET", Path: "/invite/sometoken"},
			map[string]string{"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}},
		{"the reset page", webtest.Request{Method: "GET", Path: "/reset/sometoken"},
			map[string]string{"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}},
		{"the mount's folder listing", webtest.Request{Method: "GET", Path: "/webdav/", BasicID: c.Email, BasicPW: c.AppPassword},
			map[string]string{"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'", "X-Content-Type-Options": "nosniff"}},
	} {
		res := s.Do(tc.req)
		if res.StatusCode >= 500 {
			t.Errorf("%s: %d", tc.name, res.StatusCode)
		}
		for k, v := range tc.want {
			if got := res.Header.Get(k); !strings.Contains(got, v) {
				t.Errorf("%s: %s %q, want %q", tc.name, k, got, v)
			}
		}
	}
}
