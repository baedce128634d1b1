package blob

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := OpenArchive(dir)
	if err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("archived line\n"), 10000)
	sum := sha256.Sum256(content)
	hash := hex.EncodeToString(sum[:])

	if a.Exists(hash) {
		t.Fatal("exists before put")
	}
	if _, err := a.Open(hash); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open missing: %v", err)
	}
	if err := a.Put(hash, bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	if !a.Exists(hash) {
		t.Fatal("missing after put")
	}
	fi, err := os.Stat(a.path(hash))
	if err != nil || fi.Size() >= int64(len(content))/10 {
		t.Fatalf("compressed copy: %v %v", fi, err)
	}
	rc, err := a.Open(hash)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}

	// A stream of other content is refused and leaves nothing behind.
	other := strings.Repeat("0", 64)
	if err := a.Put(other, bytes.NewReader(content)); err == nil || a.Exists(other) {
		t.Fatalf("put with the wrong hash: %v", err)
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Fatalf("temp files left: %v", tmp)
	}
	if err := a.Put("../x", bytes.NewReader(nil)); !errors.Is(err, ErrInvalidHash) {
		t.Fatalf("invalid hash: %v", err)
	}

	if err := a.Delete(hash); err != nil || a.Exists(hash) {
		t.Fatalf("delete: %v", err)
	}
	if err := a.Delete(hash); err != nil {
		t.Fatalf("delete missing: %v", err)
	}
}
