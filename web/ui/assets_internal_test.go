package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Every script, style and icon a template names is embedded and served:
// the pages' scripts are split per feature, with no build step to notice a
// missing one.
func TestTemplatesNameEmbeddedAssets(t *testing.T) {
	t.Parallel()
	u := New(Config{PublicURL: "http://127.0.0.1:8080"})
	ref := regexp.MustCompile(`(?:src|href)="/assets/([^"]+)"`)
	pages, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil || len(pages) == 0 {
		t.Fatalf("templates: %v %v", pages, err)
	}
	seen, named := 0, map[string]bool{}
	for _, p := range pages {
		b, err := fs.ReadFile(templateFS, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			seen++
			named[m[1]] = true
			rec := httptest.NewRecorder()
			u.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/assets/"+m[1], nil))
			if rec.Code != http.StatusOK {
				t.Errorf("%s names /assets/%s: %d", p, m[1], rec.Code)
			}
			if strings.HasSuffix(m[1], ".js") && !strings.Contains(rec.Header().Get("Content-Type"), "javascript") {
				t.Errorf("/assets/%s: Content-Type %q", m[1], rec.Header().Get("Content-Type"))
			}
		}
	}
	if seen == 0 {
		t.Fatal("no asset named by any template")
	}
	// And every script is loaded by a page.
	scripts, _ := fs.Glob(assetFS, "assets/*.js")
	for _, s := range scripts {
		if name := strings.TrimPrefix(s, "assets/"); !named[name] {
			t.Errorf("no template loads %s", name)
		}
	}
}

// The pages' own scripts put user text into the page as text only, and
// evaluate no strings.
func TestScriptsWriteNoHTML(t *testing.T) {
	t.Parallel()
	scripts, err := fs.Glob(assetFS, "assets/*.js")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("scripts: %v %v", scripts, err)
	}
	for _, p := range scripts {
		b, err := fs.ReadFile(assetFS, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", `setAttribute("style"`} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s uses %s", p, bad)
			}
		}
	}
}
