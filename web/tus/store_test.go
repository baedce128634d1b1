package tus

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"atrium/app/drive"
)

// appendAt over several calls, with the hash state saved and restored between
// them and junk left past the recorded offset, yields the file and the SHA-256
// of the whole; the limit stops a call exactly.
func TestAppendAtResumesTheHash(t *testing.T) {
	t.Parallel()
	data := make([]byte, 3<<20+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "up")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	u := drive.TusUpload{ID: "up"}
	steps := []struct {
		end   int   // bytes sent up to
		limit int64 // bytes the call may take
		over  bool
	}{
		{end: 1, limit: 1 << 40},
		{end: 1<<20 + 7, limit: 1 << 40},
		{end: 2<<20 + 100, limit: 1 << 20, over: true}, // stops at the limit
		{end: len(data), limit: 1 << 40},
	}
	for i, st := range steps {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 { // bytes written before a crash, never recorded
			f.WriteAt([]byte("junk past the offset"), u.Offset)
		}
		h, err := restoreHash(u)
		if err != nil {
			t.Fatal(err)
		}
		src := iotest.HalfReader(bytes.NewReader(data[u.Offset:st.end]))
		n, over, err := appendAt(f, u.Offset, h, src, st.limit)
		f.Sync()
		f.Close()
		want := int64(st.end) - u.Offset
		if st.over {
			want = st.limit
		}
		if err != nil || over != st.over || n != want {
			t.Fatalf("step %d: n %d over %v err %v, want n %d over %v", i, n, over, err, want, st.over)
		}
		u.Offset += n
		if u.HashState, err = h.(encoding.BinaryMarshaler).MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, data) {
		t.Fatalf("file differs (%d bytes, want %d)", len(got), len(data))
	}
	h, _ := restoreHash(u)
	if want := sha256.Sum256(data); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatal("resumed hash differs from the hash of the whole")
	}
	if _, err := restoreHash(drive.TusUpload{ID: "x", Offset: 5, HashState: []byte("bad")}); err == nil {
		t.Fatal("a corrupt hash state was accepted")
	}
}

func TestTusdError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   string
	}{
		{409, "ERR_MISMATCHED_OFFSET: mismatched offset\n", "Upload-Offset does not match"},
		{404, "ERR_UPLOAD_NOT_FOUND: upload not found\n", "Upload not found."},
		{412, "ERR_UNSUPPORTED_VERSION: missing, invalid or unsupported Tus-Resumable header\n", "Tus-Resumable: 1.0.0"},
	}
	for _, c := range cases {
		if err := tusdError(c.status, c.body); !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%d %q → %v", c.status, c.body, err)
		}
	}
}
