package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The doc comment of every exported method of a service (a type named Service
// or Admin in a package under app/, or a part of a Service: a struct whose
// field core is the *Service) ends with the sentence
//
//	Errors: code (when), code (when), ….
//
// naming the error codes a client can get from it ("Errors: none of its own."
// for a method that raises none); internal is never named, as any method may
// fail inside. Every code named is one of the codes app/error.go declares.
func TestServiceMethodsNameTheirErrors(t *testing.T) {
	t.Parallel()
	known := errorCodes(t)
	type file struct {
		path string
		f    *ast.File
	}
	var files []file
	// services are the receivers checked, by package: Service, Admin and a
	// service's parts (a struct whose field core is the *Service, such as
	// drive.Editing).
	services := map[string]map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(path) == "." || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		files = append(files, file{path, f})
		pkg := filepath.Dir(path)
		if services[pkg] == nil {
			services[pkg] = map[string]bool{"Service": true, "Admin": true}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fl := range st.Fields.List {
					if len(fl.Names) == 1 && fl.Names[0].Name == "core" && receiverName(fl.Type) == "Service" {
						services[pkg][ts.Name.Name] = true
					}
				}
			}
			return false
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range files {
		for _, decl := range fi.f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			recv := receiverName(fd.Recv.List[0].Type)
			if !services[filepath.Dir(fi.path)][recv] {
				continue
			}
			name := filepath.ToSlash(filepath.Join("app", fi.path)) + ": " + fi.f.Name.Name + "." + recv + "." + fd.Name.Name
			doc := ""
			if fd.Doc != nil {
				doc = fd.Doc.Text()
			}
			for _, problem := range errorsSentence(doc, known) {
				t.Errorf("%s: %s", name, problem)
			}
		}
	}
	if !services["drive"]["Editing"] {
		t.Error("drive.Editing is not found as a part of the drive service: the check of parts reads nothing")
	}
}

func receiverName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

var codeWord = regexp.MustCompile(`^[a-z][a-z_]*$`)

// errorsSentence returns what is wrong with the Errors sentence of doc.
func errorsSentence(doc string, known map[string]bool) []string {
	i := strings.LastIndex(doc, "Errors:")
	if i < 0 {
		return []string{`its doc comment names no error codes: end it with "Errors: code (when), …." or "Errors: none of its own."`}
	}
	rest := strings.Join(strings.Fields(doc[i+len("Errors:"):]), " ")
	if rest == "none of its own." {
		return nil
	}
	// Drop the parenthesised "when" of each code (parentheses may nest).
	var b strings.Builder
	depth := 0
	for _, r := range rest {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	if depth != 0 {
		return []string{"unbalanced parentheses after Errors:"}
	}
	list, ok := strings.CutSuffix(strings.TrimSpace(b.String()), ".")
	if !ok {
		return []string{`the Errors sentence does not end the doc comment with "."`}
	}
	var problems []string
	named := map[string]bool{}
	for _, item := range strings.Split(list, ",") {
		code := strings.TrimSpace(item)
		switch {
		case named[code]:
			problems = append(problems, "Errors: names "+strconv.Quote(code)+" twice: give it once, with every case in its parentheses")
		case !codeWord.MatchString(code):
			problems = append(problems, "after Errors: "+strconv.Quote(code)+" is not a code (the sentence must be the last of the comment)")
		case code == "internal":
			problems = append(problems, "Errors: names internal, which any method may return: leave it out")
		case !known[code]:
			problems = append(problems, "Errors: names "+strconv.Quote(code)+", which app/error.go does not declare")
		}
		named[code] = true
	}
	return problems
}

// errorCodes reads the error codes app/error.go declares: the string constants
// named E….
func errorCodes(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "error.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "E") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				if v, err := strconv.Unquote(lit.Value); err == nil {
					codes[v] = true
				}
			}
		}
	}
	if !codes["not_found"] || !codes["validation_failed"] {
		t.Fatalf("read %d codes from app/error.go, not not_found and validation_failed among them: has the way codes are declared changed?", len(codes))
	}
	return codes
}

func TestErrorsSentence(t *testing.T) {
	t.Parallel()
	known := map[string]bool{"not_found": true, "conflict": true, "internal": true}
	for _, c := range []struct {
		doc string
		ok  bool
	}{
		{"Get returns it. Errors: not_found (no such item, or another's), conflict.\n", true},
		{"Get returns it.\nErrors: none of its own.\n", true},
		{"Get returns it. Errors: not_found (a (nested) case).", true},
		{"Get returns it.\n", false},
		{"Get returns it. Errors: not_found, gone_away.", false},
		{"Get returns it. Errors: internal.", false},
		{"Get returns it. Errors: not_found. Then more.", false},
		{"Get returns it. Errors: not_found (unclosed.", false},
		{"Get returns it. Errors: not_found (one), not_found (two).", false},
		{"Get returns it. Errors: not_found", false},
	} {
		if got := errorsSentence(c.doc, known); (len(got) == 0) != c.ok {
			t.Errorf("%q: problems %q, want ok %v", c.doc, got, c.ok)
		}
	}
}
