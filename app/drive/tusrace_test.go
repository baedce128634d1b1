package drive_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

// TestTusUploadGoneBeforeCompletion: a small upload terminated after its
// PATCH was let in and before the transaction that completes it (the
// service's test hook) is not completed: the PATCH answers not_found, no file
// is created and its bytes are not stored. The completion reads the upload
// in its transaction.
func TestTusUploadGoneBeforeCompletion(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := s.Bootstrap("Tus Org", "ann@example.test", "admin")
	hdr := func(h map[string]string) map[string]string {
		h["Tus-Resumable"] = "1.0.0"
		return h
	}
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: ann.Token, Header: hdr(map[string]string{
		"Upload-Length": "5", "Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("t.txt"))})})
	if res.StatusCode != 201 {
		t.Fatalf("create: %d %s", res.StatusCode, res.Body)
	}
	path := strings.TrimPrefix(res.Header.Get("Location"), s.URL)
	id := path[strings.LastIndexByte(path, '/')+1:]
	p := &app.Principal{OrgID: ann.OrganizationID, UserID: ann.UserID, Features: []string{"drive"},
		Scopes: app.NewScopes(app.ScopeDriveRead, app.ScopeDriveWrite)}
	var fired atomic.Bool
	var terminated error
	drive.SetBeforeWrite(s.Main.Drive, func() {
		if fired.CompareAndSwap(false, true) {
			_, terminated = s.Main.Drive.Uploads().TerminateTusUpload(context.Background(), p, id)
		}
	})
	res = s.Do(webtest.Request{Method: "PATCH", Path: path, Token: ann.Token, Body: []byte("hello"), Header: hdr(map[string]string{
		"Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"})})
	drive.SetBeforeWrite(s.Main.Drive, nil)
	if !fired.Load() || terminated != nil {
		t.Fatalf("the hook did not run, or the termination failed: %v", terminated)
	}
	webtest.Check(t, res, webtest.Scenario{Status: 404, Problem: "not_found"})
	if l := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/browse", Token: ann.Token}); strings.Contains(string(l.Body), `"t.txt"`) {
		t.Errorf("a file was made of the terminated upload: %s", l.Body)
	}
	sum := sha256.Sum256([]byte("hello"))
	if ok, err := (sqldb.SmallBlobs{DB: s.Main.DB}).Exists(context.Background(), hex.EncodeToString(sum[:])); err != nil || ok {
		t.Errorf("the bytes of the terminated upload are stored: %v %v", ok, err)
	}
}

// A finished upload whose content the store already holds as an orphan past
// its grace period keeps it: the collector, running while the upload's bytes are
// being put into the store, waits until the file refers to the blob, then finds
// the reference and deletes nothing.
func TestTusCompleteKeepsDeduplicatedOrphan(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Tus Orphan Org", "ann@example.test", "admin")
	ctx := context.Background()
	content := []byte("the same bytes, uploaded again after their first copy was deleted")
	obj, err := s.Main.Blobs.Put(ctx, bytes.NewReader(content), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Unreferenced for a day: marked as a stray, then past the grace period.
	s.Clock.Advance(25 * time.Hour)
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["strays_found"] != 1 {
		t.Fatalf("stray sweep: %v %v", done, err)
	}
	s.Clock.Advance(2 * time.Hour)

	p, err := s.Main.Identity.Authenticate(ctx, cr.Token)
	if err != nil {
		t.Fatal(err)
	}
	u := receivedTusUpload(t, s.Main.Drive, p, "again.txt", content)
	// A put that fails changes nothing: the upload stays, to be finished again.
	_, err = s.Main.Drive.Uploads().CompleteTusUpload(ctx, p, u.ID, obj.Hash, int64(len(content)), nil, func() error { return errors.New("disk full") })
	var pe *drive.PutError
	if !errors.As(err, &pe) {
		t.Fatalf("failed put: %v", err)
	}
	if got, err := s.Main.Drive.Uploads().TusUpload(ctx, p, u.ID); err != nil || got.Status != drive.TusUploading {
		t.Fatalf("after a failed put: %+v %v", got, err)
	}
	waiting := make(chan struct{})
	var once sync.Once
	drive.SetCollectorWaits(s.Main.Drive, func() { once.Do(func() { close(waiting) }) })
	defer drive.SetCollectorWaits(s.Main.Drive, nil)
	collected := make(chan map[string]int, 1)
	put := func() error { // the adapter's Adopt finds the content stored and drops its own copy
		go func() {
			done, err := s.Main.Drive.Maintain(ctx)
			if err != nil {
				t.Error(err)
			}
			collected <- done
		}()
		select { // the collector runs now, and waits for the put
		case <-waiting:
		case <-time.After(10 * time.Second):
			t.Error("the collector did not wait for the put in 10 s")
		}
		return nil
	}
	done, err := s.Main.Drive.Uploads().CompleteTusUpload(ctx, p, u.ID, obj.Hash, int64(len(content)), nil, put)
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if got := <-collected; got["blobs_deleted"] != 0 {
		t.Fatalf("the collector deleted %d blobs", got["blobs_deleted"])
	}
	var l struct{ URL string }
	user{s, cr}.rest("GET", "/api/v1/drive/"+done.FileID+"/download", nil).Decode(t, &l)
	res, err := http.Get(l.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if got, _ := io.ReadAll(res.Body); res.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("downloaded %d %q", res.StatusCode, got)
	}
}

// TusProgress is a compare-and-set on the offset: of requests that wrote at
// the same offset (on one node or several), exactly one moves it and records
// its part; the others are refused with conflict and change nothing, and a
// request at an offset that moved on is refused too.
func TestTusProgressCountsOneWriterPerOffset(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Tus Race Org", "ann@example.test", "admin")
	ctx := context.Background()
	p, err := s.Main.Identity.Authenticate(ctx, cr.Token)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Main.Drive.Uploads().CreateTusUpload(ctx, p, drive.TusCreate{Name: "raced.bin", Length: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Main.Drive.Uploads().TusProgress(ctx, p, u.ID, 0, 100, []byte("state-100"), "p0"); err != nil {
		t.Fatal(err)
	}
	const racers = 6
	var wg sync.WaitGroup
	errs := make([]error, racers)
	for i := range racers {
		wg.Go(func() {
			_, errs[i] = s.Main.Drive.Uploads().TusProgress(ctx, p, u.ID, 100, int64(200+i), []byte("state"), "p1-"+string(rune('a'+i)))
		})
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("racers %d and %d both moved the offset", won, i)
		case err == nil:
			won = i
		case app.ErrorCode(err) != app.EConflict:
			t.Fatalf("racer %d: %v, want conflict", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no racer moved the offset")
	}
	got, err := s.Main.Drive.Uploads().TusUpload(ctx, p, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p0", "p1-" + string(rune('a'+won))}
	if got.Offset != int64(200+won) || strings.Join(got.Parts, ",") != strings.Join(want, ",") {
		t.Fatalf("upload at %d with parts %v, want %d with %v", got.Offset, got.Parts, 200+won, want)
	}
	// A stale offset is refused and changes nothing.
	if _, err := s.Main.Drive.Uploads().TusProgress(ctx, p, u.ID, 100, 300, []byte("late"), "late"); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("stale offset: %v, want conflict", err)
	}
	if again, _ := s.Main.Drive.Uploads().TusUpload(ctx, p, u.ID); again.Offset != got.Offset || len(again.Parts) != 2 || string(again.HashState) != "state" {
		t.Fatalf("a refused progress changed the upload: %+v", again)
	}
}

// Two requests finishing one complete upload (on two nodes: the last PATCH on
// one, a HEAD on another while the first puts the bytes): the second to
// commit finds it completed and answers as it was left, one file, not a
// second completion into the conflict state, and the upload is kept.
func TestTusCompletedWhileItsBytesWerePut(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Tus Twice Org", "ann@example.test", "admin")
	ctx := context.Background()
	p, err := s.Main.Identity.Authenticate(ctx, cr.Token)
	if err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("finished twice "), 10000) // past a small content
	u := receivedTusUpload(t, s.Main.Drive, p, "twice.bin", content)
	digest := sha256.Sum256(content)
	sum := hex.EncodeToString(digest[:])
	put := func() error { _, err := s.Main.Blobs.Put(ctx, bytes.NewReader(content), 0); return err }
	var other drive.TusUpload
	var otherErr error
	first, err := s.Main.Drive.Uploads().CompleteTusUpload(ctx, p, u.ID, sum, int64(len(content)), nil, func() error {
		if err := put(); err != nil {
			return err
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			other, otherErr = s.Main.Drive.Uploads().CompleteTusUpload(ctx, p, u.ID, sum, int64(len(content)), nil, put)
		}()
		<-done
		return nil
	})
	if err != nil || otherErr != nil {
		t.Fatalf("completions: %v, %v", err, otherErr)
	}
	if other.Status != drive.TusDone || first.Status != drive.TusDone || first.FileID != other.FileID || first.FileID == "" {
		t.Fatalf("completions: %+v and %+v, want one done file", first, other)
	}
	again, err := s.Main.Drive.Uploads().TusUpload(ctx, p, u.ID)
	if err != nil || again.Status != drive.TusDone || again.FileID != first.FileID {
		t.Fatalf("upload after both: %+v %v", again, err)
	}
}

// receivedTusUpload creates an upload of content named name and records
// all of its bytes as received (what the door does after its PATCHes): the
// upload is ready to be completed.
func receivedTusUpload(t *testing.T, d *drive.Service, p *app.Principal, name string, content []byte) drive.TusUpload {
	t.Helper()
	ctx := context.Background()
	u, err := d.Uploads().CreateTusUpload(ctx, p, drive.TusCreate{Name: name, Length: int64(len(content))})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write(content)
	state, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
	if _, err := d.Uploads().TusProgress(ctx, p, u.ID, 0, int64(len(content)), state, ""); err != nil {
		t.Fatal(err)
	}
	return u
}

// An upload in parts may take what the quota leaves or the upload cap,
// whichever is less, beside what it holds; a part past it is refused for the
// bound that applies: quota_exceeded, or payload_too_large.
func TestUploadAllowance(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	cr := s.Bootstrap("Allowance Org", "ann@example.test", "admin")
	ctx := context.Background()
	p, err := s.Main.Identity.Authenticate(ctx, cr.Token)
	if err != nil {
		t.Fatal(err)
	}
	capBytes := s.Main.Drive.Uploads().MaxTusBytes()
	for _, c := range []struct {
		name        string
		quota, held int64
		left        int64
		refusal     string
	}{
		{"the quota binds", 100_000, 20_000, 80_000, app.EQuotaExceeded},
		{"held past the quota", 100_000, 150_000, -50_000, app.EQuotaExceeded},
		{"no quota: the cap binds", 0, 1_000, capBytes - 1_000, app.EPayloadTooLarge},
		{"a quota over the cap", capBytes * 2, 0, capBytes, app.EPayloadTooLarge},
	} {
		q := *p
		q.QuotaBytes = c.quota
		a, err := s.Main.Drive.Uploads().UploadAllowance(ctx, &q, c.held)
		if err != nil {
			t.Fatal(err)
		}
		if a.Left != c.left || app.ErrorCode(a.Refusal()) != c.refusal {
			t.Errorf("%s: left %d, refusal %v; want %d, %s", c.name, a.Left, a.Refusal(), c.left, c.refusal)
		}
	}
}
