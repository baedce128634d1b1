package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"atrium/app"
	"atrium/app/contacts"
)

// The contacts page: the person's address books and the organisation's
// directory. The page reads through the contacts service (the methods the REST
// operations call); every change is made by assets/contacts.js through the
// REST API (/api/v1/contacts/...), with the session's anti-forgery token.

// contactsPageSize is how many contacts a page of the list shows.
const contactsPageSize = 50

// maxSearchLen is the longest search text, as the REST search operation's.
const maxSearchLen = 200

// contactsData is the contacts page.
type contactsData struct {
	// Directory is true on the organisation directory view.
	Directory bool
	Books     []contacts.AddressBook
	// Book is the address book shown (the default one unless ?book= names another).
	Book contacts.AddressBook
	// Others are the person's other books (targets of a move).
	Others []contacts.AddressBook
	// Query is the search text (?q=); Favorites filters favourites (?fav=1).
	Query     string
	Favorites bool
	// Contacts are the contacts of this page of the list.
	Contacts []contactRow
	// Total is the number of contacts listed over all pages.
	Total      int
	Page       int
	Pages      int
	PrevURL    string
	NextURL    string
	SearchNote string
	People     []contacts.DirectoryEntry
}

// contactRow is a contact in the list.
type contactRow struct {
	contacts.ContactSummary
	// BookName is the contact's book, shown in search results (they span the
	// person's books).
	BookName string
}

// Details is the secondary line of a contact in the list.
func (c contactRow) Details() []string {
	var out []string
	for _, s := range []string{c.Email, c.Phone, c.Organization} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// contactsPage shows the list of an address book, or search results.
func (u *UI) contactsPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	svc := u.cfg.Contacts
	if svc == nil {
		u.fail(w, r, v, app.Errorf(app.ENotFound, "Contacts are not available on this server."))
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	d := contactsData{Query: strings.TrimSpace(q.Get("q")), Favorites: q.Get("fav") == "1"}
	books, err := svc.Books(ctx, v.P)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	d.Books = books
	names := map[string]string{}
	for _, b := range books {
		names[b.ID] = b.Name
	}
	want := q.Get("book")
	found := false
	for _, b := range books {
		if (want == "" && b.IsDefault) || (want != "" && b.ID == want) {
			d.Book, found = b, true
		}
	}
	if !found {
		if want != "" {
			u.fail(w, r, v, app.Errorf(app.ENotFound, "There is no address book %q.", want))
			return
		}
		d.Book = books[0]
	}
	for _, b := range books {
		if b.ID != d.Book.ID {
			d.Others = append(d.Others, b)
		}
	}

	var list []contacts.ContactSummary
	if d.Query != "" {
		if len([]rune(d.Query)) > maxSearchLen {
			// The REST operation's limit on q.
			d.SearchNote = fmt.Sprintf("Search for at most %d characters.", maxSearchLen)
		} else if len(contacts.SearchTerms(d.Query)) == 0 {
			d.SearchNote = "Type letters or digits to search."
		} else {
			// The search spans every book of the person, best matches first.
			list, err = svc.Search(ctx, v.P, d.Query, contacts.MaxSearchLimit)
			if err != nil {
				u.fail(w, r, v, err)
				return
			}
			if len(list) == contacts.MaxSearchLimit {
				d.SearchNote = fmt.Sprintf("Showing the best %d matches: type more to narrow the search.", contacts.MaxSearchLimit)
			}
		}
	} else {
		raw, err := svc.ContactsJSON(ctx, v.P, d.Book.ID)
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			u.fail(w, r, v, fmt.Errorf("contacts list of book %s: %w", d.Book.ID, err))
			return
		}
	}
	var rows []contactRow
	for _, c := range list {
		if d.Favorites && !c.IsFavorite {
			continue
		}
		rows = append(rows, contactRow{ContactSummary: c, BookName: names[c.BookID]})
	}
	d.Total = len(rows)
	d.Pages = max(1, (len(rows)+contactsPageSize-1)/contactsPageSize)
	d.Page = 1
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n >= 1 {
		d.Page = min(n, d.Pages)
	}
	lo := (d.Page - 1) * contactsPageSize
	d.Contacts = rows[lo:min(lo+contactsPageSize, len(rows))]
	if d.Page > 1 {
		d.PrevURL = d.listURL(d.Page - 1)
	}
	if d.Page < d.Pages {
		d.NextURL = d.listURL(d.Page + 1)
	}
	title := "Contacts"
	if d.Query != "" {
		title = "Search contacts"
	}
	u.render(w, r, http.StatusOK, "contacts", page{Title: title, V: v, Data: d})
}

// listURL is the address of another page of the list.
func (d contactsData) listURL(n int) string {
	q := url.Values{}
	if !d.Book.IsDefault {
		q.Set("book", d.Book.ID)
	}
	if d.Query != "" {
		q.Set("q", d.Query)
	}
	if d.Favorites {
		q.Set("fav", "1")
	}
	if n > 1 {
		q.Set("page", strconv.Itoa(n))
	}
	if len(q) == 0 {
		return "/contacts"
	}
	return "/contacts?" + q.Encode()
}

// BookURL is the address of a book's list.
func (d contactsData) BookURL(b contacts.AddressBook) string {
	if b.IsDefault {
		return "/contacts"
	}
	return "/contacts?book=" + url.QueryEscape(b.ID)
}

// contactsDirectory shows the active people of the person's organisation.
func (u *UI) contactsDirectory(w http.ResponseWriter, r *http.Request, v *viewer) {
	svc := u.cfg.Contacts
	if svc == nil {
		u.fail(w, r, v, app.Errorf(app.ENotFound, "Contacts are not available on this server."))
		return
	}
	people, err := svc.Directory(r.Context(), v.P)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	// People are added to the default book ("Add to my contacts").
	book, err := svc.DefaultBook(r.Context(), v.P)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	u.render(w, r, http.StatusOK, "contacts", page{Title: "Directory", V: v, Data: contactsData{Directory: true, People: people, Book: book}})
}
