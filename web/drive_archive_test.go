package web_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
	"atrium/wire"
)

type restoreInfo struct {
	Status            string `json:"status"`
	FileID            string `json:"file_id"`
	RestoreStatusURL  string `json:"restore_status_url"`
	RetryAfterSeconds int    `json:"retry_after_seconds"`
}

type restoreStatus struct {
	FileID   string  `json:"file_id"`
	Status   string  `json:"status"`
	Progress float64 `json:"progress"`
	ReadyAt  *string `json:"ready_at"`
}

type storageUsage struct {
	UsedBytes     int64 `json:"used_bytes"`
	FileCount     int64 `json:"file_count"`
	UserUsedBytes int64 `json:"user_used_bytes"`
	UserFileCount int64 `json:"user_file_count"`
}

func (c driveClient) detail(id string) driveFile {
	c.t.Helper()
	var f driveFile
	c.ok(200, "GET", "/api/v1/drive/"+id+"/detail", nil, &f)
	return f
}

// restoreAndDownload downloads an archived file: 202 with the restore info,
// restore-status until it is active, then the bytes.
func (c driveClient) restoreAndDownload(id string) []byte {
	c.t.Helper()
	res := c.do("GET", "/api/v1/drive/"+id+"/download", nil)
	if res.StatusCode != 202 {
		c.t.Fatalf("download of an archived file: %d %s", res.StatusCode, res.Body)
	}
	var info restoreInfo
	res.Decode(c.t, &info)
	if info.Status != "restoring" || info.FileID != id || info.RestoreStatusURL != "/api/v1/drive/"+id+"/restore-status" || info.RetryAfterSeconds < 1 {
		c.t.Fatalf("restore info %+v", info)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		var st restoreStatus
		c.ok(200, "GET", info.RestoreStatusURL, nil, &st)
		if st.FileID != id || st.Progress < 0 || st.Progress > 1 {
			c.t.Fatalf("restore status %+v", st)
		}
		if st.Status == "active" {
			if st.Progress != 1 || st.ReadyAt == nil {
				c.t.Fatalf("restored status %+v", st)
			}
			break
		}
		if st.Status != "restoring" {
			c.t.Fatalf("restore status %+v", st)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("restore did not finish: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c.download(id)
}

func (c driveClient) usage() storageUsage {
	c.t.Helper()
	var u storageUsage
	c.ok(200, "GET", "/api/v1/drive/storage", nil, &u)
	return u
}

func TestDriveArchiveRestore(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	ctx := context.Background()
	var buf bytes.Buffer
	for i := 0; buf.Len() < 300<<10; i++ {
		fmt.Fprintf(&buf, "line %d of the yearly report\n", i)
	}
	content := buf.Bytes()
	report := c.upload("report.txt", "", "text/plain", content)
	shared := c.upload("shared.txt", "", "text/plain", []byte("shared bytes"))
	var dup driveFile
	c.ok(201, "POST", "/api/v1/drive/"+shared.ID+"/copy", nil, &dup)
	folder := c.folder("Docs", "")
	before := c.usage()

	other := s.Bootstrap("Other Org", "eve@example.test", "admin")
	colleague := s.Bootstrap("Drive Org", "bob@example.test", "member")
	s.Run(t, []webtest.Scenario{
		{Name: "member cannot archive", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + report.ID + "/archive", Token: colleague.Token}, Status: 403},
		{Name: "other org cannot archive", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + report.ID + "/archive", Token: other.Token}, Status: 404, Problem: "not_found"},
		{Name: "folder is not archived", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + folder.ID + "/archive", Token: c.tok}, Status: 409, Problem: "conflict"},
	})

	for _, f := range []driveFile{report, shared} {
		var a driveFile
		c.ok(200, "POST", "/api/v1/drive/"+f.ID+"/archive", nil, &a)
		if a.Status != "archived" || a.ContentHash != f.ContentHash {
			t.Fatalf("archive %+v", a)
		}
		if d := c.detail(f.ID); d.Status != "archived" {
			t.Fatalf("detail after archive %+v", d)
		}
	}
	// Archiving again is a no-op.
	c.ok(200, "POST", "/api/v1/drive/"+report.ID+"/archive", nil, nil)

	// The hot blob of the report goes with maintenance; the shared one stays
	// for the copy, which keeps downloading.
	s.Clock.Advance(2 * time.Hour)
	done, err := s.Main.Drive.Maintain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if done["files_archived"] != 0 {
		t.Fatalf("archiving by age is off by default: %v", done)
	}
	if s.Main.Contents.Exists(ctx, strings.TrimPrefix(report.ContentHash, "sha256:")) {
		t.Fatal("the hot blob of an archived file was kept")
	}
	if !s.Main.Contents.Exists(ctx, strings.TrimPrefix(shared.ContentHash, "sha256:")) {
		t.Fatal("the hot blob another file uses was deleted")
	}
	if got := c.download(dup.ID); string(got) != "shared bytes" {
		t.Fatalf("copy of an archived file: %q", got)
	}
	if after := c.usage(); after != before {
		t.Fatalf("usage changed by archiving: %+v, before %+v", after, before)
	}

	var vs []struct {
		ID string `json:"id"`
	}
	c.ok(200, "GET", "/api/v1/drive/"+report.ID+"/versions", nil, &vs)
	s.Run(t, []webtest.Scenario{
		{Name: "other org: no restore status", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + report.ID + "/restore-status", Token: other.Token}, Status: 404, Problem: "not_found"},
		{Name: "other org: no download", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + report.ID + "/download", Token: other.Token}, Status: 404, Problem: "not_found"},
		{Name: "colleague without share: no download", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + report.ID + "/download", Token: colleague.Token}, Status: 404, Problem: "not_found"},
		{Name: "archived version download", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + report.ID + "/versions/" + vs[0].ID + "/download", Token: c.tok}, Status: 409, Problem: "conflict"},
	})
	var st restoreStatus
	c.ok(200, "GET", "/api/v1/drive/"+report.ID+"/restore-status", nil, &st)
	if st.Status != "archived" || st.Progress != 0 || st.ReadyAt != nil {
		t.Fatalf("restore status before restore %+v", st)
	}

	if got := c.restoreAndDownload(report.ID); !bytes.Equal(got, content) {
		t.Fatalf("restored %d bytes, want %d equal bytes", len(got), len(content))
	}
	if got := c.restoreAndDownload(shared.ID); string(got) != "shared bytes" {
		t.Fatalf("restored shared %q", got)
	}
	if d := c.detail(report.ID); d.Status != "active" || d.ContentHash != report.ContentHash {
		t.Fatalf("detail after restore %+v", d)
	}
	if after := c.usage(); after != before {
		t.Fatalf("usage changed by archive and restore: %+v, before %+v", after, before)
	}

	// The archived copies nothing refers to any more are swept; the restored
	// file still downloads.
	done, err = s.Main.Drive.Maintain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if done["archive_deleted"] != 2 {
		t.Fatalf("archive sweep: %v", done)
	}
	if got := c.download(report.ID); !bytes.Equal(got, content) {
		t.Fatal("download after the sweep differs")
	}
}

func TestDriveArchiveByAge(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, func(cfg *wire.Config) { cfg.Drive.ArchiveAfter = 30 * 24 * time.Hour })
	cr := s.Bootstrap("Drive Org", "ann@example.test", "admin")
	c := driveClient{t: t, s: s, tok: cr.Token}
	ctx := context.Background()
	cold := c.upload("cold.txt", "", "text/plain", []byte("nobody reads me"))
	warm := c.upload("warm.txt", "", "text/plain", []byte("read often"))
	mounted := c.upload("mounted.txt", "", "text/plain", []byte("read from a mount"))

	s.Clock.Advance(20 * 24 * time.Hour)
	c.download(warm.ID)
	// A read through the file mount counts as much as a download.
	dav := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/webdav/mounted.txt", BasicID: cr.Email, BasicPW: cr.AppPassword})
	webtest.Check(t, dav, webtest.Scenario{Status: 200, Contains: []string{"read from a mount"}})
	s.Clock.Advance(15 * 24 * time.Hour)
	done, err := s.Main.Drive.Maintain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if done["files_archived"] != 1 {
		t.Fatalf("maintenance %v", done)
	}
	if d := c.detail(cold.ID); d.Status != "archived" {
		t.Fatalf("cold file %+v", d)
	}
	for _, f := range []driveFile{warm, mounted} {
		if d := c.detail(f.ID); d.Status != "active" {
			t.Fatalf("file read 15 days ago %+v", d)
		}
	}
	if got := c.restoreAndDownload(cold.ID); string(got) != "nobody reads me" {
		t.Fatalf("restored %q", got)
	}
	// A restored file counts as just accessed: not archived again at once.
	if done, err = s.Main.Drive.Maintain(ctx); err != nil || done["files_archived"] != 0 {
		t.Fatalf("maintenance after restore %v %v", done, err)
	}
}

// An archived file read through the file mount, which cannot follow a
// restore: 503 with a Retry-After while it is restored, then its bytes.
func TestDriveArchiveReadThroughMount(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Drive Org", "ann@example.test", "admin")
	c := driveClient{t: t, s: s, tok: cr.Token}
	f := c.upload("old.txt", "", "text/plain", []byte("archived, then read from Finder"))
	c.ok(200, "POST", "/api/v1/drive/"+f.ID+"/archive", nil, nil)
	get := func() *webtest.Response {
		return s.Do(webtest.Request{Method: "GET", Path: "/api/v1/webdav/old.txt", BasicID: cr.Email, BasicPW: cr.AppPassword})
	}
	res := get()
	webtest.Check(t, res, webtest.Scenario{Status: 503, Problem: "unavailable", Contains: []string{"being restored"}})
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
	}
	deadline := time.Now().Add(15 * time.Second)
	for res.StatusCode == 503 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		res = get()
	}
	webtest.Check(t, res, webtest.Scenario{Status: 200, Contains: []string{"archived, then read from Finder"}})
	if d := c.detail(f.ID); d.Status != "active" {
		t.Fatalf("after the read %+v", d)
	}
}

// A blob stored but never referenced (the server stopped between the bytes and
// their commit) is found by maintenance and collected after the grace period;
// referenced blobs stay.
func TestDriveStrayBlobsCollected(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Stray Org", "ann@example.test", "admin")
	c := driveClient{t: t, s: s, tok: cr.Token}
	kept := c.upload("kept.txt", "", "text/plain", []byte("referenced bytes"))
	ctx := context.Background()
	obj, err := s.Main.Blobs.Put(ctx, strings.NewReader("bytes whose commit never happened"), 0)
	if err != nil {
		t.Fatal(err)
	}
	stray := obj.Hash
	// Young blobs are never strays: an upload may be between Put and commit.
	done, err := s.Main.Drive.Maintain(ctx)
	if err != nil || done["strays_found"] != 0 {
		t.Fatalf("first run: %v %v", done, err)
	}
	s.Clock.Advance(25 * time.Hour)
	if done, err = s.Main.Drive.Maintain(ctx); err != nil || done["strays_found"] != 1 {
		t.Fatalf("after a day: %v %v", done, err)
	}
	s.Clock.Advance(2 * time.Hour)
	if done, err = s.Main.Drive.Maintain(ctx); err != nil || done["blobs_deleted"] != 1 {
		t.Fatalf("after the grace period: %v %v", done, err)
	}
	if s.Main.Blobs.Exists(ctx, stray) {
		t.Fatal("the stray blob is still stored")
	}
	if got := c.download(kept.ID); string(got) != "referenced bytes" {
		t.Fatalf("kept file: %q", got)
	}
}

// A blob that a write on another node holds (it found the blob stored and is
// about to refer to it) is left alone by the collector, orphan or not, until
// the hold ends; a write's own hold is gone once its reference committed.
func TestDriveHeldBlobNotCollected(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Hold Org", "ann@example.test", "admin")
	c := driveClient{t: t, s: s, tok: cr.Token}
	big := bytes.Repeat([]byte("held "), 20_000) // over the small-content bound: a blob of its own
	kept := c.upload("big.bin", "", "application/octet-stream", big)
	ctx := context.Background()
	var holds int
	if err := s.Main.DB.QueryRow(ctx, `SELECT count(*) FROM drive_blob_holds`).Scan(&holds); err != nil || holds != 0 {
		t.Fatalf("%d holds after the upload committed (%v), want none", holds, err)
	}
	obj, err := s.Main.Blobs.Put(ctx, strings.NewReader("bytes another node is about to refer to"), 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(25 * time.Hour)
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["strays_found"] != 1 {
		t.Fatalf("after a day: %v %v", done, err)
	}
	if _, err := s.Main.DB.Exec(ctx, `INSERT INTO drive_blob_holds (id, content_hash, until) VALUES ('other-node', ?, ?)`,
		"sha256:"+obj.Hash, s.Clock.Now().Add(3*time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(2 * time.Hour) // past the orphan's grace, not the hold
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["blobs_deleted"] != 0 || !s.Main.Blobs.Exists(ctx, obj.Hash) {
		t.Fatalf("while held: %v %v, stored %v", done, err, s.Main.Blobs.Exists(ctx, obj.Hash))
	}
	s.Clock.Advance(2 * time.Hour) // the hold ended (its node died before it committed)
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["blob_holds_ended"] != 1 || done["blobs_deleted"] != 1 {
		t.Fatalf("after the hold: %v %v", done, err)
	}
	if s.Main.Blobs.Exists(ctx, obj.Hash) {
		t.Fatal("the blob is still stored after its hold ended")
	}
	if got := c.download(kept.ID); !bytes.Equal(got, big) {
		t.Fatalf("the uploaded file: %d bytes", len(got))
	}
}
