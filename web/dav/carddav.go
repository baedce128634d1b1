package dav

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/carddav"

	"atrium/app"
	"atrium/app/contacts"
)

// AddressBooksPrefix is where the CardDAV door's collections live.
const AddressBooksPrefix = "/dav/addressbooks/"

// CardDAV is the CardDAV door over the contacts service. It answers PROPFIND
// (with getctag and sync-token), PROPPATCH, MKCOL, GET/PUT/DELETE of cards (the
// stored vCard byte for byte), and the sync-collection (RFC 6578) and
// addressbook-multiget REPORTs itself; for addressbook-query, go-webdav's
// carddav.Handler parses and matches the filter over the same service (backend
// below) and the answer is written from the stored cards.
//
// Sync tokens: each book keeps a change sequence that every change of one of
// its contacts bumps in the same transaction; a contact remembers the sequence of
// its last change and a deleted (or moved away) contact leaves a tombstone with
// the sequence of its deletion. The token is urn:atrium:sync:<book_id>:<seq>;
// getctag is the sequence.
type CardDAV struct {
	reporter
	svc   *contacts.Service
	query *carddav.Handler
}

var _ Door = (*CardDAV)(nil)

// NewCardDAV returns the CardDAV door.
func NewCardDAV(publicURL string, log *slog.Logger, svc *contacts.Service) *CardDAV {
	d := &CardDAV{reporter: newReporter(publicURL, log), svc: svc}
	d.query = &carddav.Handler{Backend: &backend{svc: svc}, Prefix: "/dav"}
	return d
}

// Prefix implements Door.
func (d *CardDAV) Prefix() string { return AddressBooksPrefix }

// Capability implements Door.
func (d *CardDAV) Capability() string { return "addressbook" }

// PrincipalProps implements Door: the address book home of the caller.
func (d *CardDAV) PrincipalProps(p *app.Principal) Props {
	ps := Props{}
	ps.Static(Name(NSCardDAV, "addressbook-home-set"), Href(homePath(p.UserID)))
	return ps
}

func homePath(userID string) string         { return AddressBooksPrefix + userID + "/" }
func bookPath(userID, bookID string) string { return homePath(userID) + bookID + "/" }
func cardPath(userID, bookID, href string) string {
	return bookPath(userID, bookID) + href
}

// target is a parsed /dav/addressbooks/ path.
type target struct {
	user, book, card string
	collection       bool // the path ends in "/"
}

func parseTarget(path string) (target, bool) {
	rest := strings.TrimPrefix(path, strings.TrimSuffix(AddressBooksPrefix, "/"))
	t := target{collection: strings.HasSuffix(rest, "/") || rest == ""}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) > 3 {
		return t, false
	}
	for i, s := range parts {
		if s == "" && (i > 0 || len(parts) > 1) {
			return t, false
		}
	}
	t.user = parts[0]
	if len(parts) > 1 {
		t.book = parts[1]
	}
	if len(parts) > 2 {
		t.card = parts[2]
	}
	return t, true
}

// ServeHTTP implements http.Handler.
func (d *CardDAV) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := app.PrincipalFrom(r.Context())
	t, ok := parseTarget(r.URL.Path)
	if !ok || t.user == "" {
		if ok && r.Method == "PROPFIND" { // the collection of homes: only the caller's
			d.propfindHome(w, r, p, true)
			return
		}
		d.problem(w, r, app.Errorf(app.ENotFound, "No address book resource at %s.", r.URL.Path))
		return
	}
	if t.user != p.UserID {
		d.problem(w, r, app.Errorf(app.ENotFound, "No address book resource at %s.", r.URL.Path))
		return
	}
	if r.Method == http.MethodOptions {
		w.Header().Set("DAV", "1, 3, extended-mkcol, addressbook")
		w.Header().Set("Allow", "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, MKCOL")
		w.WriteHeader(http.StatusOK)
		return
	}
	var err error
	switch {
	case t.book == "":
		switch r.Method {
		case "PROPFIND":
			d.propfindHome(w, r, p, false)
		default:
			d.methodNotAllowed(w, r, "OPTIONS, PROPFIND")
		}
	case t.card == "":
		switch r.Method {
		case "PROPFIND":
			err = d.propfindBook(w, r, p, t.book)
		case "PROPPATCH":
			err = d.proppatchBook(w, r, p, t.book)
		case "REPORT":
			err = d.report(w, r, p, t.book)
		case "MKCOL":
			err = d.mkcol(w, r, p, t.book)
		case http.MethodDelete:
			if err = d.svc.DeleteBook(r.Context(), p, t.book); err == nil {
				w.WriteHeader(http.StatusNoContent)
			}
		case http.MethodGet, http.MethodHead:
			err = d.getBook(w, r, p, t.book)
		default:
			d.methodNotAllowed(w, r, "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, REPORT, MKCOL")
		}
	default:
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			err = d.getCard(w, r, p, t.book, t.card)
		case http.MethodPut:
			err = d.putCard(w, r, p, t.book, t.card)
		case http.MethodDelete:
			if err = d.svc.DeleteByHref(r.Context(), p, t.book, t.card, r.Header.Get("If-Match")); err == nil {
				w.WriteHeader(http.StatusNoContent)
			}
		case "PROPFIND":
			err = d.propfindCard(w, r, p, t.book, t.card)
		default:
			d.methodNotAllowed(w, r, "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND")
		}
	}
	if err != nil {
		d.problem(w, r, err)
	}
}

func badRequest(err error) error { return app.Errorf(app.EBadRequest, "%s", err.Error()) }

var (
	ctagName      = Name(NSCS, "getctag")
	syncTokenName = Name(NSDAV, "sync-token")
	addressData   = Name(NSCardDAV, "address-data")
	getETagName   = Name(NSDAV, "getetag")
)

func privileges(write bool) string {
	privs := []string{"read", "read-current-user-privilege-set"}
	if write {
		privs = append(privs, "write", "write-content", "write-properties", "bind", "unbind")
	}
	var b strings.Builder
	for _, p := range privs {
		b.WriteString(Elem(Name(NSDAV, "privilege"), Elem(Name(NSDAV, p), "")))
	}
	return b.String()
}

func (d *CardDAV) homeProps(p *app.Principal) Props {
	ps := Props{}
	ps.Static(Name(NSDAV, "resourcetype"), Elem(Name(NSDAV, "collection"), ""))
	ps.Static(Name(NSDAV, "current-user-principal"), Href(PrincipalPath(p.UserID)))
	ps.Static(Name(NSDAV, "owner"), Href(PrincipalPath(p.UserID)))
	ps.Static(Name(NSDAV, "current-user-privilege-set"), privileges(p.Scopes.Has(app.ScopeContactsWrite)))
	ps.Static(Name(NSDAV, "displayname"), Text("Address books"))
	return ps
}

func (d *CardDAV) bookProps(p *app.Principal, b contacts.AddressBook) Props {
	ps := d.homeProps(p)
	ps.Static(Name(NSDAV, "resourcetype"), Elem(Name(NSDAV, "collection"), "")+Elem(Name(NSCardDAV, "addressbook"), ""))
	ps.Static(Name(NSDAV, "displayname"), Text(b.Name))
	ps.Static(Name(NSCardDAV, "addressbook-description"), Text(b.Description))
	ps.Static(ctagName, Text(strconv.FormatInt(b.SyncSeq, 10)))
	ps.Static(syncTokenName, Text(syncToken(b.ID, b.SyncSeq)))
	ps.Static(Name(NSCardDAV, "max-resource-size"), strconv.Itoa(contacts.MaxVCardBytes))
	ps.Static(Name(NSCardDAV, "supported-address-data"),
		`<card:address-data-type content-type="text/vcard" version="3.0"/><card:address-data-type content-type="text/vcard" version="4.0"/>`)
	var reports strings.Builder
	for _, n := range []xml.Name{Name(NSCardDAV, "addressbook-query"), Name(NSCardDAV, "addressbook-multiget"), Name(NSDAV, "sync-collection")} {
		reports.WriteString(Elem(Name(NSDAV, "supported-report"), Elem(Name(NSDAV, "report"), Elem(n, ""))))
	}
	ps.Static(Name(NSDAV, "supported-report-set"), reports.String())
	ps.Static(Name(NSDAV, "getlastmodified"), Text(b.UpdatedAt.UTC().Format(http.TimeFormat)))
	return ps
}

func cardProps(p *app.Principal, c contacts.ContactDetail) Props {
	ps := Props{}
	ps.Static(Name(NSDAV, "resourcetype"), "")
	ps.Static(getETagName, Text(c.ETag))
	ps.Static(Name(NSDAV, "getcontenttype"), "text/vcard; charset=utf-8")
	ps.Static(Name(NSDAV, "getlastmodified"), Text(c.UpdatedAt.UTC().Format(http.TimeFormat)))
	ps.Static(Name(NSDAV, "current-user-principal"), Href(PrincipalPath(p.UserID)))
	if c.VCard != "" {
		ps.Static(Name(NSDAV, "getcontentlength"), strconv.Itoa(len(c.VCard)))
		ps.Static(addressData, Text(c.VCard))
	}
	return ps
}

func depth(r *http.Request) string {
	switch v := strings.TrimSpace(r.Header.Get("Depth")); v {
	case "0", "1":
		return v
	}
	return "1" // infinity is answered as 1 (RFC 4918 allows refusing it)
}

func (d *CardDAV) propfindHome(w http.ResponseWriter, r *http.Request, p *app.Principal, root bool) {
	req, err := parsePropfind(r)
	if err != nil {
		d.problem(w, r, badRequest(err))
		return
	}
	ctx := r.Context()
	var rs []Response
	if root {
		rs = append(rs, Resolve(AddressBooksPrefix, req, d.homeProps(p)))
		if depth(r) != "0" {
			rs = append(rs, Resolve(homePath(p.UserID), req, d.homeProps(p)))
		}
		WriteMultistatus(w, rs, "")
		return
	}
	rs = append(rs, Resolve(homePath(p.UserID), req, d.homeProps(p)))
	if depth(r) != "0" {
		books, err := d.svc.Books(ctx, p)
		if err != nil {
			d.problem(w, r, err)
			return
		}
		for _, b := range books {
			rs = append(rs, Resolve(bookPath(p.UserID, b.ID), req, d.bookProps(p, b)))
		}
	}
	WriteMultistatus(w, rs, "")
}

func (d *CardDAV) propfindBook(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	req, err := parsePropfind(r)
	if err != nil {
		return badRequest(err)
	}
	ctx := r.Context()
	b, err := d.svc.Book(ctx, p, bookID)
	if err != nil {
		return err
	}
	rs := []Response{Resolve(bookPath(p.UserID, b.ID), req, d.bookProps(p, b))}
	if depth(r) != "0" {
		var cs []contacts.ContactDetail
		if wantsData(req) {
			cs, err = d.svc.ContactsFull(ctx, p, bookID)
		} else {
			cs, err = d.svc.ContactsMeta(ctx, p, bookID)
		}
		if err != nil {
			return err
		}
		for _, c := range cs {
			rs = append(rs, Resolve(cardPath(p.UserID, bookID, c.Href), req, cardProps(p, c), addressData))
		}
	}
	WriteMultistatus(w, rs, "")
	return nil
}

func wantsData(req PropRequest) bool {
	for _, n := range req.Names {
		if n == addressData || n.Local == "getcontentlength" {
			return true
		}
	}
	return false
}

func (d *CardDAV) propfindCard(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID, href string) error {
	req, err := parsePropfind(r)
	if err != nil {
		return badRequest(err)
	}
	c, err := d.svc.ContactByHref(r.Context(), p, bookID, href)
	if err != nil {
		return err
	}
	WriteMultistatus(w, []Response{Resolve(cardPath(p.UserID, bookID, href), req, cardProps(p, c), addressData)}, "")
	return nil
}

type propertyUpdate struct {
	XMLName xml.Name `xml:"DAV: propertyupdate"`
	Set     []struct {
		Prop struct {
			Props []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
			} `xml:",any"`
		} `xml:"DAV: prop"`
	} `xml:"DAV: set"`
	Remove []struct {
		Prop propElem `xml:"DAV: prop"`
	} `xml:"DAV: remove"`
}

// proppatchBook sets a book's displayname and addressbook-description; other
// properties are refused (403) and then nothing changes (RFC 4918 atomicity).
func (d *CardDAV) proppatchBook(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	var u propertyUpdate
	if err := xml.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u); err != nil {
		return badRequest(errors.New("malformed PROPPATCH body"))
	}
	ctx := r.Context()
	b, err := d.svc.Book(ctx, p, bookID)
	if err != nil {
		return err
	}
	in := contacts.AddressBookInput{Name: b.Name, Description: b.Description}
	res := Response{Href: bookPath(p.UserID, bookID)}
	var refused []xml.Name
	var ok []xml.Name
	for _, s := range u.Set {
		for _, pr := range s.Prop.Props {
			switch pr.XMLName {
			case Name(NSDAV, "displayname"):
				in.Name = pr.Value
				ok = append(ok, pr.XMLName)
			case Name(NSCardDAV, "addressbook-description"):
				in.Description = pr.Value
				ok = append(ok, pr.XMLName)
			default:
				refused = append(refused, pr.XMLName)
			}
		}
	}
	for _, rm := range u.Remove {
		for _, n := range rm.Prop.names() {
			if n == Name(NSCardDAV, "addressbook-description") {
				in.Description = ""
				ok = append(ok, n)
				continue
			}
			refused = append(refused, n)
		}
	}
	if len(refused) > 0 {
		writePropstat(w, res.Href, refused, http.StatusForbidden, ok, http.StatusFailedDependency)
		return nil
	}
	if len(ok) > 0 {
		if _, err := d.svc.UpdateBook(ctx, p, bookID, in); err != nil {
			return err
		}
	}
	writePropstat(w, res.Href, ok, http.StatusOK, nil, 0)
	return nil
}

func writePropstat(w http.ResponseWriter, href string, names []xml.Name, status int, other []xml.Name, otherStatus int) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<d:multistatus xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/"><d:response>`)
	b.WriteString(Href(href))
	for _, g := range []struct {
		names  []xml.Name
		status int
	}{{names, status}, {other, otherStatus}} {
		if len(g.names) == 0 {
			continue
		}
		b.WriteString("<d:propstat><d:prop>")
		for _, n := range g.names {
			b.WriteString("<" + qname(n) + "/>")
		}
		b.WriteString("</d:prop><d:status>" + statusLine(g.status) + "</d:status></d:propstat>")
	}
	b.WriteString("</d:response></d:multistatus>")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	_, _ = w.Write(b.Bytes())
}

type mkcolBody struct {
	Set []struct {
		Prop struct {
			Props []struct {
				XMLName xml.Name
				Value   string    `xml:",chardata"`
				Inner   []anyElem `xml:",any"`
			} `xml:",any"`
		} `xml:"DAV: prop"`
	} `xml:"DAV: set"`
}

// mkcol creates an address book named by the path (extended MKCOL, RFC 5689).
func (d *CardDAV) mkcol(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return badRequest(err)
	}
	in := contacts.AddressBookInput{Name: bookID}
	if len(bytes.TrimSpace(data)) > 0 {
		var m mkcolBody
		if err := xml.Unmarshal(data, &m); err != nil {
			return badRequest(errors.New("malformed MKCOL body"))
		}
		for _, s := range m.Set {
			for _, pr := range s.Prop.Props {
				switch pr.XMLName {
				case Name(NSDAV, "displayname"):
					if v := strings.TrimSpace(pr.Value); v != "" {
						in.Name = v
					}
				case Name(NSCardDAV, "addressbook-description"):
					in.Description = pr.Value
				case Name(NSDAV, "resourcetype"):
					isBook := false
					for _, e := range pr.Inner {
						isBook = isBook || e.XMLName == Name(NSCardDAV, "addressbook")
					}
					if !isBook {
						WriteError(w, http.StatusForbidden, Name(NSDAV, "valid-resourcetype"))
						return nil
					}
				}
			}
		}
	}
	if _, err := d.svc.Book(r.Context(), p, bookID); err == nil {
		d.methodNotAllowed(w, r, "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, REPORT")
		return nil
	}
	if _, err := d.svc.CreateBook(r.Context(), p, bookID, in); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// getBook answers a GET of a book with every card, concatenated.
func (d *CardDAV) getBook(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	cs, err := d.svc.ContactsFull(r.Context(), p, bookID)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/vcard; charset=utf-8")
	if r.Method == http.MethodHead {
		return nil
	}
	for _, c := range cs {
		_, _ = io.WriteString(w, c.VCard)
	}
	return nil
}

func (d *CardDAV) getCard(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID, href string) error {
	c, err := d.svc.ContactByHref(r.Context(), p, bookID, href)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/vcard; charset=utf-8")
	w.Header().Set("ETag", c.ETag)
	w.Header().Set("Last-Modified", c.UpdatedAt.UTC().Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(len(c.VCard)))
	if inm := r.Header.Get("If-None-Match"); inm != "" && contacts.MatchETag(inm, c.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	if r.Method == http.MethodHead {
		return nil
	}
	_, _ = io.WriteString(w, c.VCard)
	return nil
}

func (d *CardDAV) putCard(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID, href string) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "text/vcard" && mt != "text/x-vcard" && mt != "text/directory") {
			return app.Errorf(app.EBadRequest, "The body must be text/vcard.")
		}
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, contacts.MaxVCardBytes+1))
	if err != nil {
		return badRequest(err)
	}
	if len(data) > contacts.MaxVCardBytes {
		return app.Errorf(app.EPayloadTooLarge, "A vCard may be at most %d bytes.", contacts.MaxVCardBytes)
	}
	res, err := d.svc.PutVCard(r.Context(), p, bookID, href, data, contacts.PutOptions{
		IfMatch: r.Header.Get("If-Match"), IfNoneMatch: r.Header.Get("If-None-Match")})
	if err != nil {
		return err
	}
	if !res.Rewritten {
		w.Header().Set("ETag", res.Contact.ETag)
	}
	w.Header().Set("Last-Modified", res.Contact.UpdatedAt.UTC().Format(http.TimeFormat))
	if res.Created {
		w.Header().Set("Location", cardPath(p.UserID, bookID, href))
		w.WriteHeader(http.StatusCreated)
		return nil
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type reportBody struct {
	XMLName   xml.Name
	SyncToken string    `xml:"DAV: sync-token"`
	SyncLevel string    `xml:"DAV: sync-level"`
	Prop      *propElem `xml:"DAV: prop"`
	AllProp   *struct{} `xml:"DAV: allprop"`
	Hrefs     []string  `xml:"DAV: href"`
}

func (b reportBody) propRequest() PropRequest {
	switch {
	case b.Prop != nil:
		return PropRequest{Names: b.Prop.names()}
	case b.AllProp != nil:
		return PropRequest{AllProp: true}
	}
	return PropRequest{Names: []xml.Name{getETagName}}
}

func (d *CardDAV) report(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return badRequest(err)
	}
	root, err := rootName(data)
	if err != nil {
		return badRequest(errors.New("malformed REPORT body"))
	}
	switch root {
	case Name(NSDAV, "sync-collection"), Name(NSCardDAV, "addressbook-multiget"):
		var body reportBody
		if err := xml.Unmarshal(data, &body); err != nil {
			return badRequest(errors.New("malformed REPORT body"))
		}
		if root.Local == "sync-collection" {
			return d.syncCollection(w, r, p, bookID, body)
		}
		return d.multiget(w, r, p, bookID, body)
	case Name(NSCardDAV, "addressbook-query"):
		return d.addressbookQuery(w, r, p, bookID, data)
	}
	WriteError(w, http.StatusForbidden, Name(NSDAV, "supported-report"))
	return nil
}

const syncPrefix = "urn:atrium:sync:"

func syncToken(bookID string, seq int64) string {
	return syncPrefix + bookID + ":" + strconv.FormatInt(seq, 10)
}

// parseSyncToken returns the sequence of a token of book bookID.
func parseSyncToken(token, bookID string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(token), syncPrefix+bookID+":")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(rest, 10, 64)
	return seq, err == nil && seq >= 0
}

// syncCollection answers RFC 6578: the members changed since the token (with the
// asked properties) and those removed (404), then the new token.
func (d *CardDAV) syncCollection(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string, body reportBody) error {
	if body.SyncLevel != "" && body.SyncLevel != "1" {
		WriteError(w, http.StatusForbidden, Name(NSDAV, "sync-traversal-supported"))
		return nil
	}
	var since int64
	if strings.TrimSpace(body.SyncToken) != "" {
		var ok bool
		if since, ok = parseSyncToken(body.SyncToken, bookID); !ok {
			WriteError(w, http.StatusForbidden, Name(NSDAV, "valid-sync-token"))
			return nil
		}
	}
	ctx := r.Context()
	ch, err := d.svc.Changes(ctx, p, bookID, since)
	if app.ErrorCode(err) == app.EValidation {
		WriteError(w, http.StatusForbidden, Name(NSDAV, "valid-sync-token"))
		return nil
	}
	if err != nil {
		return err
	}
	req := body.propRequest()
	changed := ch.Changed
	if wantsData(req) && len(changed) > 0 {
		hrefs := make([]string, len(changed))
		for i, c := range changed {
			hrefs[i] = c.Href
		}
		if changed, err = d.svc.ContactsByHref(ctx, p, bookID, hrefs); err != nil {
			return err
		}
	}
	rs := make([]Response, 0, len(changed)+len(ch.Deleted))
	for _, c := range changed {
		rs = append(rs, Resolve(cardPath(p.UserID, bookID, c.Href), req, cardProps(p, c), addressData))
	}
	if since > 0 {
		for _, h := range ch.Deleted {
			rs = append(rs, Response{Href: cardPath(p.UserID, bookID, h), Status: http.StatusNotFound})
		}
	}
	WriteMultistatus(w, rs, syncToken(bookID, ch.Seq))
	return nil
}

// multiget answers addressbook-multiget with the stored vCards.
func (d *CardDAV) multiget(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string, body reportBody) error {
	base := bookPath(p.UserID, bookID)
	names := make([]string, 0, len(body.Hrefs))
	byName := map[string]string{} // resource name → href as asked
	var rs []Response
	for _, h := range body.Hrefs {
		path := strings.TrimSpace(h)
		if u, err := url.Parse(path); err == nil {
			path = u.Path
		}
		name, ok := strings.CutPrefix(path, base)
		if !ok || name == "" || strings.Contains(name, "/") {
			rs = append(rs, Response{Href: path, Status: http.StatusNotFound})
			continue
		}
		names = append(names, name)
		byName[name] = path
	}
	cs, err := d.svc.ContactsByHref(r.Context(), p, bookID, names)
	if err != nil {
		return err
	}
	found := map[string]contacts.ContactDetail{}
	for _, c := range cs {
		found[c.Href] = c
	}
	req := body.propRequest()
	for _, n := range names {
		c, ok := found[n]
		if !ok {
			rs = append(rs, Response{Href: byName[n], Status: http.StatusNotFound})
			continue
		}
		rs = append(rs, Resolve(cardPath(p.UserID, bookID, c.Href), req, cardProps(p, c), addressData))
	}
	WriteMultistatus(w, rs, "")
	return nil
}

// addressbookQuery answers addressbook-query: go-webdav's handler parses the
// filter and matches the cards (through backend); the answer is then written from
// the stored vCards, so address-data is what the client wrote, byte for byte.
func (d *CardDAV) addressbookQuery(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string, data []byte) error {
	var body reportBody
	if err := xml.Unmarshal(data, &body); err != nil {
		return badRequest(errors.New("malformed REPORT body"))
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	rec := &recorder{header: http.Header{}}
	d.query.ServeHTTP(rec, r)
	if rec.status != http.StatusMultiStatus {
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
		return nil
	}
	var ms struct {
		Responses []struct {
			Href string `xml:"DAV: href"`
		} `xml:"DAV: response"`
	}
	if err := xml.Unmarshal(rec.body.Bytes(), &ms); err != nil {
		return err
	}
	base := bookPath(p.UserID, bookID)
	names := make([]string, 0, len(ms.Responses))
	for _, resp := range ms.Responses {
		path := resp.Href
		if u, err := url.Parse(path); err == nil {
			path = u.Path
		}
		if name, ok := strings.CutPrefix(path, base); ok && name != "" {
			names = append(names, name)
		}
	}
	cs, err := d.svc.ContactsByHref(r.Context(), p, bookID, names)
	if err != nil {
		return err
	}
	req := body.propRequest()
	rs := make([]Response, 0, len(cs))
	for _, c := range cs {
		rs = append(rs, Resolve(cardPath(p.UserID, bookID, c.Href), req, cardProps(p, c), addressData))
	}
	WriteMultistatus(w, rs, "")
	return nil
}

// recorder keeps a response in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

// backend is the go-webdav carddav.Backend over the contacts service; the
// addressbook-query REPORT goes through it.
type backend struct {
	svc *contacts.Service
}

var _ carddav.Backend = (*backend)(nil)

func principalOf(ctx context.Context) (*app.Principal, error) {
	p := app.PrincipalFrom(ctx)
	if p == nil {
		return nil, webdav.NewHTTPError(http.StatusUnauthorized, errors.New("authentication required"))
	}
	return p, nil
}

func httpErr(err error) error {
	if err == nil {
		return nil
	}
	return webdav.NewHTTPError(statusOf(err), err)
}

func (b *backend) CurrentUserPrincipal(ctx context.Context) (string, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return "", err
	}
	return PrincipalPath(p.UserID), nil
}

func (b *backend) AddressBookHomeSetPath(ctx context.Context) (string, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return "", err
	}
	return homePath(p.UserID), nil
}

func (b *backend) resolve(ctx context.Context, path string) (*app.Principal, target, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, target{}, err
	}
	t, ok := parseTarget(path)
	if !ok || t.user != p.UserID || t.book == "" {
		return nil, target{}, webdav.NewHTTPError(http.StatusNotFound, errors.New("no such resource"))
	}
	return p, t, nil
}

func toBook(userID string, bk contacts.AddressBook) carddav.AddressBook {
	return carddav.AddressBook{Path: bookPath(userID, bk.ID), Name: bk.Name, Description: bk.Description,
		MaxResourceSize: contacts.MaxVCardBytes,
		SupportedAddressData: []carddav.AddressDataType{
			{ContentType: vcard.MIMEType, Version: "3.0"}, {ContentType: vcard.MIMEType, Version: "4.0"}}}
}

func (b *backend) ListAddressBooks(ctx context.Context) ([]carddav.AddressBook, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return nil, err
	}
	books, err := b.svc.Books(ctx, p)
	if err != nil {
		return nil, httpErr(err)
	}
	out := make([]carddav.AddressBook, len(books))
	for i, bk := range books {
		out[i] = toBook(p.UserID, bk)
	}
	return out, nil
}

func (b *backend) GetAddressBook(ctx context.Context, path string) (*carddav.AddressBook, error) {
	p, t, err := b.resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	bk, err := b.svc.Book(ctx, p, t.book)
	if err != nil {
		return nil, httpErr(err)
	}
	ab := toBook(p.UserID, bk)
	return &ab, nil
}

func (b *backend) CreateAddressBook(ctx context.Context, ab *carddav.AddressBook) error {
	p, t, err := b.resolve(ctx, ab.Path)
	if err != nil {
		return err
	}
	name := ab.Name
	if name == "" {
		name = t.book
	}
	_, err = b.svc.CreateBook(ctx, p, t.book, contacts.AddressBookInput{Name: name, Description: ab.Description})
	return httpErr(err)
}

func (b *backend) DeleteAddressBook(ctx context.Context, path string) error {
	p, t, err := b.resolve(ctx, path)
	if err != nil {
		return err
	}
	return httpErr(b.svc.DeleteBook(ctx, p, t.book))
}

func toObject(userID string, c contacts.ContactDetail) (carddav.AddressObject, error) {
	card, err := contacts.Card(c)
	if err != nil {
		return carddav.AddressObject{}, err
	}
	return carddav.AddressObject{Path: cardPath(userID, c.BookID, c.Href), ModTime: c.UpdatedAt,
		ContentLength: int64(len(c.VCard)), ETag: strings.Trim(c.ETag, `"`), Card: card}, nil
}

func (b *backend) GetAddressObject(ctx context.Context, path string, _ *carddav.AddressDataRequest) (*carddav.AddressObject, error) {
	p, t, err := b.resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	c, err := b.svc.ContactByHref(ctx, p, t.book, t.card)
	if err != nil {
		return nil, httpErr(err)
	}
	ao, err := toObject(p.UserID, c)
	return &ao, err
}

func (b *backend) ListAddressObjects(ctx context.Context, path string, _ *carddav.AddressDataRequest) ([]carddav.AddressObject, error) {
	p, t, err := b.resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	cs, err := b.svc.ContactsFull(ctx, p, t.book)
	if err != nil {
		return nil, httpErr(err)
	}
	out := make([]carddav.AddressObject, 0, len(cs))
	for _, c := range cs {
		ao, err := toObject(p.UserID, c)
		if err != nil {
			return nil, err
		}
		out = append(out, ao)
	}
	return out, nil
}

// QueryAddressObjects matches the cards of a book against a query. Text matches
// ignore case (RFC 6352's default collation i;unicode-casemap; go-webdav compares
// octets), so values and match texts are compared lowercased.
func (b *backend) QueryAddressObjects(ctx context.Context, path string, q *carddav.AddressBookQuery) ([]carddav.AddressObject, error) {
	all, err := b.ListAddressObjects(ctx, path, &q.DataRequest)
	if err != nil {
		return nil, err
	}
	folded := *q
	folded.PropFilters = make([]carddav.PropFilter, len(q.PropFilters))
	for i, pf := range q.PropFilters {
		pf.TextMatches = foldMatches(pf.TextMatches)
		params := make([]carddav.ParamFilter, len(pf.Params))
		for j, pr := range pf.Params {
			if pr.TextMatch != nil {
				tm := foldMatches([]carddav.TextMatch{*pr.TextMatch})[0]
				pr.TextMatch = &tm
			}
			params[j] = pr
		}
		pf.Params = params
		folded.PropFilters[i] = pf
	}
	for i := range all {
		card := vcard.Card{}
		for k, fs := range all[i].Card {
			for _, f := range fs {
				card[k] = append(card[k], &vcard.Field{Value: strings.ToLower(f.Value), Params: f.Params, Group: f.Group})
			}
		}
		all[i].Card = card
	}
	return carddav.Filter(&folded, all)
}

func foldMatches(tms []carddav.TextMatch) []carddav.TextMatch {
	out := make([]carddav.TextMatch, len(tms))
	for i, tm := range tms {
		tm.Text = strings.ToLower(tm.Text)
		out[i] = tm
	}
	return out
}

func (b *backend) PutAddressObject(ctx context.Context, path string, card vcard.Card, opts *carddav.PutAddressObjectOptions) (*carddav.AddressObject, error) {
	p, t, err := b.resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := vcard.NewEncoder(&buf).Encode(card); err != nil {
		return nil, webdav.NewHTTPError(http.StatusBadRequest, err)
	}
	var o contacts.PutOptions
	if opts != nil {
		o = contacts.PutOptions{IfMatch: string(opts.IfMatch), IfNoneMatch: string(opts.IfNoneMatch)}
	}
	res, err := b.svc.PutVCard(ctx, p, t.book, t.card, buf.Bytes(), o)
	if err != nil {
		return nil, httpErr(err)
	}
	ao, err := toObject(p.UserID, res.Contact)
	return &ao, err
}

func (b *backend) DeleteAddressObject(ctx context.Context, path string) error {
	p, t, err := b.resolve(ctx, path)
	if err != nil {
		return err
	}
	return httpErr(b.svc.DeleteByHref(ctx, p, t.book, t.card, ""))
}
