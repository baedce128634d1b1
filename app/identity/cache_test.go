package identity_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/storage/sqldb"
)

// countingStore counts the credential lookups that reach the database.
type countingStore struct {
	sqldb.IdentityStore
	lookups *atomic.Int32
}

func (s countingStore) CredentialByHash(ctx context.Context, kind string, hash []byte) (identity.Credential, error) {
	s.lookups.Add(1)
	return s.IdentityStore.CredentialByHash(ctx, kind, hash)
}

func (s countingStore) AppPasswordCredential(ctx context.Context, email string, hash []byte) (identity.Credential, error) {
	s.lookups.Add(1)
	return s.IdentityStore.AppPasswordCredential(ctx, email, hash)
}

// A token and an app password are verified from memory after their first
// use (the e-mail address and the app password as typed need not match the
// first use's case and dashes); a wrong one goes to the database every time,
// and a change of credentials sends the next use there again.
func TestCredentialCacheHits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	var lookups atomic.Int32
	s, err := identity.NewService(ctx, countingStore{sqldb.IdentityStore{DB: db}, &lookups}, sqldb.Auditor{DB: db}, nil, "http://atrium.test")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Bootstrap(ctx, "Cache Org", "cache@example.test", app.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	pat, _, err := s.CreateToken(ctx, identity.CreateTokenInput{UserID: res.User.ID, Name: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	pw, _, err := s.CreateAppPassword(ctx, res.User.ID, "phone")
	if err != nil {
		t.Fatal(err)
	}
	bearer := func(secret string) func() error {
		return func() error { _, err := s.Authenticate(ctx, secret); return err }
	}
	basic := func(email, password string) func() error {
		return func() error { _, err := s.AuthenticateBasic(ctx, email, password); return err }
	}
	steps := []struct {
		name        string
		auth        func() error
		ok          bool
		wantLookups int32
	}{
		{"a token's first use", bearer(pat), true, 1},
		{"its second", bearer(pat), true, 0},
		{"its third", bearer(pat), true, 0},
		{"an app password's first use", basic("cache@example.test", pw), true, 1},
		{"again, typed in capitals without dashes", basic(" cache@example.test", strings.ToUpper(strings.ReplaceAll(pw, "-", ""))), true, 0},
		{"another user's address with it", basic("other@example.test", pw), false, 1},
		{"a wrong token", bearer(pat + "x"), false, 1},
		{"the wrong token again", bearer(pat + "x"), false, 1},
	}
	for _, st := range steps {
		before := lookups.Load()
		if err := st.auth(); (err == nil) != st.ok {
			t.Fatalf("%s: err %v, want ok %v", st.name, err, st.ok)
		}
		if got := lookups.Load() - before; got != st.wantLookups {
			t.Errorf("%s: %d database lookups, want %d", st.name, got, st.wantLookups)
		}
	}
	s.CredentialsChanged()
	before := lookups.Load()
	if err := bearer(pat)(); err != nil {
		t.Fatal(err)
	}
	if err := basic("cache@example.test", pw)(); err != nil {
		t.Fatal(err)
	}
	if got := lookups.Load() - before; got != 2 {
		t.Errorf("after a change of credentials: %d database lookups, want 2", got)
	}
}

// A cached credential is read from the database again once it is 1.5
// seconds old: a change made on another node (which cannot empty this one's
// cache) is seen by the requests that start after that, so that a request
// accepted on the old answer still has half a second to do its work within
// the 2 seconds the contract allows.
func TestCredentialCacheLifetime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	var lookups atomic.Int32
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, err := identity.NewService(ctx, countingStore{sqldb.IdentityStore{DB: db}, &lookups}, sqldb.Auditor{DB: db}, clock, "http://atrium.test")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Bootstrap(ctx, "Cache Org", "ttl@example.test", app.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	pat, _, err := s.CreateToken(ctx, identity.CreateTokenInput{UserID: res.User.ID, Name: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct {
		after       time.Duration
		wantLookups int32
	}{{0, 1}, {1400 * time.Millisecond, 0}, {101 * time.Millisecond, 1}} { // the clock moves on by after
		mu.Lock()
		now = now.Add(st.after)
		mu.Unlock()
		before := lookups.Load()
		if _, err := s.Authenticate(ctx, pat); err != nil {
			t.Fatal(err)
		}
		if got := lookups.Load() - before; got != st.wantLookups {
			t.Errorf("%v later: %d database lookups, want %d", st.after, got, st.wantLookups)
		}
	}
}
