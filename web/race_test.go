package web_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"atrium/storage/sqldb"
	"atrium/webtest"
)

// race sends the requests at once (each from a goroutine of its own, released
// together) and returns their statuses in order.
func race(s *webtest.Server, reqs []webtest.Request) []int {
	out := make([]int, len(reqs))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, r := range reqs {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			out[i] = s.Do(r).StatusCode
		}()
	}
	start.Done()
	done.Wait()
	return out
}

// counts tallies statuses.
func counts(statuses []int) map[int]int {
	m := map[int]int{}
	for _, st := range statuses {
		m[st]++
	}
	return m
}

// The rules that read, check and write hold when the writes come together:
// on SQLite they take turns at the one writer; on PostgreSQL (with
// ATRIUM_TEST_DATABASE_URL) they run side by side in SERIALIZABLE
// transactions — with the organisation's write lane off, which would
// otherwise queue them — and the losers of a conflict run again and find the
// rule's answer. Exactly one wins the last of anything; nothing is counted
// twice.
func TestRaceForTheLast(t *testing.T) {
	t.Parallel()

	t.Run("quota byte", func(t *testing.T) {
		t.Parallel()
		s := webtest.New(t)
		s.Main.DB.SetWriteLanes(false)
		ann := newDavUser(t, s, "Quota Race", "ann@example.test", "admin")
		ctx := context.Background()
		if _, err := s.Main.DB.Exec(ctx, `UPDATE plans SET quota_bytes = 100 WHERE slug = 'enterprise'`); err != nil {
			t.Fatal(err)
		}
		s.Main.Identity.CredentialsChanged()
		// Six files of 60 bytes: any one fits, no two do.
		var reqs []webtest.Request
		for i := range 6 {
			reqs = append(reqs, davReq(ann, "PUT", fmt.Sprintf("/q%d.bin", i), nil, string(make([]byte, 60))))
		}
		got := counts(race(s, reqs))
		if got[201] != 1 || got[507] != 5 {
			t.Fatalf("statuses %v, want one 201 and five 507", got)
		}
		bytes, files, err := sqldb.DriveStore{DB: s.Main.DB}.OrgUsage(ctx, ann.creds.OrganizationID)
		if err != nil || bytes != 60 || files != 1 {
			t.Fatalf("the organisation's usage: %d bytes in %d files (%v), want 60 in 1", bytes, files, err)
		}
	})

	t.Run("seat", func(t *testing.T) {
		t.Parallel()
		w := newPartnerWorld(t)
		w.s.Main.DB.SetWriteLanes(false)
		org := w.createOrg(t, w.tok, "Seat Race", "boss@seatrace.test") // 3 seats, 1 invited
		var reqs []webtest.Request
		for i := range 6 {
			reqs = append(reqs, webtest.Request{Method: http.MethodPost, Path: "/api/v1/partner/orgs/" + org + "/users", Token: w.tok,
				Body: map[string]any{"email": fmt.Sprintf("p%d@seatrace.test", i)}})
		}
		got := counts(race(w.s, reqs))
		if got[201] != 2 || got[409] != 4 {
			t.Fatalf("statuses %v, want two 201 (the two free seats) and four 409", got)
		}
		webtest.Check(t, w.do("GET", "/orgs/"+org+"/subscription", w.tok, nil), webtest.Scenario{Status: 200, Contains: []string{`"used_seats":3`}})
	})

	t.Run("seat floor", func(t *testing.T) {
		t.Parallel()
		w := newPartnerWorld(t)
		w.s.Main.DB.SetWriteLanes(false)
		org := w.createOrg(t, w.tok, "Floor Race", "boss@floorrace.test") // 3 seats, 1 invited
		// Down to 2 seats while two invitations each take one of the 2
		// free: whichever order they commit in, the seats never fall
		// below those used.
		got := race(w.s, []webtest.Request{
			{Method: http.MethodPost, Path: "/api/v1/partner/orgs/" + org + "/subscription/change-seats", Token: w.tok, Body: map[string]any{"seats": 2}},
			{Method: http.MethodPost, Path: "/api/v1/partner/orgs/" + org + "/users", Token: w.tok, Body: map[string]any{"email": "a@floorrace.test"}},
			{Method: http.MethodPost, Path: "/api/v1/partner/orgs/" + org + "/users", Token: w.tok, Body: map[string]any{"email": "b@floorrace.test"}},
		})
		invited := counts(got[1:])[201]
		switch {
		case got[0] == 200 && invited == 1, got[0] == 409 && invited == 2:
		default:
			t.Fatalf("change-seats %d, invitations %v: want 200 with one invitation, or 409 (below the seats used) with both", got[0], got[1:])
		}
		sub := w.do("GET", "/orgs/"+org+"/subscription", w.tok, nil).JSON()
		if used, seats := sub["used_seats"].(float64), sub["seats"].(float64); used != float64(1+invited) || used > seats {
			t.Fatalf("subscription %v: want %d seats used, no more than the seats", sub, 1+invited)
		}
	})

	t.Run("trash purge", func(t *testing.T) {
		t.Parallel()
		s := webtest.New(t)
		s.Main.DB.SetWriteLanes(false)
		ann := newDavUser(t, s, "Purge Race", "ann@example.test", "admin")
		c := ann.rest
		ids := map[string]string{}
		for name, body := range map[string]string{"a.txt": "0123456789", "b.txt": "01234567890123456789"} {
			webtest.Check(t, s.Do(davReq(ann, "PUT", "/"+name, nil, body)), webtest.Scenario{Status: 201})
			var f struct{ Items []struct{ ID, Name string } }
			c.ok(200, "GET", "/api/v1/drive/browse", nil, &f)
			for _, it := range f.Items {
				ids[it.Name] = it.ID
			}
			c.ok(204, "POST", "/api/v1/drive/"+ids[name]+"/trash", nil, nil)
		}
		// Empty the trash twice, delete a.txt for good twice and restore it
		// twice, all at once: a.txt ends restored (once, and counted once)
		// or gone (deleted from the trash, or after its restore); b.txt is
		// gone; nothing is counted twice or below zero.
		var reqs []webtest.Request
		for range 2 {
			reqs = append(reqs,
				webtest.Request{Method: http.MethodDelete, Path: "/api/v1/drive/trash", Token: ann.creds.Token},
				webtest.Request{Method: http.MethodDelete, Path: "/api/v1/drive/" + ids["a.txt"], Token: ann.creds.Token},
				webtest.Request{Method: http.MethodPost, Path: "/api/v1/drive/" + ids["a.txt"] + "/restore", Token: ann.creds.Token})
		}
		got := race(s, reqs)
		restored := counts([]int{got[2], got[5]})[200]
		if restored > 1 {
			t.Fatalf("statuses %v: a.txt restored twice", got)
		}
		var usage struct {
			UsedBytes int64 `json:"used_bytes"`
			FileCount int64 `json:"file_count"`
		}
		c.ok(200, "GET", "/api/v1/drive/storage", nil, &usage)
		var trash struct{ Items []struct{ ID string } }
		c.ok(200, "GET", "/api/v1/drive/trash", nil, &trash)
		live := c.do("GET", "/api/v1/drive/"+ids["a.txt"], nil).StatusCode == 200
		switch {
		case live && restored == 1 && usage.UsedBytes == 10 && usage.FileCount == 1 && len(trash.Items) == 0:
		case !live && usage.UsedBytes == 0 && usage.FileCount == 0 && len(trash.Items) == 0:
		default:
			t.Fatalf("statuses %v; a.txt live %v; usage %+v; %d in the trash: want a.txt restored and counted once, or everything gone and counted zero",
				got, live, usage, len(trash.Items))
		}
	})

	t.Run("lock", func(t *testing.T) {
		t.Parallel()
		s := webtest.New(t)
		s.Main.DB.SetWriteLanes(false)
		ann := newDavUser(t, s, "Lock Race", "ann@example.test", "admin")
		webtest.Check(t, s.Do(davReq(ann, "PUT", "/contended.txt", nil, "x")), webtest.Scenario{Status: 201})
		lockBody := `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>` +
			`<D:locktype><D:write/></D:locktype><D:owner>racer</D:owner></D:lockinfo>`
		var reqs []webtest.Request
		for range 6 {
			r := davReq(ann, "LOCK", "/contended.txt", map[string]string{"Content-Type": "application/xml", "Timeout": "Second-600"}, lockBody)
			reqs = append(reqs, r)
		}
		got := counts(race(s, reqs))
		if got[200] != 1 || got[423] != 5 {
			t.Fatalf("statuses %v, want one 200 and five 423", got)
		}
	})

	t.Run("name", func(t *testing.T) {
		t.Parallel()
		s := webtest.New(t)
		s.Main.DB.SetWriteLanes(false)
		ann := newDavUser(t, s, "Name Race", "ann@example.test", "admin")
		// Six folders of one name at once: one is made, the others are
		// refused (405 when the name is found taken before the write, 409
		// when the write itself finds it taken).
		var reqs []webtest.Request
		for range 6 {
			reqs = append(reqs, davReq(ann, "MKCOL", "/Reports", map[string]string{"Content-Type": ""}, nil))
		}
		got := counts(race(s, reqs))
		if got[201] != 1 || got[405]+got[409] != 5 {
			t.Fatalf("statuses %v, want one 201 and five 405 or 409", got)
		}
		var n int
		if err := s.Main.DB.QueryRow(context.Background(), `SELECT count(*) FROM drive_files WHERE name = 'Reports'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%d folders named Reports (%v), want 1", n, err)
		}
	})

	t.Run("last admin", func(t *testing.T) {
		t.Parallel()
		w := newAdminWorld(t)
		w.s.Main.DB.SetWriteLanes(false)
		c := driveClient{t: t, s: w.s, tok: w.admin}
		var sp, tok map[string]any
		c.ok(201, "POST", "/api/v1/developer/service-principals", map[string]any{"name": "robot", "scopes": []string{"admin:access"}}, &sp)
		c.ok(201, "POST", "/api/v1/developer/service-principals/"+sp["id"].(string)+"/tokens", map[string]any{}, &tok)
		robot := tok["token"].(string)
		webtest.Check(t, w.s.Do(w.req("POST", "/users/"+w.memberID+"/change-role", w.admin, map[string]any{"role_slug": "admin"})), webtest.Scenario{Status: 200})
		// Two active admins, each suspended at once: one of them stays.
		got := counts(race(w.s, []webtest.Request{
			w.req("POST", "/users/"+w.adminID+"/suspend", robot, nil),
			w.req("POST", "/users/"+w.memberID+"/suspend", robot, nil),
		}))
		if got[200] != 1 || got[409] != 1 {
			t.Fatalf("statuses %v, want one 200 and one 409 (the last active admin)", got)
		}
		var active int
		if err := w.s.Main.DB.QueryRow(context.Background(), `SELECT count(*) FROM users WHERE organization_id = ? AND role_slug = 'admin' AND status = 'active'`,
			w.org).Scan(&active); err != nil || active != 1 {
			t.Fatalf("%d active admins (%v), want 1", active, err)
		}
	})
}
