package sqldb

import (
	"context"
	"database/sql"
	"time"

	"atrium/app"
	"atrium/app/identity"
)

// Two-factor sign-in: a user's TOTP secret, recovery codes and the pending
// second steps of sign-ins (identity.Store).

// TwoFactor returns a user's two-factor record.
func (s IdentityStore) TwoFactor(ctx context.Context, userID string) (identity.TwoFactor, error) {
	tf := identity.TwoFactor{UserID: userID}
	var enabled sql.NullInt64
	var c int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT secret, enabled_at, last_step, created_at FROM user_two_factor WHERE user_id = ?`,
		userID).Scan(&tf.Secret, &enabled, &tf.LastStep, &c)
	if err != nil {
		return tf, mapErr(err, "two-factor secret")
	}
	tf.EnabledAt, tf.CreatedAt = fromMSPtr(enabled), fromMS(c)
	return tf, nil
}

// SetTwoFactorSecret stores a new, not yet confirmed secret of a user.
func (s IdentityStore) SetTwoFactorSecret(ctx context.Context, userID, secret string, at time.Time) error {
	res, err := s.write(ctx).ExecContext(ctx, `INSERT INTO user_two_factor(user_id, secret, enabled_at, last_step, created_at)
		VALUES (?, ?, NULL, 0, ?) ON CONFLICT(user_id) DO UPDATE SET secret = excluded.secret, last_step = 0,
		created_at = excluded.created_at WHERE user_two_factor.enabled_at IS NULL`, userID, secret, ms(at))
	if err != nil {
		return mapErr(err, "two-factor secret")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.EConflict, "Two-factor sign-in is already on; turn it off first to set up a new secret.")
	}
	return nil
}

// EnableTwoFactor confirms a user's secret.
func (s IdentityStore) EnableTwoFactor(ctx context.Context, userID string, step int64, at time.Time) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE user_two_factor SET enabled_at = ?, last_step = ? WHERE user_id = ?`,
		ms(at), step, userID)
	if err != nil {
		return mapErr(err, "two-factor secret")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The two-factor secret was not found.")
	}
	return nil
}

// UseTwoFactorStep records step as the last accepted one when it is later.
func (s IdentityStore) UseTwoFactorStep(ctx context.Context, userID string, step int64) (bool, error) {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE user_two_factor SET last_step = ? WHERE user_id = ? AND last_step < ?`,
		step, userID, step)
	if err != nil {
		return false, mapErr(err, "two-factor secret")
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// DeleteTwoFactor removes a user's secret and recovery codes.
func (s IdentityStore) DeleteTwoFactor(ctx context.Context, userID string) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM user_recovery_codes WHERE user_id = ?`, userID); err != nil {
			return mapErr(err, "recovery codes")
		}
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM sign_in_challenges WHERE user_id = ?`, userID); err != nil {
			return mapErr(err, "sign-in step")
		}
		_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM user_two_factor WHERE user_id = ?`, userID)
		return mapErr(err, "two-factor secret")
	})
}

// SetRecoveryCodes replaces a user's recovery codes.
func (s IdentityStore) SetRecoveryCodes(ctx context.Context, userID string, hashes [][]byte, at time.Time) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM user_recovery_codes WHERE user_id = ?`, userID); err != nil {
			return mapErr(err, "recovery codes")
		}
		for _, h := range hashes {
			if _, err := s.write(ctx).ExecContext(ctx, `INSERT INTO user_recovery_codes(user_id, code_hash, created_at) VALUES (?, ?, ?)`,
				userID, h, ms(at)); err != nil {
				return mapErr(err, "recovery code")
			}
		}
		return nil
	})
}

// UseRecoveryCode deletes a user's recovery code by its keyed hash.
func (s IdentityStore) UseRecoveryCode(ctx context.Context, userID string, hash []byte) error {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM user_recovery_codes WHERE user_id = ? AND code_hash = ?`, userID, hash)
	if err != nil {
		return mapErr(err, "recovery code")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The recovery code was not found.")
	}
	return nil
}

// RecoveryCodesLeft counts a user's unused recovery codes.
func (s IdentityStore) RecoveryCodesLeft(ctx context.Context, userID string) (int, error) {
	var n int
	err := s.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM user_recovery_codes WHERE user_id = ?`, userID).Scan(&n)
	return n, mapErr(err, "recovery codes")
}

// CreateSignInChallenge stores a pending second step and removes the expired.
func (s IdentityStore) CreateSignInChallenge(ctx context.Context, c identity.SignInChallenge, hash []byte) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM sign_in_challenges WHERE expires_at <= ?`, ms(c.CreatedAt)); err != nil {
			return mapErr(err, "sign-in step")
		}
		_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO sign_in_challenges(token_hash, user_id, attempts, created_at, expires_at)
			VALUES (?, ?, 0, ?, ?)`, hash, c.UserID, ms(c.CreatedAt), ms(c.ExpiresAt))
		return mapErr(err, "sign-in step")
	})
}

// SignInChallenge finds a pending second step.
func (s IdentityStore) SignInChallenge(ctx context.Context, hash []byte) (identity.SignInChallenge, error) {
	var c identity.SignInChallenge
	var created, exp int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT user_id, attempts, created_at, expires_at FROM sign_in_challenges WHERE token_hash = ?`,
		hash).Scan(&c.UserID, &c.Attempts, &created, &exp)
	if err != nil {
		return c, mapErr(err, "sign-in step")
	}
	c.CreatedAt, c.ExpiresAt = fromMS(created), fromMS(exp)
	return c, nil
}

// FailSignInChallenge counts a failed code of a pending step.
func (s IdentityStore) FailSignInChallenge(ctx context.Context, hash []byte) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE sign_in_challenges SET attempts = attempts + 1 WHERE token_hash = ?`, hash)
	return mapErr(err, "sign-in step")
}

// DeleteSignInChallenge removes a pending step; false when it was gone.
func (s IdentityStore) DeleteSignInChallenge(ctx context.Context, hash []byte) (bool, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM sign_in_challenges WHERE token_hash = ?`, hash)
	if err != nil {
		return false, mapErr(err, "sign-in step")
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
