package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"atrium/app/identity"
	"atrium/webtest"
	"atrium/wire"
)

// atrium bootstrap gives an operator without an account password a way into
// the web app: a password reset link (password_url) on the server's public
// URL, which sets the password once; the next bootstrap of that user, who now
// has a password, prints none. A second bootstrap with another address adds a
// user to the same top-level organisation.
func TestBootstrapPrintsAPasswordLink(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	first := s.Bootstrap("Operator", "admin@op.test", "admin")

	out, errOut, err := run(t, "bootstrap", "--data", s.Data, "--public-url", s.URL, "--json", "--admin-email", "staff@op.test")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, errOut)
	}
	var o wire.BootstrapOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("bootstrap --json: %v: %s", err, out)
	}
	if o.OrganizationID != first.OrganizationID {
		t.Errorf("the second user is in organisation %s, want the operator organisation %s", o.OrganizationID, first.OrganizationID)
	}
	if !strings.HasPrefix(o.PasswordURL, s.URL+"/reset/") {
		t.Fatalf("password_url %q, want a link under %s/reset/", o.PasswordURL, s.URL)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: strings.TrimPrefix(o.PasswordURL, s.URL)}),
		webtest.Scenario{Status: 200, Contains: []string{"Reset your password"}})

	// No password yet: sign-in is refused.
	if _, _, err := s.Main.Identity.SignIn(ctx, identity.SignInInput{Email: "staff@op.test", Password: "operator password 1"}); err == nil {
		t.Fatal("signed in before a password was set")
	}
	token := o.PasswordURL[strings.LastIndexByte(o.PasswordURL, '/')+1:]
	accept := webtest.Request{Method: "POST", Path: "/api/v1/password-resets/" + token + "/accept", Body: map[string]any{"password": "operator password 1"}}
	webtest.Check(t, s.Do(accept), webtest.Scenario{Status: 200, Contains: []string{`"email":"staff@op.test"`}})
	if _, _, err := s.Main.Identity.SignIn(ctx, identity.SignInInput{Email: "staff@op.test", Password: "operator password 1"}); err != nil {
		t.Fatalf("sign-in with the password set through the link: %v", err)
	}
	// One use.
	webtest.Check(t, s.Do(accept), webtest.Scenario{Status: 404})

	// The user has a password now: no link, in JSON nor in the human output.
	out, _, err = run(t, "bootstrap", "--data", s.Data, "--public-url", s.URL, "--json", "--admin-email", "staff@op.test")
	if err != nil || strings.Contains(out, "password_url") {
		t.Fatalf("bootstrap of a user with a password: %v %s", err, out)
	}
	out, _, err = run(t, "bootstrap", "--data", s.Data, "--public-url", s.URL, "--admin-email", "staff@op.test")
	if err != nil || strings.Contains(out, "Set your password") {
		t.Fatalf("bootstrap of a user with a password: %v %s", err, out)
	}

	// The human output of a new user says where to set the password.
	out, _, err = run(t, "bootstrap", "--data", s.Data, "--public-url", s.URL, "--admin-email", "third@op.test")
	if err != nil || !strings.Contains(out, "Set your password at "+s.URL+"/reset/") {
		t.Fatalf("bootstrap human output: %v %s", err, out)
	}
}

// The link lives as long as any password reset link (24 hours), and a newer
// one replaces the older.
func TestBootstrapPasswordLinkExpires(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	accept := func(link string) webtest.Request {
		return webtest.Request{Method: "POST", Path: "/api/v1/password-resets/" + link[strings.LastIndexByte(link, '/')+1:] + "/accept",
			Body: map[string]any{"password": "operator password 1"}}
	}
	old := s.Bootstrap("Operator", "late@op.test", "admin").PasswordURL
	link := s.Bootstrap("Operator", "late@op.test", "admin").PasswordURL
	if old == "" || link == "" || old == link {
		t.Fatalf("password links %q then %q", old, link)
	}
	webtest.Check(t, s.Do(accept(old)), webtest.Scenario{Status: 404})
	s.Clock.Advance(24*time.Hour + time.Minute)
	webtest.Check(t, s.Do(accept(link)), webtest.Scenario{Status: 404})
}
