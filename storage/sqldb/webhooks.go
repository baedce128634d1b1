package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"atrium/app"
	"atrium/app/webhooks"
)

// WebhookStore implements webhooks.Store.
type WebhookStore struct{ *DB }

var _ webhooks.Store = WebhookStore{}

// Statements of the dispatcher's hot path, prepared once (see warm).
const (
	fanOutSQL = `INSERT INTO webhook_deliveries(id, subscription_id, event_id, event_type, body, status,
			next_attempt_at, created_at, updated_at)
		SELECT ? || '-' || lower(hex(randomblob(6))), s.id, ?, ?, ?,
			CASE WHEN s.is_active = 1 THEN 'pending' ELSE 'skipped' END, CASE WHEN s.is_active = 1 THEN CAST(? AS BIGINT) END, ?, ?
		FROM webhook_subscriptions s
		WHERE (s.organization_id = ? OR (? = 1 AND s.organization_id =
				(SELECT o.parent_organization_id FROM organizations o WHERE o.id = ?)))
			AND (s.events = '[]' OR EXISTS (SELECT 1 FROM json_each(s.events) WHERE value = ?))`
	claimTargetsSQL = `SELECT s.id, s.url, s.signing_secret FROM webhook_subscriptions s
			WHERE s.is_active = 1 AND EXISTS (SELECT 1 FROM webhook_deliveries d INDEXED BY webhook_deliveries_due
				WHERE d.subscription_id = s.id AND d.status IN ('pending', 'retrying') AND d.next_attempt_at <= ?
				AND (d.cycle_attempts > 0 OR d.next_attempt_at <= ?))`
	claimRowsSQL = `SELECT id FROM webhook_deliveries INDEXED BY webhook_deliveries_due
				WHERE subscription_id = ? AND status IN ('pending', 'retrying') AND next_attempt_at <= ?
				AND (cycle_attempts > 0 OR next_attempt_at <= ?) ORDER BY next_attempt_at LIMIT ?`
	claimLeaseSQL = `UPDATE webhook_deliveries SET lease_id = ?, lease_until = ?, next_attempt_at = ?
			WHERE id IN (SELECT value FROM json_each(?))
			RETURNING id, subscription_id, event_type, body, attempts, cycle_attempts`
	releaseSQL = `UPDATE webhook_deliveries SET lease_id = NULL, lease_until = NULL,
					next_attempt_at = ? WHERE id = ? AND lease_id = ?`
	leaseActiveSQL = `SELECT s.is_active FROM webhook_deliveries d
				JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE d.id = ? AND d.lease_id = ?`
	recordSQL = `UPDATE webhook_deliveries SET status = ?, attempts = ?, cycle_attempts = ?,
				next_attempt_at = ?, lease_id = NULL, lease_until = NULL, response_status = ?, error = ?, duration_ms = ?,
				updated_at = ? WHERE id = ? AND lease_id = ?`
	attemptSQL = `INSERT INTO webhook_attempts(delivery_id, number, started_at,
				request_headers, response_status, response_headers, response_body, duration_ms, error, outcome)
				VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (delivery_id, number) DO UPDATE SET started_at = excluded.started_at,
				request_headers = excluded.request_headers, response_status = excluded.response_status,
				response_headers = excluded.response_headers, response_body = excluded.response_body,
				duration_ms = excluded.duration_ms, error = excluded.error, outcome = excluded.outcome`
)

// wakers maps an open database to the function that wakes its webhook
// dispatcher when Emit queues deliveries.
var wakers sync.Map // *DB → func()

// OnQueued registers fn to be called when Emit queues deliveries on this
// database (nil unregisters). It is called inside the emitting transaction; a
// dispatcher woken then claims as soon as the writer is free, that is right
// after the commit (a rolled-back event leaves nothing to claim).
func (s WebhookStore) OnQueued(fn func()) {
	if fn == nil {
		wakers.Delete(s.DB)
		return
	}
	wakers.Store(s.DB, fn)
}

// fanOutDeliveries writes, in the caller's transaction, one delivery per
// subscription that receives event e: subscriptions of the event's organisation
// (and, for organization.user.*, of its managing reseller) whose events list is
// empty or names the type. A paused subscription gets the delivery as skipped,
// so it can be replayed after resuming. Called by Outbox.Emit.
func fanOutDeliveries(ctx context.Context, db *DB, q querier, e app.Event, data []byte) error {
	if !db.webhookSubs.Load() {
		return nil // no subscription: no delivery
	}
	body, err := webhooks.Body(e.ID, e.Type, e.CreatedAt, e.OrgID, data)
	if err != nil {
		return err
	}
	at := ms(e.CreatedAt)
	// Delivery ids: a fresh UUIDv7 prefix (time-ordered) and 48 random bits per row.
	prefix := app.NewID()[:23]
	res, err := q.ExecContext(ctx, fanOutSQL,
		prefix, e.ID, e.Type, body, at, at, at, e.OrgID, webhooks.RoutesToParent(e.Type), e.OrgID, e.Type)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		if fn, ok := wakers.Load(db); ok {
			fn.(func())()
		}
	}
	return nil
}

const subCols = `id, organization_id, url, description, events, is_active, created_at, updated_at`

func scanSub(sc interface{ Scan(...any) error }) (webhooks.Subscription, error) {
	var s webhooks.Subscription
	var events string
	var c, u int64
	if err := sc.Scan(&s.ID, &s.OrgID, &s.URL, &s.Description, &events, &s.IsActive, &c, &u); err != nil {
		return s, err
	}
	s.Events = []string{}
	_ = json.Unmarshal([]byte(events), &s.Events)
	s.CreatedAt, s.UpdatedAt = fromMS(c), fromMS(u)
	return s, nil
}

func eventsJSON(events []string) string {
	if events == nil {
		events = []string{}
	}
	b, _ := json.Marshal(events)
	return string(b)
}

// CreateSubscription inserts a subscription with its signing secret.
func (s WebhookStore) CreateSubscription(ctx context.Context, sub webhooks.Subscription, secret string) error {
	s.webhookSubs.Store(true) // before the insert: an event in a later transaction fans out to it
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO webhook_subscriptions(id, organization_id, url, description, events,
		is_active, signing_secret, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)`,
		sub.ID, sub.OrgID, sub.URL, sub.Description, eventsJSON(sub.Events), sub.IsActive, secret, ms(sub.CreatedAt), ms(sub.UpdatedAt))
	return mapErr(err, "webhook subscription")
}

// Subscription returns a subscription of org.
func (s WebhookStore) Subscription(ctx context.Context, orgID, id string) (webhooks.Subscription, error) {
	sub, err := scanSub(s.read(ctx).QueryRowContext(ctx, `SELECT `+subCols+` FROM webhook_subscriptions
		WHERE organization_id = ? AND id = ?`, orgID, id))
	return sub, mapErr(err, "webhook subscription")
}

// Subscriptions lists org's subscriptions by id (creation order) after p.After.
func (s WebhookStore) Subscriptions(ctx context.Context, orgID string, p app.PageRequest) ([]webhooks.Subscription, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+subCols+` FROM webhook_subscriptions
		WHERE organization_id = ? AND id > ? ORDER BY id LIMIT ?`, orgID, p.After, p.Limit+1)
	if err != nil {
		return nil, mapErr(err, "webhook subscriptions")
	}
	defer rows.Close()
	var out []webhooks.Subscription
	for rows.Next() {
		sub, err := scanSub(rows)
		if err != nil {
			return nil, mapErr(err, "webhook subscriptions")
		}
		out = append(out, sub)
	}
	return out, mapErr(rows.Err(), "webhook subscriptions")
}

// UpdateSubscription writes the mutable fields.
func (s WebhookStore) UpdateSubscription(ctx context.Context, sub webhooks.Subscription) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE webhook_subscriptions SET url = ?, description = ?, events = ?,
		is_active = ?, updated_at = ? WHERE organization_id = ? AND id = ?`,
		sub.URL, sub.Description, eventsJSON(sub.Events), sub.IsActive, ms(sub.UpdatedAt), sub.OrgID, sub.ID)
	return webhookAffected(res, err, "webhook subscription")
}

// SetSecret replaces the signing secret.
func (s WebhookStore) SetSecret(ctx context.Context, orgID, id, secret string, at time.Time) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE webhook_subscriptions SET signing_secret = ?, updated_at = ?
		WHERE organization_id = ? AND id = ?`, secret, ms(at), orgID, id)
	return webhookAffected(res, err, "webhook subscription")
}

// DeleteSubscription deletes a subscription; its deliveries and attempts go with it.
func (s WebhookStore) DeleteSubscription(ctx context.Context, orgID, id string) error {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE organization_id = ? AND id = ?`, orgID, id)
	return webhookAffected(res, err, "webhook subscription")
}

func webhookAffected(res sql.Result, err error, what string) error {
	if err != nil {
		return mapErr(err, what)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapErr(sql.ErrNoRows, what)
	}
	return nil
}

// SkipQueued turns queued deliveries not in flight into skipped.
func (s WebhookStore) SkipQueued(ctx context.Context, subscriptionID string, at time.Time) (int64, error) {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL,
		lease_id = NULL, lease_until = NULL, updated_at = ?
		WHERE subscription_id = ? AND status IN ('pending', 'retrying') AND (lease_until IS NULL OR lease_until <= ?)`,
		ms(at), subscriptionID, ms(at))
	if err != nil {
		return 0, mapErr(err, "webhook deliveries")
	}
	return res.RowsAffected()
}

const deliveryCols = `id, subscription_id, event_id, event_type, body, status, attempts, next_attempt_at, response_status,
	error, duration_ms, created_at, updated_at`

func scanDelivery(sc interface{ Scan(...any) error }) (webhooks.Delivery, error) {
	var d webhooks.Delivery
	var next, rs, dur sql.NullInt64
	var c, u int64
	if err := sc.Scan(&d.ID, &d.SubscriptionID, &d.EventID, &d.EventType, &d.Body, &d.Status, &d.Attempts, &next, &rs,
		&d.Error, &dur, &c, &u); err != nil {
		return d, err
	}
	d.NextAttemptAt = fromMSPtr(next)
	if rs.Valid {
		v := int(rs.Int64)
		d.ResponseStatus = &v
	}
	if dur.Valid {
		d.DurationMS = &dur.Int64
	}
	d.CreatedAt, d.UpdatedAt = fromMS(c), fromMS(u)
	d.AttemptLog = []webhooks.DeliveryAttempt{}
	return d, nil
}

// Deliveries lists a subscription's deliveries, most recent first, with attempts.
func (s WebhookStore) Deliveries(ctx context.Context, subscriptionID string, p app.PageRequest) ([]webhooks.Delivery, error) {
	q := `SELECT ` + deliveryCols + ` FROM webhook_deliveries WHERE subscription_id = ?`
	args := []any{subscriptionID}
	if p.After != "" {
		q += ` AND id < ?`
		args = append(args, p.After)
	}
	rows, err := s.read(ctx).QueryContext(ctx, q+` ORDER BY id DESC LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, mapErr(err, "webhook deliveries")
	}
	var out []webhooks.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return nil, mapErr(err, "webhook deliveries")
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, mapErr(err, "webhook deliveries")
	}
	return out, s.attachAttempts(ctx, out)
}

// AttemptsByDay counts the subscription's attempts started at or after since
// per UTC day (webhooks.Store). A delivery's updated_at is at or after each of
// its attempts (recorded with it), so older deliveries are passed over without
// reading their attempts.
func (s WebhookStore) AttemptsByDay(ctx context.Context, subscriptionID string, since time.Time) ([]webhooks.DayAttempts, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT a.started_at / 86400000 AS day,
			sum(CASE WHEN a.outcome = ? THEN 1 ELSE 0 END), sum(CASE WHEN a.outcome <> ? THEN 1 ELSE 0 END)
		FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
		WHERE d.subscription_id = ? AND d.updated_at >= ? AND a.started_at >= ?
		GROUP BY day ORDER BY day`,
		webhooks.StatusSuccessful, webhooks.StatusSuccessful, subscriptionID, ms(since), ms(since))
	if err != nil {
		return nil, mapErr(err, "webhook attempts")
	}
	defer rows.Close()
	var out []webhooks.DayAttempts
	for rows.Next() {
		var day int64
		var c webhooks.DayAttempts
		if err := rows.Scan(&day, &c.Succeeded, &c.Failed); err != nil {
			return nil, mapErr(err, "webhook attempts")
		}
		c.Day = time.UnixMilli(day * 86400000).UTC()
		out = append(out, c)
	}
	return out, mapErr(rows.Err(), "webhook attempts")
}

// Delivery returns one delivery of a subscription with its attempts.
func (s WebhookStore) Delivery(ctx context.Context, subscriptionID, id string) (webhooks.Delivery, error) {
	d, err := scanDelivery(s.read(ctx).QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries
		WHERE subscription_id = ? AND id = ?`, subscriptionID, id))
	if err != nil {
		return d, mapErr(err, "webhook delivery")
	}
	out := []webhooks.Delivery{d}
	err = s.attachAttempts(ctx, out)
	return out[0], err
}

func (s WebhookStore) attachAttempts(ctx context.Context, ds []webhooks.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	ids := make([]string, len(ds))
	idx := make(map[string]int, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
		idx[d.ID] = i
	}
	list, _ := json.Marshal(ids)
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT delivery_id, number, started_at, request_headers, response_status,
		response_headers, response_body, duration_ms, error, outcome FROM webhook_attempts
		WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY delivery_id, number`, string(list))
	if err != nil {
		return mapErr(err, "webhook attempts")
	}
	defer rows.Close()
	for rows.Next() {
		var a webhooks.DeliveryAttempt
		var did, reqH, resH string
		var started int64
		var rs sql.NullInt64
		if err := rows.Scan(&did, &a.Number, &started, &reqH, &rs, &resH, &a.ResponseBody, &a.DurationMS, &a.Error, &a.Outcome); err != nil {
			return mapErr(err, "webhook attempts")
		}
		a.StartedAt = fromMS(started)
		_ = json.Unmarshal([]byte(reqH), &a.RequestHeaders)
		a.ResponseHeaders = http.Header{}
		_ = json.Unmarshal([]byte(resH), &a.ResponseHeaders)
		if rs.Valid {
			v := int(rs.Int64)
			a.ResponseStatus = &v
		}
		d := &ds[idx[did]]
		a.RequestBody = string(d.Body)
		d.AttemptLog = append(d.AttemptLog, a)
	}
	return mapErr(rows.Err(), "webhook attempts")
}

// Requeue makes a failed or skipped delivery pending for a new cycle.
func (s WebhookStore) Requeue(ctx context.Context, subscriptionID, id string, at time.Time) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', cycle_attempts = 0,
		next_attempt_at = ?, lease_id = NULL, lease_until = NULL, updated_at = ?
		WHERE subscription_id = ? AND id = ? AND status IN ('failed', 'skipped')`, ms(at), ms(at), subscriptionID, id)
	if err != nil {
		return mapErr(err, "webhook delivery")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.EConflict, "Only a failed or skipped delivery can be replayed.")
	}
	return nil
}

// Claim leases due deliveries of active subscriptions in one write transaction.
// A delivery is due when it is pending or retrying and its next attempt time has
// come (plus the schedule's first delay for the first attempt of a cycle). A
// claim moves next_attempt_at to the lease's end: a delivery whose dispatcher
// died mid-attempt becomes due again when the lease expires.
//
// The work is per subscription, through the partial index on (subscription_id,
// next_attempt_at), so a claim costs O(subscriptions with due work + claimed
// rows), not O(backlog); subscriptions are visited in random order so none is
// starved when the free workers are fewer than the due deliveries.
func (s WebhookStore) Claim(ctx context.Context, now, leaseUntil time.Time, limit, perSub int, busy map[string]int, firstDelay time.Duration) ([]webhooks.Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	lease := app.RandomHex(12)
	nowMS, firstMS := ms(now), ms(now.Add(-firstDelay))
	var jobs []webhooks.Job
	err := s.InTx(ctx, func(ctx context.Context) error {
		jobs = jobs[:0]
		w := s.write(ctx)
		rows, err := w.QueryContext(ctx, claimTargetsSQL, nowMS, firstMS)
		if err != nil {
			return mapErr(err, "claim webhook deliveries")
		}
		type target struct{ id, url, secret string }
		var targets []target
		for rows.Next() {
			var t target
			if err := rows.Scan(&t.id, &t.url, &t.secret); err != nil {
				rows.Close()
				return mapErr(err, "claim webhook deliveries")
			}
			if busy[t.id] < perSub {
				targets = append(targets, t)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr(err, "claim webhook deliveries")
		}
		rand.Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
		byID := make(map[string]target, len(targets))
		var ids []string
		for _, t := range targets {
			if len(ids) >= limit {
				break
			}
			byID[t.id] = t
			n := min(perSub-busy[t.id], limit-len(ids))
			r, err := w.QueryContext(ctx, claimRowsSQL, t.id, nowMS, firstMS, n)
			if err != nil {
				return mapErr(err, "claim webhook deliveries")
			}
			for r.Next() {
				var id string
				if err := r.Scan(&id); err != nil {
					r.Close()
					return mapErr(err, "claim webhook deliveries")
				}
				ids = append(ids, id)
			}
			r.Close()
			if err := r.Err(); err != nil {
				return mapErr(err, "claim webhook deliveries")
			}
		}
		if len(ids) == 0 {
			return nil
		}
		list, _ := json.Marshal(ids)
		rows, err = w.QueryContext(ctx, claimLeaseSQL,
			lease, ms(leaseUntil), ms(leaseUntil), string(list))
		if err != nil {
			return mapErr(err, "claim webhook deliveries")
		}
		defer rows.Close()
		for rows.Next() {
			j := webhooks.Job{Lease: lease}
			if err := rows.Scan(&j.DeliveryID, &j.SubscriptionID, &j.EventType, &j.Body, &j.Attempt, &j.CycleAttempt); err != nil {
				return mapErr(err, "claim webhook deliveries")
			}
			j.Attempt++
			j.CycleAttempt++
			t := byID[j.SubscriptionID]
			j.URL, j.Secret = t.url, t.secret
			jobs = append(jobs, j)
		}
		return mapErr(rows.Err(), "claim webhook deliveries")
	})
	return jobs, err
}

// Complete records attempt results in one transaction, each fenced by its lease.
func (s WebhookStore) Complete(ctx context.Context, now time.Time, results []webhooks.Result, schedule []time.Duration) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		w := s.write(ctx)
		for _, r := range results {
			j := r.Job
			if r.Interrupted {
				// Not counted: release the lease so the attempt is made again.
				if _, err := w.ExecContext(ctx, releaseSQL, ms(now), j.DeliveryID, j.Lease); err != nil {
					return mapErr(err, "webhook delivery")
				}
				continue
			}
			var active bool
			err := w.QueryRowContext(ctx, leaseActiveSQL,
				j.DeliveryID, j.Lease).Scan(&active)
			if err == sql.ErrNoRows {
				continue // the lease was lost (expired and taken over, or the delivery deleted)
			}
			if err != nil {
				return mapErr(err, "webhook delivery")
			}
			status, next := webhooks.StatusSuccessful, sql.NullInt64{}
			switch {
			case r.Success:
			case !active:
				status = webhooks.StatusSkipped
			default:
				if d, ok := webhooks.NextAttempt(schedule, j.CycleAttempt, r.RetryAfter); ok {
					status, next = webhooks.StatusRetrying, sql.NullInt64{Int64: ms(now.Add(d)), Valid: true}
				} else {
					status = webhooks.StatusFailed
				}
			}
			a := r.Attempt
			var rs any
			if a.ResponseStatus != nil {
				rs = *a.ResponseStatus
			}
			if _, err := w.ExecContext(ctx, recordSQL,
				status, j.Attempt, j.CycleAttempt, next, rs, a.Error, a.DurationMS, ms(now), j.DeliveryID, j.Lease); err != nil {
				return mapErr(err, "webhook delivery")
			}
			reqH, _ := json.Marshal(a.RequestHeaders)
			if a.ResponseHeaders == nil {
				a.ResponseHeaders = http.Header{}
			}
			resH, _ := json.Marshal(a.ResponseHeaders)
			if _, err := w.ExecContext(ctx, attemptSQL, j.DeliveryID, j.Attempt, ms(a.StartedAt), string(reqH), rs, string(resH),
				a.ResponseBody, a.DurationMS, a.Error, status); err != nil {
				return mapErr(err, "webhook attempt")
			}
		}
		return nil
	})
}

// Prune deletes finished deliveries (and their attempts) created before cutoff,
// in batches so the writer is never held long.
func (s WebhookStore) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for {
		res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE id IN (
			SELECT id FROM webhook_deliveries WHERE created_at < ? AND status IN ('successful', 'failed', 'skipped') LIMIT 500)`,
			ms(cutoff))
		if err != nil {
			return total, mapErr(err, "webhook deliveries")
		}
		n, _ := res.RowsAffected()
		total += n
		if n < 500 || ctx.Err() != nil {
			return total, nil
		}
	}
}
