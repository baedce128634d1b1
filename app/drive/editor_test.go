package drive

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
	"time"

	"atrium/app"
)

func TestEditorURL(t *testing.T) {
	t.Parallel()
	src := "https://atrium.example/wopi/files/f1"
	tests := []struct{ urlsrc, lang, theme, want string }{
		{"https://o/cool.html?", "", "", "https://o/cool.html?WOPISrc=https%3A%2F%2Fatrium.example%2Fwopi%2Ffiles%2Ff1"},
		{"https://o/cool.html?", "de-CH", "dark", "https://o/cool.html?WOPISrc=https%3A%2F%2Fatrium.example%2Fwopi%2Ffiles%2Ff1&lang=de-CH&theme=dark"},
		{"https://o/cool.html", "", "", "https://o/cool.html?WOPISrc=https%3A%2F%2Fatrium.example%2Fwopi%2Ffiles%2Ff1"},
		{"https://o/e?a=1", "", "", "https://o/e?a=1&WOPISrc=https%3A%2F%2Fatrium.example%2Fwopi%2Ffiles%2Ff1"},
		{"https://o/v?<ui=UI_LLCC&><thm=THEME_ID&><dchat=DISABLE_CHAT&>", "fr", "dark", "https://o/v?ui=fr&thm=2&WOPISrc=https%3A%2F%2Fatrium.example%2Fwopi%2Ffiles%2Ff1"},
		{"https://o/v?<ui=UI_LLCC&><thm=THEME_ID&>", "", "", "https://o/v?WOPISrc=https%3A%2F%2Fatrium.example%2Fwopi%2Ffiles%2Ff1"},
		{"https://o/v?<ui=UI_LLCC&><thm=THEME_ID&>", "", "high-contrast", "https://o/v?WOPISrc=https%3A%2F%2Fatrium.example%2Fwopi%2Ffiles%2Ff1&theme=high-contrast"},
	}
	for _, tt := range tests {
		if got := EditorURL(tt.urlsrc, src, tt.lang, tt.theme); got != tt.want {
			t.Errorf("%s (%s, %s):\n got %s\nwant %s", tt.urlsrc, tt.lang, tt.theme, got, tt.want)
		}
	}
}

func TestEditorTokens(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &Service{clock: func() time.Time { return now }, opts: Options{Editor: EditorOptions{TokenKey: []byte("k1"), TokenTTL: time.Hour}}}
	s.editing = newEditing(s)
	tok, exp, err := s.editing.issueEditorToken(editorClaims{FileID: "f1", UserID: "u1", OrgID: "o1", Perm: PermEdit})
	if err != nil || !exp.Equal(now.Add(time.Hour)) {
		t.Fatal(tok, exp, err)
	}
	tok2, _, _ := s.editing.issueEditorToken(editorClaims{FileID: "f1", UserID: "u1", OrgID: "o1", Perm: PermEdit})
	if tok == tok2 {
		t.Fatal("two tokens are equal")
	}
	c, err := s.editing.parseEditorToken(tok)
	if err != nil || c.FileID != "f1" || c.UserID != "u1" || c.OrgID != "o1" || c.Perm != PermEdit {
		t.Fatal(c, err)
	}
	p64, m64, _ := strings.Cut(tok, ".")
	other := &Service{clock: s.clock, opts: Options{Editor: EditorOptions{TokenKey: []byte("k2")}}}
	other.editing = newEditing(other)
	for name, bad := range map[string]string{
		"empty": "", "no mac": p64, "tampered": p64[:len(p64)-2] + "AA." + m64, "garbage": "x.y", "mac only": "." + m64,
	} {
		if _, err := s.editing.parseEditorToken(bad); app.ErrorCode(err) != app.EUnauthorized {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := other.editing.parseEditorToken(tok); app.ErrorCode(err) != app.EUnauthorized {
		t.Errorf("another key: %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := s.editing.parseEditorToken(tok); app.ErrorCode(err) != app.EUnauthorized || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired: %v", err)
	}
}

func TestDocumentName(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, typ, want, wantType, err string }{
		{"", "", "New document.odt", "odt", ""},
		{"", "ods", "New spreadsheet.ods", "ods", ""},
		{"Plan", "odp", "Plan.odp", "odp", ""},
		{"Plan", "", "Plan.odt", "odt", ""},
		{"Letter.docx", "", "Letter.docx", "docx", ""},
		{"Letter.DOCX", "docx", "Letter.DOCX", "docx", ""},
		{"Notes v1.2", "odt", "Notes v1.2.odt", "odt", ""},
		{"Letter.docx", "odt", "", "", "body.name"},
		{"notes.txt", "", "", "", "body.name"},
		{"x", "pdf", "", "", "body.type"},
		{"a/b", "odt", "", "", "body.name"},
	}
	for _, tt := range tests {
		name, typ, err := CreateDocumentRequest{Name: tt.name, Type: tt.typ}.documentName()
		if tt.err != "" {
			if app.ErrorCode(err) != app.EValidation || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q %q: error %v, want one on %s", tt.name, tt.typ, err, tt.err)
			}
			continue
		}
		if err != nil || name != tt.want || typ != tt.wantType {
			t.Errorf("%q %q: %q %q %v", tt.name, tt.typ, name, typ, err)
		}
	}
}

func TestBlankDocuments(t *testing.T) {
	t.Parallel()
	for typ, mt := range DocumentTypes {
		b, err := BlankDocument(typ)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := BlankDocument(typ)
		if !bytes.Equal(b, again) {
			t.Errorf("%s: not deterministic", typ)
		}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		names := map[string]bool{}
		for _, f := range zr.File {
			names[f.Name] = true
		}
		if typ == "docx" {
			for _, n := range []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml"} {
				if !names[n] {
					t.Errorf("docx lacks %s", n)
				}
			}
			continue
		}
		first := zr.File[0]
		if first.Name != "mimetype" || first.Method != zip.Store || len(first.Extra) != 0 || first.Flags&0x8 != 0 {
			t.Errorf("%s: first entry %+v", typ, first.FileHeader)
		}
		// The mimetype is readable at offset 38 of the file (ODF 1.2 §3.3).
		if !bytes.HasPrefix(b[38:], []byte(mt)) {
			t.Errorf("%s: %q at offset 38", typ, b[38:38+len(mt)])
		}
		for _, n := range []string{"META-INF/manifest.xml", "content.xml", "styles.xml"} {
			if !names[n] {
				t.Errorf("%s lacks %s", typ, n)
			}
		}
	}
}
