package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"atrium/app"
)

// Two-factor sign-in to the web app: after the account password, a code of an
// authenticator app (TOTP, RFC 6238: 30-second steps, 6 digits, HMAC-SHA-1,
// one step of clock drift either way) or one of ten one-time recovery codes.
// It guards the web app's sign-in only: app passwords and tokens (devices and
// scripts) keep working without a code, as they are secrets of their own that
// the person made while signed in.
//
// The TOTP secret is stored as is (the server computes the codes to verify
// them); recovery codes and the token of the pending second step only as keyed
// hashes, like every other credential.

// TwoFactor is a user's two-factor record.
type TwoFactor struct {
	UserID string
	// Secret is the base32 TOTP secret.
	Secret string
	// EnabledAt is when the person confirmed it; nil: set up, not in force.
	EnabledAt *time.Time
	// LastStep is the last accepted 30-second step (a code is accepted once).
	LastStep  int64
	CreatedAt time.Time
}

// SignInChallenge is the pending second step of a sign-in.
type SignInChallenge struct {
	UserID    string
	Attempts  int
	CreatedAt time.Time
	ExpiresAt time.Time
}

// TwoFactorStatus is what the settings page shows of a person's two-factor
// sign-in.
type TwoFactorStatus struct {
	Enabled   bool
	EnabledAt *time.Time
	// RecoveryCodesLeft counts the unused recovery codes.
	RecoveryCodesLeft int
	// Setup is the secret being set up (not yet confirmed); nil when none.
	Setup *TwoFactorSetup
}

// TwoFactorSetup is a new secret to enter in an authenticator app: as text and
// as the otpauth:// address a QR code carries.
type TwoFactorSetup struct {
	Secret string
	URI    string
}

const (
	// TwoFactorIssuer names the server in authenticator apps.
	TwoFactorIssuer = "Atrium"
	// SignInChallengeTTL is how long the second step of a sign-in waits for
	// its code.
	SignInChallengeTTL = 5 * time.Minute
	// ChallengePrefix starts the token of a pending second step.
	ChallengePrefix = "atr_2fa_"
	// RecoveryCodeCount is how many recovery codes a person gets at a time.
	RecoveryCodeCount = 10

	totpPeriod = 30
	// challengeAttempts wrong codes end a pending second step (the password
	// must be given again); the failed sign-in limits count them too.
	challengeAttempts = 5
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

var (
	// ErrSignInExpired: the pending second step is unknown, used, past its
	// time or out of attempts; the person signs in again from the password.
	ErrSignInExpired = app.Errorf(app.EUnauthorized, "The sign-in has expired. Sign in again with your password.")
	// ErrBadCode: the code is neither the current authentication code nor an
	// unused recovery code.
	ErrBadCode = app.Errorf(app.EUnauthorized, "The code is not correct.")
)

// TwoFactorOn reports whether a user has two-factor sign-in on. Errors: none of
// its own.
func (s *Service) TwoFactorOn(ctx context.Context, userID string) (bool, error) {
	now := s.clock.Now()
	key := profileKey{twoFactor: true, user: userID}
	if pr, ok := s.profiles.get(key, now); ok {
		return pr.twoFactor, nil
	}
	gen := s.cache.gen.Load()
	tf, err := s.store.TwoFactor(ctx, userID)
	if app.ErrorCode(err) == app.ENotFound {
		s.profiles.put(key, profile{}, gen, now)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.profiles.put(key, profile{twoFactor: tf.EnabledAt != nil}, gen, now)
	return tf.EnabledAt != nil, nil
}

// MyTwoFactor returns the caller's two-factor sign-in state. Errors:
// no_bound_user, forbidden (a service principal).
func (s *Service) MyTwoFactor(ctx context.Context, p *app.Principal) (TwoFactorStatus, error) {
	if err := requireSelf(p); err != nil {
		return TwoFactorStatus{}, err
	}
	tf, err := s.store.TwoFactor(ctx, p.UserID)
	if app.ErrorCode(err) == app.ENotFound {
		return TwoFactorStatus{}, nil
	}
	if err != nil {
		return TwoFactorStatus{}, err
	}
	if tf.EnabledAt == nil {
		u, err := s.store.User(ctx, p.UserID)
		if err != nil {
			return TwoFactorStatus{}, err
		}
		return TwoFactorStatus{Setup: &TwoFactorSetup{Secret: tf.Secret, URI: keyURI(tf.Secret, u.Email)}}, nil
	}
	n, err := s.store.RecoveryCodesLeft(ctx, p.UserID)
	return TwoFactorStatus{Enabled: true, EnabledAt: tf.EnabledAt, RecoveryCodesLeft: n}, err
}

// keyURI is the otpauth:// address of a secret (Key Uri Format of Google
// Authenticator, which every authenticator app reads).
func keyURI(secret, account string) string {
	q := url.Values{"secret": {secret}, "issuer": {TwoFactorIssuer}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	u := url.URL{Scheme: "otpauth", Host: "totp", Path: "/" + TwoFactorIssuer + ":" + account, RawQuery: q.Encode()}
	return u.String()
}

// SetUpTwoFactor makes a new secret for the caller, to confirm with
// EnableTwoFactor; until then sign-in is unchanged. It replaces a secret set up
// but not confirmed; with two-factor sign-in on it is a conflict (turn it off
// first). Errors: no_bound_user, forbidden (a service principal),
// reauthentication_required (a web session past RecentSignIn), conflict
// (two-factor sign-in is on).
func (s *Service) SetUpTwoFactor(ctx context.Context, p *app.Principal) (TwoFactorSetup, error) {
	if err := requireSelf(p); err != nil {
		return TwoFactorSetup{}, err
	}
	if err := s.requireRecentSignIn(p); err != nil {
		return TwoFactorSetup{}, err
	}
	u, err := s.store.User(ctx, p.UserID)
	if err != nil {
		return TwoFactorSetup{}, err
	}
	raw := make([]byte, 20)
	if _, err := rand.Read(raw); err != nil {
		return TwoFactorSetup{}, err
	}
	secret := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw)
	if err := s.store.SetTwoFactorSecret(ctx, p.UserID, secret, s.clock.Now()); err != nil {
		return TwoFactorSetup{}, err
	}
	return TwoFactorSetup{Secret: secret, URI: keyURI(secret, u.Email)}, nil
}

// normalizeCode takes out the spaces and dashes people type in codes, in
// lower case.
func normalizeCode(code string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '\t' {
			return -1
		}
		return r
	}, code))
}

// isTOTPCode reports whether code (normalized) has the form of an
// authentication code: six digits.
func isTOTPCode(code string) bool {
	if len(code) != 6 {
		return false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// matchTOTP returns the step whose code is code, within one step of now and
// later than last; false when there is none.
func (s *Service) matchTOTP(secret, code string, last int64) (int64, bool) {
	now := s.clock.Now().Unix() / totpPeriod
	found, match := int64(0), false
	for step := now - 1; step <= now+1; step++ {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(step*totpPeriod, 0), totpOpts)
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && step > last && !match {
			found, match = step, true
		}
	}
	return found, match
}

// useTOTP checks code against a user's secret and records its step, so that
// the same code is not accepted again.
func (s *Service) useTOTP(ctx context.Context, tf TwoFactor, code string) (bool, error) {
	code = normalizeCode(code)
	if !isTOTPCode(code) {
		return false, nil
	}
	step, ok := s.matchTOTP(tf.Secret, code, tf.LastStep)
	if !ok {
		return false, nil
	}
	return s.store.UseTwoFactorStep(ctx, tf.UserID, step)
}

// recoveryHash is the keyed hash under which a recovery code is stored.
func (s *Service) recoveryHash(userID, code string) []byte {
	return s.hash("recovery\x00" + userID + "\x00" + normalizeCode(code))
}

// newRecoveryCodes makes RecoveryCodeCount codes (ten hexadecimal digits each,
// 40 bits, in two groups) and their hashes.
func (s *Service) newRecoveryCodes(userID string) ([]string, [][]byte) {
	codes := make([]string, RecoveryCodeCount)
	hashes := make([][]byte, RecoveryCodeCount)
	for i := range codes {
		raw := app.RandomHex(5)
		codes[i] = raw[:5] + "-" + raw[5:]
		hashes[i] = s.recoveryHash(userID, codes[i])
	}
	return codes, hashes
}

// EnableTwoFactor turns the caller's two-factor sign-in on with a current code
// of the secret set up, and returns its recovery codes (shown once). A wrong
// code is invalid and changes nothing. Errors: no_bound_user, forbidden (a
// service principal), conflict (no secret set up, two-factor sign-in on
// already), validation_failed (a code that is not the current one).
func (s *Service) EnableTwoFactor(ctx context.Context, p *app.Principal, code string) ([]string, error) {
	if err := requireSelf(p); err != nil {
		return nil, err
	}
	tf, err := s.store.TwoFactor(ctx, p.UserID)
	if app.ErrorCode(err) == app.ENotFound {
		return nil, app.Errorf(app.EConflict, "Set up two-factor sign-in first: there is no secret to confirm.")
	}
	if err != nil {
		return nil, err
	}
	if tf.EnabledAt != nil {
		return nil, app.Errorf(app.EConflict, "Two-factor sign-in is already on.")
	}
	c := normalizeCode(code)
	if !isTOTPCode(c) {
		return nil, app.Invalid("body.code", "must be the 6 digits your authenticator app shows", nil)
	}
	step, ok := s.matchTOTP(tf.Secret, c, tf.LastStep)
	if !ok {
		return nil, app.Invalid("body.code", "is not the current code of the secret being set up; check your device's clock and try the next code", nil)
	}
	codes, hashes := s.newRecoveryCodes(p.UserID)
	now := s.clock.Now()
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.EnableTwoFactor(ctx, p.UserID, step, now); err != nil {
			return err
		}
		if err := s.store.SetRecoveryCodes(ctx, p.UserID, hashes, now); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.two_factor_enabled", ActorID: p.UserID,
			TargetType: "user", TargetID: p.UserID, OrgID: p.OrgID, CreatedAt: now})
	})
	s.CredentialsChanged() // TwoFactorOn's answers are cached with them
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// errNotOn refuses a change of two-factor sign-in that is off.
var errNotOn = app.Errorf(app.EConflict, "Two-factor sign-in is off.")

// RegenerateRecoveryCodes replaces the caller's recovery codes by new ones
// (shown once) when proof is a current authentication code or the account
// password; the old codes stop working. Errors: no_bound_user, forbidden (a
// service principal), conflict (two-factor sign-in is off), validation_failed
// (proof is neither a current code nor the account password).
func (s *Service) RegenerateRecoveryCodes(ctx context.Context, p *app.Principal, proof string) ([]string, error) {
	if err := requireSelf(p); err != nil {
		return nil, err
	}
	tf, err := s.store.TwoFactor(ctx, p.UserID)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && tf.EnabledAt == nil) {
		return nil, errNotOn
	}
	if err != nil {
		return nil, err
	}
	codes, hashes := s.newRecoveryCodes(p.UserID)
	now := s.clock.Now()
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		ok, err := s.useTOTP(ctx, tf, proof)
		if err != nil {
			return err
		}
		if !ok {
			hash, err := s.store.PasswordHash(ctx, p.UserID)
			if err != nil {
				return err
			}
			ok = hash != "" && VerifyPassword(hash, proof)
		}
		if !ok {
			return app.Invalid("body.proof", "is neither a current authentication code nor the account password", nil)
		}
		if err := s.store.SetRecoveryCodes(ctx, p.UserID, hashes, now); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.recovery_codes_regenerated", ActorID: p.UserID,
			TargetType: "user", TargetID: p.UserID, OrgID: p.OrgID, CreatedAt: now})
	})
	s.CredentialsChanged() // TwoFactorOn's answers are cached with them
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// DisableTwoFactor turns the caller's two-factor sign-in off (or drops a
// secret set up but not confirmed) when password is the account password.
// Errors: no_bound_user, forbidden (a service principal), conflict (neither on
// nor set up), validation_failed (a wrong password).
func (s *Service) DisableTwoFactor(ctx context.Context, p *app.Principal, password string) error {
	if err := requireSelf(p); err != nil {
		return err
	}
	tf, err := s.store.TwoFactor(ctx, p.UserID)
	if app.ErrorCode(err) == app.ENotFound {
		return errNotOn
	}
	if err != nil {
		return err
	}
	hash, err := s.store.PasswordHash(ctx, p.UserID)
	if err != nil {
		return err
	}
	if hash == "" || !VerifyPassword(hash, password) {
		return app.Invalid("body.password", "is not the account's current password", nil)
	}
	defer s.CredentialsChanged() // TwoFactorOn's answers are cached with them
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteTwoFactor(ctx, p.UserID); err != nil {
			return err
		}
		if tf.EnabledAt == nil {
			return nil
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.two_factor_disabled", ActorID: p.UserID,
			TargetType: "user", TargetID: p.UserID, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
}

// ResetTwoFactor turns userID's two-factor sign-in off without its proof: an
// admin's way out for a person who lost their authenticator and their
// recovery codes (the admin rules, the audit entry and the notice to the
// person are the caller's, app/partner). Not on → conflict. Errors: conflict
// (two-factor sign-in is off).
func (s *Service) ResetTwoFactor(ctx context.Context, userID string) error {
	tf, err := s.store.TwoFactor(ctx, userID)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && tf.EnabledAt == nil) {
		return app.Errorf(app.EConflict, "The user has no two-factor sign-in to turn off.")
	}
	if err != nil {
		return err
	}
	defer s.CredentialsChanged() // TwoFactorOn's answers are cached with them
	return s.store.DeleteTwoFactor(ctx, userID)
}

// startChallenge starts the pending second step of u's sign-in.
func (s *Service) startChallenge(ctx context.Context, u User) (SignInResult, error) {
	now := s.clock.Now()
	token := ChallengePrefix + app.RandomHex(32)
	c := SignInChallenge{UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(SignInChallengeTTL)}
	if err := s.store.CreateSignInChallenge(ctx, c, s.hash(token)); err != nil {
		return SignInResult{}, err
	}
	return SignInResult{Challenge: token, ChallengeExpiresAt: c.ExpiresAt}, nil
}

// challenge returns the pending second step of token while it is usable.
func (s *Service) challenge(ctx context.Context, token string) (SignInChallenge, []byte, error) {
	if !strings.HasPrefix(token, ChallengePrefix) {
		return SignInChallenge{}, nil, ErrSignInExpired
	}
	h := s.hash(token)
	c, err := s.store.SignInChallenge(ctx, h)
	if app.ErrorCode(err) == app.ENotFound {
		return c, nil, ErrSignInExpired
	}
	if err != nil {
		return c, nil, err
	}
	if !s.clock.Now().Before(c.ExpiresAt) || c.Attempts >= challengeAttempts {
		_, _ = s.store.DeleteSignInChallenge(ctx, h)
		return c, nil, ErrSignInExpired
	}
	return c, h, nil
}

// PendingSignIn returns the e-mail address of the person whose second step of
// sign-in token is, while it is usable (else ErrSignInExpired): the account the
// failed sign-in limits count the codes against. Errors: unauthorized (an
// unknown, used or expired step: ErrSignInExpired).
func (s *Service) PendingSignIn(ctx context.Context, token string) (string, error) {
	c, _, err := s.challenge(ctx, token)
	if err != nil {
		return "", err
	}
	u, err := s.store.User(ctx, c.UserID)
	return u.Email, err
}

// CompleteSignInInput is the second step of a sign-in.
type CompleteSignInInput struct {
	// Challenge is the token BeginSignIn returned.
	Challenge string
	// Code is a current authentication code or an unused recovery code.
	Code      string
	UserAgent string
	Address   string
}

// CompleteSignIn checks the code of a pending second step and starts the
// session. A wrong code is ErrBadCode (the step stays, up to a few attempts);
// an unknown, used or expired step ErrSignInExpired. An authentication code is
// accepted once; a recovery code is used up. A user or organisation suspended
// meanwhile is refused as at the password step. Errors: unauthorized (a wrong
// code: ErrBadCode; an unknown, used or expired step: ErrSignInExpired),
// forbidden (a user not active), org_suspended.
func (s *Service) CompleteSignIn(ctx context.Context, in CompleteSignInInput) (string, Session, error) {
	c, h, err := s.challenge(ctx, in.Challenge)
	if err != nil {
		return "", Session{}, err
	}
	tf, err := s.store.TwoFactor(ctx, c.UserID)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && tf.EnabledAt == nil) {
		// Turned off meanwhile: the password step decides again.
		_, _ = s.store.DeleteSignInChallenge(ctx, h)
		return "", Session{}, ErrSignInExpired
	}
	if err != nil {
		return "", Session{}, err
	}
	u, err := s.store.User(ctx, c.UserID)
	if err != nil {
		return "", Session{}, err
	}
	var secret string
	var ss Session
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		var extra []app.AuditEntry
		ok, err := s.useTOTP(ctx, tf, in.Code)
		if err != nil {
			return err
		}
		if !ok && !isTOTPCode(normalizeCode(in.Code)) && normalizeCode(in.Code) != "" {
			err := s.store.UseRecoveryCode(ctx, u.ID, s.recoveryHash(u.ID, in.Code))
			switch app.ErrorCode(err) {
			case "":
				ok = true
				extra = append(extra, app.AuditEntry{Module: "identity", Action: "user.recovery_code_used", ActorID: u.ID,
					TargetType: "user", TargetID: u.ID, OrgID: u.OrgID, CreatedAt: s.clock.Now()})
			case app.ENotFound:
			default:
				return err
			}
		}
		if !ok {
			return ErrBadCode
		}
		if gone, err := s.store.DeleteSignInChallenge(ctx, h); err != nil {
			return err
		} else if !gone {
			return ErrSignInExpired
		}
		if err := s.checkActive(ctx, u.ID); err != nil {
			return err
		}
		secret, ss, err = s.startSession(ctx, u, in.UserAgent, in.Address, extra)
		return err
	})
	if errors.Is(err, ErrBadCode) {
		if ferr := s.store.FailSignInChallenge(ctx, h); ferr != nil {
			return "", Session{}, ferr
		}
	}
	if err != nil {
		return "", Session{}, err
	}
	return secret, ss, nil
}
