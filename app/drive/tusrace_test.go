package drive_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"sync/atomic"
	"testing"

	"atrium/app"
	"atrium/app/drive"
	"atrium/storage/sqlite"
	"atrium/web/webtest"
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
			_, terminated = s.Main.Drive.TerminateTusUpload(context.Background(), p, id)
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
	if ok, err := (sqlite.SmallBlobs{DB: s.Main.DB}).Exists(context.Background(), hex.EncodeToString(sum[:])); err != nil || ok {
		t.Errorf("the bytes of the terminated upload are stored: %v %v", ok, err)
	}
}
