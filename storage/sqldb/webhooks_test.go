package sqldb

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/webhooks"
)

// webhookFixture is a database with a reseller, one of its customers and a
// subscription for each.
type webhookFixture struct {
	db                 *DB
	store              WebhookStore
	reseller, customer string
	resSub, custSub    string
}

func newWebhookFixture(t *testing.T) *webhookFixture {
	t.Helper()
	ctx := context.Background()
	db := openTest(t)
	f := &webhookFixture{db: db, store: WebhookStore{db}, reseller: app.NewID(), customer: app.NewID()}
	now := ms(time.Now())
	for _, o := range []struct {
		id     string
		parent any
	}{{f.reseller, nil}, {f.customer, f.reseller}} {
		if _, err := db.Exec(ctx, `INSERT INTO organizations(id, name, slug, parent_organization_id, created_at, updated_at) VALUES (?,?,?,?,?,?)`,
			o.id, o.id, o.id, o.parent, now, now); err != nil {
			t.Fatal(err)
		}
	}
	f.resSub = f.subscribe(t, f.reseller, nil)
	f.custSub = f.subscribe(t, f.customer, []string{webhooks.EventCalendarEventCreated})
	return f
}

func (f *webhookFixture) subscribe(t *testing.T, org string, events []string) string {
	t.Helper()
	now := time.Now()
	s := webhooks.Subscription{ID: app.NewID(), OrgID: org, URL: "http://127.0.0.1:9/", Events: events, IsActive: true, CreatedAt: now, UpdatedAt: now}
	if err := f.store.CreateSubscription(context.Background(), s, app.RandomHex(32)); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

func (f *webhookFixture) emit(t *testing.T, org, typ string) app.Event {
	t.Helper()
	e := app.Event{ID: app.NewID(), Type: typ, OrgID: org, CreatedAt: time.Now(), Data: map[string]any{"k": "v"}}
	if err := f.db.InTx(context.Background(), func(ctx context.Context) error { return Outbox{f.db}.Emit(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	return e
}

func (f *webhookFixture) count(t *testing.T, sub string) int {
	t.Helper()
	ds, err := f.store.Deliveries(context.Background(), sub, app.PageRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(ds)
}

func TestWebhookFanOut(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	cases := []struct {
		org, typ          string
		toReseller, toCus int
	}{
		{f.customer, webhooks.EventCalendarEventCreated, 0, 1}, // customer's own; the reseller gets no calendar events of customers
		{f.customer, webhooks.EventOrgUserCreated, 1, 0},       // user events also go to the reseller; customer filter excludes it
		{f.customer, webhooks.EventDriveFileCreated, 0, 0},
		{f.reseller, webhooks.EventDriveFileCreated, 1, 0}, // events: [] receives everything
		{f.reseller, webhooks.EventOrgUserUpdated, 1, 0},
	}
	for _, c := range cases {
		r0, c0 := f.count(t, f.resSub), f.count(t, f.custSub)
		e := f.emit(t, c.org, c.typ)
		if dr, dc := f.count(t, f.resSub)-r0, f.count(t, f.custSub)-c0; dr != c.toReseller || dc != c.toCus {
			t.Errorf("%s from %s: reseller +%d customer +%d, want +%d +%d", c.typ, c.org, dr, dc, c.toReseller, c.toCus)
		}
		if c.toReseller == 1 {
			ds, _ := f.store.Deliveries(context.Background(), f.resSub, app.PageRequest{Limit: 1})
			want, _ := webhooks.Body(e.ID, e.Type, e.CreatedAt, e.OrgID, []byte(`{"k":"v"}`))
			if ds[0].EventID != e.ID || string(ds[0].Body) != string(want) || ds[0].Status != webhooks.StatusPending {
				t.Errorf("delivery %+v body %s", ds[0], ds[0].Body)
			}
		}
	}
	// An event whose transaction rolls back leaves no delivery.
	before := f.count(t, f.resSub)
	_ = f.db.InTx(context.Background(), func(ctx context.Context) error {
		if err := (Outbox{f.db}).Emit(ctx, app.Event{Type: webhooks.EventDriveFileCreated, OrgID: f.reseller}); err != nil {
			return err
		}
		return app.Errorf(app.EConflict, "roll back")
	})
	if f.count(t, f.resSub) != before {
		t.Fatal("a rolled-back event left a delivery")
	}
}

// Emit skips the fan-out while no subscription exists: a subscription created
// later receives the events after it, and one that exists when the database
// is opened again receives them from the start.
func TestWebhookFanOutSkippedWithoutSubscriptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "atrium.db")
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &webhookFixture{db: db, store: WebhookStore{db}, reseller: app.NewID()}
	now := ms(time.Now())
	if _, err := db.Exec(ctx, `INSERT INTO organizations(id, name, slug, created_at, updated_at) VALUES (?,?,?,?,?)`,
		f.reseller, "r", "r", now, now); err != nil {
		t.Fatal(err)
	}
	if db.webhookSubs.Load() {
		t.Fatal("a database without subscriptions has them set")
	}
	f.emit(t, f.reseller, webhooks.EventDriveFileCreated)
	var n int
	if err := db.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("deliveries without a subscription: %d, %v", n, err)
	}
	sub := f.subscribe(t, f.reseller, nil)
	f.emit(t, f.reseller, webhooks.EventDriveFileCreated)
	if got := f.count(t, sub); got != 1 {
		t.Fatalf("after subscribing: %d deliveries, want 1", got)
	}
	db.Close()

	db, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db, f.store = db, WebhookStore{db}
	if !db.webhookSubs.Load() {
		t.Fatal("a database opened with a subscription does not know it")
	}
	f.emit(t, f.reseller, webhooks.EventDriveFileCreated)
	if got := f.count(t, sub); got != 2 {
		t.Fatalf("after opening again: %d deliveries, want 2", got)
	}
}

func TestWebhookClaimLeases(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	ctx := context.Background()
	for range 40 {
		f.emit(t, f.reseller, webhooks.EventDriveFileCreated)
	}
	now := time.Now()
	// Concurrent claimers never get the same delivery.
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				jobs, err := f.store.Claim(ctx, now, now.Add(time.Minute), 3, 100, nil, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					seen[j.DeliveryID]++
					if j.Attempt != 1 || j.CycleAttempt != 1 || j.URL == "" || len(j.Secret) != 64 || len(j.Body) == 0 {
						t.Errorf("job %+v", j)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 40 {
		t.Fatalf("claimed %d distinct deliveries, want 40", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("delivery %s claimed %d times", id, n)
		}
	}
	// Leased: nothing is due until the lease expires (a dispatcher died mid-send).
	if jobs, _ := f.store.Claim(ctx, now.Add(30*time.Second), now.Add(2*time.Minute), 100, 100, nil, 0); len(jobs) != 0 {
		t.Fatalf("claimed %d leased deliveries", len(jobs))
	}
	later := now.Add(61 * time.Second)
	jobs, err := f.store.Claim(ctx, later, later.Add(time.Minute), 100, 100, nil, 0)
	if err != nil || len(jobs) != 40 {
		t.Fatalf("after lease expiry claimed %d: %v", len(jobs), err)
	}
	// The old lease holder's result is dropped; the new holder's is recorded.
	stale := webhooks.Job{DeliveryID: jobs[0].DeliveryID, SubscriptionID: f.resSub, Attempt: 1, CycleAttempt: 1, Lease: "old"}
	st := 200
	ok := webhooks.DeliveryAttempt{Number: 1, StartedAt: later, ResponseStatus: &st}
	if err := f.store.Complete(ctx, later, []webhooks.Result{{Job: stale, Attempt: ok, Success: true}}, webhooks.DefaultSchedule); err != nil {
		t.Fatal(err)
	}
	if d, _ := f.store.Delivery(ctx, f.resSub, jobs[0].DeliveryID); d.Status != webhooks.StatusPending || len(d.AttemptLog) != 0 {
		t.Fatalf("stale result recorded: %+v", d)
	}
	// Per-subscription cap: with 38 in flight for the subscription and a cap of 40, two more.
	var results []webhooks.Result
	for _, j := range jobs {
		results = append(results, webhooks.Result{Job: j, Attempt: webhooks.DeliveryAttempt{Number: j.Attempt, StartedAt: later, Error: "boom"}})
	}
	if err := f.store.Complete(ctx, later, results, webhooks.DefaultSchedule); err != nil {
		t.Fatal(err)
	}
	d, _ := f.store.Delivery(ctx, f.resSub, jobs[0].DeliveryID)
	if d.Status != webhooks.StatusRetrying || d.Attempts != 1 || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(later.Add(30*time.Second).Truncate(time.Millisecond)) {
		t.Fatalf("after a failure: %+v", d)
	}
	due := later.Add(31 * time.Second)
	jobs, _ = f.store.Claim(ctx, due, due.Add(time.Minute), 100, 40, map[string]int{f.resSub: 38}, 0)
	if len(jobs) != 2 || jobs[0].Attempt != 2 {
		t.Fatalf("capped claim got %d", len(jobs))
	}
	// The schedule's first delay postpones first attempts only.
	f.emit(t, f.reseller, webhooks.EventDriveFileCreated)
	if jobs, _ := f.store.Claim(ctx, due, due.Add(time.Minute), 100, 100, map[string]int{f.resSub: 2}, time.Hour); len(jobs) != 38 {
		t.Fatalf("with a first delay claimed %d, want the 38 retries", len(jobs))
	}
}

func TestWebhookPrune(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	ctx := context.Background()
	f.emit(t, f.reseller, webhooks.EventDriveFileCreated)
	f.emit(t, f.reseller, webhooks.EventDriveFileCreated)
	now := time.Now()
	jobs, _ := f.store.Claim(ctx, now, now.Add(time.Minute), 1, 10, nil, 0)
	st := 204
	if err := f.store.Complete(ctx, now, []webhooks.Result{{Job: jobs[0], Success: true, Attempt: webhooks.DeliveryAttempt{Number: 1, StartedAt: now, ResponseStatus: &st}}}, webhooks.DefaultSchedule); err != nil {
		t.Fatal(err)
	}
	// Nothing is older than the cutoff yet.
	if n, err := f.store.Prune(ctx, now.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("pruned %d: %v", n, err)
	}
	// Later: the finished delivery goes (with its attempts), the pending one stays.
	if n, err := f.store.Prune(ctx, now.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("pruned %d: %v", n, err)
	}
	ds, _ := f.store.Deliveries(ctx, f.resSub, app.PageRequest{Limit: 10})
	if len(ds) != 1 || ds[0].Status != webhooks.StatusPending {
		t.Fatalf("left %+v", ds)
	}
	var n int
	if err := f.db.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM webhook_attempts`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("attempts left: %d %v", n, err)
	}
}

// AttemptsByDay counts every attempt of one subscription since a time, per
// UTC day, by outcome: however many deliveries there are, not a page of them.
func TestWebhookAttemptsByDay(t *testing.T) {
	t.Parallel()
	f := newWebhookFixture(t)
	ctx := context.Background()
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	// attempt adds a delivery of sub with attempts at the times, the last one's
	// outcome is outcome, the others failed.
	n := 0
	attempt := func(sub, outcome string, at ...time.Time) {
		t.Helper()
		n++
		id := fmt.Sprintf("d%04d", n)
		last := at[len(at)-1]
		if _, err := f.db.Exec(ctx, `INSERT INTO webhook_deliveries(id, subscription_id, event_id, event_type, body, status,
			attempts, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)`,
			id, sub, "e"+id, webhooks.EventDriveFileCreated, []byte("{}"), outcome, len(at), ms(at[0]), ms(last)); err != nil {
			t.Fatal(err)
		}
		for i, a := range at {
			o := webhooks.StatusFailed
			if i == len(at)-1 {
				o = outcome
			}
			if _, err := f.db.Exec(ctx, `INSERT INTO webhook_attempts(delivery_id, number, started_at, request_headers,
				duration_ms, outcome) VALUES (?,?,?,?,?,?)`, id, i+1, ms(a), "{}", 5, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 250 { // more than a page of the delivery list
		attempt(f.resSub, webhooks.StatusSuccessful, day(10, 9))
	}
	attempt(f.resSub, webhooks.StatusSuccessful, day(9, 23), day(10, 1)) // a retry past midnight
	attempt(f.resSub, webhooks.StatusFailed, day(12, 0), day(12, 23))
	attempt(f.resSub, webhooks.StatusSuccessful, day(3, 12))              // before the window
	attempt(f.resSub, webhooks.StatusSuccessful, day(3, 12), day(11, 8))  // replayed inside it
	attempt(f.custSub, webhooks.StatusSuccessful, day(10, 9), day(11, 9)) // another subscription

	got, err := f.store.AttemptsByDay(ctx, f.resSub, day(5, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := []webhooks.DayAttempts{
		{Day: day(9, 0), Failed: 1},
		{Day: day(10, 0), Succeeded: 251},
		{Day: day(11, 0), Succeeded: 1},
		{Day: day(12, 0), Failed: 2},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("AttemptsByDay:\n got %v\nwant %v", got, want)
	}
	if got, err := f.store.AttemptsByDay(ctx, f.resSub, day(13, 0)); err != nil || len(got) != 0 {
		t.Fatalf("a window without attempts: %v, %v", got, err)
	}
}
