package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
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
	// Timeout bounds one attempt: a receiver must answer 2xx within it (default 10 s).
	Timeout time.Duration
	// AllowPrivateTargets lets connections reach loopback and private addresses.
	AllowPrivateTargets bool
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
	// Transport overrides the HTTP transport (tests); its dialer must apply the
	// private-target check itself.
	Transport http.RoundTripper
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
	client *http.Client

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

// NewDispatcher returns a dispatcher; Start runs it.
func NewDispatcher(store Store, cfg DispatcherConfig, log *slog.Logger, clock app.Clock) *Dispatcher {
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
	tr := cfg.Transport
	if tr == nil {
		d := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
		if !cfg.AllowPrivateTargets {
			d.Control = dialControl
		}
		tr = &http.Transport{
			Proxy:                 nil, // never through a proxy: the address check applies to the receiver
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          cfg.Workers * 2,
			MaxIdleConnsPerHost:   cfg.Workers, // subscriptions may share a host
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
		}
	}
	return &Dispatcher{
		store: store, cfg: cfg, log: log, clock: clock,
		client: &http.Client{
			Transport:     tr,
			Timeout:       cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
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
	a := DeliveryAttempt{Number: j.Attempt, StartedAt: start, RequestHeaders: http.Header{}}
	r := Result{Job: j}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Body))
	if err != nil {
		a.Error = "invalid target URL: " + err.Error()
		r.Attempt = a
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Atrium-Webhooks/1")
	req.Header.Set(HeaderEvent, j.EventType)
	req.Header.Set(HeaderDelivery, j.DeliveryID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(j.Secret, ts, j.Body))
	a.RequestHeaders = req.Header.Clone()
	a.RequestHeaders.Set("Content-Length", strconv.Itoa(len(j.Body)))

	t0 := time.Now()
	res, err := d.client.Do(req)
	if err != nil {
		a.DurationMS = time.Since(t0).Milliseconds()
		a.Error = describe(err, d.cfg.Timeout)
		r.Interrupted = ctx.Err() != nil
		r.Attempt = a
		return r
	}
	body, rerr := io.ReadAll(io.LimitReader(res.Body, ResponseBodyLimit))
	// Drain a little more so the connection can be reused, then close.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	a.DurationMS = time.Since(t0).Milliseconds()
	st := res.StatusCode
	a.ResponseStatus = &st
	a.ResponseHeaders = res.Header
	a.ResponseBody = string(bytes.ToValidUTF8(body, []byte("\uFFFD")))
	switch {
	case rerr != nil && !errors.Is(rerr, io.EOF):
		a.Error = "reading the response: " + describe(rerr, d.cfg.Timeout)
	case st >= 200 && st < 300:
		r.Success = true
	case st >= 300 && st < 400:
		a.Error = fmt.Sprintf("receiver answered %d (redirects are not followed)", st)
	default:
		a.Error = fmt.Sprintf("receiver answered %d", st)
		if st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable {
			r.RetryAfter = retryAfter(res.Header.Get("Retry-After"), d.clock.Now())
		}
	}
	r.Attempt = a
	return r
}

// describe turns a transport error into a message for the integrator.
func describe(err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, errPrivateTarget):
		return errPrivateTarget.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.Is(err, context.Canceled):
		return "attempt interrupted by shutdown"
	}
	return err.Error()
}

// retryAfter parses a Retry-After header (seconds or an HTTP date), capped.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), MaxRetryAfter)
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
