package app_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The layers' import rules (docs/ARCHITECTURE.md): app/ holds the rules and
// reaches no network, HTTP or SQL itself (no net, net/http, database/sql, gin);
// web/ is a door over the app services and imports neither the storage
// adapters nor the command that wires them. A file that breaks a rule fails
// this test, unless it is one of layerDebts below, which issue 48 pays off
// (the list only shrinks: an entry no file needs any more fails too).
func TestLayerImports(t *testing.T) {
	t.Parallel()
	rules := []struct {
		dir       string
		forbidden func(string) bool
		why       string
	}{
		{".", func(imp string) bool {
			return imp == "net" || imp == "net/http" || imp == "database/sql" || strings.HasPrefix(imp, "github.com/gin-gonic/")
		}, "app/ holds the rules: no network, HTTP or SQL"},
		{"../web", func(imp string) bool {
			return strings.HasPrefix(imp, "atrium/storage/") || strings.HasPrefix(imp, "atrium/cmd/")
		}, "web/ is a door: no storage adapter, no wiring"},
	}
	used := map[string]bool{}
	for _, r := range rules {
		err := filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(filepath.Join("app", path))
			if strings.HasPrefix(path, "..") {
				rel = filepath.ToSlash(strings.TrimPrefix(path, "../"))
			}
			for _, is := range f.Imports {
				imp, _ := strconv.Unquote(is.Path.Value)
				if !r.forbidden(imp) {
					continue
				}
				key := rel + " " + imp
				if slices.Contains(layerDebts, key) {
					used[key] = true
					continue
				}
				t.Errorf("%s imports %s: %s", rel, imp, r.why)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range layerDebts {
		if !used[d] {
			t.Errorf("layerDebts lists %q, which no file needs any more: take it off", d)
		}
	}
}

// layerDebts are the imports that still break the rules, as "file import".
// None is left: add one only with the reason beside it.
var layerDebts = []string{}
