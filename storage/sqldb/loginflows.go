package sqldb

import (
	"context"
	"time"

	"atrium/app/identity"
)

// Sync clients' pending sign-ins (identity.Store): rows of login_flows, found
// by the keyed hashes of their tokens.

// AddLoginFlow stores a pending sign-in.
func (s IdentityStore) AddLoginFlow(ctx context.Context, f identity.LoginFlowRecord) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO login_flows(poll_hash, login_hash, seal_key, device, expires_at) VALUES (?,?,?,?,?)`,
		f.PollHash, f.LoginHash, f.SealKey, f.Device, ms(f.ExpiresAt))
	return mapErr(err, "sign-in")
}

// PendingLoginFlow finds a flow not yet approved and unexpired at now by its
// login token's hash.
func (s IdentityStore) PendingLoginFlow(ctx context.Context, loginHash []byte, now time.Time) (identity.LoginFlowRecord, error) {
	f := identity.LoginFlowRecord{LoginHash: loginHash}
	var exp int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT poll_hash, seal_key, device, expires_at FROM login_flows
		WHERE login_hash = ? AND sealed IS NULL AND expires_at > ?`, loginHash, ms(now)).Scan(&f.PollHash, &f.SealKey, &f.Device, &exp)
	f.ExpiresAt = fromMS(exp)
	return f, mapErr(err, "sign-in")
}

// ApproveLoginFlow hands a pending flow its login name and sealed app
// password; false when the flow is gone, expired or approved already.
func (s IdentityStore) ApproveLoginFlow(ctx context.Context, loginHash []byte, loginName string, sealed []byte, now time.Time) (bool, error) {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE login_flows SET login_name = ?, sealed = ?
		WHERE login_hash = ? AND sealed IS NULL AND expires_at > ?`, loginName, sealed, loginHash, ms(now))
	if err != nil {
		return false, mapErr(err, "sign-in")
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err, "sign-in")
}

// DeleteLoginFlow forgets a flow by its login token's hash.
func (s IdentityStore) DeleteLoginFlow(ctx context.Context, loginHash []byte) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM login_flows WHERE login_hash = ?`, loginHash)
	return mapErr(err, "sign-in")
}

// TakeLoginFlow deletes an approved flow unexpired at now by its poll token's
// hash and returns its login name and sealed app password, in one statement:
// of two polls (on two nodes) one gets them. not_found when there is none.
func (s IdentityStore) TakeLoginFlow(ctx context.Context, pollHash []byte, now time.Time) (loginName string, sealed []byte, err error) {
	err = s.write(ctx).QueryRowContext(ctx, `DELETE FROM login_flows WHERE poll_hash = ? AND sealed IS NOT NULL AND expires_at > ?
		RETURNING login_name, sealed`, pollHash, ms(now)).Scan(&loginName, &sealed)
	return loginName, sealed, mapErr(err, "sign-in")
}

// CountLoginFlows counts the flows unexpired at now.
func (s IdentityStore) CountLoginFlows(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := s.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM login_flows WHERE expires_at > ?`, ms(now)).Scan(&n)
	return n, mapErr(err, "sign-ins")
}

// PruneLoginFlows deletes the flows expired at now.
func (s IdentityStore) PruneLoginFlows(ctx context.Context, now time.Time) (int, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM login_flows WHERE expires_at <= ?`, ms(now))
	if err != nil {
		return 0, mapErr(err, "sign-ins")
	}
	n, err := res.RowsAffected()
	return int(n), mapErr(err, "sign-ins")
}
