package web_test

import (
	"context"
	"net/http"
	"testing"

	"atrium/web/ui"
	"atrium/webtest"
)

// TestSessionCookieOnTheAPI: the web app's pages call the REST API with the
// session cookie they hold; a change made that way needs the session's
// anti-forgery token and this origin, and a session that ended is no
// credential. The file mount does not take the cookie.
func TestSessionCookieOnTheAPI(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Cookie Org", "cookie@example.test", "member")
	b := newBrowser(t, s)
	b.mustSignIn("cookie@example.test", testPassword)
	secret := b.cookie(ui.SessionCookie).Value
	csrf := s.Main.Identity.SessionCSRF(secret)
	jar := func(h map[string]string) map[string]string {
		out := map[string]string{"Cookie": ui.SessionCookie + "=" + secret}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	folder := map[string]any{"name": "Made in the browser"}
	s.Run(t, []webtest.Scenario{
		{Name: "read with the cookie", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Header: jar(nil)},
			Status: 200, Contains: []string{"cookie@example.test"}},
		{Name: "change without the token", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders", Header: jar(nil), Body: folder},
			Status: 403, Problem: "forbidden", Contains: []string{"X-CSRF-Token"}},
		{Name: "change with another session's token", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders",
			Header: jar(map[string]string{"X-CSRF-Token": s.Main.Identity.SessionCSRF("another")}), Body: folder},
			Status: 403, Problem: "forbidden"},
		{Name: "change from another site", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders",
			Header: jar(map[string]string{"X-CSRF-Token": csrf, "Origin": "http://evil.example"}), Body: folder},
			Status: 403, Problem: "forbidden"},
		{Name: "change with the token", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/folders",
			Header: jar(map[string]string{"X-CSRF-Token": csrf, "Origin": s.URL}), Body: folder},
			Status: 201, Contains: []string{"Made in the browser"}},
		{Name: "the mount takes no cookie", Request: webtest.Request{Method: "PROPFIND", Path: "/webdav/", Header: jar(map[string]string{"Depth": "0"})},
			Status: 401},
	})
	u, err := s.Main.Identity.UserByEmail(context.Background(), "cookie@example.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Main.Identity.EndUserSessions(context.Background(), u.ID, ""); err != nil {
		t.Fatal(err)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "a session that ended", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Header: jar(nil)},
			Status: http.StatusUnauthorized, Problem: "unauthorized"},
	})
}
