package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/web/ui"
	"atrium/webtest"
	"atrium/wire"
)

// browser is a person's browser: a cookie jar, redirects not followed (the
// tests look at them).
type browser struct {
	t testing.TB
	s *webtest.Server
	c *http.Client
	// csrf is the anti-forgery token of the last page seen.
	csrf string
	// from, when set, is the X-Forwarded-For of every request (a client
	// address behind a trusted proxy).
	from string
}

type page struct {
	*http.Response
	Body string
}

func newBrowser(t testing.TB, s *webtest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, s: s, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(method, path string, form url.Values, header map[string]string) *page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.s.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if b.from != "" {
		req.Header.Set("X-Forwarded-For", b.from)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	p := &page{Response: res, Body: string(raw)}
	if m := csrfRE.FindStringSubmatch(p.Body); m != nil {
		b.csrf = m[1]
	}
	return p
}

func (b *browser) get(path string) *page { b.t.Helper(); return b.do("GET", path, nil, nil) }

// post sends a form with the anti-forgery token of the last page.
func (b *browser) post(path string, form url.Values) *page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("csrf") == "" {
		form.Set("csrf", b.csrf)
	}
	return b.do("POST", path, form, nil)
}

// signIn opens the sign-in page and signs in.
func (b *browser) signIn(email, password string) *page {
	b.t.Helper()
	b.get("/signin")
	return b.post("/signin", url.Values{"email": {email}, "password": {password}})
}

// mustSignIn signs in and opens the settings page.
func (b *browser) mustSignIn(email, password string) *page {
	b.t.Helper()
	if p := b.signIn(email, password); p.StatusCode != 303 {
		b.t.Fatalf("sign in: %d %s", p.StatusCode, p.Body)
	}
	p := b.get("/settings")
	if p.StatusCode != 200 {
		b.t.Fatalf("settings: %d", p.StatusCode)
	}
	return p
}

func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(b.s.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

const testPassword = "correct horse battery"

// person bootstraps a user with an account password.
func person(t testing.TB, s *webtest.Server, org, email, role string) webtest.Creds {
	t.Helper()
	c := s.Bootstrap(org, email, role)
	if err := s.Main.Identity.SetAccountPassword(context.Background(), c.UserID, testPassword); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWebAppSignIn(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	ok := person(t, s, "Reseller", "ok@example.test", "admin")
	person(t, s, "Reseller", "gone@example.test", "member")
	s.Bootstrap("Reseller", "nopass@example.test", "member")
	gone, _ := s.Main.Identity.UserByEmail(ctx, "gone@example.test")
	if err := s.Main.Identity.SetUserStatus(ctx, "", gone.ID, identity.UserSuspended); err != nil {
		t.Fatal(err)
	}
	cust, err := s.Main.Identity.EnsureOrg(ctx, identity.EnsureOrgInput{ParentID: &ok.OrganizationID, Name: "Customer", PlanSlug: "business", Seats: 5})
	if err != nil {
		t.Fatal(err)
	}
	cu, err := s.Main.Identity.EnsureUser(ctx, cust.ID, identity.EnsureUserInput{Email: "staff@customer.test", Role: "member"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Main.Identity.SetAccountPassword(ctx, cu.ID, testPassword); err != nil {
		t.Fatal(err)
	}
	if err := s.Main.Identity.SetOrgStatus(ctx, "", cust.ID, identity.OrgSuspended); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, email, password string
		status                int
		says                  string
	}{
		{"right password", "ok@example.test", testPassword, 303, ""},
		{"e-mail in other case", "OK@Example.test", testPassword, 303, ""},
		{"wrong password", "ok@example.test", "not the password", 200, "e-mail address or password is not correct"},
		{"unknown e-mail", "nobody@example.test", testPassword, 200, "e-mail address or password is not correct"},
		{"no password set", "nopass@example.test", "", 200, "e-mail address or password is not correct"},
		{"suspended user", "gone@example.test", testPassword, 200, "account is suspended"},
		{"suspended organisation", "staff@customer.test", testPassword, 200, "organisation is suspended"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBrowser(t, s)
			p := b.signIn(c.email, c.password)
			if p.StatusCode != c.status || !strings.Contains(p.Body, c.says) {
				t.Fatalf("status %d, want %d saying %q: %s", p.StatusCode, c.status, c.says, p.Body)
			}
			sc := b.cookie(ui.SessionCookie)
			if c.status != 303 {
				if sc != nil {
					t.Fatalf("session cookie after a refused sign-in: %v", sc)
				}
				return
			}
			if loc := p.Header.Get("Location"); loc != "/drive" {
				t.Fatalf("Location %q", loc)
			}
			if sc == nil {
				t.Fatal("no session cookie")
			}
			set := p.Header.Get("Set-Cookie")
			for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
				if !strings.Contains(set, attr) {
					t.Errorf("Set-Cookie %q lacks %s", set, attr)
				}
			}
			if strings.Contains(set, "Secure") {
				t.Errorf("Set-Cookie %q is Secure on an http server", set)
			}
			if home := b.get("/"); home.StatusCode != 303 || home.Header.Get("Location") != "/drive" {
				t.Fatalf("/ signed in: %d %s", home.StatusCode, home.Header.Get("Location"))
			}
		})
	}

	// The session is refused once the user is suspended, and stays ended.
	b := newBrowser(t, s)
	b.mustSignIn("ok@example.test", testPassword)
	other, _ := s.Main.Identity.UserByEmail(ctx, "ok@example.test")
	if err := s.Main.Identity.SetUserStatus(ctx, "", other.ID, identity.UserSuspended); err != nil {
		t.Fatal(err)
	}
	if err := s.Main.Identity.SetUserStatus(ctx, "", other.ID, identity.UserActive); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/settings"); p.StatusCode != 303 {
		t.Fatalf("session after suspension: %d", p.StatusCode)
	}
}

func TestWebAppSecureCookie(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, func(c *wire.Config) { c.PublicURL = "https://atrium.example.test" })
	person(t, s, "Org", "sec@example.test", "member")
	b := newBrowser(t, s)
	b.get("/signin")
	p := b.do("POST", "/signin", url.Values{"csrf": {b.csrf}, "email": {"sec@example.test"}, "password": {testPassword}}, nil)
	if p.StatusCode != 303 {
		t.Fatalf("sign in: %d %s", p.StatusCode, p.Body)
	}
	var set string
	for _, v := range p.Header.Values("Set-Cookie") {
		if strings.HasPrefix(v, ui.SecureSessionCookie+"=") {
			set = v
		}
	}
	for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Secure"} {
		if !strings.Contains(set, attr) {
			t.Errorf("Set-Cookie %q lacks %s", set, attr)
		}
	}
}

func TestWebAppSignInLimit(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, func(c *wire.Config) { c.Limits.AuthFailures = 3 })
	person(t, s, "Org", "lim@example.test", "member")
	b := newBrowser(t, s)
	for i := 0; i < 3; i++ {
		if p := b.signIn("lim@example.test", "wrong password"); p.StatusCode != 200 || !strings.Contains(p.Body, "not correct") {
			t.Fatalf("attempt %d: %d", i, p.StatusCode)
		}
	}
	// Blocked now, the right password included; the same account on the DAV
	// door counts in the same limit.
	p := b.signIn("lim@example.test", testPassword)
	if p.StatusCode != 200 || p.Header.Get("Retry-After") == "" || !strings.Contains(p.Body, "Too many failed sign-in attempts") {
		t.Fatalf("after 3 failures: %d %q %s", p.StatusCode, p.Header.Get("Retry-After"), p.Body)
	}
	if r := s.Do(webtest.Request{Method: "PROPFIND", Path: "/webdav/", BasicID: "lim@example.test", BasicPW: "whatever", Header: map[string]string{"Depth": "0"}}); r.StatusCode != 429 {
		t.Fatalf("DAV door for the blocked account: %d", r.StatusCode)
	}
	// Another account is not blocked.
	person(t, s, "Org", "free@example.test", "member")
	if p := newBrowser(t, s).signIn("free@example.test", testPassword); p.StatusCode != 303 {
		t.Fatalf("other account: %d", p.StatusCode)
	}
}

func TestWebAppCSRF(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "csrf@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("csrf@example.test", testPassword)
	good := b.csrf
	for _, c := range []struct {
		name   string
		form   url.Values
		header map[string]string
		status int
	}{
		{"no token", url.Values{"label": {"x"}}, nil, 403},
		{"wrong token", url.Values{"label": {"x"}, "csrf": {strings.Repeat("0", 64)}}, nil, 403},
		{"token of the sign-in form", url.Values{"label": {"x"}, "csrf": {b.cookie(ui.PreCSRFCookie).Value}}, nil, 403},
		{"cross-origin Origin", url.Values{"label": {"x"}, "csrf": {good}}, map[string]string{"Origin": "http://evil.example"}, 403},
		{"cross-site fetch", url.Values{"label": {"x"}, "csrf": {good}}, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same-site fetch", url.Values{"label": {"x"}, "csrf": {good}}, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://sub.example"}, 403},
		{"cross-site with another Origin", url.Values{"label": {"x"}, "csrf": {good}}, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403},
		{"token in the header", url.Values{"label": {"x"}}, map[string]string{"X-CSRF-Token": good, "Origin": s.URL}, 200},
		{"token and same origin", url.Values{"label": {"x"}, "csrf": {good}}, map[string]string{"Origin": s.URL, "Sec-Fetch-Site": "same-origin"}, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := b.do("POST", "/settings/app-passwords", c.form, c.header)
			if p.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", p.StatusCode, c.status, p.Body)
			}
			if c.status == 403 && strings.Contains(p.Body, "New app password") {
				t.Fatal("an app password was made")
			}
		})
	}
	// Sign-out without the token does not sign out.
	if p := b.do("POST", "/signout", url.Values{}, nil); p.StatusCode != 403 {
		t.Fatalf("sign out without token: %d", p.StatusCode)
	}
	if p := b.get("/settings"); p.StatusCode != 200 {
		t.Fatalf("signed out by a forged request: %d", p.StatusCode)
	}
	// The sign-in form has its own token (cookie and field).
	nb := newBrowser(t, s)
	nb.get("/signin")
	for name, form := range map[string]url.Values{
		"sign-in without token": {"email": {"csrf@example.test"}, "password": {testPassword}},
		"sign-in wrong token":   {"email": {"csrf@example.test"}, "password": {testPassword}, "csrf": {strings.Repeat("a", 64)}},
	} {
		if p := nb.do("POST", "/signin", form, nil); p.StatusCode != 403 || nb.cookie(ui.SessionCookie) != nil {
			t.Fatalf("%s: %d", name, p.StatusCode)
		}
	}
	if p := nb.do("POST", "/signin", url.Values{"email": {"csrf@example.test"}, "password": {testPassword}, "csrf": {nb.csrf}},
		map[string]string{"Origin": "http://evil.example"}); p.StatusCode != 403 {
		t.Fatalf("cross-origin sign-in: %d", p.StatusCode)
	}
}

func TestWebAppSessionExpiry(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "idle@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("idle@example.test", testPassword)
	// Active sessions live on: each request moves the idle deadline (12h).
	for i := 0; i < 3; i++ {
		s.Clock.Advance(11 * time.Hour)
		if p := b.get("/settings"); p.StatusCode != 200 {
			t.Fatalf("after %dh of activity: %d", (i+1)*11, p.StatusCode)
		}
	}
	s.Clock.Advance(12*time.Hour + time.Minute)
	p := b.get("/settings")
	if p.StatusCode != 303 || p.Header.Get("Location") != "/signin?next=%2Fsettings" {
		t.Fatalf("idle session: %d %q", p.StatusCode, p.Header.Get("Location"))
	}

	// However active, a session ends at its absolute limit (168h).
	b = newBrowser(t, s)
	b.mustSignIn("idle@example.test", testPassword)
	for h := 0; ; h += 11 {
		s.Clock.Advance(11 * time.Hour)
		p := b.get("/settings")
		if h+11 < 168 && p.StatusCode != 200 {
			t.Fatalf("active at %dh: %d", h+11, p.StatusCode)
		}
		if h+11 >= 168 {
			if p.StatusCode != 303 {
				t.Fatalf("past the absolute limit at %dh: %d", h+11, p.StatusCode)
			}
			break
		}
	}
}

var sessionRowRE = regexp.MustCompile(`/settings/sessions/([0-9a-f-]+)/revoke`)

func TestWebAppSessionsListAndRevoke(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "two@example.test", "member")
	b1, b2 := newBrowser(t, s), newBrowser(t, s)
	b1.mustSignIn("two@example.test", testPassword)
	p := b1.get("/settings")
	first := sessionRowRE.FindAllStringSubmatch(p.Body, -1)
	if len(first) != 1 {
		t.Fatalf("sessions of b1: %v", first)
	}
	b2.mustSignIn("two@example.test", testPassword)
	p = b1.get("/settings")
	rows := sessionRowRE.FindAllStringSubmatch(p.Body, -1)
	if len(rows) != 2 || strings.Count(p.Body, "This session") != 1 || !strings.Contains(p.Body, "Go-http-client") || !strings.Contains(p.Body, "127.0.0.1") {
		t.Fatalf("session list: %v\n%s", rows, p.Body)
	}
	other := rows[0][1]
	if other == first[0][1] {
		other = rows[1][1]
	}
	p = b1.post("/settings/sessions/"+other+"/revoke", nil)
	if p.StatusCode != 303 {
		t.Fatalf("revoke: %d %s", p.StatusCode, p.Body)
	}
	if p := b2.get("/settings"); p.StatusCode != 303 {
		t.Fatalf("revoked session still works: %d", p.StatusCode)
	}
	if p := b1.get(p.Header.Get("Location")); p.StatusCode != 200 || !strings.Contains(p.Body, "The session is signed out.") {
		t.Fatalf("b1 after revoking b2: %d", p.StatusCode)
	}
	// Someone else's session id is not found.
	person(t, s, "Org", "three@example.test", "member")
	b3 := newBrowser(t, s)
	b3.mustSignIn("three@example.test", testPassword)
	if p := b3.post("/settings/sessions/"+first[0][1]+"/revoke", nil); p.StatusCode != 404 {
		t.Fatalf("revoke another user's session: %d", p.StatusCode)
	}
	if p := b1.get("/settings"); p.StatusCode != 200 {
		t.Fatalf("b1 after b3's attempt: %d", p.StatusCode)
	}
}

func TestWebAppSignOut(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "out@example.test", "member")
	b := newBrowser(t, s)
	p := b.mustSignIn("out@example.test", testPassword)
	if !strings.Contains(p.Body, `action="/signout"`) {
		t.Fatal("no sign-out form")
	}
	old := b.cookie(ui.SessionCookie).Value
	p = b.post("/signout", nil)
	if p.StatusCode != 303 || b.cookie(ui.SessionCookie) != nil {
		t.Fatalf("sign out: %d, cookie %v", p.StatusCode, b.cookie(ui.SessionCookie))
	}
	if p := b.get("/signin?done=signed-out"); !strings.Contains(p.Body, "You are signed out") {
		t.Fatal("no confirmation")
	}
	// The old cookie no longer works.
	nb := newBrowser(t, s)
	u, _ := url.Parse(s.URL)
	nb.c.Jar.SetCookies(u, []*http.Cookie{{Name: ui.SessionCookie, Value: old, Path: "/"}})
	if p := nb.get("/settings"); p.StatusCode != 303 {
		t.Fatalf("old cookie after sign-out: %d", p.StatusCode)
	}
}

func TestWebAppDeepLink(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "deep@example.test", "member")
	b := newBrowser(t, s)
	p := b.get("/settings?tab=x")
	loc := p.Header.Get("Location")
	if p.StatusCode != 303 || loc != "/signin?next=%2Fsettings%3Ftab%3Dx" {
		t.Fatalf("signed out deep link: %d %q", p.StatusCode, loc)
	}
	p = b.get(loc)
	if !strings.Contains(p.Body, `name="next" value="/settings?tab=x"`) {
		t.Fatalf("sign-in form lacks the return path: %s", p.Body)
	}
	p = b.post("/signin", url.Values{"email": {"deep@example.test"}, "password": {testPassword}, "next": {"/settings?tab=x"}})
	if p.StatusCode != 303 || p.Header.Get("Location") != "/settings?tab=x" {
		t.Fatalf("after sign-in: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	// A return path that leaves the server is dropped, on the page and after.
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "\\\\evil.example",
		"javascript:alert(1)", "/\t/evil.example", "evil.example", "/signout"} {
		t.Run(next, func(t *testing.T) {
			b := newBrowser(t, s)
			p := b.get("/signin?next=" + url.QueryEscape(next))
			if strings.Contains(p.Body, "evil.example") || strings.Contains(p.Body, "javascript:") {
				t.Fatalf("page carries %q", next)
			}
			p = b.post("/signin", url.Values{"email": {"deep@example.test"}, "password": {testPassword}, "next": {next}})
			if p.StatusCode != 303 || p.Header.Get("Location") != "/drive" {
				t.Fatalf("redirect to %q", p.Header.Get("Location"))
			}
		})
	}
}

var (
	newAppPasswordRE = regexp.MustCompile(`<label for="new-app-password">New app password</label>\s*<div class="copy"><input id="new-app-password" type="text" readonly value="([0-9a-f-]+)"`)
	apRowRE          = regexp.MustCompile(`<td>Laptop</td>[^/]*?<td>[^<]*<time[^>]*>[^<]*</time></td>\s*<td>(?:<time[^>]*>[^<]*</time>|never)</td>\s*<td class="act"><form method="post" action="/settings/app-passwords/([0-9a-f-]+)/revoke"`)
)

func propfind(s *webtest.Server, user, pass string) int {
	return s.Do(webtest.Request{Method: "PROPFIND", Path: "/webdav/", BasicID: user, BasicPW: pass, Header: map[string]string{"Depth": "0"}}).StatusCode
}

func TestWebAppCreateAppPassword(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "dav@example.test", "member")
	b := newBrowser(t, s)
	p := b.mustSignIn("dav@example.test", testPassword)
	if !strings.Contains(p.Body, ">Create app password</button>") {
		t.Fatal("no Create app password button")
	}
	p = b.post("/settings/app-passwords", url.Values{"label": {"Laptop"}})
	m := newAppPasswordRE.FindStringSubmatch(p.Body)
	if p.StatusCode != 200 || m == nil {
		t.Fatalf("create: %d %s", p.StatusCode, p.Body)
	}
	for _, want := range []string{`value="` + s.URL + `/webdav/"`, `value="` + s.URL + `/dav/"`, `value="dav@example.test"`, "rclone", "Thunderbird", "DAVx5", "Finder", "Explorer", "iPhone"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if p.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", p.Header.Get("Cache-Control"))
	}
	if st := propfind(s, "dav@example.test", m[1]); st != 207 {
		t.Fatalf("PROPFIND with the new app password: %d", st)
	}
	p = b.get("/settings")
	if strings.Contains(p.Body, m[1]) || !strings.Contains(p.Body, "<td>Laptop</td>") {
		t.Fatal("the list shows the secret, or not the app password")
	}
	ids := apRowRE.FindAllStringSubmatch(p.Body, -1)
	if len(ids) != 1 {
		t.Fatalf("app passwords listed: %v\n%s", ids, p.Body)
	}
	if p := b.post("/settings/app-passwords/"+ids[0][1]+"/revoke", nil); p.StatusCode != 303 {
		t.Fatalf("revoke: %d", p.StatusCode)
	}
	if st := propfind(s, "dav@example.test", m[1]); st != 401 {
		t.Fatalf("PROPFIND with the revoked app password: %d", st)
	}
}

func TestMeCredentialsREST(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	me := person(t, s, "Org", "rest@example.test", "admin")
	other := s.Bootstrap("Org", "other@example.test", "member")
	tok := me.Token

	// App passwords: create, use, list, revoke.
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/me/app-passwords", Token: tok, Body: map[string]any{"label": "Phone"}})
	var ap struct {
		ID, Password, Username, Label string
		WebDAV                        string `json:"webdav_url"`
		DAV                           string `json:"dav_url"`
	}
	res.Decode(t, &ap)
	if res.StatusCode != 201 || ap.Password == "" || ap.Username != "rest@example.test" || ap.WebDAV != s.URL+"/webdav/" || ap.DAV != s.URL+"/dav/" || ap.Label != "Phone" {
		t.Fatalf("create app password: %d %s", res.StatusCode, res.Body)
	}
	if st := propfind(s, "rest@example.test", ap.Password); st != 207 {
		t.Fatalf("PROPFIND: %d", st)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "list app passwords", Request: webtest.Request{Method: "GET", Path: "/api/v1/me/app-passwords", Token: tok}, Status: 200,
			Contains: []string{`"id":"` + ap.ID + `"`, `"label":"Phone"`}, NotContains: []string{ap.Password}},
		{Name: "another user's app password", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/me/app-passwords/" + ap.ID, Token: other.Token}, Status: 404, Problem: "not_found"},
		{Name: "revoke app password", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/me/app-passwords/" + ap.ID, Token: tok}, Status: 204},
		{Name: "revoke again", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/me/app-passwords/" + ap.ID, Token: tok}, Status: 404, Problem: "not_found"},
		{Name: "no credential", Request: webtest.Request{Method: "GET", Path: "/api/v1/me/tokens"}, Status: 401, Problem: "unauthorized"},
	})
	if st := propfind(s, "rest@example.test", ap.Password); st != 401 {
		t.Fatalf("PROPFIND with a revoked app password: %d", st)
	}

	// Tokens: a narrow token (that may manage credentials), which may only
	// make narrower ones.
	res = s.Do(webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: tok, Body: map[string]any{"name": "script", "scopes": []string{"contacts:read", "credentials:manage"}, "ttl_seconds": 3600}})
	var pat struct {
		ID, Token string
		Scopes    []string
		ExpiresAt *time.Time `json:"expires_at"`
	}
	res.Decode(t, &pat)
	if res.StatusCode != 201 || !strings.HasPrefix(pat.Token, identity.PATPrefix) || len(pat.Scopes) != 2 || pat.ExpiresAt == nil {
		t.Fatalf("create token: %d %s", res.StatusCode, res.Body)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "narrow token works", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: pat.Token}, Status: 200, Contains: []string{`"scopes":["contacts:read","credentials:manage"]`}},
		{Name: "narrow token cannot widen", Request: webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: pat.Token,
			Body: map[string]any{"name": "wider", "scopes": []string{"drive:read"}}}, Status: 422, Problem: "validation_failed", Contains: []string{"wider than the caller"}},
		{Name: "narrow token cannot make an app password", Request: webtest.Request{Method: "POST", Path: "/api/v1/me/app-passwords", Token: pat.Token,
			Body: map[string]any{}}, Status: 403, Problem: "insufficient_scope"},
		{Name: "narrow token makes a narrow token", Request: webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: pat.Token,
			Body: map[string]any{"name": "same", "scopes": []string{"contacts:read"}}}, Status: 201, Contains: []string{`"scopes":["contacts:read"]`}},
		{Name: "unknown scope", Request: webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: tok,
			Body: map[string]any{"name": "x", "scopes": []string{"root"}}}, Status: 422, Problem: "validation_failed"},
		{Name: "too long a lifetime", Request: webtest.Request{Method: "POST", Path: "/api/v1/me/tokens", Token: tok,
			Body: map[string]any{"name": "x", "ttl_seconds": 40000000}}, Status: 422, Problem: "validation_failed"},
		{Name: "list tokens", Request: webtest.Request{Method: "GET", Path: "/api/v1/me/tokens?limit=100", Token: tok}, Status: 200,
			Contains: []string{`"id":"` + pat.ID + `"`, `"name":"script"`}, NotContains: []string{pat.Token}},
		{Name: "another user's token", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/me/tokens/" + pat.ID, Token: other.Token}, Status: 404, Problem: "not_found"},
	})
	var list struct {
		Items []identity.Token
	}
	s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me/tokens?limit=100", Token: tok}).Decode(t, &list)
	for _, it := range list.Items {
		if it.ID == pat.ID && it.LastUsedAt == nil {
			t.Fatalf("the used token has no last use: %+v", it)
		}
	}
	s.Run(t, []webtest.Scenario{
		{Name: "revoke token", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/me/tokens/" + pat.ID, Token: tok}, Status: 204},
		{Name: "revoked token", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: pat.Token}, Status: 401, Problem: "unauthorized"},
	})

	// Sessions: listed and revoked through the API.
	b := newBrowser(t, s)
	b.mustSignIn("rest@example.test", testPassword)
	var sessions struct {
		Items []identity.Session
	}
	s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me/sessions", Token: tok}).Decode(t, &sessions)
	if len(sessions.Items) != 1 || sessions.Items[0].Current || sessions.Items[0].UserAgent == "" {
		t.Fatalf("sessions: %+v", sessions.Items)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "another user's session", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/me/sessions/" + sessions.Items[0].ID, Token: other.Token}, Status: 404, Problem: "not_found"},
		{Name: "revoke session", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/me/sessions/" + sessions.Items[0].ID, Token: tok}, Status: 204},
	})
	if p := b.get("/settings"); p.StatusCode != 303 {
		t.Fatalf("session revoked through the API still works: %d", p.StatusCode)
	}
}

func TestWebAppChangePassword(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "pw@example.test", "member")
	b1, b2 := newBrowser(t, s), newBrowser(t, s)
	b1.mustSignIn("pw@example.test", testPassword)
	b2.mustSignIn("pw@example.test", testPassword)
	const next = "a brand new passphrase"
	for _, c := range []struct {
		name          string
		current, a, b string
		status        int
		says          string
	}{
		{"wrong current", "not it at all", next, next, 422, "not the account"},
		{"repeat differs", testPassword, next, next + "!", 422, "differ"},
		{"too short", testPassword, "short", "short", 422, "at least 10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := b1.post("/settings/password", url.Values{"current_password": {c.current}, "new_password": {c.a}, "repeat_password": {c.b}})
			if p.StatusCode != c.status || !strings.Contains(p.Body, c.says) {
				t.Fatalf("%d, want %d saying %q: %s", p.StatusCode, c.status, c.says, p.Body)
			}
		})
	}
	p := b1.post("/settings/password", url.Values{"current_password": {testPassword}, "new_password": {next}, "repeat_password": {next}})
	if p.StatusCode != 303 {
		t.Fatalf("change: %d %s", p.StatusCode, p.Body)
	}
	if p := b1.get(p.Header.Get("Location")); p.StatusCode != 200 || !strings.Contains(p.Body, "Your password is changed") {
		t.Fatalf("the changing session: %d", p.StatusCode)
	}
	if p := b2.get("/settings"); p.StatusCode != 303 {
		t.Fatalf("other session after the change: %d", p.StatusCode)
	}
	if p := newBrowser(t, s).signIn("pw@example.test", testPassword); p.StatusCode != 200 || !strings.Contains(p.Body, "not correct") {
		t.Fatalf("old password: %d", p.StatusCode)
	}
	if p := newBrowser(t, s).signIn("pw@example.test", next); p.StatusCode != 303 {
		t.Fatalf("new password: %d", p.StatusCode)
	}
}

func TestWebAppForgotPassword(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "forgot@example.test", "member")
	signedIn := newBrowser(t, s)
	signedIn.mustSignIn("forgot@example.test", testPassword)
	ctx := context.Background()
	send := func(email string) string {
		b := newBrowser(t, s)
		p := b.get("/signin")
		if !strings.Contains(p.Body, `href="/forgot">Forgot password?</a>`) {
			t.Fatal("no Forgot password? link")
		}
		b.get("/forgot")
		p = b.post("/forgot", url.Values{"email": {email}})
		if p.StatusCode != 200 {
			t.Fatalf("forgot %s: %d", email, p.StatusCode)
		}
		return strings.ReplaceAll(p.Body, email, "ADDRESS")
	}
	// The answers are the same, and so is the work before them: the mail is
	// sent after the answer.
	unknown, known := send("nobody@example.test"), send("forgot@example.test")
	if known != unknown || !strings.Contains(known, "is on its way") {
		t.Fatalf("the answers differ:\n%s\n---\n%s", known, unknown)
	}
	var token string
	deadline := time.Now().Add(10 * time.Second)
	for token == "" && time.Now().Before(deadline) {
		all, err := s.Main.Mail.List(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range all {
			if sm := regexp.MustCompile(`/reset/([0-9a-f]+)`).FindStringSubmatch(m.Body); m.To == "forgot@example.test" && sm != nil {
				token = sm[1]
			}
		}
		if token == "" {
			time.Sleep(10 * time.Millisecond) // the mail is sent after the answer
		}
	}
	if token == "" {
		t.Fatal("no reset mail")
	}
	if all, _ := s.Main.Mail.List(ctx, 100); slices.ContainsFunc(all, func(m app.Mail) bool { return m.To == "nobody@example.test" }) {
		t.Fatal("mail to an unknown address")
	}
	// The reset page links back to sign-in; the reset ends the sessions.
	if r := s.Do(webtest.Request{Method: "GET", Path: "/account.js"}); !strings.Contains(string(r.Body), `a.href = "/"`) {
		t.Fatal("reset page does not link to sign-in")
	}
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/password-resets/" + token + "/accept", Body: map[string]any{"password": "reset passphrase 1"}})
	if res.StatusCode != 200 {
		t.Fatalf("reset: %d %s", res.StatusCode, res.Body)
	}
	if p := signedIn.get("/settings"); p.StatusCode != 303 {
		t.Fatalf("session after a reset: %d", p.StatusCode)
	}
	if p := newBrowser(t, s).signIn("forgot@example.test", "reset passphrase 1"); p.StatusCode != 303 {
		t.Fatalf("sign in with the reset password: %d", p.StatusCode)
	}
}

func TestWebAppEscapesUserText(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	c := s.Bootstrap("Org", "boss@example.test", "admin")
	const xss = `<img src=x onerror=alert(1)>`
	u, err := s.Main.Identity.EnsureUser(ctx, c.OrganizationID, identity.EnsureUserInput{Email: "xss@example.test", FirstName: xss, Role: "member"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Main.Identity.SetAccountPassword(ctx, u.ID, testPassword); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, s)
	b.mustSignIn("xss@example.test", testPassword)
	b.post("/settings/app-passwords", url.Values{"label": {`<script>alert(2)</script>`}})
	p := b.get("/settings")
	if !strings.Contains(p.Body, "&lt;img src=x onerror=alert(1)&gt;") || strings.Contains(p.Body, "<img src=x") {
		t.Fatalf("the name is not escaped: %s", p.Body)
	}
	if !strings.Contains(p.Body, "&lt;script&gt;alert(2)&lt;/script&gt;") || strings.Contains(p.Body, "<script>alert(2)") {
		t.Fatal("the app password's label is not escaped")
	}
}

var attrRE = regexp.MustCompile(`(?:src|href|action)="([^"]*)"`)

func TestWebAppHeadersAndOffline(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "hdr@example.test", "admin")
	in := newBrowser(t, s)
	in.mustSignIn("hdr@example.test", testPassword)
	out := newBrowser(t, s)
	for _, c := range []struct {
		name string
		b    *browser
		path string
		code int
	}{
		{"root", out, "/", 200},
		{"sign in", out, "/signin", 200},
		{"forgot", out, "/forgot", 200},
		{"deep link signed out", out, "/settings", 303},
		{"settings", in, "/settings", 200},
		{"root signed in", in, "/", 303},
		{"css", out, "/assets/app.css", 200},
		{"js", out, "/assets/app.js", 200},
		{"icon", out, "/assets/icon.svg", 200},
		{"refused post", in, "/settings/tokens", 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p *page
			if c.code == 403 {
				p = c.b.do("POST", c.path, url.Values{}, nil)
			} else {
				p = c.b.get(c.path)
			}
			if p.StatusCode != c.code {
				t.Fatalf("status %d, want %d", p.StatusCode, c.code)
			}
			for k, v := range map[string]string{"Content-Security-Policy": ui.ContentSecurityPolicy, "X-Content-Type-Options": "nosniff",
				"Referrer-Policy": "same-origin", "X-Frame-Options": "DENY"} {
				if got := p.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if !strings.Contains(p.Header.Get("Content-Type"), "html") {
				return
			}
			// Everything the page loads or links is on this server; no inline
			// script or style.
			for _, m := range attrRE.FindAllStringSubmatch(p.Body, -1) {
				if !(strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "#")) || strings.HasPrefix(m[1], "//") {
					t.Errorf("reference off the server: %q", m[1])
				}
			}
			if strings.Contains(p.Body, "<script>") || strings.Contains(p.Body, " style=") || strings.Contains(p.Body, "<style") || strings.Contains(p.Body, " on") && regexp.MustCompile(` on[a-z]+=`).MatchString(p.Body) {
				t.Error("inline script or style")
			}
		})
	}
	p := in.get("/settings")
	for _, want := range []string{`<nav aria-label="Main">`, `<a href="/settings" aria-current="page">Settings</a>`, `<header`, `<main id="main"`, `>Sign out</button>`,
		`<label for="new-password">`, `id="new-password"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("settings page lacks %q", want)
		}
	}
}

// TestWebAppPATFromSettings makes a token on the settings page with chosen
// scopes and a lifetime, uses it, and revokes it.
func TestWebAppPATFromSettings(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "pat@example.test", "member")
	b := newBrowser(t, s)
	p := b.mustSignIn("pat@example.test", testPassword)
	if strings.Contains(p.Body, `value="admin:access"`) || !strings.Contains(p.Body, `value="drive:read"`) {
		t.Fatal("the scopes offered are not the member's")
	}
	p = b.post("/settings/tokens", url.Values{"name": {"backup"}, "scope": {"drive:read", "contacts:read"}, "ttl_days": {"7"}})
	m := regexp.MustCompile(`id="new-token" type="text" readonly value="(atr_pat_[0-9a-f]+)"`).FindStringSubmatch(p.Body)
	if p.StatusCode != 200 || m == nil {
		t.Fatalf("create: %d %s", p.StatusCode, p.Body)
	}
	res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: m[1]})
	if res.StatusCode != 200 || !strings.Contains(string(res.Body), `"scopes":["contacts:read","drive:read"]`) {
		t.Fatalf("token: %d %s", res.StatusCode, res.Body)
	}
	if p := b.post("/settings/tokens", url.Values{"name": {"wide"}, "scope": {"admin:access"}, "ttl_days": {"7"}}); p.StatusCode != 422 {
		t.Fatalf("a scope the role lacks: %d", p.StatusCode)
	}
	p = b.get("/settings")
	ids := regexp.MustCompile(`<td>backup</td>[\s\S]*?/settings/tokens/([0-9a-f-]+)/revoke`).FindAllStringSubmatch(p.Body, -1)
	if len(ids) != 1 {
		t.Fatalf("tokens listed: %v", ids)
	}
	if p := b.post("/settings/tokens/"+ids[0][1]+"/revoke", nil); p.StatusCode != 303 {
		t.Fatalf("revoke: %d", p.StatusCode)
	}
	if res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: m[1]}); res.StatusCode != 401 {
		t.Fatalf("revoked token: %d", res.StatusCode)
	}
}
