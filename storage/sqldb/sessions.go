package sqldb

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/identity"
)

// The account password, a user's own credentials and the web sessions
// (identity.Store).

// PasswordHash returns a user's account password hash ("" when none is set).
func (s IdentityStore) PasswordHash(ctx context.Context, userID string) (string, error) {
	var h string
	err := s.read(ctx).QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = ?`, userID).Scan(&h)
	return h, mapErr(err, "user")
}

// SetPassword stores a user's account password hash.
func (s IdentityStore) SetPassword(ctx context.Context, userID, hash string) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`, hash, ms(s.now()), userID)
	if err != nil {
		return mapErr(err, "user")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The user was not found.")
	}
	return nil
}

// pageAfter adds the "newest first, after a position" clause of a user's list.
func pageAfter(q string, args []any, p app.PageRequest) (string, []any) {
	if p.After != "" {
		q += ` AND id < ?`
		args = append(args, p.After)
	}
	return q + ` ORDER BY id DESC LIMIT ?`, append(args, p.Limit+1)
}

// Tokens lists a user's PATs, newest first.
func (s IdentityStore) Tokens(ctx context.Context, userID string, p app.PageRequest) ([]identity.Token, error) {
	q, args := pageAfter(`SELECT id, user_id, organization_id, name, scopes, expires_at, created_at, last_used_at
		FROM personal_access_tokens WHERE user_id = ?`, []any{userID}, p)
	rows, err := s.read(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err, "tokens")
	}
	defer rows.Close()
	out := []identity.Token{}
	for rows.Next() {
		var t identity.Token
		var scopes string
		var exp, used sql.NullInt64
		var c int64
		if err := rows.Scan(&t.ID, &t.UserID, &t.OrgID, &t.Name, &scopes, &exp, &c, &used); err != nil {
			return nil, mapErr(err, "tokens")
		}
		t.Scopes, t.ExpiresAt, t.CreatedAt, t.LastUsedAt = strings.Fields(scopes), fromMSPtr(exp), fromMS(c), fromMSPtr(used)
		out = append(out, t)
	}
	return out, mapErr(rows.Err(), "tokens")
}

// DeleteToken removes a PAT of a user.
func (s IdentityStore) DeleteToken(ctx context.Context, userID, id string) error {
	return s.deleteOwned(ctx, `DELETE FROM personal_access_tokens WHERE user_id = ? AND id = ?`, userID, id, "token")
}

// AppPasswords lists a user's app passwords, newest first.
func (s IdentityStore) AppPasswords(ctx context.Context, userID string, p app.PageRequest) ([]identity.AppPassword, error) {
	q, args := pageAfter(`SELECT id, user_id, label, created_at, last_used_at FROM app_passwords WHERE user_id = ?`, []any{userID}, p)
	rows, err := s.read(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err, "app passwords")
	}
	defer rows.Close()
	out := []identity.AppPassword{}
	for rows.Next() {
		var a identity.AppPassword
		var used sql.NullInt64
		var c int64
		if err := rows.Scan(&a.ID, &a.UserID, &a.Label, &c, &used); err != nil {
			return nil, mapErr(err, "app passwords")
		}
		a.CreatedAt, a.LastUsedAt = fromMS(c), fromMSPtr(used)
		out = append(out, a)
	}
	return out, mapErr(rows.Err(), "app passwords")
}

// DeleteAppPassword removes an app password of a user.
func (s IdentityStore) DeleteAppPassword(ctx context.Context, userID, id string) error {
	return s.deleteOwned(ctx, `DELETE FROM app_passwords WHERE user_id = ? AND id = ?`, userID, id, "app password")
}

func (s IdentityStore) deleteOwned(ctx context.Context, q, userID, id, what string) error {
	res, err := s.write(ctx).ExecContext(ctx, q, userID, id)
	if err != nil {
		return mapErr(err, what)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The %s was not found.", what)
	}
	return nil
}

// TouchCredential records the last use of a PAT or an app password.
func (s IdentityStore) TouchCredential(ctx context.Context, kind, id string, at time.Time) error {
	var q string
	switch kind {
	case app.CredPAT:
		q = `UPDATE personal_access_tokens SET last_used_at = ? WHERE id = ?`
	case app.CredAppPassword:
		q = `UPDATE app_passwords SET last_used_at = ? WHERE id = ?`
	default:
		return nil
	}
	_, err := s.write(ctx).ExecContext(ctx, q, ms(at), id)
	return mapErr(err, "credential")
}

// CreateSession stores a web session by the keyed hash of its token, and its
// start as the user's last sign-in (kept when the session ends).
func (s IdentityStore) CreateSession(ctx context.Context, ss identity.Session, hash []byte) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO web_sessions(id, user_id, organization_id, token_hash, user_agent,
		address, created_at, last_seen_at, expires_at, authenticated_at) VALUES (?,?,?,?,?,?,?,?,?,?)`, ss.ID, ss.UserID, ss.OrgID, hash,
		ss.UserAgent, ss.Address, ms(ss.CreatedAt), ms(ss.LastSeenAt), ms(ss.ExpiresAt), ms(ss.AuthenticatedAt))
	if err != nil {
		return mapErr(err, "session")
	}
	_, err = s.write(ctx).ExecContext(ctx, `UPDATE users SET last_sign_in_at = ? WHERE id = ?`, ms(ss.CreatedAt), ss.UserID)
	return mapErr(err, "user")
}

const sessionCols = `ws.id, ws.user_id, ws.organization_id, ws.user_agent, ws.address, ws.created_at, ws.last_seen_at, ws.expires_at, ws.authenticated_at`

// sessionTimes are a session row's times in milliseconds.
type sessionTimes struct{ created, seen, exp, auth int64 }

func sessionDest(ss *identity.Session, t *sessionTimes) []any {
	return []any{&ss.ID, &ss.UserID, &ss.OrgID, &ss.UserAgent, &ss.Address, &t.created, &t.seen, &t.exp, &t.auth}
}

func (t sessionTimes) set(ss *identity.Session) {
	ss.CreatedAt, ss.LastSeenAt, ss.ExpiresAt, ss.AuthenticatedAt = fromMS(t.created), fromMS(t.seen), fromMS(t.exp), fromMS(t.auth)
}

// SessionByHash finds a session with its user, organisation and plan.
func (s IdentityStore) SessionByHash(ctx context.Context, hash []byte) (identity.Session, identity.Credential, error) {
	var ss identity.Session
	var t sessionTimes
	var h []byte
	cred, err := scanCred(s.read(ctx).QueryRowContext(ctx, `SELECT `+credCols+`, `+sessionCols+`, ws.token_hash
		FROM web_sessions ws JOIN users u ON u.id = ws.user_id JOIN organizations o ON o.id = u.organization_id
		LEFT JOIN subscriptions s ON s.organization_id = o.id LEFT JOIN plans p ON p.slug = s.plan_slug
		WHERE ws.token_hash = ?`, hash), append(sessionDest(&ss, &t), &h)...)
	if err != nil {
		return ss, cred, mapErr(err, "session")
	}
	t.set(&ss)
	cred.ID, cred.Hash, cred.Kind = ss.ID, h, app.CredSession
	return ss, cred, nil
}

// TouchSession records a session's last request.
func (s IdentityStore) TouchSession(ctx context.Context, id string, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE web_sessions SET last_seen_at = ? WHERE id = ?`, ms(at), id)
	return mapErr(err, "session")
}

// ConfirmSession records that a session's person gave the account password
// again at at.
func (s IdentityStore) ConfirmSession(ctx context.Context, id string, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE web_sessions SET authenticated_at = ? WHERE id = ?`, ms(at), id)
	return mapErr(err, "session")
}

// RevokeUserCredentials deletes every app password and personal access token
// of a user and refuses the user's JWTs issued before now; it returns how
// many app passwords and tokens it deleted.
func (s IdentityStore) RevokeUserCredentials(ctx context.Context, userID string, now time.Time) (int, int, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM app_passwords WHERE user_id = ?`, userID)
	if err != nil {
		return 0, 0, mapErr(err, "app passwords")
	}
	apps, _ := res.RowsAffected()
	if res, err = s.write(ctx).ExecContext(ctx, `DELETE FROM personal_access_tokens WHERE user_id = ?`, userID); err != nil {
		return 0, 0, mapErr(err, "tokens")
	}
	toks, _ := res.RowsAffected()
	_, err = s.write(ctx).ExecContext(ctx, `UPDATE users SET credentials_not_before = ? WHERE id = ?`, ms(now), userID)
	return int(apps), int(toks), mapErr(err, "user")
}

// Sessions lists a user's sessions, newest first.
func (s IdentityStore) Sessions(ctx context.Context, userID string, p app.PageRequest) ([]identity.Session, error) {
	q, args := pageAfter(`SELECT `+sessionCols+` FROM web_sessions ws WHERE user_id = ?`, []any{userID}, p)
	rows, err := s.read(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err, "sessions")
	}
	defer rows.Close()
	out := []identity.Session{}
	for rows.Next() {
		var ss identity.Session
		var t sessionTimes
		if err := rows.Scan(sessionDest(&ss, &t)...); err != nil {
			return nil, mapErr(err, "sessions")
		}
		t.set(&ss)
		out = append(out, ss)
	}
	return out, mapErr(rows.Err(), "sessions")
}

// DeleteSession removes a session of a user.
func (s IdentityStore) DeleteSession(ctx context.Context, userID, id string) error {
	return s.deleteOwned(ctx, `DELETE FROM web_sessions WHERE user_id = ? AND id = ?`, userID, id, "session")
}

// DeleteUserSessions removes every session of a user but exceptID.
func (s IdentityStore) DeleteUserSessions(ctx context.Context, userID, exceptID string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ? AND id != ?`, userID, exceptID)
	return mapErr(err, "sessions")
}

// DeleteOrgSessions removes every session of an organisation's users.
func (s IdentityStore) DeleteOrgSessions(ctx context.Context, orgID string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM web_sessions WHERE organization_id = ?`, orgID)
	return mapErr(err, "sessions")
}

// PruneSessions removes idle and expired sessions.
func (s IdentityStore) PruneSessions(ctx context.Context, idleBefore, now time.Time) (int, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM web_sessions WHERE last_seen_at < ? OR expires_at <= ?`, ms(idleBefore), ms(now))
	if err != nil {
		return 0, mapErr(err, "sessions")
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
