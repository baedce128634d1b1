package web_test

import (
	"context"
	"testing"
	"time"

	"atrium/webtest"
	"atrium/wire"
)

type auditPage struct {
	Data []struct {
		Action    string    `json:"action"`
		CreatedAt time.Time `json:"created_at"`
	} `json:"items"`
}

// [audit] max_age: entries older than it leave the audit log at the next
// maintenance; without it (the default) they stay for good.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		maxAge time.Duration
		kept   bool
	}{
		{"kept for good by default", 0, true},
		{"pruned after max_age", 30 * 24 * time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := webtest.New(t, func(c *wire.Config) { c.Audit.MaxAge = tc.maxAge })
			ann := s.Bootstrap("Audit Org", "ann@example.test", "admin")
			c := driveClient{t: t, s: s, tok: ann.Token}
			old := c.folder("Old", "")
			c.ok(204, "DELETE", "/api/v1/drive/"+old.ID, nil, nil)
			s.Clock.Advance(31 * 24 * time.Hour)
			recent := c.folder("Recent", "")
			c.ok(204, "DELETE", "/api/v1/drive/"+recent.ID, nil, nil)
			actions := func() int {
				var p auditPage
				c.ok(200, "GET", "/api/v1/audit?limit=100", nil, &p)
				return len(p.Data)
			}
			before := actions()
			if before < 4 { // two folders made and deleted
				t.Fatalf("%d audit entries before maintenance", before)
			}
			done, err := s.Main.Housekeeping(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			after := actions()
			switch {
			case tc.kept && (done["audit_pruned"] != 0 || after != before):
				t.Fatalf("pruned %d, %d → %d entries", done["audit_pruned"], before, after)
			case !tc.kept && (done["audit_pruned"] == 0 || after != before-done["audit_pruned"] || after == 0):
				t.Fatalf("pruned %d, %d → %d entries", done["audit_pruned"], before, after)
			}
			if !tc.kept {
				var p auditPage
				c.ok(200, "GET", "/api/v1/audit?limit=100", nil, &p)
				for _, e := range p.Data {
					if s.Clock.Now().Sub(e.CreatedAt) > tc.maxAge {
						t.Fatalf("entry of %v kept: %+v", e.CreatedAt, e)
					}
				}
			}
		})
	}
}
