package web_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
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
}
