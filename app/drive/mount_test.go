package drive_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"atrium/app/drive"
	"atrium/webtest"
)

// The mount lists a folder in batches, each query going on from where the
// last stopped: every item comes exactly once, folders first, then by name,
// whatever the batch size.
func TestChildrenInBatches(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := user{s, s.Bootstrap("Mount Org", "ann@example.test", "admin")}
	if res := ann.dav("MKCOL", "/Box", nil, nil); res.StatusCode != 201 {
		t.Fatalf("MKCOL: %d", res.StatusCode)
	}
	var want []string
	for i := range 4 {
		name := fmt.Sprintf("Dir %d", i)
		if res := ann.dav("MKCOL", "/Box/"+name, nil, nil); res.StatusCode != 201 {
			t.Fatalf("MKCOL: %d", res.StatusCode)
		}
		want = append(want, name+"/")
	}
	var files []string
	for i := range 11 {
		// Mixed case: the order is by the folded name.
		name := fmt.Sprintf("%c-%02d.txt", "aBcD"[i%4], i)
		if res := ann.dav("PUT", "/Box/"+name, nil, "x"); res.StatusCode != 201 {
			t.Fatalf("PUT: %d", res.StatusCode)
		}
		files = append(files, name)
	}
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	want = append(want, files...)
	box := ann.items(t, "")[0]
	p, err := s.Main.Identity.Authenticate(context.Background(), ann.cr.Token)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 4, 11, 2000} {
		drive.SetChildBatch(s.Main.Drive, n)
		var got []string
		err := s.Main.Drive.Children(context.Background(), p, box.ID, func(items []drive.File) error {
			if len(items) > n {
				t.Errorf("batch %d: %d items in one call", n, len(items))
			}
			for _, f := range items {
				name := f.Name
				if f.IsFolder {
					name += "/"
				}
				got = append(got, name)
			}
			return nil
		})
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("batch %d: %v %q, want %q", n, err, got, want)
		}
	}
}
