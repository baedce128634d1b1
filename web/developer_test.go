package web_test

import (
	"testing"

	"atrium/webtest"
)

// A service principal's token is revoked alone (401 at once, even just after
// use), another principal's token id is 404, and deleting the principal stops
// its remaining tokens at once.
func TestServicePrincipalTokenRevoke(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	admin := s.Bootstrap("Operator", "admin@example.test", "admin")
	member := s.Bootstrap("Operator", "member@example.test", "member")
	other := s.Bootstrap("Elsewhere", "admin@elsewhere.test", "admin")
	newSP := func(tok, name string) string {
		t.Helper()
		r := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: tok,
			Body: map[string]any{"name": name, "scopes": []string{"contacts:read"}}})
		if r.StatusCode != 201 {
			t.Fatalf("create sp: %d %s", r.StatusCode, r.Body)
		}
		return r.JSON()["id"].(string)
	}
	newToken := func(tok, spID string) (string, string) {
		t.Helper()
		r := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals/" + spID + "/tokens", Token: tok,
			Body: map[string]any{"name": "ci"}})
		if r.StatusCode != 201 {
			t.Fatalf("create sp token: %d %s", r.StatusCode, r.Body)
		}
		m := r.JSON()
		return m["id"].(string), m["token"].(string)
	}
	sp := newSP(admin.Token, "ci")
	id1, tok1 := newToken(admin.Token, sp)
	_, tok2 := newToken(admin.Token, sp)
	otherSP := newSP(other.Token, "theirs")
	otherID, _ := newToken(other.Token, otherSP)
	path := "/api/v1/developer/service-principals/" + sp + "/tokens/"
	me := func(tok string) webtest.Request {
		return webtest.Request{Method: "GET", Path: "/api/v1/me", Token: tok}
	}
	s.Run(t, []webtest.Scenario{
		{Name: "token works (and is cached)", Request: me(tok1), Status: 200},
		{Name: "member may not revoke", Request: webtest.Request{Method: "DELETE", Path: path + id1, Token: member.Token}, Status: 403, Problem: "insufficient_scope"},
		{Name: "another organisation's principal is 404", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/developer/service-principals/" + otherSP + "/tokens/" + otherID, Token: admin.Token}, Status: 404, Problem: "not_found"},
		{Name: "another principal's token is 404", Request: webtest.Request{Method: "DELETE", Path: path + otherID, Token: admin.Token}, Status: 404, Problem: "not_found"},
		{Name: "revoke", Request: webtest.Request{Method: "DELETE", Path: path + id1, Token: admin.Token}, Status: 204},
		{Name: "revoked token is 401 at once", Request: me(tok1), Status: 401, Problem: "unauthorized"},
		{Name: "revoke again is 404", Request: webtest.Request{Method: "DELETE", Path: path + id1, Token: admin.Token}, Status: 404, Problem: "not_found"},
		{Name: "the other token still works", Request: me(tok2), Status: 200},
		{Name: "listed tokens lose the revoked one", Request: webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals/" + sp + "/tokens", Token: admin.Token},
			Status: 200, NotContains: []string{id1}},
		{Name: "delete the principal", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/developer/service-principals/" + sp, Token: admin.Token}, Status: 204},
		{Name: "its tokens stop at once", Request: me(tok2), Status: 401, Problem: "unauthorized"},
		{Name: "audited", Request: webtest.Request{Method: "GET", Path: "/api/v1/audit", Token: admin.Token}, Status: 200,
			Contains: []string{`"action":"service_principal_token.revoked"`, `"action":"service_principal.deleted"`}},
	})
}
