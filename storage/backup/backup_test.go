package backup_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"atrium/app/drive"
	"atrium/storage/backup"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

// progress records what a backup or restore reports.
type progress struct {
	mu          sync.Mutex
	calls       int
	done, total int64
	backwards   bool
}

func (p *progress) set(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done < p.done {
		p.backwards = true
	}
	p.calls++
	p.done, p.total = done, total
}

func (p *progress) check(t *testing.T) {
	t.Helper()
	if p.calls == 0 || p.backwards || p.done != p.total || p.total == 0 {
		t.Errorf("progress: %d calls, ended at %d of %d, went backwards: %v", p.calls, p.done, p.total, p.backwards)
	}
}

func restore(t *testing.T, from string) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	var p progress
	res, err := backup.Restore(context.Background(), backup.RestoreOptions{From: from, Data: data, MaxSchema: sqldb.MigrationVersion(), Progress: p.set})
	if err != nil {
		t.Fatal(err)
	}
	p.check(t)
	if res.Manifest.FormatVersion != backup.FormatVersion {
		t.Errorf("restored manifest %+v", res.Manifest)
	}
	return data
}

// A backup taken while the server runs and a client keeps writing restores
// into a data directory that a second server serves with the same data: the
// same answers, the same bytes, the same credentials.
func TestRoundTripWhileWriting(t *testing.T) {
	t.Parallel()
	for _, to := range []string{"backup-dir", "backup.tar.zst"} {
		t.Run(to, func(t *testing.T) {
			t.Parallel()
			s := webtest.New(t, privateHooks)
			w := seed(t, s)
			before := w.views(t, s)

			ctx, stop := context.WithCancel(context.Background())
			type result struct {
				n   int
				err error
			}
			wrote := make(chan result, 1)
			go func() {
				n, err := w.writer(ctx, s.URL)
				wrote <- result{n, err}
			}()
			// Let the writer get going, so the backup overlaps its writes.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(string(w.carol.call(200, "GET", "/api/v1/contacts/books/"+w.noiseBk, nil, nil)), "noise0002") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			dest := filepath.Join(t.TempDir(), to)
			var p progress
			m, err := backup.Create(context.Background(), backup.Options{Data: s.Data, To: dest, Version: "test", Progress: p.set})
			stop()
			res := <-wrote
			if err != nil {
				t.Fatal(err)
			}
			if res.err != nil {
				t.Fatalf("writer: %v", res.err)
			}
			p.check(t)
			if m.Blobs.Count < 3 || m.Archive.Count != 1 || m.Database.Bytes == 0 || m.ConfigIncluded || m.AtriumVersion != "test" ||
				m.SchemaVersion != sqldb.MigrationVersion() || m.Snapshots != 1 {
				t.Errorf("manifest %+v", m)
			}
			if after := w.views(t, s); !mapsEqual(before, after) {
				t.Fatal("the writer changed the views: they would not prove anything")
			}

			data := restore(t, dest)
			s2 := webtest.Start(t, data, privateHooks)
			got := w.views(t, s2)
			for k, v := range before {
				if got[k] != v {
					t.Errorf("%s after restore:\n%s\nbefore:\n%s", k, got[k], v)
				}
			}
			ann := client{t, s2, w.ann.tok}
			for id, content := range w.files {
				if b := ann.download(id); !bytes.Equal(b, content) {
					t.Errorf("file %s: %d bytes after restore, want the %d it had", id, len(b), len(content))
				}
			}
			// The app password came along (its key is in the database).
			if r := s2.Do(webtest.Request{Method: "PROPFIND", Path: "/webdav/", Header: map[string]string{"Depth": "0"},
				BasicID: "bob@backup.test", BasicPW: w.bobPW}); r.StatusCode != 207 {
				t.Errorf("WebDAV with an app password after restore: %d %s", r.StatusCode, r.Body)
			}
			// The search index was rebuilt.
			if b := ann.call(200, "GET", "/api/v1/drive/search?q=same", nil, nil); !strings.Contains(string(b), "same.bin") {
				t.Errorf("search after restore: %s", b)
			}
			checkNoise(t, w, client{t, s2, w.carol.tok}, res.n)
		})
	}
}

// checkNoise checks that the restore holds a prefix of the writer's
// contacts (the database is one moment) and that every file of its folder
// is whole.
func checkNoise(t *testing.T, w *world, carol client, written int) {
	t.Helper()
	var contacts []struct {
		FirstName string `json:"first_name"`
	}
	carol.call(200, "GET", "/api/v1/contacts/books/"+w.noiseBk, nil, &contacts)
	var names []string
	for _, c := range contacts {
		names = append(names, c.FirstName)
	}
	slices.Sort(names)
	for i, n := range names {
		if n != fmt.Sprintf("noise%04d", i) {
			t.Fatalf("restored writer contacts %v: not the first %d written", names, len(names))
		}
	}
	if len(names) == 0 || len(names) > written {
		t.Fatalf("restored %d of the writer's %d contacts", len(names), written)
	}
	var folder struct{ Items []item }
	carol.call(200, "GET", "/api/v1/drive/browse/"+w.noise+"?per_page=500", nil, &folder)
	for _, f := range folder.Items {
		b := carol.download(f.ID)
		if prefix := strings.TrimSuffix(f.Name, ".bin") + ":"; !bytes.HasPrefix(b, []byte(prefix)) {
			t.Errorf("restored %s holds %.20q", f.Name, b)
		}
	}
	t.Logf("writer: %d contacts written, %d restored; %d of its files restored", written, len(names), len(folder.Items))
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The server deleting a blob (permanent delete, then the collector) and an
// archive copy between the snapshot and the copies: the backup takes a new
// snapshot, which no longer refers to them, and is consistent.
func TestServerDeletesBetweenSnapshotAndCopy(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Race Org", "ann@race.test", "admin")
	ann := client{t, s, cr.Token}
	gone := ann.upload("gone.bin", "", large("deleted while the backup runs"))
	cold := ann.upload("cold.bin", "", []byte("archived, then deleted while the backup runs"))
	kept := ann.upload("kept.bin", "", []byte("stays"))
	ctx := context.Background()
	if _, err := s.Main.Drive.Archiving().ArchiveFile(ctx, cold); err != nil {
		t.Fatal(err)
	}
	blobs := func() int {
		n := 0
		filepath.WalkDir(filepath.Join(s.Data, "blobs", "objects"), func(_ string, d os.DirEntry, _ error) error {
			if d != nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
		return n
	}
	o := backup.Options{Data: s.Data, To: filepath.Join(t.TempDir(), "b.tar.zst")}
	backup.SetAfterSnapshot(&o, func(attempt int) {
		if attempt != 1 {
			return
		}
		n := blobs()
		ann.call(204, "DELETE", "/api/v1/drive/"+gone, nil, nil)
		ann.call(204, "DELETE", "/api/v1/drive/"+cold, nil, nil)
		s.Clock.Advance(2 * time.Hour) // past the orphan grace period
		if _, err := s.Main.Drive.Maintain(ctx); err != nil {
			t.Error(err)
		}
		if blobs() >= n {
			t.Errorf("the collector deleted no blob (%d before, %d after)", n, blobs())
		}
	})
	m, err := backup.Create(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if m.Snapshots != 2 || m.Archive.Count != 0 {
		t.Errorf("manifest %+v: want a second snapshot without the archive copy", m)
	}
	s2 := webtest.Start(t, restore(t, o.To))
	ann2 := client{t, s2, cr.Token}
	if b := ann2.download(kept); string(b) != "stays" {
		t.Errorf("kept.bin: %q", b)
	}
	for _, id := range []string{gone, cold} {
		ann2.call(404, "GET", "/api/v1/drive/"+id+"/detail", nil, nil)
	}
}

// A data directory that lost a blob, or holds a damaged one, makes no backup:
// the error says so and nothing appears at the destination.
func TestBackupRefusesLostOrDamagedData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		damage func(path string) error
		want   error
	}{
		{"lost blob", os.Remove, backup.ErrLost},
		{"damaged blob", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 1
			return os.WriteFile(p, b, 0o600)
		}, backup.ErrDamaged},
	} {
		for _, to := range []string{"b", "b.tar.zst"} {
			t.Run(tc.name+"/"+to, func(t *testing.T) {
				t.Parallel()
				s := webtest.New(t)
				ann := client{t, s, s.Bootstrap("Org", "ann@lost.test", "admin").Token}
				content := large("a file whose blob the disk loses")
				ann.upload("x.bin", "", content)
				if err := tc.damage(blobPath(s.Data, content)); err != nil {
					t.Fatal(err)
				}
				parent := t.TempDir()
				_, err := backup.Create(context.Background(), backup.Options{Data: s.Data, To: filepath.Join(parent, to)})
				if !errors.Is(err, tc.want) {
					t.Fatalf("backup: %v, want %v", err, tc.want)
				}
				if left, _ := os.ReadDir(parent); len(left) != 0 {
					t.Errorf("the failed backup left %v", left)
				}
			})
		}
	}
}

// large is s repeated into a content too big to be kept in the database
// (drive.DefaultSmallBytes): a file of the blob store, as these tests need.
func large(s string) []byte {
	return bytes.Repeat([]byte(s), drive.DefaultSmallBytes/len(s)+1)
}

func blobPath(data string, content []byte) string {
	h := sha256hex(content)
	return filepath.Join(data, "blobs", "objects", h[:2], h[2:4], h)
}

// goodBackup makes a directory backup of a server with two files.
func goodBackup(t *testing.T) (dir string, blob []byte) {
	t.Helper()
	s := webtest.New(t)
	ann := client{t, s, s.Bootstrap("Org", "ann@restore.test", "admin").Token}
	blob = large("the content of a file")
	ann.upload("x.bin", "", blob)
	ann.upload("y.bin", "", []byte("another file"))
	dir = filepath.Join(t.TempDir(), "backup")
	if _, err := backup.Create(context.Background(), backup.Options{Data: s.Data, To: dir}); err != nil {
		t.Fatal(err)
	}
	return dir, blob
}

// Restore refuses a damaged backup or a data directory in use, and leaves
// nothing behind: the data directory stays as it was.
func TestRestoreRefuses(t *testing.T) {
	t.Parallel()
	dir, content := goodBackup(t)
	blobName := strings.TrimPrefix(blobPath("", content), string(filepath.Separator))
	for _, tc := range []struct {
		name    string
		change  func(t *testing.T, b string) // damages a copy of the backup
		want    error
		message string
	}{
		{name: "damaged blob", change: func(t *testing.T, b string) { flip(t, filepath.Join(b, blobName)) }, want: backup.ErrDamaged},
		{name: "damaged database", change: func(t *testing.T, b string) { flip(t, filepath.Join(b, "atrium.db")) }, want: backup.ErrDamaged},
		{name: "missing blob", change: func(t *testing.T, b string) { must(t, os.Remove(filepath.Join(b, blobName))) }, want: backup.ErrLost},
		{name: "no manifest", change: func(t *testing.T, b string) { must(t, os.Remove(filepath.Join(b, "manifest.json"))) }, message: "no manifest.json"},
		{name: "foreign file", change: func(t *testing.T, b string) { must(t, os.WriteFile(filepath.Join(b, "notes.txt"), nil, 0o600)) }, message: "not part of an Atrium backup"},
		{name: "symbolic link", change: func(t *testing.T, b string) {
			p := filepath.Join(b, blobName)
			must(t, os.Remove(p))
			must(t, os.Symlink("/etc/passwd", p))
		}, message: "symbolic link"},
		{name: "blob under another name", change: func(t *testing.T, b string) {
			other := filepath.Join(b, "blobs", "objects", "00", "00", strings.Repeat("0", 64))
			must(t, os.MkdirAll(filepath.Dir(other), 0o700))
			must(t, os.Rename(filepath.Join(b, blobName), other))
		}, want: backup.ErrDamaged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := filepath.Join(t.TempDir(), "copy")
			must(t, os.CopyFS(b, os.DirFS(dir)))
			tc.change(t, b)
			checkRefused(t, b, tc.want, tc.message)
		})
	}
	t.Run("data directory not empty", func(t *testing.T) {
		data := t.TempDir()
		must(t, os.WriteFile(filepath.Join(data, "keep"), []byte("mine"), 0o600))
		_, err := backup.Restore(context.Background(), backup.RestoreOptions{From: dir, Data: data})
		if err == nil || !strings.Contains(err.Error(), "not empty") {
			t.Fatalf("restore into a used directory: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(data, "keep")); string(b) != "mine" {
			t.Error("the data directory changed")
		}
	})
	t.Run("not a backup file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "notes.tar.zst")
		must(t, os.WriteFile(f, []byte("just some text, not a backup\n"), 0o600))
		checkRefused(t, f, nil, "is not an Atrium backup: a backup is the .tar.zst file or the folder that `atrium backup --to` wrote")
	})
	t.Run("newer schema", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		_, err := backup.Restore(context.Background(), backup.RestoreOptions{From: dir, Data: data, MaxSchema: 1})
		if err == nil || !strings.Contains(err.Error(), "newer atrium") {
			t.Fatalf("restore of a newer schema: %v", err)
		}
	})
}

// checkRefused restores from and wants an error (wrapping want, or
// containing message), no data directory and no leftovers beside it.
func checkRefused(t *testing.T, from string, want error, message string) {
	t.Helper()
	parent := t.TempDir()
	data := filepath.Join(parent, "data")
	_, err := backup.Restore(context.Background(), backup.RestoreOptions{From: from, Data: data})
	switch {
	case err == nil:
		t.Fatal("restore succeeded")
	case want != nil && !errors.Is(err, want):
		t.Fatalf("restore: %v, want %v", err, want)
	case message != "" && !strings.Contains(err.Error(), message):
		t.Fatalf("restore: %v, want %q", err, message)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("the failed restore left %v", left)
	}
}

// Hostile tar entries are refused before anything is written outside the
// work directory.
func TestRestoreTarPathSafety(t *testing.T) {
	t.Parallel()
	dir, _ := goodBackup(t)
	good := readDirEntries(t, dir)
	for _, tc := range []struct {
		name    string
		extra   tar.Header
		message string
	}{
		{"parent directory", tar.Header{Typeflag: tar.TypeReg, Name: "../evil"}, "leaves the backup"},
		{"parent inside", tar.Header{Typeflag: tar.TypeReg, Name: "blobs/../../evil"}, "not a clean path"},
		{"absolute path", tar.Header{Typeflag: tar.TypeReg, Name: "/tmp/evil"}, "not a plain relative path"},
		{"symbolic link", tar.Header{Typeflag: tar.TypeSymlink, Name: "blobs/objects/ab", Linkname: "/etc"}, "is a link"},
		{"hard link", tar.Header{Typeflag: tar.TypeLink, Name: "atrium.db", Linkname: "/etc/passwd"}, "is a link"},
		{"device", tar.Header{Typeflag: tar.TypeChar, Name: "tus/x"}, "not a regular file"},
		{"unknown file", tar.Header{Typeflag: tar.TypeReg, Name: "index/store"}, "not part of an Atrium backup"},
		{"unknown directory", tar.Header{Typeflag: tar.TypeDir, Name: "etc/"}, "not part of an Atrium backup"},
		{"duplicate", tar.Header{Typeflag: tar.TypeReg, Name: "atrium.db"}, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The hostile entry comes first, so nothing can have checked it later.
			file := writeTar(t, append([]tarEntry{{hdr: tc.extra}}, good...))
			if tc.name == "duplicate" {
				file = writeTar(t, append(good[:len(good):len(good)], tarEntry{hdr: tc.extra, body: []byte("x")}))
			}
			checkRefused(t, file, nil, tc.message)
			if _, err := os.Lstat(filepath.Join(filepath.Dir(file), "evil")); err == nil {
				t.Error("an entry was written outside the data directory")
			}
		})
	}
	t.Run("the same entries restore", func(t *testing.T) {
		restore(t, writeTar(t, good))
	})
}

type tarEntry struct {
	hdr  tar.Header
	body []byte
}

func readDirEntries(t *testing.T, dir string) []tarEntry {
	t.Helper()
	var out []tarEntry
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out = append(out, tarEntry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "./" + filepath.ToSlash(rel)}, body: b})
		return err
	})
	must(t, err)
	return out
}

// writeTar writes entries into a .tar.zst in a directory of its own.
func writeTar(t *testing.T, entries []tarEntry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.tar.zst")
	f, err := os.Create(path)
	must(t, err)
	zw, err := zstd.NewWriter(f)
	must(t, err)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		h.Mode, h.Size = 0o600, int64(len(e.body))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		must(t, tw.WriteHeader(&h))
		if h.Size > 0 {
			_, err := tw.Write(e.body)
			must(t, err)
		}
	}
	must(t, tw.Close())
	must(t, zw.Close())
	must(t, f.Close())
	return path
}

func flip(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	b[len(b)/2] ^= 0x40
	must(t, os.WriteFile(path, b, 0o600))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A resumable upload in progress comes along: after the restore the client
// resumes at the offset the server had recorded and finishes the file.
func TestUploadInProgressResumesAfterRestore(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	cr := s.Bootstrap("Org", "ann@tus.test", "admin")
	content := randomBytes(rand.New(rand.NewPCG(5, 6)), 100_000)
	tus := func(s *webtest.Server, method, path string, hdr map[string]string, body []byte) *webtest.Response {
		h := map[string]string{"Tus-Resumable": "1.0.0", "Content-Type": "application/offset+octet-stream"}
		maps.Copy(h, hdr)
		r := webtest.Request{Method: method, Path: path, Token: cr.Token, Header: h}
		if body != nil {
			r.Body = body
		}
		return s.Do(r)
	}
	res := tus(s, "POST", "/api/v1/drive/tus/", map[string]string{"Upload-Length": strconv.Itoa(len(content)),
		"Upload-Metadata": "filename " + base64.StdEncoding.EncodeToString([]byte("big.bin"))}, nil)
	if res.StatusCode != 201 {
		t.Fatalf("create upload: %d %s", res.StatusCode, res.Body)
	}
	path := strings.TrimPrefix(res.Header.Get("Location"), s.URL)
	if res := tus(s, "PATCH", path, map[string]string{"Upload-Offset": "0"}, content[:40_000]); res.StatusCode != 204 {
		t.Fatalf("first part: %d %s", res.StatusCode, res.Body)
	}
	dest := filepath.Join(t.TempDir(), "b.tar.zst")
	m, err := backup.Create(context.Background(), backup.Options{Data: s.Data, To: dest})
	if err != nil {
		t.Fatal(err)
	}
	if m.Uploads != (backup.Count{Count: 1, Bytes: 40_000}) {
		t.Errorf("manifest uploads %+v", m.Uploads)
	}
	s2 := webtest.Start(t, restore(t, dest))
	if res := tus(s2, "HEAD", path, nil, nil); res.StatusCode != 200 || res.Header.Get("Upload-Offset") != "40000" {
		t.Fatalf("HEAD after restore: %d offset %q", res.StatusCode, res.Header.Get("Upload-Offset"))
	}
	if res := tus(s2, "PATCH", path, map[string]string{"Upload-Offset": "40000"}, content[40_000:]); res.StatusCode != 204 {
		t.Fatalf("rest after restore: %d %s", res.StatusCode, res.Body)
	}
	ann := client{t, s2, cr.Token}
	var root struct{ Items []item }
	ann.call(200, "GET", "/api/v1/drive/browse", nil, &root)
	if len(root.Items) != 1 || root.Items[0].Name != "big.bin" {
		t.Fatalf("root after the upload: %+v", root.Items)
	}
	if b := ann.download(root.Items[0].ID); !bytes.Equal(b, content) {
		t.Errorf("the resumed upload holds %d bytes, not the %d sent", len(b), len(content))
	}
}
