package web_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"atrium/web/ui"
	"atrium/webtest"
	"atrium/wire"
)

// totpCode computes the RFC 6238 code (SHA-1, 30 s, 6 digits) of a base32
// secret at a time, independently of the server's library.
func totpCode(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:off+4])&0x7fffffff)%1_000_000)
}

var (
	tfSecretRE   = regexp.MustCompile(`id="tf-secret" type="text" readonly value="([A-Z2-7]+)"`)
	tfQRRE       = regexp.MustCompile(`<img class="qr" src="data:image/png;base64,(?:[A-Za-z0-9/=]|&#43;)+" alt="[^"]+">`)
	recoveryRE   = regexp.MustCompile(`<li><code>([0-9a-f]{5}-[0-9a-f]{5})</code></li>`)
	tfOnRE       = regexp.MustCompile(`Two-factor sign-in is on`)
	tfSetupBtnRE = regexp.MustCompile(`>Set up two-factor sign-in</button>`)
)

// enableTwoFactor sets up two-factor sign-in from the settings page of a
// signed-in browser (a wrong code first, which changes nothing) and returns
// the secret and the recovery codes shown.
func enableTwoFactor(t *testing.T, s *webtest.Server, b *browser) (string, []string) {
	t.Helper()
	if p := b.get("/settings"); !tfSetupBtnRE.MatchString(p.Body) {
		t.Fatalf("no set-up button: %s", p.Body)
	}
	if p := b.post("/settings/two-factor/setup", nil); p.StatusCode != 303 || p.Header.Get("Location") != "/settings#two-factor" {
		t.Fatalf("set up: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	p := b.get("/settings")
	m := tfSecretRE.FindStringSubmatch(p.Body)
	if m == nil || !tfQRRE.MatchString(p.Body) || !strings.Contains(p.Body, `<label for="tf-code">Authentication code</label>`) {
		t.Fatalf("setup shows no secret, QR code or code field: %s", p.Body)
	}
	secret := m[1]
	p = b.post("/settings/two-factor/enable", url.Values{"code": {"000000"}})
	if p.StatusCode != 200 || !strings.Contains(p.Body, "Authentication code: is not the current code") || tfOnRE.MatchString(p.Body) {
		t.Fatalf("wrong code: %d %s", p.StatusCode, p.Body)
	}
	if !strings.Contains(p.Body, secret) {
		t.Fatal("the secret being set up is gone after a wrong code")
	}
	p = b.post("/settings/two-factor/enable", url.Values{"code": {totpCode(t, secret, s.Clock.Now())}})
	codes := recoveryRE.FindAllStringSubmatch(p.Body, -1)
	if p.StatusCode != 200 || !tfOnRE.MatchString(p.Body) || len(codes) != 10 {
		t.Fatalf("confirm: %d, %d codes: %s", p.StatusCode, len(codes), p.Body)
	}
	var out []string
	for _, c := range codes {
		out = append(out, c[1])
	}
	// Shown once: not on the page again.
	if p := b.get("/settings"); recoveryRE.MatchString(p.Body) || tfSecretRE.MatchString(p.Body) || !strings.Contains(p.Body, "10 of 10 recovery codes left") {
		t.Fatalf("settings after enabling: %s", p.Body)
	}
	// The code used is spent; the next sign-in uses the next step's.
	s.Clock.Advance(30 * time.Second)
	return secret, out
}

// codeStep signs in with the password and expects the code step.
func codeStep(t *testing.T, b *browser, email string) {
	t.Helper()
	p := b.signIn(email, testPassword)
	if p.StatusCode != 303 || p.Header.Get("Location") != "/signin/code" {
		t.Fatalf("password step: %d %q %s", p.StatusCode, p.Header.Get("Location"), p.Body)
	}
	if b.cookie(ui.SessionCookie) != nil {
		t.Fatal("a session cookie before the code")
	}
	p = b.get("/signin/code")
	if p.StatusCode != 200 || !strings.Contains(p.Body, `<label for="code">Authentication code</label>`) ||
		!strings.Contains(p.Body, ">Verify</button>") || !strings.Contains(p.Body, "recovery codes in the same field") {
		t.Fatalf("code step: %d %s", p.StatusCode, p.Body)
	}
}

func TestWebAppTwoFactorSignIn(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	c := person(t, s, "Org", "tf@example.test", "member")
	other := person(t, s, "Org", "plain@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("tf@example.test", testPassword)
	secret, _ := enableTwoFactor(t, s, b)

	nb := newBrowser(t, s)
	codeStep(t, nb, "tf@example.test")
	// No page opens before the code.
	if p := nb.get("/settings"); p.StatusCode != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/signin") {
		t.Fatalf("settings during the code step: %d", p.StatusCode)
	}
	for _, code := range []string{"000000", "", "12345", "aaaaa-bbbbb"} {
		p := nb.post("/signin/code", url.Values{"code": {code}})
		if p.StatusCode != 200 || !strings.Contains(p.Body, "The code is not correct") || nb.cookie(ui.SessionCookie) != nil {
			t.Fatalf("code %q: %d %s", code, p.StatusCode, p.Body)
		}
	}
	code := totpCode(t, secret, s.Clock.Now())
	p := nb.post("/signin/code", url.Values{"code": {code[:3] + " " + code[3:]}})
	if p.StatusCode != 303 || p.Header.Get("Location") != "/drive" || nb.cookie(ui.SessionCookie) == nil {
		t.Fatalf("right code: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	if nb.cookie(ui.ChallengeCookie) != nil {
		t.Fatal("the pending step's cookie stays after sign-in")
	}
	if p := nb.get("/settings"); p.StatusCode != 200 {
		t.Fatalf("settings after the code: %d", p.StatusCode)
	}

	// The same code in another browser (replay) is refused.
	rb := newBrowser(t, s)
	codeStep(t, rb, "tf@example.test")
	if p := rb.post("/signin/code", url.Values{"code": {code}}); p.StatusCode != 200 || !strings.Contains(p.Body, "not correct") {
		t.Fatalf("replayed code: %d", p.StatusCode)
	}

	// A deep link survives the second step.
	s.Clock.Advance(30 * time.Second)
	db := newBrowser(t, s)
	db.get("/signin?next=%2Fcontacts")
	if p := db.post("/signin", url.Values{"email": {"tf@example.test"}, "password": {testPassword}, "next": {"/contacts"}}); p.Header.Get("Location") != "/signin/code?next=%2Fcontacts" {
		t.Fatalf("password step with next: %q", p.Header.Get("Location"))
	}
	db.get("/signin/code?next=%2Fcontacts")
	if p := db.post("/signin/code", url.Values{"code": {totpCode(t, secret, s.Clock.Now())}, "next": {"/contacts"}}); p.Header.Get("Location") != "/contacts" {
		t.Fatalf("code step with next: %d %q", p.StatusCode, p.Header.Get("Location"))
	}

	// Devices and scripts are unaffected; /me tells.
	if st := propfind(s, "tf@example.test", c.AppPassword); st != 207 {
		t.Fatalf("app password with two-factor on: %d", st)
	}
	for token, want := range map[string]bool{c.Token: true, other.Token: false} {
		r := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: token})
		if got, ok := r.JSON()["two_factor"].(bool); r.StatusCode != 200 || !ok || got != want {
			t.Fatalf("/me two_factor: %d %s, want %v", r.StatusCode, r.Body, want)
		}
	}
}

func TestWebAppTwoFactorRecoveryCode(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "rc@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("rc@example.test", testPassword)
	_, codes := enableTwoFactor(t, s, b)

	nb := newBrowser(t, s)
	codeStep(t, nb, "rc@example.test")
	if p := nb.post("/signin/code", url.Values{"code": {strings.ToUpper(codes[3])}}); p.StatusCode != 303 || nb.cookie(ui.SessionCookie) == nil {
		t.Fatalf("recovery code: %d %s", p.StatusCode, p.Body)
	}
	if p := nb.get("/settings"); !strings.Contains(p.Body, "9 of 10 recovery codes left") {
		t.Fatalf("count after use: %s", p.Body)
	}
	ab := newBrowser(t, s)
	codeStep(t, ab, "rc@example.test")
	if p := ab.post("/signin/code", url.Values{"code": {codes[3]}}); p.StatusCode != 200 || !strings.Contains(p.Body, "not correct") || ab.cookie(ui.SessionCookie) != nil {
		t.Fatalf("recovery code used twice: %d", p.StatusCode)
	}
}

func TestWebAppTwoFactorLimit(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, func(c *wire.Config) { c.Limits.AuthFailures = 3 })
	person(t, s, "Org", "lim2@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("lim2@example.test", testPassword)
	secret, _ := enableTwoFactor(t, s, b)

	nb := newBrowser(t, s)
	codeStep(t, nb, "lim2@example.test")
	for i := 0; i < 3; i++ {
		if p := nb.post("/signin/code", url.Values{"code": {"000000"}}); p.StatusCode != 200 || !strings.Contains(p.Body, "not correct") {
			t.Fatalf("attempt %d: %d", i, p.StatusCode)
		}
	}
	// Blocked now: the right code too, and the password step of the account.
	p := nb.post("/signin/code", url.Values{"code": {totpCode(t, secret, s.Clock.Now())}})
	if p.StatusCode != 200 || p.Header.Get("Retry-After") == "" || !strings.Contains(p.Body, "Too many failed sign-in attempts") || nb.cookie(ui.SessionCookie) != nil {
		t.Fatalf("after 3 wrong codes: %d %q %s", p.StatusCode, p.Header.Get("Retry-After"), p.Body)
	}
	if p := newBrowser(t, s).signIn("lim2@example.test", testPassword); p.StatusCode != 200 || !strings.Contains(p.Body, "Too many failed sign-in attempts") {
		t.Fatalf("password step after 3 wrong codes: %d", p.StatusCode)
	}
}

func TestWebAppTwoFactorCSRFAndExpiry(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "exp@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("exp@example.test", testPassword)
	// The settings forms refuse a request without the session's token.
	for _, path := range []string{"/settings/two-factor/setup", "/settings/two-factor/enable", "/settings/two-factor/recovery-codes", "/settings/two-factor/disable"} {
		if p := b.do("POST", path, url.Values{"code": {"000000"}, "password": {testPassword}}, nil); p.StatusCode != 403 {
			t.Fatalf("%s without token: %d", path, p.StatusCode)
		}
	}
	if p := b.get("/settings"); !tfSetupBtnRE.MatchString(p.Body) {
		t.Fatal("a forged request set two-factor sign-in up")
	}
	secret, _ := enableTwoFactor(t, s, b)

	nb := newBrowser(t, s)
	codeStep(t, nb, "exp@example.test")
	code := totpCode(t, secret, s.Clock.Now())
	for name, c := range map[string]struct {
		form   url.Values
		header map[string]string
	}{
		"no token":     {url.Values{"code": {code}}, nil},
		"wrong token":  {url.Values{"code": {code}, "csrf": {strings.Repeat("a", 64)}}, nil},
		"cross-origin": {url.Values{"code": {code}, "csrf": {nb.csrf}}, map[string]string{"Origin": "http://evil.example"}},
	} {
		if p := nb.do("POST", "/signin/code", c.form, c.header); p.StatusCode != 403 || nb.cookie(ui.SessionCookie) != nil {
			t.Fatalf("%s: %d", name, p.StatusCode)
		}
	}
	// The pending step ends after 5 minutes: back to the password.
	s.Clock.Advance(5*time.Minute + time.Second)
	p := nb.post("/signin/code", url.Values{"code": {totpCode(t, secret, s.Clock.Now())}})
	if p.StatusCode != 303 || p.Header.Get("Location") != "/signin?done=expired" || nb.cookie(ui.SessionCookie) != nil {
		t.Fatalf("expired step: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	if p := nb.get("/signin?done=expired"); !strings.Contains(p.Body, "The sign-in has expired") {
		t.Fatalf("sign-in page after expiry: %s", p.Body)
	}
	// Without a pending step the code page sends to the password step.
	if p := newBrowser(t, s).get("/signin/code"); p.StatusCode != 303 || p.Header.Get("Location") != "/signin?done=expired" {
		t.Fatalf("code page without a pending step: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
}

func TestWebAppTwoFactorRegenerateAndTurnOff(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "off@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("off@example.test", testPassword)
	secret, old := enableTwoFactor(t, s, b)

	if p := b.post("/settings/two-factor/recovery-codes", url.Values{"proof": {"wrong password"}}); p.StatusCode != 200 ||
		!strings.Contains(p.Body, "neither a current authentication code nor the account password") || recoveryRE.MatchString(p.Body) {
		t.Fatalf("regenerate with a wrong proof: %d %s", p.StatusCode, p.Body)
	}
	p := b.post("/settings/two-factor/recovery-codes", url.Values{"proof": {totpCode(t, secret, s.Clock.Now())}})
	fresh := recoveryRE.FindAllStringSubmatch(p.Body, -1)
	if p.StatusCode != 200 || len(fresh) != 10 {
		t.Fatalf("regenerate with a code: %d %s", p.StatusCode, p.Body)
	}
	nb := newBrowser(t, s)
	codeStep(t, nb, "off@example.test")
	if p := nb.post("/signin/code", url.Values{"code": {old[0]}}); p.StatusCode != 200 {
		t.Fatalf("an old recovery code after regenerating: %d", p.StatusCode)
	}
	if p := nb.post("/signin/code", url.Values{"code": {fresh[0][1]}}); p.StatusCode != 303 {
		t.Fatalf("a new recovery code: %d", p.StatusCode)
	}

	if p := b.post("/settings/two-factor/disable", url.Values{"password": {"wrong password"}}); p.StatusCode != 200 ||
		!strings.Contains(p.Body, "Account password: is not the account") || !tfOnRE.MatchString(p.Body) {
		t.Fatalf("turn off with a wrong password: %d %s", p.StatusCode, p.Body)
	}
	if p := b.post("/settings/two-factor/disable", url.Values{"password": {testPassword}}); p.StatusCode != 303 {
		t.Fatalf("turn off: %d", p.StatusCode)
	}
	if p := b.get("/settings?done=two-factor-off"); !strings.Contains(p.Body, "Two-factor sign-in is off") || !tfSetupBtnRE.MatchString(p.Body) {
		t.Fatalf("settings after turning off: %s", p.Body)
	}
	if p := newBrowser(t, s).signIn("off@example.test", testPassword); p.StatusCode != 303 || p.Header.Get("Location") != "/drive" {
		t.Fatalf("sign in after turning off: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
}
