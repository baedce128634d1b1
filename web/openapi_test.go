package web_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"atrium/webtest"
)

// TestOpenAPIDocument loads the served description with kin-openapi and checks
// what clients and the contract rely on.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/openapi.json"})
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(res.Body)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.81.0.640" || !strings.Contains(doc.Info.Title, "Public External API") {
		t.Fatalf("openapi %q version %q title %q", doc.OpenAPI, doc.Info.Version, doc.Info.Title)
	}
	if doc.Components.SecuritySchemes["bearer"] == nil {
		t.Fatal("no bearer security scheme")
	}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/api/v1/") {
			t.Errorf("path %s does not start with /api/v1", path)
		}
		for method, op := range item.Operations() {
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("%s %s: no operationId or summary", method, path)
			}
			if op.Responses.Value("401") == nil && op.Security != nil {
				t.Errorf("%s %s: no 401 response", method, path)
			}
			for code, r := range op.Responses.Map() {
				if code[0] == '4' || code[0] == '5' {
					if r.Value.Content.Get("application/problem+json") == nil {
						t.Errorf("%s %s %s: error response is not problem+json", method, path, code)
					}
				}
			}
		}
	}
	// Every endpoint of the API's specification (web/testdata/endpoints.txt) is
	// described, except those of issues still open (listed here until they land).
	pending := map[string]string{}
	list, err := os.ReadFile("testdata/endpoints.txt")
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, line := range strings.Split(string(list), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		method, path, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(path, "/api/v1/") {
			t.Fatalf("endpoints.txt: %q is not \"METHOD /api/v1/path\"", line)
		}
		listed++
		key := method + " " + path
		item := doc.Paths.Find(path)
		found := item != nil && item.GetOperation(method) != nil
		switch {
		case found && pending[key] != "":
			t.Errorf("%s is described now: remove it from the pending list", key)
		case !found && pending[key] == "":
			t.Errorf("%s of the spec is not in the OpenAPI document", key)
		}
	}
	if listed < 100 {
		t.Fatalf("only %d endpoints in testdata/endpoints.txt", listed)
	}
	problem := doc.Components.Schemas["Problem"]
	if problem == nil || problem.Value.Properties["code"] == nil || problem.Value.Properties["errors"] == nil {
		t.Fatalf("Problem schema: %+v", problem)
	}
}

func TestDocsPageOffline(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	res := s.Do(webtest.Request{Method: "GET", Path: "/api/v1/docs"})
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if strings.Contains(string(res.Body), "http://") || strings.Contains(string(res.Body), "https://") {
		t.Fatal("docs page refers to an external URL")
	}
	for _, asset := range []string{"/api/v1/docs/docs.js", "/api/v1/docs/docs.css"} {
		if r := s.Do(webtest.Request{Method: "GET", Path: asset}); r.StatusCode != 200 {
			t.Fatalf("%s: %d", asset, r.StatusCode)
		}
	}
}

// TestOpenAPINulls checks, in the 3.1 document and in its 3.0 form, that the
// fields the contract answers with null are declared so (issue 54: a client
// generated from the document must decode them).
func TestOpenAPINulls(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	nullable := []struct{ schema, field string }{
		{"FolderContents", "folder"}, // null at the root
		{"ShareInfo", "shared_with"}, // null for a link share
		{"ShareInfo", "share_link"},  // null for a user share
		{"Me", "user"},               // null for a service principal without a user
		{"File", "trashed_at"},       // null unless in the trash
		{"DeliveryAttempt", "request_headers"},
	}
	for _, tc := range []struct{ path, version string }{
		{"/api/v1/openapi.json", "3.1.0"},
		{"/api/v1/openapi-3.0.json", "3.0.3"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			res := s.Do(webtest.Request{Method: "GET", Path: tc.path})
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			doc, err := openapi3.NewLoader().LoadFromData(res.Body)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if doc.OpenAPI != tc.version {
				t.Fatalf("openapi %q", doc.OpenAPI)
			}
			for _, n := range nullable {
				sc := doc.Components.Schemas[n.schema]
				if sc == nil || sc.Value.Properties[n.field] == nil {
					t.Errorf("%s.%s is not in the document", n.schema, n.field)
					continue
				}
				v := sc.Value.Properties[n.field].Value
				if !v.Type.Includes(openapi3.TypeNull) && !v.Nullable {
					t.Errorf("%s.%s: type %v, nullable %v: null is not allowed", n.schema, n.field, v.Type, v.Nullable)
				}
				if !slices.Contains(sc.Value.Required, n.field) {
					t.Errorf("%s.%s is not required (the answers always carry it)", n.schema, n.field)
				}
			}
		})
	}
}
