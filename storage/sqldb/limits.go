package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// LimitStore keeps what the sign-in and request limits count in the
// database, where every node of a cluster sees it (web.LimitStore): failed
// sign-ins, the clients accounts signed in from, and requests per fixed
// window. Its statements run on their own, outside any transaction.
type LimitStore struct{ *DB }

// Failures returns each of keys' failures after since, oldest first, the
// latest keep of each at most.
func (s LimitStore) Failures(ctx context.Context, keys []string, since time.Time, keep int) (map[string][]time.Time, error) {
	out := make(map[string][]time.Time, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(keys)+1)
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, ms(since))
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT key, at FROM auth_failures WHERE key IN (?`+strings.Repeat(",?", len(keys)-1)+`)
		AND at > ? ORDER BY key, at`, args...)
	if err != nil {
		return nil, mapErr(err, "sign-in failures")
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var at int64
		if err := rows.Scan(&k, &at); err != nil {
			return nil, mapErr(err, "sign-in failures")
		}
		ts := append(out[k], fromMS(at))
		if keep > 0 && len(ts) > keep {
			ts = ts[len(ts)-keep:]
		}
		out[k] = ts
	}
	return out, mapErr(rows.Err(), "sign-in failures")
}

// AddFailure records a failure of each of keys at at and forgets their
// failures at or before since.
func (s LimitStore) AddFailure(ctx context.Context, keys []string, at, since time.Time) error {
	for _, k := range keys {
		if _, err := s.write(ctx).ExecContext(ctx, `INSERT INTO auth_failures(key, at) VALUES (?, ?)`, k, ms(at)); err != nil {
			return mapErr(err, "sign-in failure")
		}
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM auth_failures WHERE key = ? AND at <= ?`, k, ms(since)); err != nil {
			return mapErr(err, "sign-in failures")
		}
	}
	return nil
}

// ForgetFailures forgets key's failures.
func (s LimitStore) ForgetFailures(ctx context.Context, key string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM auth_failures WHERE key = ?`, key)
	return mapErr(err, "sign-in failures")
}

// KnownClient returns when account last signed in from ip (zero: not
// remembered).
func (s LimitStore) KnownClient(ctx context.Context, ip, account string) (time.Time, error) {
	var at int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT at FROM known_clients WHERE ip = ? AND account = ?`, ip, account).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, mapErr(err, "known client")
	}
	return fromMS(at), nil
}

// AddKnownClient records a success of account from ip at at.
func (s LimitStore) AddKnownClient(ctx context.Context, ip, account string, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO known_clients(ip, account, at) VALUES (?, ?, ?)
		ON CONFLICT (ip, account) DO UPDATE SET at = excluded.at WHERE known_clients.at < excluded.at`, ip, account, ms(at))
	return mapErr(err, "known client")
}

// CountRequest counts a request of key in the window that starts at start
// and returns the window's count so far, this one included: one statement,
// CountRequests adds n requests of key to the window that starts at start
// and returns the window's count.
func (s LimitStore) CountRequests(ctx context.Context, key string, start time.Time, n int) (int, error) {
	var total int
	err := s.write(ctx).QueryRowContext(ctx, `INSERT INTO rate_windows(key, start, n) VALUES (?, ?, ?)
		ON CONFLICT (key, start) DO UPDATE SET n = rate_windows.n + excluded.n RETURNING n`, key, ms(start), n).Scan(&total)
	return total, mapErr(err, "request count")
}

// PruneLimits deletes the failures at or before failures, the known clients
// last seen at or before known and the request windows that started at or
// before windows; it returns how many rows went.
func (s LimitStore) PruneLimits(ctx context.Context, failures, known, windows time.Time) (int, error) {
	total := 0
	for _, q := range []struct {
		sql    string
		before time.Time
	}{
		{`DELETE FROM auth_failures WHERE at <= ?`, failures},
		{`DELETE FROM known_clients WHERE at <= ?`, known},
		{`DELETE FROM rate_windows WHERE start <= ?`, windows},
	} {
		res, err := s.write(ctx).ExecContext(ctx, q.sql, ms(q.before))
		if err != nil {
			return total, mapErr(err, "limits")
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	return total, nil
}
