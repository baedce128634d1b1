package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"atrium/app/drive"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

// Contents of at most drive.DefaultSmallBytes are kept in the database, with
// the commit of the file that refers to them; larger ones are objects of the
// blob store. Whatever the door, a client reads back the same bytes (the
// WebDAV GET, and the presigned download URL the blob handler serves), and a
// small content leaves no file behind: no object, no TUS data file.
func TestSmallContentsByDoor(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := newDavUser(t, s, "Small Org", "ann@example.test", "admin")
	c, tc := ann.rest, tusClient{t: t, s: s, tok: ann.creds.Token}
	byName := func(name string) string {
		for _, f := range c.list("/api/v1/drive/browse?per_page=100").Items {
			if f.Name == name {
				return f.ID
			}
		}
		t.Fatalf("no %s in the drive", name)
		return ""
	}

	type door struct {
		name string
		put  func(name string, content []byte) string // returns the file id
	}
	doors := []door{
		{"WebDAV PUT", func(name string, content []byte) string {
			r := s.Do(davReq(ann, "PUT", "/"+name, nil, content))
			if r.StatusCode != 201 {
				t.Fatalf("PUT %s: %d %s", name, r.StatusCode, r.Body)
			}
			return byName(name)
		}},
		{"three-step upload", func(name string, content []byte) string {
			return c.upload(name, "", "application/octet-stream", content).ID
		}},
		{"TUS", func(name string, content []byte) string {
			if r := tc.upload(name, "", content); r.StatusCode != 204 && !(len(content) == 0 && r.StatusCode == 201) {
				t.Fatalf("TUS %s: %d %s", name, r.StatusCode, r.Body)
			}
			return byName(name)
		}},
		{"TUS in two PATCHes", func(name string, content []byte) string {
			up := tc.create(tusMeta("filename", name), int64(len(content)))
			half := len(content) / 2
			if half > 0 {
				if r := tc.patch(up, 0, content[:half]); r.StatusCode != 204 {
					t.Fatalf("TUS %s, first half: %d %s", name, r.StatusCode, r.Body)
				}
				if r := tc.patch(up, int64(half), content[half:]); r.StatusCode != 204 {
					t.Fatalf("TUS %s, second half: %d %s", name, r.StatusCode, r.Body)
				}
			}
			return byName(name)
		}},
	}
	sizes := []struct {
		name  string
		size  int
		small bool
	}{
		{"empty", 0, true},
		{"1 KiB", 1 << 10, true},
		{"at the bound", drive.DefaultSmallBytes, true},
		{"one byte over", drive.DefaultSmallBytes + 1, false},
	}
	for i, d := range doors {
		for j, sz := range sizes {
			name := strings.ReplaceAll(d.name+"-"+sz.name, " ", "-") + ".bin"
			content := bytes.Repeat([]byte{byte('a' + i), byte('0' + j)}, sz.size/2+1)[:sz.size]
			if sz.size > 2 {
				content[sz.size-1] = byte(i*16 + j) // no two cases share a content
			}
			id := d.put(name, content)
			hash := sha256hex(content)
			if got := c.download(id); !bytes.Equal(got, content) {
				t.Errorf("%s: the download URL gives %d bytes, want the %d put", name, len(got), len(content))
			}
			if r := s.Do(davReq(ann, "GET", "/"+name, nil, nil)); r.StatusCode != 200 || !bytes.Equal(r.Body, content) {
				t.Errorf("%s: WebDAV GET %d, %d bytes", name, r.StatusCode, len(r.Body))
			}
			inDB, onDisk := smallRow(t, s, hash), objectFile(s, hash)
			if sz.small && (!inDB || onDisk) || !sz.small && (inDB || !onDisk) {
				t.Errorf("%s (%d bytes): in the database %v, a file of the blob store %v", name, sz.size, inDB, onDisk)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(s.Data, "tus", "*")); len(left) != 0 {
		t.Errorf("completed uploads left data files: %v", left)
	}
}

// A small content goes when its last reference goes: the collector deletes
// its row after the grace period, as it deletes an object; a content still
// referred to by another file stays.
func TestSmallContentCollected(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	ctx := context.Background()
	gone := c.upload("gone.txt", "", "text/plain", []byte("deleted for good"))
	kept := c.upload("kept.txt", "", "text/plain", []byte("kept: another file has it"))
	dup := c.upload("dup.txt", "", "text/plain", []byte("kept: another file has it"))
	for _, f := range []driveFile{gone, dup} {
		c.ok(204, "DELETE", "/api/v1/drive/"+f.ID, nil, nil)
	}
	s.Clock.Advance(2 * time.Hour)
	if done, err := s.Main.Drive.Maintain(ctx); err != nil || done["blobs_deleted"] != 1 {
		t.Fatalf("maintenance: %v %v, want one content deleted", done, err)
	}
	if smallRow(t, s, hashOf(gone)) || s.Main.Contents.Exists(ctx, hashOf(gone)) {
		t.Error("the deleted file's content is still stored")
	}
	if got := c.download(kept.ID); string(got) != "kept: another file has it" {
		t.Errorf("kept.txt: %q", got)
	}
}

func hashOf(f driveFile) string { return strings.TrimPrefix(f.ContentHash, "sha256:") }

// smallRow reports whether the database holds content hash itself.
func smallRow(t *testing.T, s *webtest.Server, hash string) bool {
	t.Helper()
	ok, err := sqldb.SmallBlobs{DB: s.Main.DB}.Exists(context.Background(), hash)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// objectFile reports whether the blob store holds content hash as an object
// of its own (a file on the disk, or a key in the bucket).
func objectFile(s *webtest.Server, hash string) bool {
	return s.Main.Blobs.Exists(context.Background(), hash)
}

func sha256hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
