package web_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
)

// acceptedUser invites email into org through the partner API, accepts the
// invitation and returns the user's id and a drive client.
func (w *partnerWorld) acceptedUser(t *testing.T, org, email string) (string, driveClient) {
	t.Helper()
	var uid string
	if res := w.do("POST", "/orgs/"+org+"/users", w.tok, map[string]any{"email": email, "first_name": "Dee", "last_name": "Veloper"}); res.StatusCode == 201 {
		uid = res.JSON()["id"].(string)
	} else if res.StatusCode != 409 { // the org's admin, invited when the org was made
		t.Fatalf("invite %s: %d %s", email, res.StatusCode, res.Body)
	}
	res := w.s.Do(webtest.Request{Method: "POST", Path: "/api/v1/invitations/" + w.lastToken(t, email, "invite") + "/accept",
		Body: map[string]any{"password": "a long enough password"}})
	webtest.Check(t, res, webtest.Scenario{Status: 200})
	if uid == "" {
		uid = res.JSON()["id"].(string)
	}
	return uid, driveClient{t: t, s: w.s, tok: w.s.Token(email)}
}

// Deleting a user gives their storage back to the organisation: the quota no
// longer counts their files, their blobs and unfinished uploads are freed, and
// search forgets them.
func TestDeletingAUserFreesTheirDrive(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	s := w.s
	ctx := context.Background()
	org := w.createOrg(t, w.tok, "Acme", "boss@acme.test")
	_, boss := w.acceptedUser(t, org, "boss@acme.test")
	uid, dev := w.acceptedUser(t, org, "dev@acme.test")

	boss.upload("boss.txt", "", "text/plain", bytes.Repeat([]byte("b"), 1000))
	docs := dev.folder("Docs", "")
	sub := dev.folder("Sub", docs.ID)
	mine := dev.upload("plan.txt", sub.ID, "text/plain", []byte(strings.Repeat("the wombat plan ", 250)))
	dev.upload("notes.txt", docs.ID, "text/plain", bytes.Repeat([]byte("n"), 2000))
	tc := tusClient{t: t, s: s, tok: dev.tok}
	up := tc.create(tusMeta("filename", "big.bin"), 100)
	if res := tc.patch(up, 0, bytes.Repeat([]byte{1}, 10)); res.StatusCode != 204 {
		t.Fatalf("tus patch: %d %s", res.StatusCode, res.Body)
	}
	if got := hitNames(dev.search(q("wombat"))); got != "plan.txt" {
		t.Fatalf("search before: %q", got)
	}
	if u := boss.usage(); u.UsedBytes != 7000 || u.FileCount != 3 {
		t.Fatalf("usage before: %+v", u)
	}

	webtest.Check(t, w.do("DELETE", "/orgs/"+org+"/users/"+uid, w.tok, nil), webtest.Scenario{Status: 204})

	if u := boss.usage(); u.UsedBytes != 1000 || u.FileCount != 1 {
		t.Fatalf("usage after: %+v, want only boss.txt", u)
	}
	if got := hitNames(boss.search("")); got != "boss.txt" {
		t.Fatalf("search after: %q", got)
	}
	if n := searchDocs(t, s); n != 1 {
		t.Fatalf("%d documents in the index, want boss.txt's only", n)
	}
	if n, err := s.Main.Tus.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("upload sweep: %d %v, want the unfinished upload's bytes freed", n, err)
	}
	if left, _ := filepath.Glob(filepath.Join(s.Data, "tus", "*")); len(left) != 0 {
		t.Fatalf("the unfinished upload's bytes are still there: %v", left)
	}
	// Nothing refers to the user's bytes any more: the collector frees them
	// after its grace period, without waiting for the daily stray walk.
	blob := strings.TrimPrefix(mine.ContentHash, "sha256:")
	s.Clock.Advance(2 * time.Hour)
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["blobs_deleted"] != 2 {
		t.Fatalf("maintenance: %v %v", done, err)
	}
	if s.Main.Contents.Exists(ctx, blob) {
		t.Fatal("the deleted user's blob is still stored")
	}
}

// searchDocs returns the number of items in the search index, as /metrics
// tells an operator.
func searchDocs(t *testing.T, s *webtest.Server) int {
	t.Helper()
	res := s.Do(webtest.Request{Method: "GET", Path: "/metrics"})
	for _, line := range strings.Split(string(res.Body), "\n") {
		if v, ok := strings.CutPrefix(line, "atrium_search_documents "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("metric %q", line)
			}
			return n
		}
	}
	t.Fatalf("no atrium_search_documents in /metrics")
	return 0
}
