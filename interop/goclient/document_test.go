package goclient

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/danielgtaylor/huma/v2/yaml"

	"atrium/webtest"
)

var update = flag.Bool("update", false, "rewrite openapi.yaml with the document the server serves")

// TestDocumentCurrent fails when openapi.yaml, which the client is generated
// from, is not the document the server serves: run `go generate
// ./interop/goclient` (it rewrites the file, then the client).
func TestDocumentCurrent(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/openapi.json"})
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	var doc map[string]any
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "servers") // the test server's address
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := yaml.Convert(&buf, bytes.NewReader(js)); err != nil {
		t.Fatal(err)
	}
	served := buf.Bytes()
	if *update {
		if err := os.WriteFile("openapi.yaml", served, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, served) {
		t.Fatal("interop/goclient/openapi.yaml is not the document the server serves: run `go generate ./interop/goclient` and commit the result")
	}
}
