package dav

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
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
	svc     *contacts.Service
	matcher *carddav.Handler
}

var _ Door = (*CardDAV)(nil)

// NewCardDAV returns the CardDAV door.
func NewCardDAV(publicURL string, log *slog.Logger, svc *contacts.Service) *CardDAV {
	d := &CardDAV{reporter: newReporter(publicURL, log), svc: svc}
	d.matcher = &carddav.Handler{Backend: &backend{svc: svc}, Prefix: "/dav"}
	return d
}

// Prefix implements Door.
func (d *CardDAV) Prefix() string { return AddressBooksPrefix }

// Capability implements Door.
func (d *CardDAV) Capability() string { return cardSpec.capability }

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

// cardSpec names the CardDAV door's paths and REPORTs.
var cardSpec = doorSpec{prefix: AddressBooksPrefix, capability: "addressbook", kind: "address book",
	makeMethods: []string{"MKCOL"}, multiget: Name(NSCardDAV, "addressbook-multiget"), query: Name(NSCardDAV, "addressbook-query")}

// ServeHTTP implements http.Handler.
func (d *CardDAV) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.serve(w, r, d, cardSpec) }

func (d *CardDAV) deleteColl(ctx context.Context, p *app.Principal, bookID string) error {
	return d.svc.DeleteBook(ctx, p, bookID)
}

func (d *CardDAV) deleteMember(ctx context.Context, p *app.Principal, bookID, href, ifMatch string) error {
	return d.svc.DeleteByHref(ctx, p, bookID, href, ifMatch)
}

var addressData = Name(NSCardDAV, "address-data")

func (d *CardDAV) homeProps(p *app.Principal) Props {
	return ownerProps(p, app.ScopeContactsWrite, "Address books")
}

func (d *CardDAV) bookProps(p *app.Principal, b contacts.AddressBook) Props {
	ps := d.homeProps(p)
	ps.Static(Name(NSDAV, "resourcetype"), Elem(Name(NSDAV, "collection"), "")+Elem(Name(NSCardDAV, "addressbook"), ""))
	ps.Static(Name(NSDAV, "displayname"), Text(b.Name))
	ps.Static(Name(NSCardDAV, "addressbook-description"), Text(b.Description))
	ps.Static(Name(NSCardDAV, "max-resource-size"), strconv.Itoa(contacts.MaxVCardBytes))
	ps.Static(Name(NSCardDAV, "supported-address-data"),
		`<card:address-data-type content-type="text/vcard" version="3.0"/><card:address-data-type content-type="text/vcard" version="4.0"/>`)
	syncProps(ps, b.ID, b.SyncSeq, b.UpdatedAt,
		Name(NSCardDAV, "addressbook-query"), Name(NSCardDAV, "addressbook-multiget"), Name(NSDAV, "sync-collection"))
	return ps
}

const vcardType = "text/vcard; charset=utf-8"

func cardProps(p *app.Principal, c contacts.ContactDetail) Props {
	return memberProps(p, c.ETag, vcardType, c.UpdatedAt, addressData, c.VCard)
}

func (d *CardDAV) propfindHome(w http.ResponseWriter, r *http.Request, p *app.Principal, root bool) error {
	return propfindHome(w, r, AddressBooksPrefix, homePath(p.UserID), d.homeProps(p), root, func(req PropRequest) ([]Response, error) {
		books, err := d.svc.Books(r.Context(), p)
		return resolveEach(req, books, err, func(b contacts.AddressBook) (string, Props) {
			return bookPath(p.UserID, b.ID), d.bookProps(p, b)
		})
	})
}

func (d *CardDAV) propfindColl(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	ctx := r.Context()
	b, err := d.svc.Book(ctx, p, bookID)
	if err != nil {
		return err
	}
	return propfind(w, r, bookPath(p.UserID, b.ID), d.bookProps(p, b), nil, func(req PropRequest) ([]Response, error) {
		var cs []contacts.ContactDetail
		if wantsData(req, addressData) {
			cs, err = d.svc.ContactsFull(ctx, p, bookID)
		} else {
			cs, err = d.svc.ContactsMeta(ctx, p, bookID)
		}
		return resolveEach(req, cs, err, d.card(p, bookID), addressData)
	})
}

// card gives the href and properties of a contact of a book.
func (d *CardDAV) card(p *app.Principal, bookID string) func(contacts.ContactDetail) (string, Props) {
	return func(c contacts.ContactDetail) (string, Props) {
		return cardPath(p.UserID, bookID, c.Href), cardProps(p, c)
	}
}

func (d *CardDAV) propfindMember(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID, href string) error {
	c, err := d.svc.ContactByHref(r.Context(), p, bookID, href)
	if err != nil {
		return err
	}
	return propfind(w, r, cardPath(p.UserID, bookID, href), cardProps(p, c), []xml.Name{addressData}, nil)
}

// proppatchColl sets a book's displayname and addressbook-description; other
// properties are refused (403) and then nothing changes (RFC 4918 atomicity).
func (d *CardDAV) proppatchColl(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	ctx := r.Context()
	b, err := d.svc.Book(ctx, p, bookID)
	if err != nil {
		return err
	}
	in := contacts.AddressBookInput{Name: b.Name, Description: b.Description}
	set := func(n xml.Name, v string) bool {
		switch n {
		case Name(NSDAV, "displayname"):
			in.Name = v
		case Name(NSCardDAV, "addressbook-description"):
			in.Description = v
		default:
			return false
		}
		return true
	}
	remove := func(n xml.Name) bool { return n == Name(NSCardDAV, "addressbook-description") && set(n, "") }
	return patchProps(w, r, bookPath(p.UserID, bookID), set, remove, func() error {
		_, err := d.svc.UpdateBook(ctx, p, bookID, in)
		return err
	})
}

// makeColl creates an address book named by the path (extended MKCOL, RFC 5689).
func (d *CardDAV) makeColl(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	m, err := readMkcol(r)
	if err != nil {
		return err
	}
	in := contacts.AddressBookInput{Name: bookID, Description: m.Values[Name(NSCardDAV, "addressbook-description")]}
	if v := strings.TrimSpace(m.Values[Name(NSDAV, "displayname")]); v != "" {
		in.Name = v
	}
	if m.Types != nil && !slices.Contains(m.Types, Name(NSCardDAV, "addressbook")) {
		WriteError(w, http.StatusForbidden, Name(NSDAV, "valid-resourcetype"))
		return nil
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

// getColl answers a GET of a book with every card, concatenated.
func (d *CardDAV) getColl(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string) error {
	cs, err := d.svc.ContactsFull(r.Context(), p, bookID)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", vcardType)
	if r.Method == http.MethodHead {
		return nil
	}
	for _, c := range cs {
		_, _ = io.WriteString(w, c.VCard)
	}
	return nil
}

func (d *CardDAV) getMember(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID, href string) error {
	c, err := d.svc.ContactByHref(r.Context(), p, bookID, href)
	if err != nil {
		return err
	}
	serveMember(w, r, vcardType, c.ETag, c.UpdatedAt, c.VCard)
	return nil
}

func (d *CardDAV) putMember(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID, href string) error {
	data, err := readMember(r, contacts.MaxVCardBytes, "A vCard", "text/vcard", "text/x-vcard", "text/directory")
	if err != nil {
		return err
	}
	res, err := d.svc.PutVCard(r.Context(), p, bookID, href, data, contacts.PutOptions{
		IfMatch: r.Header.Get("If-Match"), IfNoneMatch: r.Header.Get("If-None-Match")})
	if err != nil {
		return err
	}
	putAnswer(w, res.Contact.ETag, !res.Rewritten, res.Contact.UpdatedAt, res.Created, cardPath(p.UserID, bookID, href))
	return nil
}

// syncCollection answers RFC 6578: the members changed since the token (with the
// asked properties) and those removed (404), then the new token.
func (d *CardDAV) syncCollection(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string, body reportBody) error {
	ctx := r.Context()
	changes := func(since int64) ([]contacts.ContactDetail, []string, int64, error) {
		ch, err := d.svc.Changes(ctx, p, bookID, since)
		return ch.Changed, ch.Deleted, ch.Seq, err
	}
	full := func(changed []contacts.ContactDetail) ([]contacts.ContactDetail, error) {
		hrefs := make([]string, len(changed))
		for i, c := range changed {
			hrefs[i] = c.Href
		}
		return d.svc.ContactsByHref(ctx, p, bookID, hrefs)
	}
	return answerSync(w, body, bookID, bookPath(p.UserID, bookID), addressData, changes, full, d.card(p, bookID))
}

// multiget answers addressbook-multiget with the stored vCards.
func (d *CardDAV) multiget(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string, body reportBody) error {
	return answerMultiget(w, bookPath(p.UserID, bookID), body, addressData, func(names []string) ([]contacts.ContactDetail, error) {
		return d.svc.ContactsByHref(r.Context(), p, bookID, names)
	}, d.card(p, bookID))
}

// query answers addressbook-query: go-webdav's handler parses the
// filter and matches the cards (through backend); the answer is then written from
// the stored vCards, so address-data is what the client wrote, byte for byte.
func (d *CardDAV) query(w http.ResponseWriter, r *http.Request, p *app.Principal, bookID string, data []byte, body reportBody) error {
	r.Body = io.NopCloser(bytes.NewReader(data))
	rec := &recorder{header: http.Header{}}
	d.matcher.ServeHTTP(rec, r)
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
	rs, _ := resolveEach(body.propRequest(), cs, nil, d.card(p, bookID), addressData)
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
	t, ok := parseTarget(AddressBooksPrefix, path)
	if !ok || t.user != p.UserID || t.coll == "" {
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
	bk, err := b.svc.Book(ctx, p, t.coll)
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
		name = t.coll
	}
	_, err = b.svc.CreateBook(ctx, p, t.coll, contacts.AddressBookInput{Name: name, Description: ab.Description})
	return httpErr(err)
}

func (b *backend) DeleteAddressBook(ctx context.Context, path string) error {
	p, t, err := b.resolve(ctx, path)
	if err != nil {
		return err
	}
	return httpErr(b.svc.DeleteBook(ctx, p, t.coll))
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
	c, err := b.svc.ContactByHref(ctx, p, t.coll, t.item)
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
	cs, err := b.svc.ContactsFull(ctx, p, t.coll)
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
	res, err := b.svc.PutVCard(ctx, p, t.coll, t.item, buf.Bytes(), o)
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
	return httpErr(b.svc.DeleteByHref(ctx, p, t.coll, t.item, ""))
}
