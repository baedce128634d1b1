package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"atrium/app/identity"
	"atrium/webtest"
)

// Two nodes on one database (webtest's Peer; PostgreSQL only): what a
// client gets from one works on the other, without sticky sessions.

// A token, an app password and a web session made on node A work on node B.
func TestClusterCredentialsOnEveryNode(t *testing.T) {
	t.Parallel()
	a := webtest.New(t)
	b := a.Peer(t)
	ann := person(t, a, "Cluster Org", "ann@example.test", "admin")
	if r := b.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: ann.Token}); r.StatusCode != 200 {
		t.Fatalf("A's token on B: %d %s", r.StatusCode, r.Body)
	}
	if r := b.Do(webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: ann.Email, BasicPW: ann.AppPassword,
		Header: map[string]string{"Depth": "0"}}); r.StatusCode != 207 {
		t.Fatalf("A's app password on B: %d %s", r.StatusCode, r.Body)
	}
	onA := newBrowser(t, a)
	onA.mustSignIn(ann.Email, testPassword)
	// The same cookies, sent to B.
	onB := newBrowser(t, b)
	onB.c.Jar = onA.c.Jar
	if p := onB.get("/settings"); p.StatusCode != 200 || !strings.Contains(p.Body, ann.Email) {
		t.Fatalf("A's web session on B: %d", p.StatusCode)
	}
}

// A user suspended through node A is refused by node B within 2 seconds,
// though B had just accepted their token (and keeps answers in its cache).
func TestClusterSuspensionReachesEveryNode(t *testing.T) {
	t.Parallel()
	a := webtest.New(t)
	b := a.Peer(t)
	ann := person(t, a, "Cluster Org", "ann@example.test", "admin")
	bob := person(t, a, "Cluster Org", "bob@example.test", "member")
	me := func() int {
		return b.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: bob.Token}).StatusCode
	}
	if st := me(); st != 200 {
		t.Fatalf("bob on B before: %d", st)
	}
	if err := a.Main.Identity.SetUserStatus(context.Background(), ann.UserID, bob.UserID, identity.UserSuspended); err != nil {
		t.Fatal(err)
	}
	suspended := time.Now()
	for me() == 200 {
		if time.Since(suspended) > 2*time.Second {
			t.Fatal("B still accepts a user suspended through A 2 seconds later")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := me(); st != 401 && st != 403 {
		t.Fatalf("bob on B after: %d", st)
	}
}

// A WebDAV lock taken through node A holds on node B: a PUT on B without
// the lock's token is refused (423), with it accepted.
func TestClusterLockOnEveryNode(t *testing.T) {
	t.Parallel()
	a := webtest.New(t)
	b := a.Peer(t)
	onA := newDavUser(t, a, "Cluster Org", "ann@example.test", "admin")
	onB := onA
	onB.s = b
	onA.want(201, "PUT", "/plan.txt", nil, "v1")
	tok := onA.lock("/plan.txt", "exclusive", nil)
	onB.want(423, "PUT", "/plan.txt", nil, "v2 without the token")
	onB.want(204, "PUT", "/plan.txt", ifToken(tok), "v2 with the token")
	if r := onA.want(200, "GET", "/plan.txt", nil, nil); string(r.Body) != "v2 with the token" {
		t.Fatalf("A reads %q", r.Body)
	}
}

// Login Flow v2 across nodes: the client starts its sign-in on node A, the
// person approves it on node B, and the client, polling B, gets the app
// password, once (a poll on A then gets nothing).
func TestClusterLoginFlow(t *testing.T) {
	t.Parallel()
	a := webtest.New(t)
	b := a.Peer(t)
	ann := person(t, a, "Flow Org", "ann@example.test", "admin")
	f := startLoginFlow(t, a)
	connect, _ := url.Parse(f.Login)
	browser := newBrowser(t, b)
	browser.signIn(ann.Email, testPassword)
	if p := browser.get(connect.Path); p.StatusCode != 200 || !strings.Contains(p.Body, "Connect Nextcloud desktop (Linux)?") {
		t.Fatalf("B's connect page for A's flow: %d %s", p.StatusCode, p.Body)
	}
	if p := browser.post(connect.Path, url.Values{"action": {"connect"}}); p.StatusCode != 200 || !strings.Contains(p.Body, "is connected") {
		t.Fatalf("connect on B: %d %s", p.StatusCode, p.Body)
	}
	r := pollLoginFlow(b, f.Poll.Token)
	var got struct{ Server, LoginName, AppPassword string }
	r.Decode(t, &got)
	if r.StatusCode != 200 || got.LoginName != ann.Email || got.AppPassword == "" || got.Server != a.Main.Config.PublicURL {
		t.Fatalf("poll on B: %d %s", r.StatusCode, r.Body)
	}
	if r := pollLoginFlow(a, f.Poll.Token); r.StatusCode != 404 {
		t.Fatalf("poll on A after B handed it: %d", r.StatusCode)
	}
	if r := a.Do(webtest.Request{Method: "GET", Path: "/ocs/v1.php/cloud/user?format=json", BasicID: got.LoginName, BasicPW: got.AppPassword}); r.StatusCode != 200 {
		t.Fatalf("the app password on A: %d %s", r.StatusCode, r.Body)
	}
}

// Failed sign-ins count across the cluster: wrong app passwords sent to
// node A and node B add up to the lockout, which both nodes then apply.
func TestClusterFailedSignInsAddUp(t *testing.T) {
	t.Parallel()
	a := webtest.New(t)
	b := a.Peer(t)
	ann := person(t, a, "Cluster Org", "ann@example.test", "admin")
	propfind := func(s *webtest.Server, password string) *webtest.Response {
		return s.Do(webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: ann.Email, BasicPW: password,
			Header: map[string]string{"Depth": "0"}})
	}
	limit := a.Main.Config.Limits.AuthFailures
	for i := range limit {
		node := a
		if i%2 == 1 {
			node = b
		}
		if r := propfind(node, "wrong-password"); r.StatusCode != 401 {
			t.Fatalf("wrong password %d: %d %s", i+1, r.StatusCode, r.Body)
		}
	}
	for name, node := range map[string]*webtest.Server{"A": a, "B": b} {
		r := propfind(node, "wrong-password")
		if r.StatusCode != 429 || r.Header.Get("Retry-After") == "" {
			t.Fatalf("on %s after %d failures on both nodes: %d %s", name, limit, r.StatusCode, r.Body)
		}
	}
}
