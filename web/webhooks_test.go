package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/app/webhooks"
	"atrium/hooksend"
	"atrium/storage/sqldb"
	"atrium/webtest"
	"atrium/wire"
)

// received is one delivery as a receiver saw it.
type received struct {
	Header   http.Header
	Body     []byte
	Verified bool
	Event    struct {
		ID        string         `json:"id"`
		Type      string         `json:"type"`
		CreatedAt string         `json:"created_at"`
		OrgID     string         `json:"organization_id"`
		Data      map[string]any `json:"data"`
	}
}

// receiver is a real HTTP endpoint on loopback that verifies signatures the way
// docs/webhooks.md tells integrators to, and answers as the test asks.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	secret string
	got    []received
	// answer decides the response to the n-th request (1-based); nil answers 200.
	answer func(n int, w http.ResponseWriter) bool
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		rc := received{Header: req.Header.Clone(), Body: body,
			Verified: webhooks.Verify(r.secret, req.Header.Get("X-Service-Timestamp"), req.Header.Get("X-Service-Signature-256"), body, time.Now())}
		_ = json.Unmarshal(body, &rc.Event)
		r.got = append(r.got, rc)
		n, answer := len(r.got), r.answer
		r.mu.Unlock()
		if answer != nil && answer(n, w) {
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) setSecret(s string) { r.mu.Lock(); r.secret = s; r.mu.Unlock() }

func (r *receiver) setAnswer(f func(n int, w http.ResponseWriter) bool) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// hookWorld is a server with a running dispatcher and an admin of a reseller.
type hookWorld struct {
	s     *webtest.Server
	admin webtest.Creds
}

// fastSchedule is the retry schedule of the tests: six attempts, 10 ms apart.
func fastSchedule(c *wire.Config) {
	c.Webhooks.RetrySchedule = "0s,10ms,10ms,10ms,10ms,10ms"
	c.Webhooks.AllowPrivateTargets = true
	c.Webhooks.Timeout = 2 * time.Second
}

func newHookWorld(t *testing.T, opts ...webtest.Option) *hookWorld {
	s := webtest.New(t, append([]webtest.Option{fastSchedule}, opts...)...)
	w := &hookWorld{s: s, admin: s.Bootstrap("Hooks Inc", "admin@hooks.test", "admin")}
	return w
}

func (w *hookWorld) start() { w.s.Main.Dispatcher.Start(context.Background()) }

func (w *hookWorld) do(method, path string, body any) *webtest.Response {
	return w.s.Do(webtest.Request{Method: method, Path: "/api/v1/webhooks/subscriptions" + path, Token: w.admin.Token, Body: body})
}

// subscribe creates a subscription and points the receiver's secret at it.
func (w *hookWorld) subscribe(t *testing.T, r *receiver, events ...string) string {
	t.Helper()
	if events == nil {
		events = []string{}
	}
	res := w.do("POST", "", map[string]any{"url": r.URL + "/hook", "events": events})
	if res.StatusCode != 201 {
		t.Fatalf("create subscription: %d %s", res.StatusCode, res.Body)
	}
	m := res.JSON()
	r.setSecret(m["signing_secret"].(string))
	return m["id"].(string)
}

// emit writes an event to the outbox as a module does, in a transaction.
func emit(t *testing.T, s *webtest.Server, orgID, typ string, data map[string]any) app.Event {
	t.Helper()
	e := app.Event{ID: app.NewID(), Type: typ, OrgID: orgID, CreatedAt: s.Clock.Now(), Data: data}
	err := s.Main.DB.InTx(context.Background(), func(ctx context.Context) error {
		return sqldb.Outbox{DB: s.Main.DB}.Emit(ctx, e)
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// eventually waits up to 15 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settled waits until no delivery of the server is pending or retrying: each
// is made or given up, none is in flight, and nothing more is sent for the
// events so far.
func settled(t *testing.T, s *webtest.Server) {
	t.Helper()
	eventually(t, "every delivery made", func() bool {
		return scalar(t, s, `SELECT COUNT(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying')`) == 0
	})
}

type deliveryJSON struct {
	ID             string     `json:"id"`
	SubscriptionID string     `json:"subscription_id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	ResponseStatus *int       `json:"response_status"`
	Error          string     `json:"error"`
	DurationMS     *int64     `json:"duration_ms"`
	CreatedAt      time.Time  `json:"created_at"`
	AttemptLog     []struct {
		Number          int                 `json:"number"`
		RequestHeaders  map[string][]string `json:"request_headers"`
		RequestBody     string              `json:"request_body"`
		ResponseStatus  *int                `json:"response_status"`
		ResponseHeaders map[string][]string `json:"response_headers"`
		ResponseBody    string              `json:"response_body"`
		DurationMS      int64               `json:"duration_ms"`
		Error           string              `json:"error"`
		Outcome         string              `json:"outcome"`
	} `json:"attempt_log"`
}

func (w *hookWorld) deliveries(t *testing.T, sub string) []deliveryJSON {
	t.Helper()
	res := w.do("GET", "/"+sub+"/deliveries?limit=100", nil)
	if res.StatusCode != 200 {
		t.Fatalf("deliveries: %d %s", res.StatusCode, res.Body)
	}
	var pg struct {
		Items []deliveryJSON `json:"items"`
	}
	res.Decode(t, &pg)
	return pg.Items
}

func (w *hookWorld) waitStatus(t *testing.T, sub string, n int, status string) []deliveryJSON {
	t.Helper()
	var ds []deliveryJSON
	eventually(t, fmt.Sprintf("%d deliveries %s", n, status), func() bool {
		ds = w.deliveries(t, sub)
		c := 0
		for _, d := range ds {
			if d.Status == status {
				c++
			}
		}
		return c == n
	})
	return ds
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestWebhookSubscriptionsAPI(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	s := w.s
	ctx := context.Background()
	member := s.Bootstrap("Hooks Inc", "member@hooks.test", "member")
	manage := s.Token("admin@hooks.test", app.ScopeWebhooksManage)
	contactsOnly := s.Token("admin@hooks.test", app.ScopeContactsRead)
	other := s.Bootstrap("Other Org", "admin@other.test", "admin")

	res := w.do("POST", "", map[string]any{"url": "http://127.0.0.1:9/hook", "description": "CRM sync", "events": []string{"organization.user.created"}})
	webtest.Check(t, res, webtest.Scenario{Status: 201, Contains: []string{`"is_active":true`, `"events":["organization.user.created"]`, `"description":"CRM sync"`}})
	sub := res.JSON()
	id := sub["id"].(string)
	if !hex64.MatchString(sub["signing_secret"].(string)) {
		t.Fatalf("signing_secret %q is not 64 hex characters", sub["signing_secret"])
	}
	second := w.do("POST", "", map[string]any{"url": "http://127.0.0.1:9/other", "events": []string{}}).JSON()
	if second["signing_secret"] == sub["signing_secret"] {
		t.Fatal("two subscriptions got the same secret")
	}

	base := "/api/v1/webhooks/subscriptions"
	s.Run(t, []webtest.Scenario{
		{Name: "get hides the secret", Request: webtest.Request{Method: "GET", Path: base + "/" + id, Token: w.admin.Token},
			Status: 200, Contains: []string{`"id":"` + id + `"`, `"url":"http://127.0.0.1:9/hook"`}, NotContains: []string{"signing_secret"}},
		{Name: "list hides secrets", Request: webtest.Request{Method: "GET", Path: base, Token: w.admin.Token},
			Status: 200, Contains: []string{id, `"has_more":false`}, NotContains: []string{"signing_secret"}},
		{Name: "list paginates", Request: webtest.Request{Method: "GET", Path: base + "?limit=1", Token: w.admin.Token},
			Status: 200, Contains: []string{id, `"has_more":true`, `"limit":1`}},
		{Name: "webhooks:manage suffices", Request: webtest.Request{Method: "GET", Path: base + "/" + id, Token: manage}, Status: 200},
		{Name: "member is refused", Request: webtest.Request{Method: "GET", Path: base, Token: member.Token}, Status: 403, Problem: "insufficient_scope"},
		{Name: "other scope is refused", Request: webtest.Request{Method: "POST", Path: base, Token: contactsOnly, Body: map[string]any{"url": "http://127.0.0.1:9/", "events": []string{}}},
			Status: 403, Problem: "insufficient_scope"},
		{Name: "no credential", Request: webtest.Request{Method: "GET", Path: base}, Status: 401, Problem: "unauthorized"},
		{Name: "other organisation gets 404", Request: webtest.Request{Method: "GET", Path: base + "/" + id, Token: other.Token}, Status: 404, Problem: "not_found"},
		{Name: "other organisation cannot patch", Request: webtest.Request{Method: "PATCH", Path: base + "/" + id, Token: other.Token, Body: map[string]any{"is_active": false}},
			Status: 404, Problem: "not_found"},
		{Name: "other organisation lists none", Request: webtest.Request{Method: "GET", Path: base, Token: other.Token}, Status: 200, Contains: []string{`"items":[]`}},
		{Name: "unknown event type", Request: webtest.Request{Method: "POST", Path: base, Token: w.admin.Token, Body: map[string]any{"url": "http://127.0.0.1:9/", "events": []string{"calendar.event.deleted"}}},
			Status: 422, Problem: "validation_failed", Contains: []string{"body.events[0]", "calendar.event.deleted"}},
		{Name: "duplicate event type", Request: webtest.Request{Method: "POST", Path: base, Token: w.admin.Token, Body: map[string]any{"url": "http://127.0.0.1:9/", "events": []string{"drive.file.created", "drive.file.created"}}},
			Status: 422, Problem: "validation_failed", Contains: []string{"body.events[1]"}},
		{Name: "not http", Request: webtest.Request{Method: "POST", Path: base, Token: w.admin.Token, Body: map[string]any{"url": "ftp://example.com/x", "events": []string{}}},
			Status: 422, Problem: "validation_failed", Contains: []string{"body.url", "http or https"}},
		{Name: "missing url", Request: webtest.Request{Method: "POST", Path: base, Token: w.admin.Token, Body: map[string]any{"events": []string{}}},
			Status: 422, Problem: "validation_failed"},
		{Name: "patch unknown event", Request: webtest.Request{Method: "PATCH", Path: base + "/" + id, Token: w.admin.Token, Body: map[string]any{"events": []string{"nope"}}},
			Status: 422, Problem: "validation_failed"},
		{Name: "replay unknown delivery", Request: webtest.Request{Method: "POST", Path: base + "/" + id + "/deliveries/nope/replay", Token: w.admin.Token},
			Status: 404, Problem: "not_found"},
		{Name: "deliveries of another organisation's subscription", Request: webtest.Request{Method: "GET", Path: base + "/" + id + "/deliveries", Token: other.Token},
			Status: 404, Problem: "not_found"},
		{Name: "bad cursor", Request: webtest.Request{Method: "GET", Path: base + "?cursor=garbage", Token: w.admin.Token}, Status: 400, Problem: "invalid_cursor"},
	})

	// A refused update changed nothing.
	if got := w.do("GET", "/"+id, nil).JSON(); fmt.Sprint(got["events"]) != "[organization.user.created]" {
		t.Fatalf("events after refused patch: %v", got["events"])
	}
	// PATCH changes url, events and is_active; an empty events list means all.
	res = w.do("PATCH", "/"+id, map[string]any{"url": "http://127.0.0.1:9/v2", "events": []string{}, "is_active": false})
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"url":"http://127.0.0.1:9/v2"`, `"events":[]`, `"is_active":false`}, NotContains: []string{"signing_secret"}})

	// Rotate returns a new secret once.
	res = w.do("POST", "/"+id+"/rotate-secret", nil)
	webtest.Check(t, res, webtest.Scenario{Status: 200})
	if sec := res.JSON()["signing_secret"].(string); !hex64.MatchString(sec) || sec == sub["signing_secret"] {
		t.Fatalf("rotated secret %q", sec)
	}

	// Idempotency-Key on create: a retry replays the same subscription (and secret).
	key := map[string]string{"Idempotency-Key": "create-hook-1"}
	body := map[string]any{"url": "http://127.0.0.1:9/idem", "events": []string{}}
	first := s.Do(webtest.Request{Method: "POST", Path: base, Token: w.admin.Token, Header: key, Body: body})
	again := s.Do(webtest.Request{Method: "POST", Path: base, Token: w.admin.Token, Header: key, Body: body})
	webtest.Check(t, again, webtest.Scenario{Status: 201, Headers: map[string]string{"X-Idempotency-Replayed": "true"}})
	if first.JSON()["id"] != again.JSON()["id"] {
		t.Fatalf("idempotent create made two subscriptions: %s / %s", first.Body, again.Body)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: "POST", Path: base, Token: w.admin.Token, Header: key, Body: map[string]any{"url": "http://127.0.0.1:9/changed", "events": []string{}}}),
		webtest.Scenario{Status: 409, Problem: "idempotency_key_reused"})

	// Delete removes the subscription and its deliveries.
	emit(t, s, w.admin.OrganizationID, webhooks.EventDriveFileCreated, map[string]any{"file_id": "f1", "name": "a.txt"})
	var n int
	countDeliveries := func() int {
		ds, err := sqldb.WebhookStore{DB: s.Main.DB}.Deliveries(ctx, id, app.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	if n = countDeliveries(); n != 1 {
		t.Fatalf("deliveries before delete: %d", n)
	}
	webtest.Check(t, w.do("DELETE", "/"+id, nil), webtest.Scenario{Status: 204})
	webtest.Check(t, w.do("GET", "/"+id, nil), webtest.Scenario{Status: 404, Problem: "not_found"})
	webtest.Check(t, w.do("DELETE", "/"+id, nil), webtest.Scenario{Status: 404, Problem: "not_found"})
	if n = countDeliveries(); n != 0 {
		t.Fatalf("deliveries after delete: %d", n)
	}
	// The changes are audited.
	audit, _ := sqldb.Auditor{DB: s.Main.DB}.List(ctx, w.admin.OrganizationID, "", 100)
	actions := map[string]bool{}
	for _, a := range audit {
		if a.Module == "webhooks" {
			actions[a.Action] = true
		}
	}
	for _, a := range []string{"subscription.created", "subscription.updated", "subscription.secret_rotated", "subscription.deleted"} {
		if !actions[a] {
			t.Errorf("no audit entry %s: %v", a, actions)
		}
	}
}

func TestWebhookDeliverySigned(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	r := newReceiver(t)
	sub := w.subscribe(t, r) // events: [] — the whole catalog
	w.start()

	var sent []app.Event
	for i, typ := range webhooks.Catalog() {
		sent = append(sent, emit(t, w.s, w.admin.OrganizationID, typ, map[string]any{"n": i, "name": "<b>ü</b>"}))
	}
	eventually(t, "every catalog event delivered", func() bool { return len(r.received()) == len(sent) })
	byID := map[string]received{}
	for _, rc := range r.received() {
		byID[rc.Event.ID] = rc
	}
	msRE := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	for _, e := range sent {
		rc, ok := byID[e.ID]
		if !ok {
			t.Fatalf("event %s (%s) not received", e.ID, e.Type)
		}
		if !rc.Verified {
			t.Errorf("%s: signature did not verify", e.Type)
		}
		h := rc.Header
		if h.Get("Content-Type") != "application/json" || h.Get("X-Service-Event") != e.Type || h.Get("X-Service-Delivery") == "" {
			t.Errorf("%s: headers %v", e.Type, h)
		}
		if !strings.HasPrefix(h.Get("X-Service-Signature-256"), "sha256=") {
			t.Errorf("signature header %q", h.Get("X-Service-Signature-256"))
		}
		if rc.Event.Type != e.Type || rc.Event.OrgID != w.admin.OrganizationID || !msRE.MatchString(rc.Event.CreatedAt) ||
			rc.Event.CreatedAt != e.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z") || rc.Event.Data["name"] != "<b>ü</b>" {
			t.Errorf("body %s", rc.Body)
		}
		// The body's keys are exactly those of spec §6.
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(rc.Body, &keys)
		if len(keys) != 5 {
			t.Errorf("body keys %v", keys)
		}
	}

	ds := w.waitStatus(t, sub, len(sent), "successful")
	d := ds[0]
	if d.Attempts != 1 || d.ResponseStatus == nil || *d.ResponseStatus != 200 || d.NextAttemptAt != nil || d.Error != "" || d.DurationMS == nil {
		t.Fatalf("delivery record %+v", d)
	}
	if len(d.AttemptLog) != 1 || d.AttemptLog[0].Outcome != "successful" || d.AttemptLog[0].RequestHeaders["X-Service-Delivery"][0] != d.ID ||
		d.AttemptLog[0].RequestBody != string(byID[d.EventID].Body) {
		t.Fatalf("attempt log %+v", d.AttemptLog)
	}
	// Most recent first, with cursor pagination.
	if ds[0].ID < ds[len(ds)-1].ID {
		t.Fatal("deliveries are not most recent first")
	}
	res := w.do("GET", "/"+sub+"/deliveries?limit=3", nil)
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"has_more":true`}})
	var pg struct {
		Items      []deliveryJSON `json:"items"`
		NextCursor string         `json:"next_cursor"`
	}
	res.Decode(t, &pg)
	res = w.do("GET", "/"+sub+"/deliveries?limit=3&cursor="+pg.NextCursor, nil)
	var pg2 struct {
		Items []deliveryJSON `json:"items"`
	}
	res.Decode(t, &pg2)
	if len(pg.Items) != 3 || len(pg2.Items) != 3 || pg2.Items[0].ID != ds[3].ID {
		t.Fatalf("pages %d %d", len(pg.Items), len(pg2.Items))
	}
}

func TestWebhookRetriesFailReplay(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	r := newReceiver(t)
	sub := w.subscribe(t, r, webhooks.EventCalendarEventCreated)
	w.start()

	// Fails twice, then accepts: three attempts, one delivery id, one event id.
	r.setAnswer(func(n int, rw http.ResponseWriter) bool {
		if n <= 2 {
			rw.Header().Set("X-Debug", "try again")
			rw.WriteHeader(http.StatusInternalServerError)
			io.WriteString(rw, `{"error":"database down"}`)
			return true
		}
		return false
	})
	e := emit(t, w.s, w.admin.OrganizationID, webhooks.EventCalendarEventCreated, map[string]any{"event_id": "ev1"})
	ds := w.waitStatus(t, sub, 1, "successful")
	got := r.received()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3", len(got))
	}
	for _, rc := range got {
		if rc.Event.ID != e.ID || rc.Header.Get("X-Service-Delivery") != ds[0].ID || string(rc.Body) != string(got[0].Body) || !rc.Verified {
			t.Fatalf("attempt differs: %s %v", rc.Body, rc.Header)
		}
	}
	d := ds[0]
	if d.Attempts != 3 || len(d.AttemptLog) != 3 {
		t.Fatalf("delivery %+v", d)
	}
	a := d.AttemptLog[0]
	if a.Outcome != "retrying" || a.ResponseStatus == nil || *a.ResponseStatus != 500 || a.ResponseBody != `{"error":"database down"}` ||
		a.ResponseHeaders["X-Debug"][0] != "try again" || !strings.Contains(a.Error, "500") {
		t.Fatalf("first attempt %+v", a)
	}

	// Always failing: six attempts, then failed; the receiver's body is kept to 4 KiB.
	r.setAnswer(func(n int, rw http.ResponseWriter) bool {
		rw.WriteHeader(http.StatusBadGateway)
		io.WriteString(rw, strings.Repeat("x", 10000))
		return true
	})
	before := len(r.received())
	e2 := emit(t, w.s, w.admin.OrganizationID, webhooks.EventCalendarEventCreated, map[string]any{"event_id": "ev2"})
	ds = w.waitStatus(t, sub, 1, "failed")
	var failed deliveryJSON
	for _, d := range ds {
		if d.EventID == e2.ID {
			failed = d
		}
	}
	if failed.Attempts != 6 || failed.NextAttemptAt != nil || failed.ResponseStatus == nil || *failed.ResponseStatus != 502 ||
		len(failed.AttemptLog) != 6 || len(failed.AttemptLog[5].ResponseBody) != 4096 || failed.AttemptLog[5].Outcome != "failed" {
		t.Fatalf("failed delivery: attempts %d, log %d", failed.Attempts, len(failed.AttemptLog))
	}
	if n := len(r.received()) - before; n != 6 {
		t.Fatalf("%d requests for the failing delivery, want 6", n)
	}

	// Replay of a successful delivery is a conflict; of a failed one re-queues it.
	webtest.Check(t, w.do("POST", "/"+sub+"/deliveries/"+d.ID+"/replay", nil), webtest.Scenario{Status: 409, Problem: "conflict"})
	r.setAnswer(nil)
	res := w.do("POST", "/"+sub+"/deliveries/"+failed.ID+"/replay", nil)
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{`"id":"` + failed.ID + `"`, `"event_id":"` + e2.ID + `"`}})
	if st := res.JSON()["status"]; st != "pending" && st != "successful" {
		t.Fatalf("replayed status %v", st)
	}
	eventually(t, "replayed delivery successful", func() bool {
		for _, d := range w.deliveries(t, sub) {
			if d.ID == failed.ID {
				return d.Status == "successful"
			}
		}
		return false
	})
	last := r.received()[len(r.received())-1]
	if last.Event.ID != e2.ID || last.Header.Get("X-Service-Delivery") != failed.ID || !last.Verified {
		t.Fatalf("replay sent %s %v", last.Body, last.Header)
	}
}

func TestWebhookRetryAfterRedirectTimeout(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, func(c *wire.Config) { c.Webhooks.Timeout = 300 * time.Millisecond })
	r := newReceiver(t)
	sub := w.subscribe(t, r, webhooks.EventDriveFileDeleted)
	w.start()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r.setAnswer(func(n int, rw http.ResponseWriter) bool {
		switch n {
		case 1:
			rw.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
			rw.WriteHeader(http.StatusFound)
		case 2:
			select { // never answers within the timeout
			case <-release:
			case <-time.After(2 * time.Second):
			}
		default:
			rw.Header().Set("Retry-After", "3600")
			rw.WriteHeader(http.StatusServiceUnavailable)
		}
		return true
	})
	start := time.Now()
	emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveFileDeleted, map[string]any{"file_id": "f"})
	var d deliveryJSON
	eventually(t, "three attempts", func() bool {
		ds := w.deliveries(t, sub)
		d = ds[0]
		return d.Attempts == 3
	})
	log := d.AttemptLog
	if !strings.Contains(log[0].Error, "redirects are not followed") || *log[0].ResponseStatus != 302 {
		t.Errorf("redirect attempt %+v", log[0])
	}
	if !strings.Contains(log[1].Error, "no answer within 300ms") || log[1].ResponseStatus != nil {
		t.Errorf("timeout attempt %+v", log[1])
	}
	if d.Status != "retrying" || d.NextAttemptAt == nil || d.NextAttemptAt.Sub(start) < 59*time.Minute {
		t.Errorf("Retry-After 3600 not honoured: %+v", d)
	}
	if n := len(r.received()); n != 3 {
		t.Errorf("%d requests (the redirect was followed?)", n)
	}
}

func TestWebhookPauseSkipsAndResumeDoesNotResend(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	r := newReceiver(t)
	sub := w.subscribe(t, r)
	// The dispatcher is not running yet: deliveries stay queued.
	emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveFileCreated, map[string]any{"file_id": "1"})
	emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveFileUpdated, map[string]any{"file_id": "1"})
	if ds := w.deliveries(t, sub); len(ds) != 2 || ds[0].Status != "pending" || ds[0].NextAttemptAt == nil {
		t.Fatalf("queued: %+v", ds)
	}
	webtest.Check(t, w.do("PATCH", "/"+sub, map[string]any{"is_active": false}), webtest.Scenario{Status: 200, Contains: []string{`"is_active":false`}})
	ds := w.deliveries(t, sub)
	for _, d := range ds {
		if d.Status != "skipped" || d.NextAttemptAt != nil {
			t.Fatalf("after pause: %+v", d)
		}
	}
	// Replaying while paused is refused; events while paused are recorded as skipped.
	webtest.Check(t, w.do("POST", "/"+sub+"/deliveries/"+ds[0].ID+"/replay", nil), webtest.Scenario{Status: 409, Problem: "conflict", Contains: []string{"paused"}})
	paused := emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveFileDeleted, map[string]any{"file_id": "1"})
	w.waitStatus(t, sub, 3, "skipped")

	webtest.Check(t, w.do("PATCH", "/"+sub, map[string]any{"is_active": true}), webtest.Scenario{Status: 200, Contains: []string{`"is_active":true`}})
	w.start()
	live := emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveShareCreated, map[string]any{"file_id": "1"})
	eventually(t, "the live event", func() bool { return len(r.received()) >= 1 })
	settled(t, w.s) // nothing else may come
	if got := r.received(); len(got) != 1 || got[0].Event.ID != live.ID {
		t.Fatalf("after resume the receiver got %d deliveries", len(got))
	}
	// A skipped delivery can be replayed after resuming, with its event id.
	for _, d := range w.deliveries(t, sub) {
		if d.EventID == paused.ID {
			webtest.Check(t, w.do("POST", "/"+sub+"/deliveries/"+d.ID+"/replay", nil), webtest.Scenario{Status: 200})
		}
	}
	eventually(t, "replayed skipped delivery", func() bool { return len(r.received()) == 2 })
	if got := r.received()[1]; got.Event.ID != paused.ID || !got.Verified {
		t.Fatalf("replayed %s", got.Body)
	}
}

func TestWebhookRotateInvalidatesOldSecret(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	r := newReceiver(t)
	sub := w.subscribe(t, r)
	w.start()
	emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveFileCreated, nil)
	eventually(t, "first delivery", func() bool { return len(r.received()) == 1 })
	if !r.received()[0].Verified {
		t.Fatal("first delivery did not verify")
	}
	res := w.do("POST", "/"+sub+"/rotate-secret", nil)
	webtest.Check(t, res, webtest.Scenario{Status: 200})
	newSecret := res.JSON()["signing_secret"].(string)

	// The receiver still holds the old secret: the next delivery fails verification…
	emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveFileCreated, nil)
	eventually(t, "second delivery", func() bool { return len(r.received()) == 2 })
	second := r.received()[1]
	if second.Verified {
		t.Fatal("a delivery after rotation verified with the old secret")
	}
	// …and verifies with the new one.
	if !webhooks.Verify(newSecret, second.Header.Get("X-Service-Timestamp"), second.Header.Get("X-Service-Signature-256"), second.Body, time.Now()) {
		t.Fatal("the delivery does not verify with the new secret")
	}
	// Data null is sent as an empty object.
	if !strings.Contains(string(second.Body), `"data":{}`) {
		t.Fatalf("body %s", second.Body)
	}
}

func TestWebhookTargetsRefused(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, func(c *wire.Config) {
		c.Webhooks.RetrySchedule = "0s,10ms,10ms,10ms,10ms,10ms"
		c.Webhooks.AllowPrivateTargets = false
	})
	admin := s.Bootstrap("Hooks Inc", "admin@hooks.test", "admin")
	base := "/api/v1/webhooks/subscriptions"
	var rows []webtest.Scenario
	for _, u := range []string{
		"http://127.0.0.1/hook", "http://127.1.2.3:8080/", "http://localhost:8080/hook", "http://api.localhost/",
		"http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://10.1.2.3/", "http://172.16.0.1/",
		"http://192.168.1.10/", "http://100.64.0.1/", "http://169.254.169.254/latest/meta-data/",
		"http://metadata.google.internal/computeMetadata/v1/", "http://[fd00:ec2::254]/", "http://[fe80::1]/",
		"ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "//example.com/hook", "http:///nohost",
		"http://user:pass@93.184.215.14/", "http://93.184.215.14/#frag",
	} {
		rows = append(rows, webtest.Scenario{Name: u, Request: webtest.Request{Method: "POST", Path: base, Token: admin.Token,
			Body: map[string]any{"url": u, "events": []string{}}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.url"}})
	}
	rows = append(rows, webtest.Scenario{Name: "public address accepted", Request: webtest.Request{Method: "POST", Path: base, Token: admin.Token,
		Body: map[string]any{"url": "https://93.184.215.14/hook", "events": []string{}}}, Status: 201})
	s.Run(t, rows)
	// Nothing was stored by the refused requests.
	res := s.Do(webtest.Request{Method: "GET", Path: base, Token: admin.Token})
	var pg struct{ Items []map[string]any }
	res.Decode(t, &pg)
	if len(pg.Items) != 1 {
		t.Fatalf("%d subscriptions stored", len(pg.Items))
	}
	id := pg.Items[0]["id"].(string)
	webtest.Check(t, s.Do(webtest.Request{Method: "PATCH", Path: base + "/" + id, Token: admin.Token, Body: map[string]any{"url": "http://127.0.0.1:9/"}}),
		webtest.Scenario{Status: 422, Problem: "validation_failed"})

	// Connect time: a host that resolved elsewhere when saved (DNS rebinding) but
	// now points to loopback is refused by the dialer; nothing reaches it.
	r := newReceiver(t)
	store := sqldb.WebhookStore{DB: s.Main.DB}
	now := s.Clock.Now()
	rebound := webhooks.Subscription{ID: app.NewID(), OrgID: admin.OrganizationID, URL: r.URL + "/hook", Events: []string{}, IsActive: true, CreatedAt: now, UpdatedAt: now}
	if err := store.CreateSubscription(context.Background(), rebound, app.RandomHex(32)); err != nil {
		t.Fatal(err)
	}
	s.Main.Dispatcher.Start(context.Background())
	emit(t, s, admin.OrganizationID, webhooks.EventDriveFileCreated, nil)
	var d deliveryJSON
	eventually(t, "refused attempt", func() bool {
		res := s.Do(webtest.Request{Method: "GET", Path: base + "/" + rebound.ID + "/deliveries", Token: admin.Token})
		var pg struct{ Items []deliveryJSON }
		res.Decode(t, &pg)
		if len(pg.Items) == 1 && pg.Items[0].Attempts > 0 {
			d = pg.Items[0]
			return true
		}
		return false
	})
	if !strings.Contains(d.Error, "refused") || d.ResponseStatus != nil {
		t.Fatalf("connect-time refusal: %+v", d)
	}
	if n := len(r.received()); n != 0 {
		t.Fatalf("the loopback receiver got %d requests", n)
	}
}

func TestWebhookRestartLosesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := []webtest.Option{fastSchedule}
	s := webtest.Start(t, dir, opts...)
	admin := s.Bootstrap("Hooks Inc", "admin@hooks.test", "admin")
	r := newReceiver(t)
	w := &hookWorld{s: s, admin: admin}
	w.subscribe(t, r)
	r.setAnswer(func(n int, rw http.ResponseWriter) bool {
		time.Sleep(20 * time.Millisecond) // slow receiver: the queue is still full when we stop
		return false
	})
	const total = 60
	want := map[string]bool{}
	for i := range total {
		want[emit(t, s, admin.OrganizationID, webhooks.EventDriveFileCreated, map[string]any{"i": i}).ID] = true
	}
	w.start()
	eventually(t, "some deliveries", func() bool { return len(r.received()) >= 5 })
	s.Stop() // mid-queue: in-flight attempts finish, the rest stays queued
	stopped := len(r.received())
	if stopped >= total {
		t.Fatalf("everything was delivered before the stop (%d)", stopped)
	}

	s2 := webtest.Start(t, dir, opts...)
	s2.Main.Dispatcher.Start(context.Background())
	eventually(t, "every event after restart", func() bool {
		seen := map[string]bool{}
		for _, rc := range r.received() {
			seen[rc.Event.ID] = true
		}
		return len(seen) == total
	})
	for _, rc := range r.received() {
		if !want[rc.Event.ID] || !rc.Verified {
			t.Fatalf("unexpected delivery %s", rc.Body)
		}
	}
	t.Logf("%d delivered before the stop, %d requests in all", stopped, len(r.received()))
}

func TestWebhookRoutingAndPartnerEvents(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	s := w.s
	resellerRecv, customerRecv, filtered := newReceiver(t), newReceiver(t), newReceiver(t)
	w.subscribe(t, resellerRecv)
	w.subscribe(t, filtered, webhooks.EventCalendarEventCreated)

	// A customer provisioned through the partner API: its admin's invitation
	// emits organization.user.created, delivered to the reseller.
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/partner/orgs", Token: w.admin.Token,
		Body: map[string]any{"name": "Customer Co", "plan_slug": "business", "admin_email": "boss@customer.test"}})
	if res.StatusCode != 201 {
		t.Fatalf("create customer: %d %s", res.StatusCode, res.Body)
	}
	customer := res.JSON()["id"].(string)
	// The customer's own subscription.
	cust, err := s.Main.Identity.EnsureUser(context.Background(), customer, identity.EnsureUserInput{Email: "it@customer.test", Role: app.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	tok := s.Token(cust.Email, app.ScopeWebhooksManage)
	res = s.Do(webtest.Request{Method: "POST", Path: "/api/v1/webhooks/subscriptions", Token: tok, Body: map[string]any{"url": customerRecv.URL, "events": []string{}}})
	if res.StatusCode != 201 {
		t.Fatalf("customer subscription: %d %s", res.StatusCode, res.Body)
	}
	customerRecv.setSecret(res.JSON()["signing_secret"].(string))

	w.start()
	// A calendar event of the customer goes only to the customer.
	emit(t, s, customer, webhooks.EventCalendarEventCreated, map[string]any{"event_id": "e"})
	// A user event of the customer goes to the customer and to its reseller.
	emit(t, s, customer, webhooks.EventOrgUserDeleted, map[string]any{"user_id": "u"})
	// The reseller's own calendar event goes to both reseller subscriptions.
	emit(t, s, w.admin.OrganizationID, webhooks.EventCalendarEventCreated, map[string]any{"event_id": "r"})

	eventually(t, "deliveries", func() bool {
		return len(resellerRecv.received()) == 3 && len(customerRecv.received()) == 2 && len(filtered.received()) == 1
	})
	settled(t, s) // nothing else may come
	types := func(r *receiver) string {
		var out []string
		for _, rc := range r.received() {
			if !rc.Verified {
				t.Errorf("unverified delivery %s", rc.Body)
			}
			out = append(out, rc.Event.Type+"@"+map[bool]string{true: "customer", false: "reseller"}[rc.Event.OrgID == customer])
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	if got := types(resellerRecv); got != "calendar.event.created@reseller,organization.user.created@customer,organization.user.deleted@customer" {
		t.Errorf("reseller received %s", got)
	}
	if got := types(customerRecv); got != "calendar.event.created@customer,organization.user.deleted@customer" {
		t.Errorf("customer received %s", got)
	}
	if got := types(filtered); got != "calendar.event.created@reseller" {
		t.Errorf("filtered subscription received %s", got)
	}
	for _, rc := range resellerRecv.received() {
		if rc.Event.Type == "organization.user.created" && rc.Event.Data["email"] != "boss@customer.test" {
			t.Errorf("user.created data %v", rc.Event.Data)
		}
	}

	// The partner API's user lifecycle reaches the reseller's subscription.
	users := "/api/v1/partner/orgs/" + customer + "/users"
	res = s.Do(webtest.Request{Method: "POST", Path: users, Token: w.admin.Token, Body: map[string]any{"email": "new@customer.test"}})
	if res.StatusCode != 201 {
		t.Fatalf("invite: %d %s", res.StatusCode, res.Body)
	}
	uid := res.JSON()["id"].(string)
	webtest.Check(t, s.Do(webtest.Request{Method: "PATCH", Path: users + "/" + uid, Token: w.admin.Token, Body: map[string]any{"first_name": "Nina"}}), webtest.Scenario{Status: 200})
	webtest.Check(t, s.Do(webtest.Request{Method: "DELETE", Path: users + "/" + uid, Token: w.admin.Token}), webtest.Scenario{Status: 204})
	eventually(t, "user lifecycle events", func() bool { return len(resellerRecv.received()) == 6 })
	byType := map[string]received{}
	for _, rc := range resellerRecv.received()[3:] { // deliveries may arrive in any order
		byType[rc.Event.Type] = rc
	}
	for _, typ := range []string{"organization.user.created", "organization.user.updated", "organization.user.deleted"} {
		rc, ok := byType[typ]
		if !ok || rc.Event.OrgID != customer || rc.Event.Data["user_id"] != uid || !rc.Verified {
			t.Errorf("%s: %+v", typ, rc.Event)
		}
	}
	if cf := fmt.Sprint(byType["organization.user.updated"].Event.Data["changed_fields"]); cf != "[first_name]" {
		t.Errorf("changed_fields %s", cf)
	}
}

func TestWebhookConcurrentDispatchersNeverDoubleSend(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	var subs []*receiver
	for range 5 {
		r := newReceiver(t)
		w.subscribe(t, r)
		subs = append(subs, r)
	}
	const events = 40
	for i := range events {
		emit(t, w.s, w.admin.OrganizationID, webhooks.EventDriveFileUpdated, map[string]any{"i": i})
	}
	// Two dispatchers on the same database, as two processes would be.
	schedule, _ := w.s.Main.Config.RetrySchedule()
	poster := hooksend.New(hooksend.Options{Timeout: time.Second, AllowPrivateTargets: true, Conns: 4})
	other := webhooks.NewDispatcher(sqldb.WebhookStore{DB: w.s.Main.DB}, poster, webhooks.DispatcherConfig{Schedule: schedule,
		Timeout: time.Second, Workers: 4, PerTarget: 2}, nil, w.s.Clock.Now)
	other.Start(context.Background())
	t.Cleanup(func() { other.Shutdown(context.Background()) })
	w.start()
	eventually(t, "every delivery", func() bool {
		n := 0
		for _, r := range subs {
			n += len(r.received())
		}
		return n >= events*len(subs)
	})
	// Stopped, the dispatchers have made the attempts they had in flight:
	// a second send of a delivery, if any, has reached its receiver.
	for _, d := range []*webhooks.Dispatcher{w.s.Main.Dispatcher, other} {
		if err := d.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for _, r := range subs {
		for _, rc := range r.received() {
			seen[rc.Header.Get("X-Service-Delivery")]++
			if !rc.Verified {
				t.Fatalf("unverified %s", rc.Body)
			}
		}
	}
	if len(seen) != events*len(subs) {
		t.Fatalf("%d distinct deliveries, want %d", len(seen), events*len(subs))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("delivery %s sent %d times", id, n)
		}
	}
}
