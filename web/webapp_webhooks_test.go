package web_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The admin console's webhooks and service principals pages: an admin sees
// them, anyone else gets 404, a signed-out visitor goes to sign-in, and what a
// receiver or an event carries shows as text.
func TestWebAppWebhooksPages(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	s := w.s
	w.start()
	if err := s.Main.Identity.SetAccountPassword(context.Background(), w.admin.UserID, testPassword); err != nil {
		t.Fatal(err)
	}
	person(t, s, "Hooks Inc", "member@hooks.test", "member")
	const evil = `<img src=x onerror=alert(1)>`

	// A receiver answering 500 with markup in its body and headers.
	r := newReceiver(t)
	r.setAnswer(func(_ int, rw http.ResponseWriter) bool {
		rw.Header().Set("X-Receiver", evil)
		rw.WriteHeader(http.StatusInternalServerError)
		_, _ = rw.Write([]byte("<script>alert('receiver')</script>"))
		return true
	})
	sub := w.subscribe(t, r, "drive.file.created")
	emit(t, s, w.admin.OrganizationID, "drive.file.created", map[string]any{"name": evil})
	eventually(t, "the failed attempt", func() bool {
		ds := w.deliveries(t, sub)
		return len(ds) == 1 && len(ds[0].AttemptLog) > 0
	})

	admin := newBrowser(t, s)
	admin.mustSignIn("admin@hooks.test", testPassword)
	// The admin's session may use the endpoints the pages' script calls.
	if st, body := admin.api("POST", "/api/v1/developer/service-principals", map[string]any{"name": evil, "scopes": []string{"contacts:read"}}, true); st != 201 {
		t.Fatalf("create principal with the session: %d %v", st, body)
	}
	if st, body := admin.api("PATCH", "/api/v1/webhooks/subscriptions/"+sub, map[string]any{"description": evil}, true); st != 200 {
		t.Fatalf("update webhook with the session: %d %v", st, body)
	}
	if st, _ := admin.api("PATCH", "/api/v1/webhooks/subscriptions/"+sub, map[string]any{"is_active": false}, false); st != 403 {
		t.Fatalf("PATCH without the anti-forgery token: %d, want 403", st)
	}

	pages := []string{"/admin/webhooks", "/admin/webhooks/" + sub, "/admin/principals"}
	for _, path := range pages {
		p := admin.get(path)
		if p.StatusCode != 200 {
			t.Fatalf("admin GET %s: %d %s", path, p.StatusCode, p.Body)
		}
		if strings.Contains(p.Body, "<img src=x") || strings.Contains(p.Body, "<script>alert") {
			t.Errorf("%s renders user text as markup", path)
		}
		if !strings.Contains(p.Body, `aria-label="Administration"`) || !strings.Contains(p.Body, `/assets/webhooks.js`) {
			t.Errorf("%s lacks the administration navigation or its script", path)
		}
	}
	list := admin.get("/admin/webhooks").Body
	for _, want := range []string{r.URL + "/hook", "&lt;img src=x onerror=alert(1)&gt;", "drive.file.created", "New webhook", "Pause", "Rotate secret"} {
		if !strings.Contains(list, want) {
			t.Errorf("/admin/webhooks lacks %q", want)
		}
	}
	deliveries := admin.get("/admin/webhooks/" + sub).Body
	for _, want := range []string{
		"&lt;img src=x onerror=alert(1)&gt;",                     // the payload and the receiver's header
		"&lt;script&gt;alert(&#39;receiver&#39;)&lt;/script&gt;", // the receiver's body
		"X-Service-Signature-256", "HTTP 500", `role="img"`,
	} {
		if !strings.Contains(deliveries, want) {
			t.Errorf("/admin/webhooks/{id} lacks %q", want)
		}
	}
	// The chart counts today's failed attempt (the figures table).
	today := time.Now().UTC().Format("Mon 2")
	if m := regexp.MustCompile(`<time datetime="[0-9-]+">` + today + `</time></th><td>0</td><td>([1-9][0-9]*)</td>`).FindStringSubmatch(deliveries); m == nil {
		t.Errorf("/admin/webhooks/{id}: the chart's figures lack today's failed attempt")
	}
	if !strings.Contains(deliveries, "Every attempt of the last 7 days") || strings.Contains(deliveries, "most recent deliveries;") {
		t.Error("/admin/webhooks/{id}: the chart's hint, or a 'more deliveries' hint with one delivery")
	}
	if !strings.Contains(admin.get("/admin/principals").Body, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("/admin/principals does not show the principal's name as text")
	}
	if p := admin.get("/admin/webhooks/01a20000-0000-7000-8000-000000000000"); p.StatusCode != 404 {
		t.Errorf("unknown webhook: %d, want 404", p.StatusCode)
	}

	member := newBrowser(t, s)
	member.mustSignIn("member@hooks.test", testPassword)
	anon := newBrowser(t, s)
	for _, path := range pages {
		if p := member.get(path); p.StatusCode != 404 || strings.Contains(p.Body, r.URL) {
			t.Errorf("member GET %s: %d, want 404 without the page", path, p.StatusCode)
		}
		p := anon.get(path)
		if loc := p.Header.Get("Location"); p.StatusCode != 303 || !strings.HasPrefix(loc, "/signin?next=") {
			t.Errorf("signed-out GET %s: %d %q, want 303 to sign-in", path, p.StatusCode, loc)
		}
	}
}
