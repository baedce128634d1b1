package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"atrium/app/identity"
	"atrium/webtest"
)

// api sends a JSON request to the REST API as the contacts page's script does:
// the session cookie, and the page's anti-forgery token in X-CSRF-Token unless
// csrf is false.
func (b *browser) api(method, path string, body any, csrf bool) (int, map[string]any) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.s.URL+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", b.s.URL)
	if csrf {
		req.Header.Set("X-CSRF-Token", b.csrf)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

// defaultBookID returns the id of the signed-in person's default address book.
func defaultBookID(t *testing.T, s *webtest.Server, token string) string {
	t.Helper()
	var books []struct {
		ID        string `json:"id"`
		IsDefault bool   `json:"is_default"`
	}
	s.Do(webtest.Request{Method: "GET", Path: "/api/v1/contacts/books", Token: token}).Decode(t, &books)
	for _, b := range books {
		if b.IsDefault {
			return b.ID
		}
	}
	t.Fatal("no default address book")
	return ""
}

func TestWebAppContactsPage(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	person(t, s, "Org", "cards@example.test", "member")
	tok := s.Token("cards@example.test")
	book := defaultBookID(t, s, tok)

	// Signed out: to the sign-in page and back.
	b := newBrowser(t, s)
	for _, path := range []string{"/contacts", "/contacts/directory"} {
		if p := b.get(path); p.StatusCode != http.StatusSeeOther || p.Header.Get("Location") != "/signin?next="+url.QueryEscape(path) {
			t.Fatalf("%s signed out: %d %q", path, p.StatusCode, p.Header.Get("Location"))
		}
	}
	b.mustSignIn("cards@example.test", testPassword)

	p := b.get("/contacts")
	if p.StatusCode != 200 {
		t.Fatalf("contacts: %d %s", p.StatusCode, p.Body)
	}
	for _, want := range []string{`<a href="/contacts" aria-current="page">Contacts</a>`, `<label for="contacts-q">Search contacts</label>`,
		`>New contact</button>`, `<label for="c-first">First name</label>`, `<label for="c-last">Last name</label>`,
		`<label>Email</label>`, `>Save</button>`, "This address book has no contacts yet.", `<script src="/assets/contacts.js" defer></script>`} {
		if !strings.Contains(p.Body, want) {
			t.Fatalf("the empty page lacks %q", want)
		}
	}

	// The page's script writes through the REST API with the session and its token.
	for _, c := range []map[string]any{
		{"first_name": "Zoe", "last_name": "Zimmer", "emails": []map[string]string{{"type": "work", "value": "zoe@example.test"}}},
		{"first_name": "Adam", "last_name": "Ant", "organization": "Ants Ltd"},
		{"first_name": "Mia", "last_name": "Meyer", "phones": []map[string]string{{"type": "cell", "value": "+49 30 1234567"}}},
	} {
		if st, body := b.api("POST", "/api/v1/contacts/books/"+book, c, true); st != 201 && st != 200 {
			t.Fatalf("create %v: %d %v", c, st, body)
		}
	}
	p = b.get("/contacts")
	a, m, z := strings.Index(p.Body, ">Adam Ant<"), strings.Index(p.Body, ">Mia Meyer<"), strings.Index(p.Body, ">Zoe Zimmer<")
	if a < 0 || m < a || z < m {
		t.Fatalf("the list is not by display name (%d %d %d): %s", a, m, z, p.Body)
	}
	for _, want := range []string{"zoe@example.test", "Ants Ltd", "&#43;49 30 1234567", `3<span class="sr-only"> contacts</span>`} {
		if !strings.Contains(p.Body, want) {
			t.Fatalf("the list lacks %q: %s", want, p.Body)
		}
	}

	// Search (the contacts API's, across books) and the favourites filter.
	p = b.get("/contacts?q=mey")
	if !strings.Contains(p.Body, ">Mia Meyer<") || strings.Contains(p.Body, ">Adam Ant<") || !strings.Contains(p.Body, `value="mey"`) {
		t.Fatalf("search: %s", p.Body)
	}
	if p := b.get("/contacts?q=%22%2A"); p.StatusCode != 200 || !strings.Contains(p.Body, "Type letters or digits to search.") {
		t.Fatalf("a search without letters: %d", p.StatusCode)
	}
	if p := b.get("/contacts?q=" + strings.Repeat("a", 201)); p.StatusCode != 200 || !strings.Contains(p.Body, "Search for at most 200 characters.") {
		t.Fatalf("a long search: %d", p.StatusCode)
	}
	var zoe string
	if st, body := b.api("GET", "/api/v1/contacts/search?q=zoe", nil, false); st != 200 {
		t.Fatalf("search api: %d %v", st, body)
	}
	for _, c := range searchIDs(t, s, tok, "zoe") {
		zoe = c
	}
	if st, body := b.api("POST", "/api/v1/contacts/books/"+book+"/"+zoe+"/favorite", nil, true); st != 200 || body["is_favorite"] != true {
		t.Fatalf("favourite: %d %v", st, body)
	}
	p = b.get("/contacts?fav=1")
	if !strings.Contains(p.Body, ">Zoe Zimmer<") || strings.Contains(p.Body, ">Adam Ant<") || !strings.Contains(p.Body, `aria-pressed="true" aria-label="Favourite Zoe Zimmer"`) {
		t.Fatalf("favourites: %s", p.Body)
	}

	// Without the page's token, the API changes nothing.
	if st, _ := b.api("POST", "/api/v1/contacts/books/"+book, map[string]any{"first_name": "Forged"}, false); st != 403 {
		t.Fatalf("a write without X-CSRF-Token: %d", st)
	}
	if p := b.get("/contacts"); strings.Contains(p.Body, "Forged") {
		t.Fatal("a forged contact was made")
	}

	// Another book: listed with its count, selectable, a move target.
	var other struct{ ID string }
	s.Do(webtest.Request{Method: "POST", Path: "/api/v1/contacts/books", Token: tok, Body: map[string]string{"name": "Clients"}}).Decode(t, &other)
	p = b.get("/contacts?book=" + other.ID)
	if p.StatusCode != 200 || !strings.Contains(p.Body, `<h2 id="list-h">Clients</h2>`) {
		t.Fatalf("another book: %d %s", p.StatusCode, p.Body)
	}
	if p := b.get("/contacts?book=nope"); p.StatusCode != 404 {
		t.Fatalf("an unknown book: %d", p.StatusCode)
	}

	// Paging: 50 a page.
	for i := range 51 {
		s.Do(webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + other.ID, Token: tok, Body: map[string]string{"first_name": fmt.Sprintf("P%02d", i)}})
	}
	p = b.get("/contacts?book=" + other.ID)
	if !strings.Contains(p.Body, ">P00<") || strings.Contains(p.Body, ">P50<") || !strings.Contains(p.Body, "Page 1 of 2") ||
		!strings.Contains(p.Body, `<option value="`+book+`">Contacts</option>`) {
		t.Fatalf("page 1: %s", p.Body)
	}
	p = b.get("/contacts?book=" + other.ID + "&page=2")
	if !strings.Contains(p.Body, ">P50<") || strings.Contains(p.Body, ">P00<") || !strings.Contains(p.Body, `rel="prev"`) {
		t.Fatalf("page 2: %s", p.Body)
	}
}

// searchIDs returns the ids of the contacts the contacts API finds for q.
func searchIDs(t *testing.T, s *webtest.Server, token, q string) []string {
	t.Helper()
	var found []struct{ ID string }
	s.Do(webtest.Request{Method: "GET", Path: "/api/v1/contacts/search?q=" + url.QueryEscape(q), Token: token}).Decode(t, &found)
	var ids []string
	for _, f := range found {
		ids = append(ids, f.ID)
	}
	return ids
}

func TestWebAppContactsEscapes(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ctx := context.Background()
	c := person(t, s, "Org", "esc@example.test", "member")
	const xss = `<img src=x onerror=alert(1)>`
	if _, err := s.Main.Identity.EnsureUser(ctx, c.OrganizationID, identity.EnsureUserInput{Email: "pat@example.test", FirstName: "Pat", LastName: xss, Role: "member"}); err != nil {
		t.Fatal(err)
	}
	tok := s.Token("esc@example.test")
	book := defaultBookID(t, s, tok)
	res := s.Do(webtest.Request{Method: "POST", Path: "/api/v1/contacts/books/" + book, Token: tok, Body: map[string]any{
		"display_name": xss, "organization": `"><script>alert(2)</script>`,
		"emails": []map[string]string{{"value": "x@example.test"}}}})
	if res.StatusCode != 201 && res.StatusCode != 200 {
		t.Fatalf("create: %d %s", res.StatusCode, res.Body)
	}
	b := newBrowser(t, s)
	b.mustSignIn("esc@example.test", testPassword)
	for _, path := range []string{"/contacts", "/contacts?q=example", "/contacts/directory"} {
		p := b.get(path)
		if p.StatusCode != 200 {
			t.Fatalf("%s: %d", path, p.StatusCode)
		}
		if strings.Contains(p.Body, "<img") || strings.Contains(p.Body, "<script>alert") {
			t.Fatalf("%s: user text is not escaped: %s", path, p.Body)
		}
		if !strings.Contains(p.Body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Fatalf("%s: the name is missing: %s", path, p.Body)
		}
	}
	p := b.get("/contacts")
	if !strings.Contains(p.Body, `aria-label="Edit &lt;img src=x onerror=alert(1)&gt;"`) || !strings.Contains(p.Body, "&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;") {
		t.Fatalf("attributes and the organisation: %s", p.Body)
	}
	p = b.get("/contacts/directory")
	if !strings.Contains(p.Body, "pat@example.test") || !strings.Contains(p.Body, "/api/v1/contacts/directory/") {
		t.Fatalf("the directory: %s", p.Body)
	}
}
