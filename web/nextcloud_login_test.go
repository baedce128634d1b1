package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"atrium/app/identity"
	"atrium/webtest"
)

const mirallUA = "Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian-6.1.0 ClientArchitecture: x86_64 OsArchitecture: x86_64)"

type loginFlowStart struct {
	Poll  struct{ Token, Endpoint string }
	Login string
}

func startLoginFlow(t *testing.T, s *webtest.Server) loginFlowStart {
	t.Helper()
	res := s.Do(webtest.Request{Method: "POST", Path: "/index.php/login/v2", Header: map[string]string{"User-Agent": mirallUA}})
	var f loginFlowStart
	res.Decode(t, &f)
	if res.StatusCode != 200 || len(f.Poll.Token) != 64 || !strings.HasSuffix(f.Poll.Endpoint, "/index.php/login/v2/poll") ||
		!strings.Contains(f.Login, "/connect/") {
		t.Fatalf("start: %d %s", res.StatusCode, res.Body)
	}
	return f
}

func pollLoginFlow(s *webtest.Server, token string) *webtest.Response {
	return s.Do(webtest.Request{Method: "POST", Path: "/index.php/login/v2/poll", Body: "token=" + token,
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
}

// Login Flow v2: the Nextcloud client starts a sign-in and opens the
// browser at the web app; the person signs in and approves "Connect
// <device>"; the client, polling, receives an app password named after the
// device, once, and it works at the clients' doors and is listed in
// Settings. Declined, expired and finished flows give nothing.
func TestSyncClientLoginFlow(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := person(t, s, "Flow Org", "ann@example.test", "admin")
	f := startLoginFlow(t, s)
	connect, _ := url.Parse(f.Login)
	if r := pollLoginFlow(s, f.Poll.Token); r.StatusCode != 404 {
		t.Fatalf("poll before approval: %d %s", r.StatusCode, r.Body)
	}

	// Not signed in: sign in first, then back to the page.
	b := newBrowser(t, s)
	p := b.get(connect.Path)
	if p.StatusCode != 303 || p.Header.Get("Location") != "/signin?next="+url.QueryEscape(connect.Path) {
		t.Fatalf("connect page signed out: %d %v", p.StatusCode, p.Header)
	}
	b.get(p.Header.Get("Location"))
	p = b.post("/signin", url.Values{"email": {ann.Email}, "password": {testPassword}, "next": {connect.Path}})
	if p.StatusCode != 303 || p.Header.Get("Location") != connect.Path {
		t.Fatalf("sign in: %d %v", p.StatusCode, p.Header)
	}
	p = b.get(connect.Path)
	if p.StatusCode != 200 || !strings.Contains(p.Body, "Connect Nextcloud desktop (Linux)?") || !strings.Contains(p.Body, ann.Email) ||
		strings.Contains(p.Body, "confirm_password") {
		t.Fatalf("connect page: %d %s", p.StatusCode, p.Body)
	}
	if p = b.post(connect.Path, url.Values{"action": {"connect"}}); p.StatusCode != 200 || !strings.Contains(p.Body, "Nextcloud desktop (Linux) is connected") {
		t.Fatalf("connect: %d %s", p.StatusCode, p.Body)
	}

	// The client gets the app password, once.
	r := pollLoginFlow(s, f.Poll.Token)
	var got struct{ Server, LoginName, AppPassword string }
	r.Decode(t, &got)
	if r.StatusCode != 200 || got.Server != s.Main.Config.PublicURL || got.LoginName != ann.Email || got.AppPassword == "" {
		t.Fatalf("poll: %d %s", r.StatusCode, r.Body)
	}
	if r := pollLoginFlow(s, f.Poll.Token); r.StatusCode != 404 {
		t.Fatalf("second poll: %d", r.StatusCode)
	}
	if p := b.get(connect.Path); p.StatusCode != 404 {
		t.Fatalf("the page of a finished flow: %d", p.StatusCode)
	}
	user := s.Do(webtest.Request{Method: "GET", Path: "/ocs/v1.php/cloud/user?format=json", BasicID: got.LoginName, BasicPW: got.AppPassword})
	if user.StatusCode != 200 || !strings.Contains(string(user.Body), ann.UserID) {
		t.Fatalf("the app password at OCS: %d %s", user.StatusCode, user.Body)
	}
	if p := b.get("/settings"); !strings.Contains(p.Body, "Nextcloud desktop (Linux)") || !strings.Contains(p.Body, "Desktop and mobile clients") ||
		!strings.Contains(p.Body, `value="`+s.Main.Config.PublicURL+`"`) {
		t.Fatalf("settings lists no device or no server address")
	}

	// Declined: nothing for the client.
	f2 := startLoginFlow(t, s)
	c2, _ := url.Parse(f2.Login)
	b.get(c2.Path)
	if p := b.post(c2.Path, url.Values{"action": {"cancel"}}); p.StatusCode != 200 || !strings.Contains(p.Body, "is not connected") {
		t.Fatalf("cancel: %d %s", p.StatusCode, p.Body)
	}
	if r := pollLoginFlow(s, f2.Poll.Token); r.StatusCode != 404 {
		t.Fatalf("poll after cancel: %d", r.StatusCode)
	}

	// A session that signed in a while ago gives the password again.
	f3 := startLoginFlow(t, s)
	c3, _ := url.Parse(f3.Login)
	s.Clock.Advance(identity.RecentSignIn + time.Minute)
	if p := b.get(c3.Path); !strings.Contains(p.Body, `name="confirm_password"`) {
		t.Fatalf("no password field: %s", p.Body)
	}
	if p := b.post(c3.Path, url.Values{"action": {"connect"}}); p.StatusCode < 400 {
		t.Fatalf("connect without the password: %d", p.StatusCode)
	}
	if p := b.post(c3.Path, url.Values{"action": {"connect"}, "confirm_password": {"wrong"}}); p.StatusCode < 400 {
		t.Fatalf("connect with a wrong password: %d", p.StatusCode)
	}
	if p := b.post(c3.Path, url.Values{"action": {"connect"}, "confirm_password": {testPassword}}); p.StatusCode != 200 {
		t.Fatalf("connect with the password: %d %s", p.StatusCode, p.Body)
	}
	if r := pollLoginFlow(s, f3.Poll.Token); r.StatusCode != 200 {
		t.Fatalf("poll: %d", r.StatusCode)
	}

	// Expired: neither the page nor the poll.
	f4 := startLoginFlow(t, s)
	c4, _ := url.Parse(f4.Login)
	s.Clock.Advance(identity.LoginFlowTTL + time.Second)
	if p := b.get(c4.Path); p.StatusCode != 404 {
		t.Fatalf("the page of an expired flow: %d", p.StatusCode)
	}
	if r := pollLoginFlow(s, f4.Poll.Token); r.StatusCode != 404 {
		t.Fatalf("poll of an expired flow: %d", r.StatusCode)
	}
	if r := pollLoginFlow(s, "nonsense"); r.StatusCode != 404 {
		t.Fatalf("poll of no flow: %d", r.StatusCode)
	}
}
