package web_test

import (
	"net/http"
	"strings"
	"testing"

	"atrium/webtest"
)

type importResult struct {
	Created     int `json:"created"`
	Updated     int `json:"updated"`
	Unchanged   int `json:"unchanged"`
	FailedCount int `json:"failed_count"`
	Failed      []struct {
		Index  int    `json:"index"`
		UID    string `json:"uid"`
		Reason string `json:"reason"`
	} `json:"failed"`
}

func (f *contactsFixture) newBook(t *testing.T, token, name string) book {
	t.Helper()
	res := f.s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/contacts/books", Token: token, Body: map[string]string{"name": name}})
	if res.StatusCode/100 != 2 {
		t.Fatalf("create book: %d %s", res.StatusCode, res.Body)
	}
	var b book
	res.Decode(t, &b)
	return b
}

func (f *contactsFixture) importVCF(t *testing.T, token, bookID, body string) (*webtest.Response, importResult) {
	t.Helper()
	res := f.s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/contacts/books/" + bookID + "/import", Token: token,
		Header: map[string]string{"Content-Type": "text/vcard"}, Body: body})
	var r importResult
	if res.StatusCode == http.StatusOK {
		res.Decode(t, &r)
	}
	return res, r
}

func (f *contactsFixture) list(t *testing.T, token, bookID string) []summary {
	t.Helper()
	var out []summary
	f.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + bookID, Token: token}).Decode(t, &out)
	return out
}

// TestContactsBookExportImport: a book exported as one .vcf comes back whole when
// imported into another book; a second import of the same file changes nothing.
func TestContactsBookExportImport(t *testing.T) {
	t.Parallel()
	f := newContactsFixture(t)
	src := f.defaultBook(t, f.tok)
	f.create(t, f.tok, src.ID, map[string]any{
		"first_name": "Zoë", "last_name": "Müller", "organization": "Ümlaut GmbH", "birthday": "1985-04-12",
		"emails": []map[string]string{{"type": "work", "value": "zoe@example.com"}, {"type": "home", "value": "zoë@bücher.example"}, {"type": "other", "value": "z@m.example"}},
		"phones": []map[string]string{{"type": "cell", "value": "+49 30 1234567"}},
		"notes":  "Line one\nLine two; with semicolon, and comma",
	})
	f.create(t, f.tok, src.ID, map[string]any{"display_name": "李小龍", "emails": []map[string]string{{"value": "bruce@example.com"}}})
	f.create(t, f.tok, src.ID, map[string]any{"first_name": "Bob", "last_name": "<img src=x onerror=alert(1)>",
		"addresses": []map[string]string{{"type": "home", "street": "1 Rue de l'Église", "city": "Paris", "country": "FR"}}})

	exp := f.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + src.ID + "/export", Token: f.tok})
	if exp.StatusCode != 200 || !strings.HasPrefix(exp.Header.Get("Content-Type"), "text/vcard") ||
		!strings.Contains(exp.Header.Get("Content-Disposition"), `filename="Contacts.vcf"`) {
		t.Fatalf("export: %d %v", exp.StatusCode, exp.Header)
	}
	vcf := string(exp.Body)
	if n := strings.Count(vcf, "BEGIN:VCARD\r\n"); n != 3 || strings.Count(vcf, "VERSION:4.0") != 3 {
		t.Fatalf("export holds %d cards, want 3 vCard 4.0:\n%s", n, vcf)
	}

	dst := f.newBook(t, f.tok, "Copy")
	res, r := f.importVCF(t, f.tok, dst.ID, vcf)
	if res.StatusCode != 200 || r.Created != 3 || r.Updated != 0 || r.FailedCount != 0 || len(r.Failed) != 0 {
		t.Fatalf("import: %d %s", res.StatusCode, res.Body)
	}
	got := f.list(t, f.tok, dst.ID)
	if len(got) != 3 {
		t.Fatalf("imported book lists %d contacts: %+v", len(got), got)
	}
	byName := map[string]summary{}
	for _, c := range got {
		byName[c.DisplayName] = c
	}
	zoe, ok := byName["Zoë Müller"]
	if !ok || byName["李小龍"].Email != "bruce@example.com" || byName["Bob <img src=x onerror=alert(1)>"].ID == "" {
		t.Fatalf("imported names %+v", got)
	}
	var d detail
	f.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + dst.ID + "/" + zoe.ID, Token: f.tok}).Decode(t, &d)
	if len(d.Emails) != 3 || d.Emails[1].Value != "zoë@bücher.example" || d.Emails[1].Type != "home" || d.Organization != "Ümlaut GmbH" ||
		d.Birthday != "1985-04-12" || d.Notes != "Line one\nLine two; with semicolon, and comma" || len(d.Phones) != 1 {
		t.Fatalf("imported Zoë %+v", d)
	}

	// The copy exports as the same cards (same UIDs: a book's UIDs are its own).
	again := f.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + dst.ID + "/export", Token: f.tok})
	if string(again.Body) != vcf {
		t.Fatalf("the copy exports otherwise:\n%s\nwant:\n%s", again.Body, vcf)
	}
	// Importing the same file again: each UID is in the book, nothing changes.
	res, r = f.importVCF(t, f.tok, dst.ID, vcf)
	if res.StatusCode != 200 || r.Created != 0 || r.Unchanged != 3 || r.Updated != 0 {
		t.Fatalf("second import: %d %s", res.StatusCode, res.Body)
	}
	// A changed card with a known UID replaces that contact.
	changed := strings.Replace(vcf, "zoe@example.com", "zoe@new.example", 1)
	res, r = f.importVCF(t, f.tok, dst.ID, changed)
	if res.StatusCode != 200 || r.Updated != 1 || r.Unchanged != 2 || r.Created != 0 {
		t.Fatalf("changed import: %d %s", res.StatusCode, res.Body)
	}
	if got := f.list(t, f.tok, dst.ID); len(got) != 3 {
		t.Fatalf("after update import %d contacts", len(got))
	}
	f.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + dst.ID + "/" + zoe.ID, Token: f.tok}).Decode(t, &d)
	if d.Email != "zoe@new.example" {
		t.Fatalf("updated contact's e-mail %q", d.Email)
	}
}

func card(lines ...string) string {
	return "BEGIN:VCARD\r\nVERSION:3.0\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VCARD\r\n"
}

// TestContactsBookImportErrors: bad cards are reported with their index while
// the good ones are added; an unreadable body, a body too large, too many
// cards and another user's book change nothing.
func TestContactsBookImportErrors(t *testing.T) {
	t.Parallel()
	f := newContactsFixture(t)
	b := f.newBook(t, f.tok, "Import")

	mixed := card("FN:Good One", "UID:good-1", "EMAIL;TYPE=INTERNET,WORK:one@example.com") +
		card("FN:Bad Mail", "UID:bad-2", "EMAIL:not an address") +
		"BEGIN:VCARD\r\nFN:No Version\r\nEND:VCARD\r\n" +
		card("N:Two;Good;;;", "TEL;TYPE=CELL:+1 555 0100") + // no FN, no UID: both are added
		card("FN:Duplicate", "UID:good-1") +
		card("FN:Last Good", "UID:good-5", "X-CUSTOM:kept")
	res, r := f.importVCF(t, f.tok, b.ID, mixed)
	if res.StatusCode != 200 || r.Created != 3 || r.FailedCount != 3 || len(r.Failed) != 3 {
		t.Fatalf("mixed import: %d %s", res.StatusCode, res.Body)
	}
	want := []struct {
		index  int
		reason string
	}{{1, "emails[0].value"}, {2, "VERSION"}, {4, "card 0"}}
	for i, w := range want {
		if r.Failed[i].Index != w.index || !strings.Contains(r.Failed[i].Reason, w.reason) {
			t.Fatalf("failed[%d] = %+v, want index %d and a reason naming %q", i, r.Failed[i], w.index, w.reason)
		}
	}
	if r.Failed[0].UID != "bad-2" {
		t.Fatalf("failed[0] uid %q", r.Failed[0].UID)
	}
	names := []string{}
	for _, c := range f.list(t, f.tok, b.ID) {
		names = append(names, c.DisplayName)
	}
	if strings.Join(names, ",") != "Good One,Good Two,Last Good" {
		t.Fatalf("book holds %v", names)
	}
	exp := string(f.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + b.ID + "/export", Token: f.tok}).Body)
	if !strings.Contains(exp, "X-CUSTOM:kept") || !strings.Contains(exp, "FN:Good Two") || strings.Count(exp, "UID:") != 3 {
		t.Fatalf("export after import:\n%s", exp)
	}

	other := f.defaultBook(t, f.mtok)
	big := strings.Repeat(card("FN:X"), 10001)
	tooBig := "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Big\r\nNOTE:" + strings.Repeat("x", 10<<20) + "\r\nEND:VCARD\r\n"
	path := "/api/v1/contacts/books/" + b.ID + "/import"
	vc := map[string]string{"Content-Type": "text/vcard"}
	f.s.Run(t, []webtest.Scenario{
		{Name: "empty body", Request: webtest.Request{Method: "POST", Path: path, Token: f.tok, Header: vc, Body: ""}, Status: 422, Problem: "validation_failed", Contains: []string{"BEGIN:VCARD"}},
		{Name: "garbage body", Request: webtest.Request{Method: "POST", Path: path, Token: f.tok, Header: vc, Body: "hello, world\nthis is no vCard\n"}, Status: 422, Problem: "validation_failed", Contains: []string{"not a vCard file"}},
		{Name: "an iCalendar file", Request: webtest.Request{Method: "POST", Path: path, Token: f.tok, Header: vc, Body: "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"}, Status: 422, Problem: "validation_failed"},
		{Name: "too many cards", Request: webtest.Request{Method: "POST", Path: path, Token: f.tok, Header: vc, Body: big}, Status: 422, Problem: "validation_failed", Contains: []string{"at most 10000 cards"}},
		{Name: "too large", Request: webtest.Request{Method: "POST", Path: path, Token: f.tok, Header: vc, Body: tooBig}, Status: 413},
		{Name: "another user's book", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + other.ID + "/import", Token: f.tok, Header: vc, Body: card("FN:Intruder")}, Status: 404, Problem: "not_found"},
		{Name: "another user's book export", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + other.ID + "/export", Token: f.tok}, Status: 404, Problem: "not_found"},
		{Name: "another organisation's export", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + b.ID + "/export", Token: f.otk}, Status: 404, Problem: "not_found"},
		{Name: "import needs contacts:write", Request: webtest.Request{Method: "POST", Path: path, Token: f.s.Token("ada@acme.test", "contacts:read"), Header: vc, Body: card("FN:X")}, Status: 403, Problem: "insufficient_scope"},
	})
	if got := f.list(t, f.tok, b.ID); len(got) != 3 {
		t.Fatalf("refused imports changed the book: %d contacts", len(got))
	}
	if got := f.list(t, f.mtok, other.ID); len(got) != 0 {
		t.Fatalf("the other user's book got %d contacts", len(got))
	}
}
