package web_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"atrium/storage/sqldb"
	"atrium/webtest"
)

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	admin := s.Bootstrap("Operator", "admin@example.test", "admin")
	create := func(key string, body any) *webtest.Response {
		return s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token,
			Header: map[string]string{"Idempotency-Key": key}, Body: body})
	}
	count := func() int {
		var page struct{ Items []map[string]any }
		s.Do(webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals?limit=100", Token: admin.Token}).Decode(t, &page)
		return len(page.Items)
	}
	body := map[string]any{"name": "ci", "scopes": []string{"contacts:read"}}

	first := create("k1", body)
	webtest.Check(t, first, webtest.Scenario{Status: 201})
	replay := create("k1", body)
	webtest.Check(t, replay, webtest.Scenario{Status: 201, Headers: map[string]string{"X-Idempotency-Replayed": "true"}})
	if string(replay.Body) != string(first.Body) {
		t.Fatalf("replayed body differs:\n%s\n%s", first.Body, replay.Body)
	}
	if first.Header.Get("X-Idempotency-Replayed") != "" {
		t.Fatal("first response marked replayed")
	}
	webtest.Check(t, create("k1", map[string]any{"name": "other", "scopes": []string{"contacts:read"}}),
		webtest.Scenario{Status: 409, Problem: "idempotency_key_reused"})
	if n := count(); n != 1 {
		t.Fatalf("%d service principals after replays, want 1", n)
	}

	// A 4xx is not kept: the same key works with a corrected body.
	webtest.Check(t, create("k2", map[string]any{"name": "", "scopes": []string{"contacts:read"}}), webtest.Scenario{Status: 422, Problem: "validation_failed"})
	webtest.Check(t, create("k2", body), webtest.Scenario{Status: 201})
	if n := count(); n != 2 {
		t.Fatalf("%d service principals, want 2", n)
	}

	// A key claimed by a request still in flight → 503 with Retry-After.
	idem := sqldb.Idempotency{DB: s.Main.DB}
	if rec, err := idem.Claim(context.Background(), admin.OrganizationID, "k3", "user:"+admin.UserID, []byte("x")); err != nil || rec != nil {
		t.Fatalf("claim: %v %v", rec, err)
	}
	webtest.Check(t, create("k3", map[string]any{"name": "x"}), webtest.Scenario{Status: 503, Problem: "idempotency_in_flight",
		Headers: map[string]string{"Retry-After": "1"}})

	// Keys are per organisation: another organisation's same key is independent.
	other := s.Bootstrap("Other Org", "other@example.test", "admin")
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: other.Token,
		Header: map[string]string{"Idempotency-Key": "k1"}, Body: body})
	webtest.Check(t, res, webtest.Scenario{Status: 201})
	if res.Header.Get("X-Idempotency-Replayed") != "" {
		t.Fatal("replayed across organisations")
	}
}

// A key belongs to the caller that sent it: another user of the same
// organisation sending the same key and body is refused, and never receives the
// first user's response (its upload URL would let it write the first user's file).
func TestIdempotencyKeyPerPrincipal(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	b := s.Bootstrap("Shared Org", "bea@example.test", "admin")
	a := s.Bootstrap("Shared Org", "ann@example.test", "member")
	if a.OrganizationID != b.OrganizationID {
		t.Fatalf("users in different organisations: %s %s", a.OrganizationID, b.OrganizationID)
	}
	hdr := map[string]string{"Idempotency-Key": "upload-report-q4"}
	body := map[string]any{"name": "report-q4.pdf", "mime_type": "application/pdf", "size": 5}
	upload := func(tok string) *webtest.Response {
		return s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/upload", Token: tok, Header: hdr, Body: body})
	}
	first := upload(b.Token)
	webtest.Check(t, first, webtest.Scenario{Status: 201})

	other := upload(a.Token)
	webtest.Check(t, other, webtest.Scenario{Status: 409, Problem: "idempotency_key_reused"})
	if other.Header.Get("X-Idempotency-Replayed") != "" || bytes.Contains(other.Body, []byte("upload_url")) {
		t.Fatalf("another user got the first user's response: %s", other.Body)
	}
	// The owner still gets its replay; a token of the same user is the same caller.
	webtest.Check(t, upload(b.Token), webtest.Scenario{Status: 201, Headers: map[string]string{"X-Idempotency-Replayed": "true"}})
	webtest.Check(t, upload(s.Token("bea@example.test")), webtest.Scenario{Status: 201, Headers: map[string]string{"X-Idempotency-Replayed": "true"}})

	// A key still in flight for another caller is refused the same way (no 503 that
	// would tell the caller someone else is using it).
	idem := sqldb.Idempotency{DB: s.Main.DB}
	if rec, err := idem.Claim(context.Background(), b.OrganizationID, "busy", "user:"+b.UserID, []byte("x")); err != nil || rec != nil {
		t.Fatalf("claim: %v %v", rec, err)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/upload", Token: a.Token,
		Header: map[string]string{"Idempotency-Key": "busy"}, Body: body}), webtest.Scenario{Status: 409, Problem: "idempotency_key_reused"})
}

func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	admin := s.Bootstrap("Operator", "admin@example.test", "admin")
	body := map[string]any{"name": "once", "scopes": []string{"contacts:read"}}
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	ids := make([]string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token,
				Header: map[string]string{"Idempotency-Key": "same"}, Body: body})
			statuses[i] = res.StatusCode
			if res.StatusCode == 201 {
				ids[i], _ = res.JSON()["id"].(string)
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, st := range statuses {
		switch st {
		case 201:
			seen[ids[i]] = true
		case 503:
		default:
			t.Fatalf("request %d: status %d", i, st)
		}
	}
	if len(seen) != 1 {
		t.Fatalf("created ids %v, want exactly one", seen)
	}
	var page struct{ Items []map[string]any }
	s.Do(webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals", Token: admin.Token}).Decode(t, &page)
	if len(page.Items) != 1 {
		t.Fatalf("%d resources created, want 1", len(page.Items))
	}
}

func TestCursorPagination(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	admin := s.Bootstrap("Operator", "admin@example.test", "admin")
	for i := range 5 {
		webtest.Check(t, s.Do(webtest.Request{Method: "POST", Path: "/api/v1/developer/service-principals", Token: admin.Token,
			Body: map[string]any{"name": fmt.Sprint("sp", i), "scopes": []string{"contacts:read"}}}), webtest.Scenario{Status: 201})
	}
	type page struct {
		Items      []map[string]any `json:"items"`
		NextCursor *string          `json:"next_cursor"`
		HasMore    bool             `json:"has_more"`
		Limit      int              `json:"limit"`
	}
	var names []string
	cursor := ""
	var firstCursor string
	for {
		var p page
		s.Do(webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals?limit=2&cursor=" + cursor, Token: admin.Token}).Decode(t, &p)
		if p.Limit != 2 {
			t.Fatalf("limit %d", p.Limit)
		}
		for _, it := range p.Items {
			names = append(names, it["name"].(string))
		}
		if !p.HasMore {
			if p.NextCursor != nil {
				t.Fatal("next_cursor set on the last page")
			}
			break
		}
		cursor = *p.NextCursor
		if firstCursor == "" {
			firstCursor = cursor
		}
	}
	if fmt.Sprint(names) != "[sp4 sp3 sp2 sp1 sp0]" {
		t.Fatalf("pages gave %v, want newest first", names)
	}
	list := "/api/v1/developer/service-principals?limit=2&cursor="
	tampered := []byte(firstCursor)
	tampered[3] ^= 1
	s.Run(t, []webtest.Scenario{
		{Name: "tampered cursor", Request: webtest.Request{Method: "GET", Path: list + string(tampered), Token: admin.Token}, Status: 400, Problem: "invalid_cursor"},
		{Name: "garbage cursor", Request: webtest.Request{Method: "GET", Path: list + "abc", Token: admin.Token}, Status: 400, Problem: "invalid_cursor"},
		{Name: "limit too large", Request: webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals?limit=101", Token: admin.Token}, Status: 422, Problem: "validation_failed",
			Contains: []string{`"location":"query.limit"`}},
		{Name: "limit zero", Request: webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals?limit=0", Token: admin.Token}, Status: 422, Problem: "validation_failed"},
		{Name: "default limit", Request: webtest.Request{Method: "GET", Path: "/api/v1/developer/service-principals", Token: admin.Token}, Status: 200, Contains: []string{`"limit":20`}},
	})
	// A cursor of another list is refused.
	other := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/audit?limit=1", Token: admin.Token}).JSON()["next_cursor"].(string)
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: list + other, Token: admin.Token}), webtest.Scenario{Status: 400, Problem: "invalid_cursor"})
	// 24 hours later the cursor has expired.
	s.Clock.Advance(24*time.Hour + time.Minute)
	webtest.Check(t, s.Do(webtest.Request{Method: "GET", Path: list + firstCursor, Token: admin.Token}), webtest.Scenario{Status: 400, Problem: "cursor_expired"})
}
