package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/carddav"

	"atrium/app/contacts"
	"atrium/app/identity"
	"atrium/storage/sqldb"
	"atrium/webtest"
)

type book struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	IsDefault    bool   `json:"is_default"`
	ContactCount int    `json:"contact_count"`
}

type summary struct {
	ID          string `json:"id"`
	BookID      string `json:"book_id"`
	DisplayName string `json:"display_name"`
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	Email       string `json:"email"`
	Phone       string `json:"phone"`
	IsFavorite  bool   `json:"is_favorite"`
}

type detail struct {
	summary
	UID    string `json:"uid"`
	ETag   string `json:"etag"`
	Emails []struct {
		Type, Value string
	} `json:"emails"`
	Phones []struct {
		Type, Value string
	} `json:"phones"`
	Organization string `json:"organization"`
	JobTitle     string `json:"job_title"`
	Birthday     string `json:"birthday"`
	Notes        string `json:"notes"`
	Addresses    []struct {
		Type, Street, City string
		PostalCode         string `json:"postal_code"`
		Country            string
	} `json:"addresses"`
}

// contactsFixture is a server with an admin and a member in one organisation and
// a user of another organisation.
type contactsFixture struct {
	s              *webtest.Server
	admin, member  webtest.Creds
	other          webtest.Creds
	tok, mtok, otk string
}

func newContactsFixture(t *testing.T) *contactsFixture {
	t.Helper()
	s := webtest.New(t)
	f := &contactsFixture{s: s}
	f.admin = s.Bootstrap("Acme", "ada@acme.test", "admin")
	f.member = s.Bootstrap("Acme", "max@acme.test", "member")
	f.other = s.Bootstrap("Globex", "gus@globex.test", "admin")
	f.tok, f.mtok, f.otk = f.admin.Token, f.member.Token, f.other.Token
	return f
}

func (f *contactsFixture) defaultBook(t *testing.T, token string) book {
	t.Helper()
	res := f.s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books", Token: token})
	if res.StatusCode != 200 {
		t.Fatalf("books: %d %s", res.StatusCode, res.Body)
	}
	var bs []book
	res.Decode(t, &bs)
	if len(bs) == 0 || !bs[0].IsDefault || bs[0].Name != "Contacts" {
		t.Fatalf("books %+v: want the default book \"Contacts\" first", bs)
	}
	return bs[0]
}

func (f *contactsFixture) create(t *testing.T, token, bookID string, body any) summary {
	t.Helper()
	res := f.s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/contacts/books/" + bookID, Token: token, Body: body})
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("create contact: %d %s", res.StatusCode, res.Body)
	}
	var c summary
	res.Decode(t, &c)
	return c
}

func TestContactsREST(t *testing.T) {
	t.Parallel()
	f := newContactsFixture(t)
	s := f.s
	b := f.defaultBook(t, f.tok)
	if again := f.defaultBook(t, f.tok); again.ID != b.ID {
		t.Fatalf("default book changed: %s then %s", b.ID, again.ID)
	}
	ada := f.create(t, f.tok, b.ID, map[string]any{
		"first_name": "Zoë", "last_name": "Müller",
		"emails":       []map[string]string{{"type": "work", "value": "zoe@example.com"}},
		"phones":       []map[string]string{{"type": "cell", "value": "+49 30 1234567"}},
		"organization": "Ümlaut GmbH", "job_title": "CTO", "birthday": "1985-04-12", "notes": "Met at FOSDEM; likes tea",
		"addresses": []map[string]string{{"type": "work", "street": "Hauptstr. 1", "city": "Berlin", "postal_code": "10115", "country": "DE"}},
	})
	if ada.DisplayName != "Zoë Müller" || ada.Email != "zoe@example.com" || ada.Phone != "+49 30 1234567" {
		t.Fatalf("summary %+v", ada)
	}
	f.create(t, f.tok, b.ID, map[string]any{"display_name": "Bob Builder", "emails": []map[string]string{{"value": "bob@example.com"}}})
	var listed []summary
	s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + b.ID, Token: f.tok}).Decode(t, &listed)
	if len(listed) != 2 || listed[0].DisplayName != "Bob Builder" || listed[1].ID != ada.ID {
		t.Fatalf("list %+v: want Bob then Zoë", listed)
	}
	memberBook := f.defaultBook(t, f.mtok)
	memberContact := f.create(t, f.mtok, memberBook.ID, map[string]any{"first_name": "Private"})

	path := "/api/v1/contacts/books/" + b.ID + "/" + ada.ID
	get := s.Do(webtest.Request{Method: http.MethodGet, Path: path, Token: f.tok})
	var d detail
	get.Decode(t, &d)
	etag := get.Header.Get("ETag")
	if get.StatusCode != 200 || etag == "" || etag != d.ETag || !strings.HasPrefix(etag, `"`) {
		t.Fatalf("get: %d etag header %q body etag %q", get.StatusCode, etag, d.ETag)
	}
	if d.Birthday != "1985-04-12" || d.Organization != "Ümlaut GmbH" || d.Notes != "Met at FOSDEM; likes tea" ||
		len(d.Addresses) != 1 || d.Addresses[0].City != "Berlin" || d.Phones[0].Type != "cell" {
		t.Fatalf("detail %+v", d)
	}

	s.Run(t, []webtest.Scenario{
		{Name: "list books needs a credential", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books"}, Status: 401, Problem: "unauthorized"},
		{Name: "list needs contacts:read", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books", Token: s.Token("ada@acme.test", "calendar:read")}, Status: 403, Problem: "insufficient_scope"},
		{Name: "create needs contacts:write", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + b.ID, Token: s.Token("ada@acme.test", "contacts:read"), Body: map[string]any{"first_name": "X"}}, Status: 403, Problem: "insufficient_scope"},
		{Name: "list contacts sorted by name", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + b.ID, Token: f.tok}, Status: 200, Contains: []string{`"display_name":"Bob Builder"`, `"display_name":"Zoë Müller"`},
			Headers: map[string]string{"Content-Type": "application/json"}},
		{Name: "unknown book", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/nope", Token: f.tok}, Status: 404, Problem: "not_found"},
		{Name: "another user's book is not found", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + memberBook.ID, Token: f.tok}, Status: 404, Problem: "not_found"},
		{Name: "another user's contact is not found", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + memberBook.ID + "/" + memberContact.ID, Token: f.tok}, Status: 404, Problem: "not_found"},
		{Name: "another organisation cannot read", Request: webtest.Request{Method: "GET", Path: path, Token: f.otk}, Status: 404, Problem: "not_found"},
		{Name: "create without any name", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + b.ID, Token: f.tok, Body: map[string]any{"notes": "who?"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.display_name"}},
		{Name: "create with a bad e-mail", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + b.ID, Token: f.tok, Body: map[string]any{"first_name": "A", "emails": []map[string]string{{"value": "not-an-address"}}}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.emails[0].value"}},
		{Name: "create with a bad birthday", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + b.ID, Token: f.tok, Body: map[string]any{"first_name": "A", "birthday": "1985-13-40"}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.birthday"}},
		{Name: "create with a bad phone", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + b.ID, Token: f.tok, Body: map[string]any{"first_name": "A", "phones": []map[string]string{{"value": "call me"}}}}, Status: 422, Problem: "validation_failed", Contains: []string{"body.phones[0].value"}},
		{Name: "create in an unknown book", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/nope", Token: f.tok, Body: map[string]any{"first_name": "A"}}, Status: 404, Problem: "not_found"},
		{Name: "stale If-Match", Request: webtest.Request{Method: "PUT", Path: path, Token: f.tok, Header: map[string]string{"If-Match": `"stale"`}, Body: map[string]any{"job_title": "CEO"}}, Status: 412, Problem: "precondition_failed"},
		{Name: "update with an invalid field", Request: webtest.Request{Method: "PUT", Path: path, Token: f.tok, Body: map[string]any{"emails": []map[string]string{{"value": "@"}}}}, Status: 422, Problem: "validation_failed"},
		{Name: "search needs q", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/search", Token: f.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "search with only punctuation", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/search?q=%22%2A%28", Token: f.tok}, Status: 422, Problem: "validation_failed", Contains: []string{"query.q"}},
		{Name: "delete the default book", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/contacts/books/" + b.ID, Token: f.tok}, Status: 409, Problem: "conflict"},
		{Name: "create a book without a name", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books", Token: f.tok, Body: map[string]any{"name": "  "}}, Status: 422, Problem: "validation_failed"},
	})
	// Nothing changed by the refused writes.
	if again := s.Do(webtest.Request{Method: http.MethodGet, Path: path, Token: f.tok}); again.Header.Get("ETag") != etag {
		t.Fatalf("a refused write changed the contact")
	}

	// Update with the right If-Match; then without If-Match.
	up := s.Do(webtest.Request{Method: http.MethodPut, Path: path, Token: f.tok, Header: map[string]string{"If-Match": etag},
		Body: map[string]any{"job_title": "CEO", "phones": []map[string]string{{"type": "cell", "value": "+49 30 1234567"}, {"type": "home", "value": "030 555"}}}})
	if up.StatusCode != 200 || up.Header.Get("ETag") == "" || up.Header.Get("ETag") == etag {
		t.Fatalf("update: %d etag %q (was %q) %s", up.StatusCode, up.Header.Get("ETag"), etag, up.Body)
	}
	up2 := s.Do(webtest.Request{Method: http.MethodPut, Path: path, Token: f.tok, Body: map[string]any{"last_name": "Mueller"}})
	var us summary
	up2.Decode(t, &us)
	if up2.StatusCode != 200 || us.DisplayName != "Zoë Mueller" {
		t.Fatalf("update without If-Match: %d %s", up2.StatusCode, up2.Body)
	}
	get = s.Do(webtest.Request{Method: http.MethodGet, Path: path, Token: f.tok})
	d = detail{}
	get.Decode(t, &d)
	if d.JobTitle != "CEO" || len(d.Phones) != 2 || d.Organization != "Ümlaut GmbH" {
		t.Fatalf("after updates: %+v", d)
	}

	// Favorite toggles.
	fav := s.Do(webtest.Request{Method: http.MethodPost, Path: path + "/favorite", Token: f.tok})
	var fs summary
	fav.Decode(t, &fs)
	if fav.StatusCode != 200 || !fs.IsFavorite {
		t.Fatalf("favorite: %d %s", fav.StatusCode, fav.Body)
	}
	fav = s.Do(webtest.Request{Method: http.MethodPost, Path: path + "/favorite", Token: f.tok})
	fs = summary{}
	fav.Decode(t, &fs)
	if fs.IsFavorite {
		t.Fatalf("second toggle left the favorite on")
	}

	// Search: case and accent insensitive, prefixes, across books, phones as digits.
	other := s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/contacts/books", Token: f.tok, Body: map[string]any{"name": "Work"}})
	var work book
	other.Decode(t, &work)
	if other.StatusCode != 201 || work.ID == "" || work.IsDefault {
		t.Fatalf("create book: %d %s", other.StatusCode, other.Body)
	}
	f.create(t, f.tok, work.ID, map[string]any{"first_name": "Zoe", "last_name": "Zebra", "organization": "Zoo"})
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"zoe", []string{"Zoe Zebra", "Zoë Mueller"}}, // compared as sets
		{"ZOË mue", []string{"Zoë Mueller"}},
		{"umlaut", []string{"Zoë Mueller"}},
		{"zoe@exa", []string{"Zoë Mueller"}},
		{"4930123", []string{"Zoë Mueller"}},
		{"0301234", []string{"Zoë Mueller"}},
		{"1234567", []string{"Zoë Mueller"}},
		{"bob", []string{"Bob Builder"}},
		{"private", nil}, // the member's contact
		{"zoo", []string{"Zoe Zebra"}},
		{`"OR" NEAR(`, nil},
	} {
		res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/search?q=" + urlQuery(c.q), Token: f.tok})
		if res.StatusCode != 200 {
			t.Fatalf("search %q: %d %s", c.q, res.StatusCode, res.Body)
		}
		var got []summary
		res.Decode(t, &got)
		var names []string
		for _, g := range got {
			names = append(names, g.DisplayName)
		}
		sort.Strings(names)
		sort.Strings(c.want)
		if strings.Join(names, "|") != strings.Join(c.want, "|") {
			t.Errorf("search %q = %v, want %v", c.q, names, c.want)
		}
	}

	// Move: own contact moves; the member's contact and an unknown id fail; one transaction.
	bob := f.create(t, f.tok, b.ID, map[string]any{"first_name": "Mover"})
	mv := s.Do(webtest.Request{Method: http.MethodPost, Path: "/api/v1/contacts/books/" + b.ID + "/move", Token: f.tok,
		Body: map[string]any{"contact_ids": []string{bob.ID, memberContact.ID, "missing"}, "target_book_id": work.ID}})
	webtest.Check(t, mv, webtest.Scenario{Status: 200, Contains: []string{`"moved":["` + bob.ID + `"]`, `{"id":"` + memberContact.ID + `","reason":"not_found"}`, `{"id":"missing","reason":"not_found"}`}})
	s.Run(t, []webtest.Scenario{
		{Name: "moved contact is in the target", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + work.ID + "/" + bob.ID, Token: f.tok}, Status: 200},
		{Name: "moved contact left the source", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + b.ID + "/" + bob.ID, Token: f.tok}, Status: 404, Problem: "not_found"},
		{Name: "member's contact did not move", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/" + memberBook.ID + "/" + memberContact.ID, Token: f.mtok}, Status: 200},
		{Name: "move to another user's book", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + work.ID + "/move", Token: f.tok, Body: map[string]any{"contact_ids": []string{bob.ID}, "target_book_id": memberBook.ID}}, Status: 404, Problem: "not_found"},
		{Name: "move to the same book", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + work.ID + "/move", Token: f.tok, Body: map[string]any{"contact_ids": []string{bob.ID}, "target_book_id": work.ID}}, Status: 422, Problem: "validation_failed"},
		{Name: "move with no ids", Request: webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + work.ID + "/move", Token: f.tok, Body: map[string]any{"contact_ids": []string{}, "target_book_id": b.ID}}, Status: 422, Problem: "validation_failed"},
		{Name: "book counts", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books", Token: f.tok}, Status: 200, Contains: []string{`"name":"Work","description":"","is_default":false,"contact_count":2`}},
		{Name: "rename a book", Request: webtest.Request{Method: "PATCH", Path: "/api/v1/contacts/books/" + work.ID, Token: f.tok, Body: map[string]any{"name": "Colleagues"}}, Status: 200, Contains: []string{`"name":"Colleagues"`}},
	})

	// Export: vCard 4.0 with a file name.
	exp := s.Do(webtest.Request{Method: http.MethodGet, Path: path + "/export", Token: f.tok})
	webtest.Check(t, exp, webtest.Scenario{Status: 200, Contains: []string{"BEGIN:VCARD", "VERSION:4.0", "FN:Zoë Mueller", "EMAIL;TYPE=work:zoe@example.com", "BDAY:19850412"},
		Headers: map[string]string{"Content-Type": "text/vcard; charset=utf-8"}})
	if cd := exp.Header.Get("Content-Disposition"); cd != `attachment; filename="Zo_ Mueller.vcf"; filename*=UTF-8''Zo%C3%AB%20Mueller.vcf` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if _, err := vcard.NewDecoder(bytes.NewReader(exp.Body)).Decode(); err != nil {
		t.Errorf("export does not parse: %v", err)
	}

	// Delete: stale If-Match refused, then deleted.
	s.Run(t, []webtest.Scenario{
		{Name: "delete with stale If-Match", Request: webtest.Request{Method: "DELETE", Path: path, Token: f.tok, Header: map[string]string{"If-Match": `"old"`}}, Status: 412, Problem: "precondition_failed"},
		{Name: "delete", Request: webtest.Request{Method: "DELETE", Path: path, Token: f.tok}, Status: 204},
		{Name: "deleted is gone", Request: webtest.Request{Method: "GET", Path: path, Token: f.tok}, Status: 404, Problem: "not_found"},
		{Name: "deleted leaves search", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/search?q=umlaut", Token: f.tok}, Status: 200, NotContains: []string{"Mueller"}},
		{Name: "delete a book with its contacts", Request: webtest.Request{Method: "DELETE", Path: "/api/v1/contacts/books/" + work.ID, Token: f.tok}, Status: 204},
		{Name: "deleted book's contacts leave search", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/search?q=zebra", Token: f.tok}, Status: 200, Contains: []string{"[]"}},
	})
}

func urlQuery(s string) string {
	r := strings.NewReplacer("%", "%25", " ", "%20", "@", "%40", `"`, "%22", "(", "%28", "&", "%26", "+", "%2B")
	return r.Replace(s)
}

func TestContactsDirectory(t *testing.T) {
	t.Parallel()
	f := newContactsFixture(t)
	s := f.s
	// A suspended user of the same organisation is not listed.
	ctx := context.Background()
	u, err := s.Main.Identity.UserByEmail(ctx, "max@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	s.Bootstrap("Acme", "gone@acme.test", "member")
	gone, _ := s.Main.Identity.UserByEmail(ctx, "gone@acme.test")
	if err := s.Main.DB.InTx(ctx, func(ctx context.Context) error {
		return sqliteIdentity(s).SetUserStatus(ctx, gone.ID, identity.UserSuspended)
	}); err != nil {
		t.Fatal(err)
	}
	s.Run(t, []webtest.Scenario{
		{Name: "directory lists the organisation's active users", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/directory", Token: f.mtok}, Status: 200,
			Contains: []string{`"email":"ada@acme.test"`, `"email":"max@acme.test"`, `"user_id":"` + u.ID + `"`}, NotContains: []string{"globex", "gone@acme.test"}},
		{Name: "another organisation's directory", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/directory", Token: f.otk}, Status: 200,
			Contains: []string{"gus@globex.test"}, NotContains: []string{"acme.test"}},
		{Name: "export a directory entry", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/directory/" + u.ID + "/export", Token: f.tok}, Status: 200,
			Contains: []string{"VERSION:4.0", "EMAIL;TYPE=work:max@acme.test", "ORG:Acme", "UID:urn:uuid:" + u.ID},
			Headers:  map[string]string{"Content-Type": "text/vcard; charset=utf-8"}},
		{Name: "export a user of another organisation", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/directory/" + u.ID + "/export", Token: f.otk}, Status: 404, Problem: "not_found"},
		{Name: "export a suspended user", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/directory/" + gone.ID + "/export", Token: f.tok}, Status: 404, Problem: "not_found"},
		{Name: "directory needs contacts:read", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/directory", Token: s.Token("ada@acme.test", "drive:read")}, Status: 403, Problem: "insufficient_scope"},
	})
}

// A vCard with properties Atrium does not model, written by a CardDAV client.
const richCard = "BEGIN:VCARD\r\n" +
	"VERSION:3.0\r\n" +
	"UID:rich-1\r\n" +
	"FN:Ada Lovelace\r\n" +
	"N:Lovelace;Ada;Augusta;Countess;\r\n" +
	"EMAIL;TYPE=INTERNET,HOME,pref:ada@example.org\r\n" +
	"TEL;TYPE=CELL,VOICE:+44 20 7946 0000\r\n" +
	"TEL;TYPE=X-SATELLITE:+881 631 234 567\r\n" +
	"CATEGORIES:math,poetry\r\n" +
	"X-ABRELATEDNAMES;TYPE=pref:Charles Babbage\r\n" +
	"item1.X-ABLabel:Engine room\r\n" +
	"PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQER\r\n" +
	" MUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQ=\r\n" +
	"ORG:Analytical Engines;Research\r\n" +
	"END:VCARD\r\n"

func TestContactsCardDAVRoundTrip(t *testing.T) {
	t.Parallel()
	f := newContactsFixture(t)
	s := f.s
	ctx := context.Background()
	hc := webdav.HTTPClientWithBasicAuth(s.Client(), f.admin.Email, f.admin.AppPassword)
	cl, err := carddav.NewClient(hc, s.URL+"/dav/")
	if err != nil {
		t.Fatal(err)
	}
	// Discovery: well-known redirect, principal, home set, books.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	wreq, _ := http.NewRequest("PROPFIND", s.URL+"/.well-known/carddav", nil)
	wk, err := noFollow.Do(wreq)
	if err != nil {
		t.Fatal(err)
	}
	wk.Body.Close()
	if wk.StatusCode != http.StatusMovedPermanently || wk.Header.Get("Location") != "/dav/" {
		t.Fatalf("well-known: %d %q", wk.StatusCode, wk.Header.Get("Location"))
	}
	principal, err := (func() (string, error) {
		wc, err := webdav.NewClient(hc, s.URL+"/dav/")
		if err != nil {
			return "", err
		}
		return wc.FindCurrentUserPrincipal(ctx)
	})()
	if err != nil || principal != "/dav/principals/"+f.admin.UserID+"/" {
		t.Fatalf("principal %q: %v", principal, err)
	}
	home, err := cl.FindAddressBookHomeSet(ctx, principal)
	if err != nil || home != "/dav/addressbooks/"+f.admin.UserID+"/" {
		t.Fatalf("home %q: %v", home, err)
	}
	books, err := cl.FindAddressBooks(ctx, home)
	if err != nil || len(books) != 1 || books[0].Name != "Contacts" {
		t.Fatalf("books %+v: %v", books, err)
	}
	bookPath := books[0].Path
	bookID := strings.TrimSuffix(strings.TrimPrefix(bookPath, home), "/")

	// Initial sync: empty, with a token.
	sync0, err := cl.SyncCollection(ctx, bookPath, &carddav.SyncQuery{})
	if err != nil || sync0.SyncToken == "" || len(sync0.Updated) != 0 {
		t.Fatalf("initial sync %+v: %v", sync0, err)
	}

	// Create via CardDAV with a client-chosen name and raw bytes.
	put := s.Do(webtest.Request{Method: http.MethodPut, Path: bookPath + "rich-1.vcf", BasicID: f.admin.Email, BasicPW: f.admin.AppPassword,
		Header: map[string]string{"Content-Type": "text/vcard; charset=utf-8", "If-None-Match": "*"}, Body: richCard})
	if put.StatusCode != http.StatusCreated || put.Header.Get("ETag") == "" {
		t.Fatalf("PUT: %d %s", put.StatusCode, put.Body)
	}
	again := s.Do(webtest.Request{Method: http.MethodPut, Path: bookPath + "rich-1.vcf", BasicID: f.admin.Email, BasicPW: f.admin.AppPassword,
		Header: map[string]string{"Content-Type": "text/vcard", "If-None-Match": "*"}, Body: richCard})
	if again.StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("PUT If-None-Match * over an existing card: %d", again.StatusCode)
	}
	// GET returns the bytes as written.
	raw := s.Do(webtest.Request{Method: http.MethodGet, Path: bookPath + "rich-1.vcf", BasicID: f.admin.Email, BasicPW: f.admin.AppPassword})
	if string(raw.Body) != richCard || raw.Header.Get("ETag") != put.Header.Get("ETag") {
		t.Fatalf("GET differs from PUT:\n%s", raw.Body)
	}

	// Read via REST.
	list := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + bookID, Token: f.tok})
	var cs []summary
	list.Decode(t, &cs)
	if len(cs) != 1 || cs[0].DisplayName != "Ada Lovelace" || cs[0].Email != "ada@example.org" || cs[0].Phone != "+44 20 7946 0000" {
		t.Fatalf("REST list %s", list.Body)
	}
	cpath := "/api/v1/contacts/books/" + bookID + "/" + cs[0].ID
	det := s.Do(webtest.Request{Method: http.MethodGet, Path: cpath, Token: f.tok})
	if det.Header.Get("ETag") != put.Header.Get("ETag") {
		t.Fatalf("REST ETag %q, CardDAV ETag %q", det.Header.Get("ETag"), put.Header.Get("ETag"))
	}

	// Edit via REST: unknown properties survive byte for byte.
	up := s.Do(webtest.Request{Method: http.MethodPut, Path: cpath, Token: f.tok, Header: map[string]string{"If-Match": det.Header.Get("ETag")},
		Body: map[string]any{"job_title": "Analyst", "first_name": "Augusta Ada"}})
	if up.StatusCode != 200 {
		t.Fatalf("REST edit: %d %s", up.StatusCode, up.Body)
	}
	after := s.Do(webtest.Request{Method: http.MethodGet, Path: bookPath + "rich-1.vcf", BasicID: f.admin.Email, BasicPW: f.admin.AppPassword})
	text := string(after.Body)
	for _, line := range strings.Split(strings.TrimSuffix(richCard, "\r\n"), "\r\n") {
		if strings.HasPrefix(line, "N:") || strings.HasPrefix(line, "FN:") {
			continue
		}
		if !strings.Contains(text, line+"\r\n") {
			t.Errorf("line %q lost after a REST edit:\n%s", line, text)
		}
	}
	for _, want := range []string{"TITLE:Analyst\r\n", "N:Lovelace;Augusta Ada;Augusta;Countess;\r\n", "FN:Augusta Ada Lovelace\r\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("after REST edit, vCard lacks %q:\n%s", want, text)
		}
	}
	if after.Header.Get("ETag") != up.Header.Get("ETag") {
		t.Errorf("CardDAV ETag %q != REST ETag %q", after.Header.Get("ETag"), up.Header.Get("ETag"))
	}

	// sync-collection sees the change; then a deletion.
	sync1, err := cl.SyncCollection(ctx, bookPath, &carddav.SyncQuery{SyncToken: sync0.SyncToken})
	if err != nil || len(sync1.Updated) != 1 || sync1.Updated[0].Path != bookPath+"rich-1.vcf" || sync1.SyncToken == sync0.SyncToken {
		t.Fatalf("sync after edit %+v: %v", sync1, err)
	}
	if strings.Trim(sync1.Updated[0].ETag, `"`) != strings.Trim(up.Header.Get("ETag"), `"`) {
		t.Errorf("sync etag %q, want %q", sync1.Updated[0].ETag, up.Header.Get("ETag"))
	}
	sync2, err := cl.SyncCollection(ctx, bookPath, &carddav.SyncQuery{SyncToken: sync1.SyncToken})
	if err != nil || len(sync2.Updated) != 0 || len(sync2.Deleted) != 0 {
		t.Fatalf("sync without changes %+v: %v", sync2, err)
	}
	// Multiget returns the stored text.
	objs, err := cl.MultiGetAddressBook(ctx, bookPath, &carddav.AddressBookMultiGet{Paths: []string{bookPath + "rich-1.vcf"},
		DataRequest: carddav.AddressDataRequest{AllProp: true}})
	if err != nil || len(objs) != 1 || objs[0].Card.PreferredValue(vcard.FieldTitle) != "Analyst" || objs[0].Card.Value("X-ABRELATEDNAMES") != "Charles Babbage" {
		t.Fatalf("multiget %+v: %v", objs, err)
	}
	// addressbook-query through go-webdav over the same service.
	q, err := cl.QueryAddressBook(ctx, bookPath, &carddav.AddressBookQuery{DataRequest: carddav.AddressDataRequest{AllProp: true},
		PropFilters: []carddav.PropFilter{{Name: vcard.FieldEmail, TextMatches: []carddav.TextMatch{{Text: "ada@"}}}}})
	if err != nil || len(q) != 1 || q[0].Card.Value(vcard.FieldCategories) != "math,poetry" {
		t.Fatalf("query %+v: %v", q, err)
	}
	raw = s.Do(webtest.Request{Method: "REPORT", Path: bookPath, Token: f.tok, Header: map[string]string{"Content-Type": "application/xml"}, Body: `<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">` +
		`<d:prop><d:getetag/><c:address-data/></d:prop><c:filter><c:prop-filter name="X-ABRELATEDNAMES"><c:text-match>BABBAGE</c:text-match></c:prop-filter></c:filter></c:addressbook-query>`})
	if raw.StatusCode != 207 || !strings.Contains(string(raw.Body), "CATEGORIES:math,poetry&#xD;&#xA;") {
		t.Fatalf("query keeps the stored text: %d %s", raw.StatusCode, raw.Body)
	}
	// Create through go-webdav's client (re-encoded card), visible via REST.
	card := vcard.Card{}
	card.SetValue(vcard.FieldVersion, "4.0")
	card.SetValue(vcard.FieldUID, "client-2")
	card.SetValue(vcard.FieldFormattedName, "Grace Hopper")
	card.AddValue(vcard.FieldEmail, "grace@navy.example")
	if _, err := cl.PutAddressObject(ctx, bookPath+"client-2.vcf", card); err != nil {
		t.Fatal(err)
	}
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/search?q=hopper", Token: f.tok}),
		webtest.Scenario{Status: 200, Contains: []string{`"display_name":"Grace Hopper"`, `"email":"grace@navy.example"`}})
	// Export converts the 3.0 card to 4.0, keeping what the client wrote.
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: cpath + "/export", Token: f.tok}), webtest.Scenario{Status: 200,
		Contains:    []string{"VERSION:4.0\r\n", "CATEGORIES:math,poetry\r\n", "X-ABRELATEDNAMES;PREF=1:Charles Babbage\r\n", "PHOTO:data:image/jpeg;base64,", "TITLE:Analyst\r\n"},
		NotContains: []string{"VERSION:3.0"}, Headers: map[string]string{"Content-Type": "text/vcard; charset=utf-8",
			"Content-Disposition": `attachment; filename="Augusta Ada Lovelace.vcf"; filename*=UTF-8''Augusta%20Ada%20Lovelace.vcf`}})
	// Delete via REST → tombstone in sync.
	del := s.Do(webtest.Request{Method: http.MethodDelete, Path: cpath, Token: f.tok})
	if del.StatusCode != 204 {
		t.Fatalf("delete: %d", del.StatusCode)
	}
	sync3, err := cl.SyncCollection(ctx, bookPath, &carddav.SyncQuery{SyncToken: sync1.SyncToken})
	if err != nil || len(sync3.Deleted) != 1 || sync3.Deleted[0] != bookPath+"rich-1.vcf" || len(sync3.Updated) != 1 {
		t.Fatalf("sync after delete %+v: %v", sync3, err)
	}

	s.Run(t, []webtest.Scenario{
		{Name: "DAV without credential asks for Basic", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/"}, Status: 401, Problem: "unauthorized",
			Headers: map[string]string{"WWW-Authenticate": `Basic realm="atrium", charset="UTF-8"`}},
		{Name: "bearer works on DAV", Request: webtest.Request{Method: "PROPFIND", Path: home, Token: f.tok, Header: map[string]string{"Depth": "1"}}, Status: 207,
			Contains: []string{"<cs:getctag>", "<d:sync-token>urn:atrium:sync:", "<card:addressbook/>"}},
		{Name: "another user's home", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/addressbooks/" + f.member.UserID + "/", Token: f.tok}, Status: 404},
		{Name: "another user's book", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/addressbooks/" + f.admin.UserID + "/" + bookID + "/", Token: f.mtok}, Status: 404},
		{Name: "invalid sync token", Request: webtest.Request{Method: "REPORT", Path: bookPath, Token: f.tok,
			Body: `<d:sync-collection xmlns:d="DAV:"><d:sync-token>urn:atrium:sync:other:1</d:sync-token><d:prop><d:getetag/></d:prop></d:sync-collection>`},
			Status: 403, Contains: []string{"valid-sync-token"}},
		{Name: "PUT a non-vCard", Request: webtest.Request{Method: "PUT", Path: bookPath + "bad.vcf", Token: f.tok, Header: map[string]string{"Content-Type": "text/vcard"}, Body: "hello"}, Status: 400},
		{Name: "PUT with a stale If-Match", Request: webtest.Request{Method: "PUT", Path: bookPath + "client-2.vcf", Token: f.tok,
			Header: map[string]string{"Content-Type": "text/vcard", "If-Match": `"nope"`}, Body: richCard}, Status: 412},
		{Name: "MKCOL makes a book", Request: webtest.Request{Method: "MKCOL", Path: home + "family/", Token: f.tok,
			Body: `<d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:set><d:prop><d:resourcetype><d:collection/><c:addressbook/></d:resourcetype><d:displayname>Family</d:displayname></d:prop></d:set></d:mkcol>`}, Status: 201},
		{Name: "the new book is in REST", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books", Token: f.tok}, Status: 200, Contains: []string{`"id":"family","name":"Family"`}},
		{Name: "PROPPATCH renames", Request: webtest.Request{Method: "PROPPATCH", Path: home + "family/", Token: f.tok,
			Body: `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>Kin</d:displayname></d:prop></d:set></d:propertyupdate>`}, Status: 207, Contains: []string{"200 OK"}},
		{Name: "renamed", Request: webtest.Request{Method: "GET", Path: "/api/v1/contacts/books/family", Token: f.tok}, Status: 200},
		{Name: "OPTIONS names the addressbook class", Request: webtest.Request{Method: "OPTIONS", Path: bookPath, Token: f.tok}, Status: 200,
			Headers: map[string]string{"DAV": "1, 3, extended-mkcol, addressbook"}},
		{Name: "PROPFIND Depth 1 lists cards with ETags", Request: webtest.Request{Method: "PROPFIND", Path: bookPath, Token: f.tok, Header: map[string]string{"Depth": "1"},
			Body: `<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>`}, Status: 207,
			Contains: []string{"<d:href>" + bookPath + "client-2.vcf</d:href>", "<d:getetag>&#34;", "<card:addressbook/>"}, NotContains: []string{"rich-1.vcf"}},
		{Name: "GET a book returns its cards", Request: webtest.Request{Method: "GET", Path: bookPath, Token: f.tok}, Status: 200,
			Contains: []string{"FN:Grace Hopper"}, Headers: map[string]string{"Content-Type": "text/vcard; charset=utf-8"}},
		{Name: "DELETE a card with a stale If-Match", Request: webtest.Request{Method: "DELETE", Path: bookPath + "client-2.vcf", Token: f.tok, Header: map[string]string{"If-Match": `"x"`}}, Status: 412},
		{Name: "a read-only token cannot PUT", Request: webtest.Request{Method: "PUT", Path: bookPath + "ro.vcf", Token: s.Token("ada@acme.test", "contacts:read"),
			Header: map[string]string{"Content-Type": "text/vcard"}, Body: richCard}, Status: 403},
		{Name: "principal reports the home set", Request: webtest.Request{Method: "PROPFIND", Path: principal, Token: f.tok,
			Body: `<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><c:addressbook-home-set/><d:unknown/></d:prop></d:propfind>`},
			Status: 207, Contains: []string{"<card:addressbook-home-set><d:href>" + home + "</d:href>", "404 Not Found"}},
	})
}

func sqliteIdentity(s *webtest.Server) sqldb.IdentityStore {
	return sqldb.IdentityStore{DB: s.Main.DB}
}

// BenchmarkContacts measures the figures on a book of 10,000 contacts:
// REST list, REST search (p50), a CardDAV sync-collection after 10 changes, and a
// CardDAV multiget of 1,000 cards — all over real HTTP.
func BenchmarkContacts(b *testing.B) {
	s := webtest.New(b)
	cr := s.Bootstrap("Bench", "bench@bench.test", "admin")
	ctx := context.Background()
	p, err := s.Main.Identity.Authenticate(ctx, cr.Token)
	if err != nil {
		b.Fatal(err)
	}
	svc := s.Main.Contacts
	bk, err := svc.DefaultBook(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	first := []string{"Anna", "Björn", "Chloé", "David", "Émile", "Fatima", "Günter", "Hana", "Iñigo", "Jana", "Kofi", "Lena", "Mateo", "Nora", "Olaf", "Priya", "Quentin", "Rosa", "Søren", "Tomás"}
	last := []string{"Müller", "Smith", "García", "Nguyen", "Dubois", "Kowalski", "Rossi", "Andersson", "Yilmaz", "O'Brien", "Novák", "Silva", "Tanaka", "Ivanova", "Fischer", "Jensen", "Moreau", "Lopez", "Schmidt", "Khan"}
	orgs := []string{"Acme", "Globex", "Initech", "Umbrella", "Stark Industries", "Wayne Enterprises", "Hooli", "Vandelay"}
	const n = 10000
	ids := make([]string, 0, n)
	if err := s.Main.DB.InTx(ctx, func(ctx context.Context) error {
		for i := range n {
			f, l := first[i%len(first)], last[(i/len(first))%len(last)]
			c, err := svc.CreateContact(ctx, p, bk.ID, contacts.ContactCreate{FirstName: f, LastName: fmt.Sprintf("%s %d", l, i),
				Emails:       []contacts.Email{{Type: "work", Value: fmt.Sprintf("user%d@example.com", i)}},
				Phones:       []contacts.Phone{{Type: "cell", Value: fmt.Sprintf("+49 30 %07d", i)}},
				Organization: orgs[i%len(orgs)]})
			if err != nil {
				return err
			}
			ids = append(ids, c.ID)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	bookPath := "/dav/addressbooks/" + cr.UserID + "/" + bk.ID + "/"

	list := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + bk.ID, Token: cr.Token})
	var all []summary
	list.Decode(b, &all)
	if len(all) != n || !slices.IsSortedFunc(all, func(x, y summary) int {
		return strings.Compare(strings.ToLower(x.DisplayName), strings.ToLower(y.DisplayName))
	}) {
		b.Fatalf("list of %d contacts is not sorted by name", len(all))
	}
	b.Run("list-10000", func(b *testing.B) {
		for b.Loop() {
			res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books/" + bk.ID, Token: cr.Token})
			if res.StatusCode != 200 || len(res.Body) < n*100 {
				b.Fatalf("list: %d, %d bytes", res.StatusCode, len(res.Body))
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		queries := []string{"anna", "müller", "garcia 12", "user4242", "4930000123", "globex", "søren", "tomas khan", "chlo", "initech lena"}
		var times []time.Duration
		i := 0
		for b.Loop() {
			start := time.Now()
			res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/search?q=" + urlQuery(queries[i%len(queries)]), Token: cr.Token})
			times = append(times, time.Since(start))
			if res.StatusCode != 200 {
				b.Fatalf("search: %d %s", res.StatusCode, res.Body)
			}
			i++
		}
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	})
	b.Run("sync-collection-10-changes", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			cur, err := svc.Book(ctx, p, bk.ID)
			if err != nil {
				b.Fatal(err)
			}
			for j := range 10 {
				title := fmt.Sprintf("Title %d", i)
				if _, err := svc.UpdateContact(ctx, p, bk.ID, ids[(i*10+j)%n], contacts.ContactUpdate{JobTitle: &title}, ""); err != nil {
					b.Fatal(err)
				}
			}
			i++
			body := `<d:sync-collection xmlns:d="DAV:"><d:sync-token>urn:atrium:sync:` + bk.ID + `:` + fmt.Sprint(cur.SyncSeq) +
				`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`
			b.StartTimer()
			res := s.Do(webtest.Request{Method: "REPORT", Path: bookPath, Token: cr.Token, Body: body})
			if res.StatusCode != 207 || bytes.Count(res.Body, []byte("<d:response>")) != 10 {
				b.Fatalf("sync: %d %s", res.StatusCode, res.Body)
			}
		}
	})
	b.Run("multiget-1000", func(b *testing.B) {
		var body strings.Builder
		body.WriteString(`<c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><c:address-data/></d:prop>`)
		for _, id := range ids[:1000] {
			body.WriteString("<d:href>" + bookPath + id + ".vcf</d:href>")
		}
		body.WriteString(`</c:addressbook-multiget>`)
		for b.Loop() {
			res := s.Do(webtest.Request{Method: "REPORT", Path: bookPath, Token: cr.Token, Body: body.String()})
			if res.StatusCode != 207 || bytes.Count(res.Body, []byte("BEGIN:VCARD")) != 1000 {
				b.Fatalf("multiget: %d %d", res.StatusCode, len(res.Body))
			}
		}
	})
}
