package web_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"atrium/webtest"
	"atrium/wire"
)

// TestDemoCredentialsStayTheSame: every start of the demo prints the same
// credentials, and they work; none are minted on a restart.
func TestDemoCredentialsStayTheSame(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	first, err := wire.SeedDemo(ctx, s.Main)
	if err != nil {
		t.Fatal(err)
	}
	again, err := wire.SeedDemo(ctx, s.Main)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, again) {
		t.Fatalf("the second start printed other credentials:\n%+v\n%+v", first, again)
	}
	if fi, err := os.Stat(filepath.Join(s.Main.Config.Data, "demo-credentials.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kept credentials: %v %v", fi, err)
	}
	for _, c := range again {
		if c.Password == "" {
			t.Errorf("%s: no account password", c.Email)
		}
		if r := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/me", Token: c.Token}); r.StatusCode != 200 {
			t.Errorf("%s: token answers %d", c.Email, r.StatusCode)
		}
		if r := s.Do(webtest.Request{Method: "PROPFIND", Path: "/webdav/", BasicID: c.Email, BasicPW: c.AppPassword,
			Header: map[string]string{"Depth": "0"}}); r.StatusCode != 207 {
			t.Errorf("%s: app password answers %d", c.Email, r.StatusCode)
		}
	}
	// Alice's shares, made once: Projects with the team Product (Bob and
	// Carol), for editing; Reports with the whole organisation.
	want := map[string]string{"alice@acme.example": "", "bob@acme.example": "Projects:edit,Reports:view", "carol@acme.example": "Projects:edit,Reports:view"}
	for _, c := range again {
		w, ok := want[c.Email]
		if !ok {
			continue
		}
		var l driveListing
		driveClient{t: t, s: s, tok: c.Token}.ok(200, "GET", "/api/v1/drive/shared", nil, &l)
		var got []string
		for _, it := range l.Items {
			got = append(got, it.Name+":"+it.Permission)
		}
		if strings.Join(got, ",") != w {
			t.Errorf("%s: Shared with me %v, want %q", c.Email, got, w)
		}
	}
}
