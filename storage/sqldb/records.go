package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"atrium/app"
)

// Auditor implements app.Auditor.
type Auditor struct{ *DB }

var _ app.Auditor = Auditor{}

// Record writes an audit entry (in the caller's transaction when there is one).
func (a Auditor) Record(ctx context.Context, e app.AuditEntry) error {
	if e.ID == "" {
		e.ID = app.NewID()
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = a.now()
	}
	if e.ChangedFields == nil {
		e.ChangedFields = []string{}
	}
	cf, _ := json.Marshal(e.ChangedFields)
	_, err := a.write(ctx).ExecContext(ctx, `INSERT INTO audit_log(id, organization_id, module, action, actor_id, target_type,
		target_id, changed_fields, created_at) VALUES (?,?,?,?,?,?,?,?,?)`, e.ID, e.OrgID, e.Module, e.Action, e.ActorID,
		e.TargetType, e.TargetID, string(cf), ms(e.CreatedAt))
	return mapErr(err, "audit entry")
}

// Prune deletes at most limit entries created before t, and returns how many went.
func (a Auditor) Prune(ctx context.Context, t time.Time, limit int) (int, error) {
	res, err := a.write(ctx).ExecContext(ctx, `DELETE FROM audit_log WHERE `+a.rowID()+` IN (SELECT `+a.rowID()+` FROM audit_log
		WHERE created_at < ? ORDER BY created_at LIMIT ?)`, ms(t), limit)
	if err != nil {
		return 0, mapErr(err, "audit log")
	}
	n, err := res.RowsAffected()
	return int(n), mapErr(err, "audit log")
}

// List returns an organisation's audit entries, newest first, before position after.
func (a Auditor) List(ctx context.Context, orgID, after string, limit int) ([]app.AuditEntry, error) {
	return a.Find(ctx, orgID, app.AuditFilter{}, after, limit)
}

// Find returns an organisation's audit entries matching f, newest first,
// before position after.
func (a Auditor) Find(ctx context.Context, orgID string, f app.AuditFilter, after string, limit int) ([]app.AuditEntry, error) {
	q := `SELECT id, organization_id, module, action, actor_id, target_type, target_id, changed_fields, created_at
		FROM audit_log WHERE organization_id = ?`
	args := []any{orgID}
	if f.Module != "" {
		q += ` AND module = ?`
		args = append(args, f.Module)
	}
	if f.ActorID != "" {
		q += ` AND actor_id = ?`
		args = append(args, f.ActorID)
	}
	if !f.Since.IsZero() {
		q += ` AND created_at >= ?`
		args = append(args, ms(f.Since))
	}
	if !f.Until.IsZero() {
		q += ` AND created_at < ?`
		args = append(args, ms(f.Until))
	}
	if after != "" {
		q += ` AND id < ?`
		args = append(args, after)
	}
	rows, err := a.read(ctx).QueryContext(ctx, q+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, mapErr(err, "audit log")
	}
	defer rows.Close()
	var out []app.AuditEntry
	for rows.Next() {
		var e app.AuditEntry
		var cf string
		var c int64
		if err := rows.Scan(&e.ID, &e.OrgID, &e.Module, &e.Action, &e.ActorID, &e.TargetType, &e.TargetID, &cf, &c); err != nil {
			return nil, mapErr(err, "audit log")
		}
		_ = json.Unmarshal([]byte(cf), &e.ChangedFields)
		e.CreatedAt = fromMS(c)
		out = append(out, e)
	}
	return out, mapErr(rows.Err(), "audit log")
}

// Outbox implements app.Outbox.
type Outbox struct{ *DB }

var _ app.Outbox = Outbox{}

// Emit writes an event to the outbox. It must run inside a transaction, so that
// the event commits with the change that caused it.
func (o Outbox) Emit(ctx context.Context, e app.Event) error {
	if !InTransaction(ctx) {
		return mapErr(errNoTx, "event")
	}
	if e.ID == "" {
		e.ID = app.NewID()
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = o.now()
	}
	data, err := json.Marshal(e.Data)
	if err != nil {
		return mapErr(err, "event")
	}
	if err := o.orderEvents(ctx); err != nil {
		return mapErr(err, "event")
	}
	_, err = o.write(ctx).ExecContext(ctx, `INSERT INTO outbox(id, type, organization_id, data, created_at) VALUES (?,?,?,?,?)`,
		e.ID, e.Type, e.OrgID, string(data), ms(e.CreatedAt))
	if err != nil {
		return mapErr(err, "event")
	}
	// The webhook deliveries of the event commit with it (one per subscription).
	return mapErr(fanOutDeliveries(ctx, o.DB, o.write(ctx), e, data), "event deliveries")
}

// PruneEvents deletes at most limit events up to seq upTo created before t
// (app.OutboxPruner).
func (o Outbox) PruneEvents(ctx context.Context, upTo int64, t time.Time, limit int) (int, error) {
	// The first event to keep by age, read first: the delete then walks the
	// primary key only, holding the writer as briefly as it can.
	var young sql.NullInt64
	err := o.read(ctx).QueryRowContext(ctx, `SELECT seq FROM outbox WHERE created_at >= ? ORDER BY seq LIMIT 1`, ms(t)).Scan(&young)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, mapErr(err, "outbox")
	}
	if young.Valid {
		upTo = min(upTo, young.Int64-1)
	}
	res, err := o.write(ctx).ExecContext(ctx, `DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox
		WHERE seq <= ? ORDER BY seq LIMIT ?)`, upTo, limit)
	if err != nil {
		return 0, mapErr(err, "outbox")
	}
	n, err := res.RowsAffected()
	return int(n), mapErr(err, "outbox")
}

// Events returns outbox events after sequence number seq, oldest first, with their
// sequence numbers.
func (o Outbox) Events(ctx context.Context, seq int64, limit int) ([]app.Event, []int64, error) {
	rows, err := o.read(ctx).QueryContext(ctx, `SELECT seq, id, type, organization_id, data, created_at FROM outbox
		WHERE seq > ? ORDER BY seq LIMIT ?`, seq, limit)
	if err != nil {
		return nil, nil, mapErr(err, "events")
	}
	defer rows.Close()
	var out []app.Event
	var seqs []int64
	for rows.Next() {
		var e app.Event
		var s, c int64
		var data string
		if err := rows.Scan(&s, &e.ID, &e.Type, &e.OrgID, &data, &c); err != nil {
			return nil, nil, mapErr(err, "events")
		}
		_ = json.Unmarshal([]byte(data), &e.Data)
		e.CreatedAt = fromMS(c)
		out = append(out, e)
		seqs = append(seqs, s)
	}
	return out, seqs, mapErr(rows.Err(), "events")
}

type txError string

func (e txError) Error() string { return string(e) }

const errNoTx = txError("outbox write outside a transaction")

// Idempotency implements app.IdempotencyStore.
type Idempotency struct{ *DB }

var _ app.IdempotencyStore = Idempotency{}

// Claim takes the key for this request unless a live record exists.
func (s Idempotency) Claim(ctx context.Context, orgID, key, principal string, hash []byte) (*app.IdempotencyRecord, error) {
	var rec *app.IdempotencyRecord
	err := s.InTx(ctx, func(ctx context.Context) error {
		now := s.now()
		var (
			h          []byte
			owner      string
			state      string
			status     int
			headers    string
			body       []byte
			lease, exp int64
		)
		err := s.write(ctx).QueryRowContext(ctx, `SELECT request_hash, principal, state, status, headers, body, lease_until, expires_at
			FROM idempotency_keys WHERE organization_id = ? AND key = ?`, orgID, key).
			Scan(&h, &owner, &state, &status, &headers, &body, &lease, &exp)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return mapErr(err, "idempotency key")
		case exp > ms(now) && (state == "done" || lease > ms(now)):
			rec = &app.IdempotencyRecord{RequestHash: h, Principal: owner, InFlight: state == "in_flight", Status: status, Body: body}
			_ = json.Unmarshal([]byte(headers), &rec.Header)
			return nil
		}
		_, err = s.write(ctx).ExecContext(ctx, `INSERT INTO idempotency_keys(organization_id, key, principal, request_hash, state, lease_until, expires_at)
			VALUES (?, ?, ?, ?, 'in_flight', ?, ?) ON CONFLICT(organization_id, key) DO UPDATE SET principal = excluded.principal,
			request_hash = excluded.request_hash,
			state = 'in_flight', status = 0, headers = '{}', body = NULL, lease_until = excluded.lease_until, expires_at = excluded.expires_at`,
			orgID, key, principal, hash, ms(now.Add(app.IdempotencyLease)), ms(now.Add(app.IdempotencyRetention)))
		return mapErr(err, "idempotency key")
	})
	return rec, err
}

// Complete stores the response of a claimed key.
func (s Idempotency) Complete(ctx context.Context, orgID, key string, status int, header map[string][]string, body []byte) error {
	h, _ := json.Marshal(header)
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE idempotency_keys SET state = 'done', status = ?, headers = ?, body = ?
		WHERE organization_id = ? AND key = ?`, status, string(h), body, orgID, key)
	return mapErr(err, "idempotency key")
}

// Release forgets a claimed key.
func (s Idempotency) Release(ctx context.Context, orgID, key string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM idempotency_keys WHERE organization_id = ? AND key = ? AND state = 'in_flight'`, orgID, key)
	return mapErr(err, "idempotency key")
}

// PruneIdempotency deletes expired keys and returns how many.
func (s Idempotency) PruneIdempotency(ctx context.Context) (int64, error) {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?`, ms(s.now()))
	if err != nil {
		return 0, mapErr(err, "idempotency keys")
	}
	return res.RowsAffected()
}
