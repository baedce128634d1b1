package blob

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestLayoutNames(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Put(context.Background(), strings.NewReader("layout"), 0)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path(obj.Hash)
	if want := filepath.Join(s.dir, filepath.FromSlash(ObjectName(obj.Hash))); p != want {
		t.Errorf("ObjectName: %s, store keeps it at %s", want, p)
	}
	a := &Archive{dir: "/a"}
	if got, want := a.path(obj.Hash), filepath.Join("/a", filepath.FromSlash(ArchiveName(obj.Hash))); got != want {
		t.Errorf("ArchiveName: %s, archive keeps it at %s", want, got)
	}
}
