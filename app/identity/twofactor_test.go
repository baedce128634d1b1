package identity_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/storage/sqldb"
)

// rfc6238 computes a TOTP code independently of the library the service uses:
// HMAC-SHA-1 of the 30-second step, dynamic truncation, 6 digits.
func rfc6238(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(secret))
	if err != nil {
		t.Fatalf("secret %q is not base32: %v", secret, err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

func TestRFC6238Vector(t *testing.T) {
	t.Parallel()
	// RFC 6238 appendix B, SHA-1, truncated to 6 digits.
	secret := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("12345678901234567890"))
	for at, want := range map[int64]string{59: "287082", 1111111109: "081804", 1234567890: "005924", 2000000000: "279037"} {
		if got := rfc6238(t, secret, time.Unix(at, 0)); got != want {
			t.Errorf("T=%d: %s, want %s", at, got, want)
		}
	}
}

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type tfEnv struct {
	s      *identity.Service
	store  sqldb.IdentityStore
	audit  sqldb.Auditor
	clock  *testClock
	user   identity.User
	p      *app.Principal
	email  string
	passwd string
}

const tfPassword = "a long account password"

// newTFEnv makes a service on a clock the test moves, a person with an account
// password, and that person's session principal.
func newTFEnv(t *testing.T) *tfEnv {
	t.Helper()
	ctx := context.Background()
	db := openDB(t)
	clock := &testClock{now: time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)}
	store := sqldb.IdentityStore{DB: db}
	s, err := identity.NewService(ctx, store, sqldb.Auditor{DB: db}, clock.Now, "http://atrium.test")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Bootstrap(ctx, "Org", "tf@example.test", app.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAccountPassword(ctx, res.User.ID, tfPassword); err != nil {
		t.Fatal(err)
	}
	e := &tfEnv{s: s, store: store, audit: sqldb.Auditor{DB: db}, clock: clock, user: res.User, email: "tf@example.test", passwd: tfPassword}
	e.p = e.session(t)
	return e
}

// session signs in with the password alone (two-factor sign-in off).
func (e *tfEnv) session(t *testing.T) *app.Principal {
	t.Helper()
	ctx := context.Background()
	r, err := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd})
	if err != nil || r.Secret == "" {
		t.Fatalf("sign in: %+v %v", r, err)
	}
	p, err := e.s.AuthenticateSession(ctx, r.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// enable sets up and confirms two-factor sign-in; it returns the secret and
// the recovery codes.
func (e *tfEnv) enable(t *testing.T) (string, []string) {
	t.Helper()
	ctx := context.Background()
	setup, err := e.s.SetUpTwoFactor(ctx, e.p)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := e.s.EnableTwoFactor(ctx, e.p, rfc6238(t, setup.Secret, e.clock.Now()))
	if err != nil {
		t.Fatal(err)
	}
	// The code just used is spent: move to the next step.
	e.clock.Advance(30 * time.Second)
	return setup.Secret, codes
}

func (e *tfEnv) actions(t *testing.T) []string {
	t.Helper()
	list, err := e.audit.List(context.Background(), e.user.OrgID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range list {
		out = append(out, a.Action)
	}
	return out
}

func TestTwoFactorEnrol(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newTFEnv(t)
	setup, err := e.s.SetUpTwoFactor(ctx, e.p)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[A-Z2-7]{32}$`).MatchString(setup.Secret) {
		t.Fatalf("secret %q: want 32 base32 characters (160 bits)", setup.Secret)
	}
	u, err := url.Parse(setup.URI)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/Atrium:tf@example.test" || q.Get("secret") != setup.Secret ||
		q.Get("issuer") != "Atrium" || q.Get("digits") != "6" || q.Get("period") != "30" || q.Get("algorithm") != "SHA1" {
		t.Fatalf("URI %s", setup.URI)
	}
	// Set up but not confirmed: sign-in is unchanged and the state shows the setup.
	if r, err := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd}); err != nil || r.Challenge != "" || r.Secret == "" {
		t.Fatalf("sign in before confirmation: %+v %v", r, err)
	}
	if st, _ := e.s.MyTwoFactor(ctx, e.p); st.Enabled || st.Setup == nil || st.Setup.Secret != setup.Secret {
		t.Fatalf("state before confirmation: %+v", st)
	}

	now := e.clock.Now()
	current := rfc6238(t, setup.Secret, now)
	wrong := fmt.Sprintf("%06d", (int(current[5]-'0')+1)%10+int(current[0]-'0')*100000)
	for _, c := range []struct {
		name, code string
	}{
		{"empty", ""},
		{"letters", "abcdef"},
		{"seven digits", current + "1"},
		{"wrong code", wrong},
		{"code of two steps ago", rfc6238(t, setup.Secret, now.Add(-60*time.Second))},
		{"code of two steps ahead", rfc6238(t, setup.Secret, now.Add(60*time.Second))},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.code == current {
				t.Skip("collides with the current code")
			}
			_, err := e.s.EnableTwoFactor(ctx, e.p, c.code)
			if app.ErrorCode(err) != app.EValidation {
				t.Fatalf("err %v, want validation_failed", err)
			}
			if on, _ := e.s.TwoFactorOn(ctx, e.user.ID); on {
				t.Fatal("turned on by a wrong code")
			}
		})
	}
	// A code of the previous step (a phone's clock a little behind), typed with a space.
	prev := rfc6238(t, setup.Secret, now.Add(-30*time.Second))
	codes, err := e.s.EnableTwoFactor(ctx, e.p, prev[:3]+" "+prev[3:])
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) != 10 {
		t.Fatalf("%d recovery codes", len(codes))
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if !regexp.MustCompile(`^[0-9a-f]{5}-[0-9a-f]{5}$`).MatchString(c) || seen[c] {
			t.Fatalf("recovery code %q (seen before: %v)", c, seen[c])
		}
		seen[c] = true
	}
	st, err := e.s.MyTwoFactor(ctx, e.p)
	if err != nil || !st.Enabled || st.RecoveryCodesLeft != 10 || st.Setup != nil {
		t.Fatalf("state: %+v %v", st, err)
	}
	if _, err := e.s.SetUpTwoFactor(ctx, e.p); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("set up again while on: %v", err)
	}
	if _, err := e.s.EnableTwoFactor(ctx, e.p, current); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("enable again: %v", err)
	}
	// Recovery codes are stored as keyed hashes only.
	for _, raw := range []string{codes[0], strings.ReplaceAll(codes[0], "-", "")} {
		if err := e.store.UseRecoveryCode(ctx, e.user.ID, []byte(raw)); app.ErrorCode(err) != app.ENotFound {
			t.Fatalf("a recovery code is stored as is: %v", err)
		}
	}
	if a := e.actions(t); !contains(a, "user.two_factor_enabled") {
		t.Fatalf("audit %v", a)
	}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestTwoFactorSignIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newTFEnv(t)
	secret, recovery := e.enable(t)

	begin := func(t *testing.T) string {
		t.Helper()
		r, err := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd})
		if err != nil || r.Challenge == "" || r.Secret != "" || r.ChallengeExpiresAt.Sub(e.clock.Now()) != 5*time.Minute {
			t.Fatalf("password step: %+v %v", r, err)
		}
		return r.Challenge
	}
	complete := func(ch, code string) error {
		secret, _, err := e.s.CompleteSignIn(ctx, identity.CompleteSignInInput{Challenge: ch, Code: code, UserAgent: "test"})
		if err == nil {
			if _, err := e.s.AuthenticateSession(ctx, secret); err != nil {
				return fmt.Errorf("the session does not work: %w", err)
			}
		}
		return err
	}
	// The password alone no longer makes a session, also through SignIn.
	if _, _, err := e.s.SignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd}); app.ErrorCode(err) != app.EUnauthorized {
		t.Fatalf("SignIn with two-factor on: %v", err)
	}
	if _, err := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: "wrong password!"}); app.ErrorCode(err) != app.EUnauthorized {
		t.Fatalf("wrong password: %v", err)
	}

	for _, c := range []struct {
		name string
		// run does the steps of the case and returns the last answer.
		run  func(t *testing.T) error
		want error
	}{
		{"current code", func(t *testing.T) error { return complete(begin(t), rfc6238(t, secret, e.clock.Now())) }, nil},
		{"the same code again (replay, still within the drift window)", func(t *testing.T) error {
			return complete(begin(t), rfc6238(t, secret, e.clock.Now().Add(-30*time.Second)))
		}, identity.ErrBadCode},
		{"code of the next step (clock ahead)", func(t *testing.T) error {
			return complete(begin(t), rfc6238(t, secret, e.clock.Now().Add(30*time.Second)))
		}, nil},
		{"an older code after a newer one", func(t *testing.T) error {
			e.clock.Advance(30 * time.Second)
			return complete(begin(t), rfc6238(t, secret, e.clock.Now().Add(-30*time.Second)))
		}, identity.ErrBadCode},
		{"code two steps old", func(t *testing.T) error {
			e.clock.Advance(90 * time.Second)
			return complete(begin(t), rfc6238(t, secret, e.clock.Now().Add(-60*time.Second)))
		}, identity.ErrBadCode},
		{"wrong code", func(t *testing.T) error { return complete(begin(t), "000000") }, identity.ErrBadCode},
		{"empty code", func(t *testing.T) error { return complete(begin(t), "") }, identity.ErrBadCode},
		{"recovery code", func(t *testing.T) error { return complete(begin(t), recovery[0]) }, nil},
		{"the same recovery code again", func(t *testing.T) error { return complete(begin(t), recovery[0]) }, identity.ErrBadCode},
		{"recovery code in capitals without the dash", func(t *testing.T) error {
			return complete(begin(t), strings.ToUpper(strings.ReplaceAll(recovery[1], "-", "")))
		}, nil},
		{"unknown challenge", func(t *testing.T) error { return complete(identity.ChallengePrefix+"00", recovery[2]) }, identity.ErrSignInExpired},
		{"challenge used twice", func(t *testing.T) error {
			ch := begin(t)
			if err := complete(ch, recovery[2]); err != nil {
				t.Fatal(err)
			}
			return complete(ch, recovery[3])
		}, identity.ErrSignInExpired},
		{"challenge after 5 minutes", func(t *testing.T) error {
			ch := begin(t)
			e.clock.Advance(5 * time.Minute)
			return complete(ch, recovery[3])
		}, identity.ErrSignInExpired},
		{"challenge just before 5 minutes", func(t *testing.T) error {
			ch := begin(t)
			e.clock.Advance(5*time.Minute - time.Second)
			return complete(ch, recovery[3])
		}, nil},
		{"challenge after 5 wrong codes", func(t *testing.T) error {
			ch := begin(t)
			for i := 0; i < 5; i++ {
				if err := complete(ch, "111111"); !errors.Is(err, identity.ErrBadCode) {
					t.Fatalf("attempt %d: %v", i, err)
				}
			}
			return complete(ch, recovery[4])
		}, identity.ErrSignInExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.clock.Advance(30 * time.Second) // a fresh step for each case
			if err := c.run(t); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	// Codes used: 0, 1, 2 and 3; 4 was not.
	if st, _ := e.s.MyTwoFactor(ctx, e.p); st.RecoveryCodesLeft != 6 {
		t.Fatalf("recovery codes left %d, want 6", st.RecoveryCodesLeft)
	}
	if a := e.actions(t); !contains(a, "user.recovery_code_used") {
		t.Fatalf("audit %v", a)
	}

	// A suspended user (or organisation) cannot sign in, with the right code either.
	e.clock.Advance(30 * time.Second)
	ch := begin(t)
	if err := e.s.SetUserStatus(ctx, "", e.user.ID, identity.UserSuspended); err != nil {
		t.Fatal(err)
	}
	if err := complete(ch, rfc6238(t, secret, e.clock.Now())); app.ErrorCode(err) != app.EForbidden {
		t.Fatalf("suspended user at the code step: %v", err)
	}
	if _, err := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd}); app.ErrorCode(err) != app.EForbidden {
		t.Fatalf("suspended user at the password step: %v", err)
	}
}

func TestTwoFactorRegenerateAndDisable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newTFEnv(t)
	if _, err := e.s.RegenerateRecoveryCodes(ctx, e.p, e.passwd); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("regenerate while off: %v", err)
	}
	if err := e.s.DisableTwoFactor(ctx, e.p, e.passwd); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("disable while off: %v", err)
	}
	secret, old := e.enable(t)

	for _, c := range []struct {
		name, proof string
		code        string
	}{
		{"wrong password", "not the password", app.EValidation},
		{"wrong code", "000000", app.EValidation},
		{"empty", "", app.EValidation},
		{"account password", e.passwd, ""},
		{"current code", rfc6238(t, secret, e.clock.Now()), ""},
		{"the same code again", rfc6238(t, secret, e.clock.Now()), app.EValidation},
	} {
		t.Run("regenerate with "+c.name, func(t *testing.T) {
			before, _ := e.s.MyTwoFactor(ctx, e.p)
			codes, err := e.s.RegenerateRecoveryCodes(ctx, e.p, c.proof)
			if app.ErrorCode(err) != c.code {
				t.Fatalf("err %v, want %q", err, c.code)
			}
			if c.code != "" {
				return
			}
			if len(codes) != 10 || codes[0] == old[0] {
				t.Fatalf("codes %v", codes)
			}
			_ = before
			old = codes
		})
	}
	// Only the newest codes work.
	r, _ := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd})
	e.clock.Advance(30 * time.Second)
	if _, _, err := e.s.CompleteSignIn(ctx, identity.CompleteSignInInput{Challenge: r.Challenge, Code: old[9]}); err != nil {
		t.Fatalf("newest recovery code: %v", err)
	}
	if a := e.actions(t); !contains(a, "user.recovery_codes_regenerated") {
		t.Fatalf("audit %v", a)
	}

	if err := e.s.DisableTwoFactor(ctx, e.p, "not the password"); app.ErrorCode(err) != app.EValidation {
		t.Fatalf("disable with a wrong password: %v", err)
	}
	if on, _ := e.s.TwoFactorOn(ctx, e.user.ID); !on {
		t.Fatal("turned off by a wrong password")
	}
	// A second step pending when it is turned off ends: the password decides again.
	pending, _ := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd})
	if err := e.s.DisableTwoFactor(ctx, e.p, e.passwd); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.CompleteSignIn(ctx, identity.CompleteSignInInput{Challenge: pending.Challenge, Code: old[8]}); !errors.Is(err, identity.ErrSignInExpired) {
		t.Fatalf("step pending across the switch-off: %v", err)
	}
	if r, err := e.s.BeginSignIn(ctx, identity.SignInInput{Email: e.email, Password: e.passwd}); err != nil || r.Secret == "" || r.Challenge != "" {
		t.Fatalf("sign in after turning off: %+v %v", r, err)
	}
	if st, _ := e.s.MyTwoFactor(ctx, e.p); st.Enabled || st.Setup != nil || st.RecoveryCodesLeft != 0 {
		t.Fatalf("state after turning off: %+v", st)
	}
	if a := e.actions(t); !contains(a, "user.two_factor_disabled") {
		t.Fatalf("audit %v", a)
	}
}
