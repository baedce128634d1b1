package web_test

import (
	"bytes"
	"net/url"
	"strconv"
	"testing"
	"time"

	"atrium/webtest"
)

// GET /api/v1/admin/storage: what the organisation's drive holds by user (the
// top `limit`, the others summed) and by kind of file; admins of the own
// organisation only, never another organisation's figures.
func TestAdminStorage(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	s := w.s
	admin := driveClient{t: t, s: s, tok: w.admin}
	member := driveClient{t: t, s: s, tok: w.member}
	admin.upload("a.png", "", "image/png", bytes.Repeat([]byte("a"), 300))
	member.upload("m.txt", "", "text/plain", bytes.Repeat([]byte("m"), 1000))
	member.upload("m.pdf", "", "application/pdf", bytes.Repeat([]byte("p"), 200))
	globex := driveClient{t: t, s: s, tok: w.otherAdmin}
	globex.upload("g.txt", "", "text/plain", bytes.Repeat([]byte("g"), 5000))

	type storage struct {
		QuotaBytes int64 `json:"quota_bytes"`
		UsedBytes  int64 `json:"used_bytes"`
		Users      []struct {
			UserID string `json:"user_id"`
			Email  string `json:"email"`
			Bytes  int64  `json:"bytes"`
			Files  int64  `json:"files"`
		} `json:"users"`
		OtherUsers int   `json:"other_users"`
		OtherBytes int64 `json:"other_bytes"`
		Types      []struct {
			MimeGroup string `json:"mime_group"`
			Bytes     int64  `json:"bytes"`
			Files     int64  `json:"files"`
		} `json:"types"`
	}
	var all storage
	admin.ok(200, "GET", "/api/v1/admin/storage", nil, &all)
	if all.UsedBytes != 1500 || all.QuotaBytes <= 0 {
		t.Fatalf("used %d of %d, want 1500 of the plan's quota", all.UsedBytes, all.QuotaBytes)
	}
	if len(all.Users) != 2 || all.Users[0].Email != "max@acme.test" || all.Users[0].Bytes != 1200 || all.Users[0].Files != 2 ||
		all.Users[1].UserID != w.adminID || all.Users[1].Bytes != 300 || all.OtherUsers != 0 || all.OtherBytes != 0 {
		t.Fatalf("users: %+v, others %d %d", all.Users, all.OtherUsers, all.OtherBytes)
	}
	want := []string{"text:1000", "image:300", "pdf:200"}
	if len(all.Types) != len(want) {
		t.Fatalf("types: %+v", all.Types)
	}
	for i, ty := range all.Types {
		if got := ty.MimeGroup + ":" + itoa(ty.Bytes); got != want[i] || ty.Files != 1 {
			t.Fatalf("type %d: %s (%d files), want %s", i, got, ty.Files, want[i])
		}
	}

	var top storage
	admin.ok(200, "GET", "/api/v1/admin/storage?limit=1", nil, &top)
	if len(top.Users) != 1 || top.Users[0].Bytes != 1200 || top.OtherUsers != 1 || top.OtherBytes != 300 {
		t.Fatalf("limit 1: %+v, others %d %d", top.Users, top.OtherUsers, top.OtherBytes)
	}

	s.Run(t, []webtest.Scenario{
		{Name: "a member is refused", Request: w.req("GET", "/storage", w.member, nil), Status: 403, Problem: "insufficient_scope"},
		{Name: "a limit out of range", Request: w.req("GET", "/storage?limit=0", w.admin, nil), Status: 422},
		{Name: "another organisation sees its own", Request: w.req("GET", "/storage", w.otherAdmin, nil), Status: 200,
			Contains: []string{`"used_bytes":5000`, "boss@globex.test"}, NotContains: []string{"acme.test"}},
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// GET /api/v1/audit filters by module, actor and time range; the filters
// combine, a cursor keeps its filters, an invalid filter is a 422 naming it.
func TestAuditFilters(t *testing.T) {
	t.Parallel()
	w := newAdminWorld(t)
	s := w.s
	admin := driveClient{t: t, s: s, tok: w.admin}
	member := driveClient{t: t, s: s, tok: w.member}
	start := s.Clock.Now()
	f := member.folder("Member folder", "")
	member.ok(204, "DELETE", "/api/v1/drive/"+f.ID, nil, nil)                                                       // drive, by the member
	webtest.Check(t, w.api("POST", "/teams", w.admin, map[string]any{"name": "T1"}), webtest.Scenario{Status: 201}) // admin
	s.Clock.Advance(time.Hour)
	mid := s.Clock.Now()
	g := admin.folder("Admin folder", "")
	admin.ok(204, "DELETE", "/api/v1/drive/"+g.ID, nil, nil)                                                        // drive, by the admin
	webtest.Check(t, w.api("POST", "/teams", w.admin, map[string]any{"name": "T2"}), webtest.Scenario{Status: 201}) // admin

	type entry struct {
		Module    string    `json:"module"`
		Action    string    `json:"action"`
		ActorID   string    `json:"actor_id"`
		CreatedAt time.Time `json:"created_at"`
	}
	type auditList struct {
		Items      []entry `json:"items"`
		NextCursor string  `json:"next_cursor"`
	}
	list := func(q url.Values) []entry {
		t.Helper()
		q.Set("limit", "100")
		var l auditList
		admin.ok(200, "GET", "/api/v1/audit?"+q.Encode(), nil, &l)
		return l.Items
	}
	every := list(url.Values{})
	for _, tc := range []struct {
		name string
		q    url.Values
		ok   func(entry) bool
	}{
		{"module admin", url.Values{"module": {"admin"}}, func(e entry) bool { return e.Module == "admin" }},
		{"actor member", url.Values{"actor_id": {w.memberID}}, func(e entry) bool { return e.ActorID == w.memberID }},
		{"module drive by the admin", url.Values{"module": {"drive"}, "actor_id": {w.adminID}},
			func(e entry) bool { return e.Module == "drive" && e.ActorID == w.adminID }},
		{"since mid", url.Values{"since": {mid.Format(time.RFC3339)}}, func(e entry) bool { return !e.CreatedAt.Before(mid) }},
		{"from start until mid, admin", url.Values{"since": {start.Format(time.RFC3339)}, "until": {mid.Format(time.RFC3339)}, "module": {"admin"}},
			func(e entry) bool {
				return e.Module == "admin" && !e.CreatedAt.Before(start) && e.CreatedAt.Before(mid)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []entry
			for _, e := range every {
				if tc.ok(e) {
					want = append(want, e)
				}
			}
			got := list(tc.q)
			if len(want) == 0 || len(want) == len(every) || len(got) != len(want) {
				t.Fatalf("%v: got %d entries, want %d of %d: %+v", tc.q, len(got), len(want), len(every), got)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v: entry %d is %+v, want %+v", tc.q, i, got[i], want[i])
				}
			}
		})
	}

	// A cursor keeps its filters: the second page of module=admin, limit=1.
	var p1, p2 auditList
	admin.ok(200, "GET", "/api/v1/audit?module=admin&limit=1", nil, &p1)
	admin.ok(200, "GET", "/api/v1/audit?module=admin&limit=1&cursor="+url.QueryEscape(p1.NextCursor), nil, &p2)
	if len(p1.Items) != 1 || len(p2.Items) != 1 || p2.Items[0].Module != "admin" || p2.Items[0].Action == "" {
		t.Fatalf("pages: %+v %+v", p1, p2)
	}

	s.Run(t, []webtest.Scenario{
		{Name: "an unknown module", Request: webtest.Request{Method: "GET", Path: "/api/v1/audit?module=nope", Token: w.admin},
			Status: 422, Problem: "validation_failed", Contains: []string{"query.module", "admin, calendar"}},
		{Name: "a time that is not RFC 3339", Request: webtest.Request{Method: "GET", Path: "/api/v1/audit?since=yesterday", Token: w.admin},
			Status: 422, Problem: "validation_failed", Contains: []string{"query.since"}},
		{Name: "until before since", Request: webtest.Request{Method: "GET", Path: "/api/v1/audit?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", Token: w.admin},
			Status: 422, Problem: "validation_failed", Contains: []string{"query.until"}},
		{Name: "another organisation's actor finds nothing", Request: webtest.Request{Method: "GET", Path: "/api/v1/audit?actor_id=" + w.memberID, Token: w.otherAdmin},
			Status: 200, Contains: []string{`"items":[]`}},
	})
}
