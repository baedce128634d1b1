package identity_test

import (
	"context"
	"strings"
	"testing"

	"atrium/app"
	"atrium/app/identity"
	"atrium/storage/sqldb"
	"atrium/storage/sqldb/sqldbtest"
)

// openDB opens a fresh database (SQLite, or PostgreSQL with
// ATRIUM_TEST_DATABASE_URL), closed at the test's end.
func openDB(t *testing.T) *sqldb.DB {
	t.Helper()
	return sqldbtest.Open(t)
}

func newService(t *testing.T) (*identity.Service, sqldb.IdentityStore) {
	t.Helper()
	ctx := context.Background()
	db := openDB(t)
	store := sqldb.IdentityStore{DB: db}
	s, err := identity.NewService(ctx, store, sqldb.Auditor{DB: db}, nil, "http://atrium.test")
	if err != nil {
		t.Fatal(err)
	}
	return s, store
}

func TestAppPasswordsAndAccountPasswords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, store := newService(t)
	res, err := s.Bootstrap(ctx, "Operator", "dav@example.test", app.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := s.CreateAppPassword(ctx, res.User.ID, "phone")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.ReplaceAll(secret, "-", "")); n*4 < 128 {
		t.Fatalf("app password has %d bits", n*4)
	}
	// An account password set on a user with the same e-mail is not a DAV credential.
	hash, _ := identity.HashPassword("account-password-1")
	other := identity.User{ID: app.NewID(), OrgID: res.Org.ID, Email: "acct@example.test", RoleSlug: app.RoleMember, Status: identity.UserActive}
	if err := store.CreateUser(ctx, other, hash); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, email, password string
		ok                    bool
	}{
		{"app password", "dav@example.test", secret, true},
		{"app password typed without dashes, in capitals", "DAV@example.test", strings.ToUpper(strings.ReplaceAll(secret, "-", "")), true},
		{"wrong app password", "dav@example.test", wrongLast(secret), false},
		{"another user's e-mail", "acct@example.test", secret, false},
		{"account password refused", "acct@example.test", "account-password-1", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := s.AuthenticateBasic(ctx, tt.email, tt.password)
			if tt.ok != (err == nil) {
				t.Fatalf("err %v", err)
			}
			if tt.ok && (p.UserID != res.User.ID || p.Credential != app.CredAppPassword || !p.Scopes.Has(app.ScopeDriveWrite) || p.Scopes.Has(app.ScopeAdmin)) {
				t.Fatalf("principal %+v", p)
			}
			if !tt.ok && app.ErrorCode(err) != app.EUnauthorized {
				t.Fatalf("code %q", app.ErrorCode(err))
			}
		})
	}
}

// wrongLast returns secret with its last character changed to another one.
func wrongLast(secret string) string {
	last := "0"
	if strings.HasSuffix(secret, "0") {
		last = "1"
	}
	return secret[:len(secret)-1] + last
}

func TestTokenScopesFollowTheRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newService(t)
	res, err := s.Bootstrap(ctx, "Operator", "m@example.test", app.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateToken(ctx, identity.CreateTokenInput{UserID: res.User.ID, Scopes: []string{app.ScopeAdmin}}); app.ErrorCode(err) != app.EForbidden {
		t.Fatalf("member got admin:access: %v", err)
	}
	if _, _, err := s.CreateToken(ctx, identity.CreateTokenInput{UserID: res.User.ID, Scopes: []string{"made:up"}}); app.ErrorCode(err) != app.EValidation {
		t.Fatalf("unknown scope: %v", err)
	}
	tok, _, err := s.CreateToken(ctx, identity.CreateTokenInput{UserID: res.User.ID})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Authenticate(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Scopes.Has(app.ScopeContactsRead) || p.Scopes.Has(app.ScopeWebhooksManage) || p.Scopes.Has(app.ScopePartnerOrgsRead) {
		t.Fatalf("member scopes %v", p.Scopes.List())
	}
	admin, _ := s.Bootstrap(ctx, "Operator", "a@example.test", app.RoleAdmin)
	tok, _, _ = s.CreateToken(ctx, identity.CreateTokenInput{UserID: admin.User.ID})
	p, _ = s.Authenticate(ctx, tok)
	for _, sc := range []string{app.ScopeAdmin, app.ScopeWebhooksManage, app.ScopePartnerOrgsManage, app.ScopePartnerUsersRead} {
		if !p.Scopes.Has(sc) {
			t.Errorf("reseller admin lacks %s", sc)
		}
	}
}

func TestScopeImplication(t *testing.T) {
	t.Parallel()
	tests := []struct {
		have []string
		want string
		ok   bool
	}{
		{[]string{"drive:write"}, "drive:read", true},
		{[]string{"drive:read"}, "drive:write", false},
		{[]string{"partner:orgs:manage"}, "partner:orgs:write", true},
		{[]string{"partner:orgs:manage"}, "partner:orgs:read", true},
		{[]string{"partner:orgs:write"}, "partner:orgs:read", true},
		{[]string{"partner:orgs:write"}, "partner:orgs:manage", false},
		{[]string{"partner:orgs:manage"}, "partner:users:read", false},
		{[]string{"admin:access"}, "webhooks:manage", false},
	}
	for _, tt := range tests {
		if got := app.NewScopes(tt.have...).Has(tt.want); got != tt.ok {
			t.Errorf("%v has %s: got %v", tt.have, tt.want, got)
		}
	}
}
