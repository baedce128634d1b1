package webhooks

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"atrium/app"
)

// DispatcherConfig tunes the dispatcher.
type DispatcherConfig struct {
	// Schedule is the retry schedule: entry i is the delay before attempt i+1;
	// its length is the number of attempts (default DefaultSchedule).
	Schedule []time.Duration
	// Timeout is the poster's bound on one attempt (default 10 s): a claimed
	// delivery's lease outlasts it.
	Timeout time.Duration
	// Retention is how long finished deliveries are kept (default 30 days).
	Retention time.Duration
	// Workers is the number of concurrent attempts (default 128).
	Workers int
	// PerTarget caps the concurrent attempts to one subscription (default 8), so
	// a slow or dead receiver holds at most that many workers (1/16 of the pool).
	PerTarget int
	// Poll is how often due deliveries are looked for when nothing wakes the
	// dispatcher (default 250 ms).
	Poll time.Duration
}

// Post is one attempt as the receiver gets it: the target, the headers
// (signature, timestamp, event type, delivery id) and the body.
type Post struct {
	URL    string
	Header map[string][]string
	Body   []byte
}

// Reply is a receiver's answer: its status and headers, the first
// ResponseBodyLimit bytes of its body, the delay its Retry-After asks for
// (capped at MaxRetryAfter; 0 without one), and why the body could not be
// read to the end, if it could not.
type Reply struct {
	Status     int
	Header     map[string][]string
	Body       []byte
	RetryAfter time.Duration
	ReadError  string
}

// Poster makes one attempt (an adapter: hooksend, over HTTP, refusing
// private targets unless allowed and never following redirects). An error
// means no answer came; its message tells the integrator why.
type Poster interface {
	Post(ctx context.Context, p Post) (Reply, error)
}

// Dispatcher posts due deliveries. It owns its goroutines: Start runs them,
// Shutdown stops claiming, lets the attempts in flight finish (bounded by the
// timeout) and records their results.
//
// Deliveries are claimed in a write transaction under a lease, so two
// dispatchers never post the same attempt; a dispatcher that dies mid-attempt
// leaves the lease to expire and the attempt is made again (at-least-once).
type Dispatcher struct {
	store  Store
	cfg    DispatcherConfig
	log    *slog.Logger
	clock  app.Clock
	poster Poster

	wakeCh chan struct{}
	jobs   chan Job
	res    chan Result

	mu       sync.Mutex
	inflight map[string]int // per subscription: claimed and not yet recorded
	total    int

	cancel   context.CancelFunc
	sendCtx  context.Context
	stopSend context.CancelFunc
	wg       sync.WaitGroup
	started  bool
}

// NewDispatcher returns a dispatcher posting through poster; Start runs it.
func NewDispatcher(store Store, poster Poster, cfg DispatcherConfig, log *slog.Logger, clock app.Clock) *Dispatcher {
	if len(cfg.Schedule) == 0 {
		cfg.Schedule = DefaultSchedule
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 128
	}
	if cfg.PerTarget <= 0 {
		cfg.PerTarget = 8
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	if log == nil {
		log = slog.Default()
	}
	return &Dispatcher{
		store: store, poster: poster, cfg: cfg, log: log, clock: clock,
		wakeCh:   make(chan struct{}, 1),
		inflight: map[string]int{},
	}
}

// Wake makes the dispatcher look for due deliveries now.
func (d *Dispatcher) Wake() {
	select {
	case d.wakeCh <- struct{}{}:
	default:
	}
}

// Start runs the claim loop, the workers and the result writer until Shutdown.
func (d *Dispatcher) Start(ctx context.Context) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started {
		return
	}
	d.started = true
	ctx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
	// Attempts in flight get their own context: Shutdown lets them finish
	// (each is bounded by the timeout) unless its own deadline runs out.
	d.sendCtx, d.stopSend = context.WithCancel(context.WithoutCancel(ctx))
	d.jobs = make(chan Job, d.cfg.Workers)
	d.res = make(chan Result, d.cfg.Workers)

	var workers sync.WaitGroup
	for range d.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range d.jobs {
				r := d.attempt(d.sendCtx, j)
				if !r.Success {
					// The target URL stays out of logs (its query may carry a token).
					d.log.Debug("webhooks: attempt failed", "delivery", j.DeliveryID, "subscription", j.SubscriptionID,
						"attempt", j.Attempt, "err", r.Attempt.Error)
				}
				d.res <- r
			}
		}()
	}
	d.wg.Add(2)
	go func() {
		defer d.wg.Done()
		d.recordLoop()
	}()
	go func() {
		defer d.wg.Done()
		d.claimLoop(ctx)
		close(d.jobs)
		workers.Wait()
		close(d.res)
	}()
}

// Shutdown stops claiming, waits for the attempts in flight and records them.
// When ctx ends first, the attempts are cancelled; their leases expire and they
// are made again after a restart.
func (d *Dispatcher) Shutdown(ctx context.Context) error {
	d.mu.Lock()
	started, cancel := d.started, d.cancel
	d.started = false
	d.mu.Unlock()
	if !started {
		return nil
	}
	cancel()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
		d.stopSend()
		return nil
	case <-ctx.Done():
		d.stopSend()
		<-done
		return ctx.Err()
	}
}

// lease is how long a claimed delivery stays reserved: the attempt's timeout
// plus a margin for recording its result.
func (d *Dispatcher) lease() time.Duration { return d.cfg.Timeout + 30*time.Second }

func (d *Dispatcher) claimLoop(ctx context.Context) {
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	housekeep := time.NewTicker(10 * time.Minute)
	defer housekeep.Stop()
	d.prune(ctx)
	for {
		full := d.claimOnce(ctx)
		if full {
			// A full batch: more may be due; go again once a worker frees up.
			select {
			case <-ctx.Done():
				return
			default:
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wakeCh:
		case <-t.C:
		case <-housekeep.C:
			d.prune(ctx)
		}
	}
}

// claimOnce claims what the free workers can take and hands it to them. It
// reports whether it filled every free worker (so more may be due).
func (d *Dispatcher) claimOnce(ctx context.Context) bool {
	d.mu.Lock()
	free := d.cfg.Workers - d.total
	busy := make(map[string]int, len(d.inflight))
	for k, v := range d.inflight {
		busy[k] = v
	}
	d.mu.Unlock()
	if free <= 0 {
		select {
		case <-ctx.Done():
		case <-d.wakeCh:
		}
		return false
	}
	now := d.clock.Now()
	jobs, err := d.store.Claim(ctx, now, now.Add(d.lease()), free, d.cfg.PerTarget, busy, d.cfg.Schedule[0])
	if err != nil {
		if ctx.Err() == nil {
			d.log.Error("webhooks: claim deliveries", "err", err)
		}
		return false
	}
	d.mu.Lock()
	for _, j := range jobs {
		d.inflight[j.SubscriptionID]++
		d.total++
	}
	d.mu.Unlock()
	for _, j := range jobs {
		d.jobs <- j
	}
	return len(jobs) == free
}

// recordLoop writes results in batches: one transaction for every result that
// is ready, so throughput is not bound by one commit per attempt.
func (d *Dispatcher) recordLoop() {
	batch := make([]Result, 0, 256)
	for r := range d.res {
		batch = append(batch[:0], r)
	drain:
		for len(batch) < cap(batch) {
			select {
			case r, ok := <-d.res:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := d.store.Complete(ctx, d.clock.Now(), batch, d.cfg.Schedule); err != nil {
			// The leases expire and the attempts are made again.
			d.log.Error("webhooks: record delivery attempts", "count", len(batch), "err", err)
		}
		cancel()
		d.mu.Lock()
		for _, r := range batch {
			if d.inflight[r.Job.SubscriptionID]--; d.inflight[r.Job.SubscriptionID] <= 0 {
				delete(d.inflight, r.Job.SubscriptionID)
			}
			d.total--
		}
		d.mu.Unlock()
		d.Wake()
	}
}

func (d *Dispatcher) prune(ctx context.Context) {
	n, err := d.store.Prune(ctx, d.clock.Now().Add(-d.cfg.Retention))
	if err != nil {
		if ctx.Err() == nil {
			d.log.Error("webhooks: prune delivery history", "err", err)
		}
		return
	}
	if n > 0 {
		d.log.Info("webhooks: pruned delivery history", "deliveries", n, "retention", d.cfg.Retention)
	}
}

// attempt posts one delivery and describes what happened.
func (d *Dispatcher) attempt(ctx context.Context, j Job) Result {
	start := d.clock.Now()
	ts := start.Unix()
	hdr := map[string][]string{
		"Content-Type":  {"application/json"},
		"User-Agent":    {"Atrium-Webhooks/1"},
		HeaderEvent:     {j.EventType},
		HeaderDelivery:  {j.DeliveryID},
		HeaderTimestamp: {strconv.FormatInt(ts, 10)},
		HeaderSignature: {Sign(j.Secret, ts, j.Body)},
	}
	a := DeliveryAttempt{Number: j.Attempt, StartedAt: start, RequestHeaders: maps.Clone(hdr)}
	a.RequestHeaders["Content-Length"] = []string{strconv.Itoa(len(j.Body))}
	r := Result{Job: j}
	t0 := time.Now()
	res, err := d.poster.Post(ctx, Post{URL: j.URL, Header: hdr, Body: j.Body})
	a.DurationMS = time.Since(t0).Milliseconds()
	if err != nil {
		a.Error = err.Error()
		r.Interrupted = ctx.Err() != nil
		r.Attempt = a
		return r
	}
	st := res.Status
	a.ResponseStatus = &st
	a.ResponseHeaders = res.Header
	a.ResponseBody = string(bytes.ToValidUTF8(res.Body, []byte("\uFFFD")))
	switch {
	case res.ReadError != "":
		a.Error = res.ReadError
	case st >= 200 && st < 300:
		r.Success = true
	case st >= 300 && st < 400:
		a.Error = fmt.Sprintf("receiver answered %d (redirects are not followed)", st)
	default:
		a.Error = fmt.Sprintf("receiver answered %d", st)
		if st == 429 || st == 503 { // Too Many Requests, Service Unavailable
			r.RetryAfter = res.RetryAfter
		}
	}
	r.Attempt = a
	return r
}

// NextAttempt returns, for a failed attempt number n of the current cycle (1-based),
// the delay before the next one and whether one remains. A receiver's Retry-After
// is honoured when it asks for longer than the schedule.
func NextAttempt(schedule []time.Duration, n int, retryAfter time.Duration) (time.Duration, bool) {
	if n >= len(schedule) {
		return 0, false
	}
	return max(schedule[n], retryAfter), true
}
