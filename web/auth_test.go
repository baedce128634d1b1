package web_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"atrium/app"
	"atrium/app/identity"
	"atrium/webtest"
	"atrium/wire"
)

// oauth posts a form to the token endpoint.
func oauth(t *testing.T, s *webtest.Server, form url.Values, basicID, basicPW string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basicID != "" {
		req.SetBasicAuth(basicID, basicPW)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

func TestCredentialKinds(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	admin := s.Bootstrap("Operator", "admin@example.test", "admin")
	member := s.Bootstrap("Operator", "member@example.test", "member")

	// A service principal and its token, through the developer API.
	sp := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token,
		Body: map[string]any{"name": "ci", "scopes": []string{"contacts:read", "drive:read"}}})
	if sp.StatusCode != 201 {
		t.Fatalf("create sp: %d %s", sp.StatusCode, sp.Body)
	}
	spID := sp.JSON()["id"].(string)
	tok := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals/" + spID + "/tokens", Token: admin.Token,
		Body: map[string]any{"name": "ci"}})
	if tok.StatusCode != 201 {
		t.Fatalf("create sp token: %d %s", tok.StatusCode, tok.Body)
	}
	spToken := tok.JSON()["token"].(string)
	if !strings.HasPrefix(spToken, "atr_sp_") {
		t.Fatalf("sp token %q", spToken)
	}

	// A user JWT by token exchange of the member's PAT, and a service-principal
	// JWT by client credentials.
	st, ex := oauth(t, s, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token": {member.Token}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}, "", "")
	if st != 200 || ex["token_type"] != "Bearer" {
		t.Fatalf("token exchange: %d %v", st, ex)
	}
	userJWT := ex["access_token"].(string)
	st, cc := oauth(t, s, url.Values{"grant_type": {"client_credentials"}}, spID, spToken)
	if st != 200 {
		t.Fatalf("client credentials: %d %v", st, cc)
	}
	spJWT := cc["access_token"].(string)

	s.Run(t, []webtest.Scenario{
		{Name: "PAT", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: member.Token}, Status: 200,
			Contains: []string{`"credential":"pat"`, `"email":"member@example.test"`}},
		{Name: "service principal token", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: spToken}, Status: 200,
			Contains: []string{`"credential":"service_principal_token"`, `"user":null`, `"contacts:read"`}, NotContains: []string{"drive:write"}},
		{Name: "user JWT from token exchange", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: userJWT}, Status: 200,
			Contains: []string{`"credential":"jwt"`, `"email":"member@example.test"`}},
		{Name: "service principal JWT", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: spJWT}, Status: 200,
			Contains: []string{`"credential":"jwt"`, `"service_principal_id":"` + spID}},
		{Name: "app password refused on REST", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", BasicID: member.Email, BasicPW: member.AppPassword},
			Status: 401, Problem: "unauthorized"},
		{Name: "no credential", Request: webtest.Request{Method: "GET", Path: "/api/v1/me"}, Status: 401, Problem: "unauthorized",
			Headers: map[string]string{"WWW-Authenticate": `Bearer realm="atrium"`}},
		{Name: "unknown PAT", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: "atr_pat_" + strings.Repeat("0", 64)}, Status: 401, Problem: "unauthorized"},
		{Name: "garbage token", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: "hello"}, Status: 401, Problem: "unauthorized"},
		{Name: "tampered JWT", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: userJWT[:len(userJWT)-4] + "AAAA"}, Status: 401, Problem: "unauthorized"},
		{Name: "unknown scheme", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Header: map[string]string{"Authorization": "Digest x"}}, Status: 401, Problem: "unauthorized"},
		{Name: "member lacks admin:access", Request: webtest.Request{Method: "GET", Path: "/api/v1/audit", Token: member.Token}, Status: 403, Problem: "insufficient_scope"},
		{Name: "sp token lacks developer:manage", Request: webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals", Token: spToken}, Status: 403, Problem: "insufficient_scope"},
		{Name: "admin reads audit", Request: webtest.Request{Method: "GET", Path: "/api/v1/audit", Token: admin.Token}, Status: 200,
			Contains: []string{`"module":"developer"`, `"action":"service_principal.created"`}},
	})

	t.Run("scopes narrow by exchange", func(t *testing.T) {
		st, ex := oauth(t, s, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "scope": {"contacts:read"},
			"subject_token": {member.Token}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}, "", "")
		if st != 200 || ex["scope"] != "contacts:read" {
			t.Fatalf("%d %v", st, ex)
		}
		st, ex = oauth(t, s, url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "scope": {"admin:access"},
			"subject_token": {member.Token}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}, "", "")
		if st != 400 || ex["error"] != "invalid_scope" {
			t.Fatalf("widening: %d %v", st, ex)
		}
	})
	t.Run("client credentials with a wrong secret", func(t *testing.T) {
		st, res := oauth(t, s, url.Values{"grant_type": {"client_credentials"}}, spID, "atr_sp_nope")
		if st != 401 || res["error"] != "invalid_client" {
			t.Fatalf("%d %v", st, res)
		}
		st, res = oauth(t, s, url.Values{"grant_type": {"password"}}, "", "")
		if st != 400 || res["error"] != "unsupported_grant_type" {
			t.Fatalf("%d %v", st, res)
		}
	})
	t.Run("scoped PAT", func(t *testing.T) {
		tok := s.Token(member.Email, "contacts:read")
		res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: tok})
		if res.StatusCode != 200 || !strings.Contains(string(res.Body), `"scopes":["contacts:read"]`) {
			t.Fatalf("%d %s", res.StatusCode, res.Body)
		}
	})
	t.Run("discovery and JWKS", func(t *testing.T) {
		d := s.Do(webtest.Request{Method: "GET", Path: "/.well-known/openid-configuration"}).JSON()
		if d["issuer"] != s.URL || d["token_endpoint"] != s.URL+"/oauth/token" {
			t.Fatalf("discovery %v", d)
		}
		j := s.Do(webtest.Request{Method: "GET", Path: "/.well-known/jwks.json"}).JSON()
		if keys, _ := j["keys"].([]any); len(keys) != 1 {
			t.Fatalf("jwks %v", j)
		}
	})
}

func TestExpiredAndSuspended(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	admin := s.Bootstrap("Operator", "admin@example.test", "admin")
	ctx := context.Background()
	short, err := s.Main.Token(ctx, admin.Email, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	me := webtest.Request{Method: "GET", Path: "/api/v1/me", Token: short.Token}
	webtest.Check(t, s.Do(me), webtest.Scenario{Status: 200})
	s.Clock.Advance(2 * time.Hour)
	webtest.Check(t, s.Do(me), webtest.Scenario{Request: me, Status: 401, Problem: "unauthorized"})

	// Suspending the organisation refuses its credentials at once; activating
	// restores them.
	me.Token = admin.Token
	if err := s.Main.Identity.SetOrgStatus(ctx, "", admin.OrganizationID, identity.OrgSuspended); err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, s.Do(me), webtest.Scenario{Request: me, Status: 403, Problem: "org_suspended"})
	if err := s.Main.Identity.SetOrgStatus(ctx, "", admin.OrganizationID, identity.OrgActive); err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, s.Do(me), webtest.Scenario{Request: me, Status: 200})

	if err := s.Main.Identity.SetUserStatus(ctx, "", admin.UserID, identity.UserSuspended); err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, s.Do(me), webtest.Scenario{Request: me, Status: 403, Problem: "forbidden"})
}

// TestExternalOIDC verifies JWTs of a configured external issuer through its JWKS.
func TestExternalOIDC(t *testing.T) {
	t.Parallel()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b64 := func(n *big.Int) string { return base64.RawURLEncoding.EncodeToString(n.FillBytes(make([]byte, 32))) }
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]any{{"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256",
			"use": "sig", "x": b64(key.X), "y": b64(key.Y)}}})
	}))
	defer idp.Close()
	s := webtest.New(t, func(c *wire.Config) {
		c.OIDC.Issuer, c.OIDC.JWKSURL, c.OIDC.Audience = "https://idp.example", idp.URL, "atrium"
	})
	s.Bootstrap("Operator", "ext@example.test", "member")
	sign := func(iss, email string, exp time.Time) string {
		tk := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": iss, "aud": "atrium", "email": email,
			"scope": "contacts:read calendar:read", "exp": exp.Unix(), "sub": "x"})
		tk.Header["kid"] = "k1"
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s.Run(t, []webtest.Scenario{
		{Name: "valid", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: sign("https://idp.example", "ext@example.test", time.Now().Add(time.Hour))},
			Status: 200, Contains: []string{`"scopes":["calendar:read","contacts:read"]`}},
		{Name: "expired", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: sign("https://idp.example", "ext@example.test", time.Now().Add(-time.Hour))},
			Status: 401, Problem: "unauthorized"},
		{Name: "unknown user", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: sign("https://idp.example", "nobody@example.test", time.Now().Add(time.Hour))},
			Status: 401, Problem: "unauthorized"},
		{Name: "other issuer", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: sign("https://evil.example", "ext@example.test", time.Now().Add(time.Hour))},
			Status: 401, Problem: "unauthorized"},
	})
}

var _ = app.ScopeAdmin
