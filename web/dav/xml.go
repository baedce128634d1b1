package dav

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"atrium/app"
)

// XML namespaces of the DAV doors.
const (
	NSDAV     = "DAV:"
	NSCardDAV = "urn:ietf:params:xml:ns:carddav"
	NSCalDAV  = "urn:ietf:params:xml:ns:caldav"
	NSCS      = "http://calendarserver.org/ns/"
)

var prefixes = map[string]string{NSDAV: "d", NSCardDAV: "card", NSCalDAV: "cal", NSCS: "cs"}

// xmlns declares the prefixes on the root element of an answer.
const xmlns = `xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/"`

// Name makes an XML name.
func Name(ns, local string) xml.Name { return xml.Name{Space: ns, Local: local} }

// Prop is a property value: its name and its inner XML, already escaped (build it
// with Href, Elem, Text).
type Prop struct {
	Name  xml.Name
	Inner string
}

// Props maps property names to functions that compute their values; a function
// returning ok=false means the property is not set on this resource.
type Props map[xml.Name]func() (inner string, ok bool)

// Static adds a property with a fixed value.
func (ps Props) Static(name xml.Name, inner string) {
	ps[name] = func() (string, bool) { return inner, true }
}

// Text returns escaped character data.
func Text(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Href returns an escaped <d:href> element for a path.
func Href(path string) string { return "<d:href>" + Text(encodePath(path)) + "</d:href>" }

// Elem returns an element of a known namespace with inner XML.
func Elem(name xml.Name, inner string) string {
	tag := qname(name)
	if inner == "" {
		return "<" + tag + "/>"
	}
	return "<" + tag + ">" + inner + "</" + tag + ">"
}

// qname returns the prefixed name of an element; names of unknown namespaces are
// declared where they are used.
func qname(n xml.Name) string {
	if p, ok := prefixes[n.Space]; ok {
		return p + ":" + n.Local
	}
	return n.Local + ` xmlns="` + Text(n.Space) + `"`
}

func closeName(n xml.Name) string {
	if p, ok := prefixes[n.Space]; ok {
		return p + ":" + n.Local
	}
	return n.Local
}

// encodePath percent-encodes the segments of a path for an href.
func encodePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = escapeSegment(s)
	}
	return strings.Join(segs, "/")
}

func escapeSegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~@+", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// PropRequest is what a PROPFIND (or a REPORT's <d:prop>) asks for.
type PropRequest struct {
	AllProp  bool
	PropName bool
	Names    []xml.Name
}

type anyElem struct {
	XMLName xml.Name
}

type propElem struct {
	Props []anyElem `xml:",any"`
}

type propfindBody struct {
	XMLName  xml.Name  `xml:"DAV: propfind"`
	AllProp  *struct{} `xml:"DAV: allprop"`
	PropName *struct{} `xml:"DAV: propname"`
	Prop     *propElem `xml:"DAV: prop"`
}

// parsePropfind reads a PROPFIND body; an empty body asks for all properties.
func parsePropfind(r *http.Request) (PropRequest, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return PropRequest{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return PropRequest{AllProp: true}, nil
	}
	var b propfindBody
	if err := xml.Unmarshal(data, &b); err != nil {
		return PropRequest{}, fmt.Errorf("malformed PROPFIND body: %w", err)
	}
	return b.request(), nil
}

func (b propfindBody) request() PropRequest {
	switch {
	case b.PropName != nil:
		return PropRequest{PropName: true}
	case b.Prop != nil:
		return PropRequest{Names: b.Prop.names()}
	}
	return PropRequest{AllProp: true}
}

func (p *propElem) names() []xml.Name {
	if p == nil {
		return nil
	}
	out := make([]xml.Name, 0, len(p.Props))
	for _, e := range p.Props {
		out = append(out, e.XMLName)
	}
	return out
}

// Response is one <d:response> of a multistatus.
type Response struct {
	Href string
	// Status, when not zero, is the status of the whole resource (e.g. 404 for a
	// deleted member in a sync report); props are then not written.
	Status   int
	Found    []Prop
	NotFound []xml.Name
}

// Resolve answers a property request from a resource's properties. expensive
// names are left out of allprop.
func Resolve(href string, req PropRequest, props Props, expensive ...xml.Name) Response {
	res := Response{Href: href}
	switch {
	case req.PropName:
		for n := range props {
			res.Found = append(res.Found, Prop{Name: n})
		}
	case req.AllProp:
		skip := map[xml.Name]bool{}
		for _, n := range expensive {
			skip[n] = true
		}
		for n, f := range props {
			if skip[n] {
				continue
			}
			if v, ok := f(); ok {
				res.Found = append(res.Found, Prop{Name: n, Inner: v})
			}
		}
	default:
		for _, n := range req.Names {
			if f, ok := props[n]; ok {
				if v, ok := f(); ok {
					res.Found = append(res.Found, Prop{Name: n, Inner: v})
					continue
				}
			}
			res.NotFound = append(res.NotFound, n)
		}
	}
	sort.Slice(res.Found, func(i, j int) bool { return res.Found[i].Name.Local < res.Found[j].Name.Local })
	return res
}

// WriteMultistatus writes a 207 Multi-Status; syncToken, when not empty, is added
// (RFC 6578).
func WriteMultistatus(w http.ResponseWriter, rs []Response, syncToken string) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<d:multistatus ` + xmlns + `>`)
	for _, r := range rs {
		b.WriteString("<d:response>")
		b.WriteString(Href(r.Href))
		if r.Status != 0 {
			b.WriteString("<d:status>" + statusLine(r.Status) + "</d:status>")
			b.WriteString("</d:response>")
			continue
		}
		if len(r.Found) > 0 || len(r.NotFound) == 0 {
			b.WriteString("<d:propstat><d:prop>")
			for _, p := range r.Found {
				if p.Inner == "" {
					b.WriteString("<" + qname(p.Name) + "/>")
				} else {
					b.WriteString("<" + qname(p.Name) + ">" + p.Inner + "</" + closeName(p.Name) + ">")
				}
			}
			b.WriteString("</d:prop><d:status>" + statusLine(http.StatusOK) + "</d:status></d:propstat>")
		}
		if len(r.NotFound) > 0 {
			b.WriteString("<d:propstat><d:prop>")
			for _, n := range r.NotFound {
				b.WriteString("<" + qname(n) + "/>")
			}
			b.WriteString("</d:prop><d:status>" + statusLine(http.StatusNotFound) + "</d:status></d:propstat>")
		}
		b.WriteString("</d:response>")
	}
	if syncToken != "" {
		b.WriteString("<d:sync-token>" + Text(syncToken) + "</d:sync-token>")
	}
	b.WriteString("</d:multistatus>")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	_, _ = w.Write(b.Bytes())
}

func statusLine(code int) string { return fmt.Sprintf("HTTP/1.1 %d %s", code, http.StatusText(code)) }

// WriteError writes a DAV precondition error (RFC 4918 §16) such as
// <d:valid-sync-token/>.
func WriteError(w http.ResponseWriter, status int, condition xml.Name) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<d:error `+xmlns+`>`+
		"<"+qname(condition)+"/></d:error>")
}

// rootName returns the name of the root element of an XML body.
func rootName(data []byte) (xml.Name, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		t, err := d.Token()
		if err != nil {
			return xml.Name{}, err
		}
		if se, ok := t.(xml.StartElement); ok {
			return se.Name, nil
		}
	}
}

// badRequest makes a malformed body a bad_request error.
func badRequest(err error) error { return app.Errorf(app.EBadRequest, "%s", err.Error()) }

// Properties every door answers.
var (
	ctagName      = Name(NSCS, "getctag")
	syncTokenName = Name(NSDAV, "sync-token")
	getETagName   = Name(NSDAV, "getetag")
)

// privileges is the current-user-privilege-set of the caller: read, and write
// when their token holds the door's write scope.
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

// depth is the Depth of a PROPFIND, "0" or "1".
func depth(r *http.Request) string {
	switch v := strings.TrimSpace(r.Header.Get("Depth")); v {
	case "0", "1":
		return v
	}
	return "1" // infinity is answered as 1 (RFC 4918 allows refusing it)
}

// propertyUpdate is a PROPPATCH body.
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

// writePropstat answers a PROPPATCH: names with status, other with otherStatus.
func writePropstat(w http.ResponseWriter, href string, names []xml.Name, status int, other []xml.Name, otherStatus int) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<d:multistatus ` + xmlns + `><d:response>`)
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

// reportBody holds the fields of a REPORT body that sync-collection, the
// multigets and the queries share.
type reportBody struct {
	XMLName   xml.Name
	SyncToken string    `xml:"DAV: sync-token"`
	SyncLevel string    `xml:"DAV: sync-level"`
	Prop      *propElem `xml:"DAV: prop"`
	AllProp   *struct{} `xml:"DAV: allprop"`
	Hrefs     []string  `xml:"DAV: href"`
}

// propRequest is what a REPORT asks for of each member (getetag when it says
// nothing).
func (b reportBody) propRequest() PropRequest {
	switch {
	case b.Prop != nil:
		return PropRequest{Names: b.Prop.names()}
	case b.AllProp != nil:
		return PropRequest{AllProp: true}
	}
	return PropRequest{Names: []xml.Name{getETagName}}
}

// syncPrefix starts every sync token: urn:atrium:sync:<collection_id>:<seq>.
const syncPrefix = "urn:atrium:sync:"

// syncToken is the token of a collection at change sequence seq.
func syncToken(collID string, seq int64) string {
	return syncPrefix + collID + ":" + strconv.FormatInt(seq, 10)
}

// parseSyncToken returns the sequence of a token of collection collID.
func parseSyncToken(token, collID string) (int64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(token), syncPrefix+collID+":")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(rest, 10, 64)
	return seq, err == nil && seq >= 0
}

// The helpers below are the parts of a door that CardDAV and CalDAV share: the
// layout of their paths, the properties of homes, collections and members,
// PROPFIND, GET and PUT answers, PROPPATCH, extended MKCOL, and the members of a
// multiget or sync REPORT.

// target is a parsed door path: <prefix><user>/<coll>/<item>.
type target struct {
	user, coll, item string
}

// parseTarget parses a path under a door's prefix; ok is false for a path with
// more segments than a member's or with empty ones.
func parseTarget(prefix, path string) (target, bool) {
	rest := strings.TrimPrefix(path, strings.TrimSuffix(prefix, "/"))
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) > 3 {
		return target{}, false
	}
	for i, s := range parts {
		if s == "" && (i > 0 || len(parts) > 1) {
			return target{}, false
		}
	}
	t := target{user: parts[0]}
	if len(parts) > 1 {
		t.coll = parts[1]
	}
	if len(parts) > 2 {
		t.item = parts[2]
	}
	return t, true
}

// ownerProps are the properties every resource of a user's home carries: a
// plain collection owned by the caller, writable with the door's write scope.
func ownerProps(p *app.Principal, writeScope, displayName string) Props {
	ps := Props{}
	ps.Static(Name(NSDAV, "resourcetype"), Elem(Name(NSDAV, "collection"), ""))
	ps.Static(Name(NSDAV, "current-user-principal"), Href(PrincipalPath(p.UserID)))
	ps.Static(Name(NSDAV, "owner"), Href(PrincipalPath(p.UserID)))
	ps.Static(Name(NSDAV, "current-user-privilege-set"), privileges(p.Scopes.Has(writeScope)))
	ps.Static(Name(NSDAV, "displayname"), Text(displayName))
	return ps
}

// syncProps adds the properties of a synchronised collection (RFC 6578 and the
// calendarserver getctag): its change sequence, sync token, modification time
// and the REPORTs it answers.
func syncProps(ps Props, id string, seq int64, updated time.Time, reports ...xml.Name) {
	ps.Static(ctagName, Text(strconv.FormatInt(seq, 10)))
	ps.Static(syncTokenName, Text(syncToken(id, seq)))
	var b strings.Builder
	for _, n := range reports {
		b.WriteString(Elem(Name(NSDAV, "supported-report"), Elem(Name(NSDAV, "report"), Elem(n, ""))))
	}
	ps.Static(Name(NSDAV, "supported-report-set"), b.String())
	ps.Static(Name(NSDAV, "getlastmodified"), Text(updated.UTC().Format(http.TimeFormat)))
}

// memberProps are the properties of a stored member (a vCard, an iCalendar
// object); data, the stored text under dataName, may be empty when it was not
// loaded, and a zero modified time is left out.
func memberProps(p *app.Principal, etag, contentType string, modified time.Time, dataName xml.Name, data string) Props {
	ps := Props{}
	ps.Static(Name(NSDAV, "resourcetype"), "")
	ps.Static(getETagName, Text(etag))
	ps.Static(Name(NSDAV, "getcontenttype"), Text(contentType))
	if !modified.IsZero() {
		ps.Static(Name(NSDAV, "getlastmodified"), Text(modified.UTC().Format(http.TimeFormat)))
	}
	ps.Static(Name(NSDAV, "current-user-principal"), Href(PrincipalPath(p.UserID)))
	if data != "" {
		ps.Static(Name(NSDAV, "getcontentlength"), strconv.Itoa(len(data)))
		ps.Static(dataName, Text(data))
	}
	return ps
}

// wantsData reports whether a property request needs the members' stored text.
func wantsData(req PropRequest, dataName xml.Name) bool {
	for _, n := range req.Names {
		if n == dataName || n.Local == "getcontentlength" {
			return true
		}
	}
	return false
}

// propfind answers a PROPFIND of href: its own properties, then with a Depth
// other than 0 those of its members (members may be nil for a leaf).
func propfind(w http.ResponseWriter, r *http.Request, href string, props Props, expensive []xml.Name, members func(PropRequest) ([]Response, error)) error {
	req, err := parsePropfind(r)
	if err != nil {
		return badRequest(err)
	}
	rs := []Response{Resolve(href, req, props, expensive...)}
	if members != nil && depth(r) != "0" {
		more, err := members(req)
		if err != nil {
			return err
		}
		rs = append(rs, more...)
	}
	WriteMultistatus(w, rs, "")
	return nil
}

// propfindHome answers a PROPFIND of a door's collection of homes at prefix
// (root: it holds only the caller's home) or of the caller's home, whose
// collections list gives.
func propfindHome(w http.ResponseWriter, r *http.Request, prefix, home string, props Props, root bool, list func(PropRequest) ([]Response, error)) error {
	if root {
		return propfind(w, r, prefix, props, nil, func(req PropRequest) ([]Response, error) {
			return []Response{Resolve(home, req, props)}, nil
		})
	}
	return propfind(w, r, home, props, nil, list)
}

// resolveEach answers req for each of items (unless err is set, which it
// returns): f gives an item's href and properties.
func resolveEach[T any](req PropRequest, items []T, err error, f func(T) (string, Props), expensive ...xml.Name) ([]Response, error) {
	if err != nil {
		return nil, err
	}
	rs := make([]Response, 0, len(items))
	for _, it := range items {
		href, ps := f(it)
		rs = append(rs, Resolve(href, req, ps, expensive...))
	}
	return rs, nil
}

// serveMember answers a GET or HEAD of a stored member with its validators; an
// If-None-Match naming its ETag is answered 304.
func serveMember(w http.ResponseWriter, r *http.Request, contentType, etag string, modified time.Time, data string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("ETag", etag)
	w.Header().Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if inm := r.Header.Get("If-None-Match"); inm != "" && app.CheckIfMatch(inm, etag) == nil {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.WriteString(w, data)
}

// readMember reads the body of a PUT of a member: its Content-Type, when given,
// must be one of types, and it may hold at most limit bytes.
func readMember(r *http.Request, limit int, what string, types ...string) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !slices.Contains(types, mt) {
			return nil, app.Errorf(app.EBadRequest, "The body must be %s.", types[0])
		}
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return nil, badRequest(err)
	}
	if len(data) > limit {
		return nil, app.Errorf(app.EPayloadTooLarge, "%s may be at most %d bytes.", what, limit)
	}
	return data, nil
}

// putAnswer answers a stored PUT: the ETag only when the stored text is what
// the client sent (otherwise it must fetch it again), 201 with the location of
// a created member, else 204.
func putAnswer(w http.ResponseWriter, etag string, verbatim bool, modified time.Time, created bool, location string) {
	if verbatim {
		w.Header().Set("ETag", etag)
	}
	w.Header().Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	if created {
		w.Header().Set("Location", location)
		w.WriteHeader(http.StatusCreated)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// readReport reads a REPORT body and its root element; the body is also
// decoded as a reportBody (the fields sync-collection and multigets share).
func readReport(r *http.Request) (xml.Name, []byte, reportBody, error) {
	var body reportBody
	data, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return xml.Name{}, nil, body, badRequest(err)
	}
	root, err := rootName(data)
	if err == nil {
		err = xml.Unmarshal(data, &body)
	}
	if err != nil {
		return xml.Name{}, nil, body, badRequest(errors.New("malformed REPORT body"))
	}
	return root, data, body, nil
}

// syncSince returns the sequence a sync-collection asks from (0 without a
// token); ok is false when the request was refused (a 403 precondition was
// written): a depth other than 1, or a token of another collection.
func syncSince(w http.ResponseWriter, body reportBody, collID string) (since int64, ok bool) {
	if body.SyncLevel != "" && body.SyncLevel != "1" {
		WriteError(w, http.StatusForbidden, Name(NSDAV, "sync-traversal-supported"))
		return 0, false
	}
	if strings.TrimSpace(body.SyncToken) == "" {
		return 0, true
	}
	if since, ok = parseSyncToken(body.SyncToken, collID); !ok {
		WriteError(w, http.StatusForbidden, Name(NSDAV, "valid-sync-token"))
	}
	return since, ok
}

// answerMultiget answers a multiget of members of the collection at base:
// load reads the members named (leaving out those that do not exist) and f
// gives a member's href and properties. Hrefs outside the collection and
// members not found are answered 404, under the href the client wrote.
func answerMultiget[T any](w http.ResponseWriter, base string, body reportBody, dataName xml.Name, load func(names []string) ([]T, error), f func(T) (string, Props)) error {
	var rs []Response
	names := make([]string, 0, len(body.Hrefs))
	asked := map[string]string{} // name → href as written
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
		asked[name] = path
	}
	items, err := load(names)
	if err != nil {
		return err
	}
	found := make(map[string]Props, len(items))
	for _, it := range items {
		href, ps := f(it)
		found[href] = ps
	}
	req := body.propRequest()
	for _, n := range names {
		if ps, ok := found[base+n]; ok {
			rs = append(rs, Resolve(base+n, req, ps, dataName))
		} else {
			rs = append(rs, Response{Href: asked[n], Status: http.StatusNotFound})
		}
	}
	WriteMultistatus(w, rs, "")
	return nil
}

// answerSync answers a sync-collection (RFC 6578) on the collection collID at
// base from its change feed: changes gives the members written after a
// sequence (with at least their name and ETag), the names deleted and the
// current sequence (an app.EValidation error, or a sequence the collection has
// not reached, is an invalid token); full reads the written members whole when
// their text is asked for; f gives a member's href and properties.
func answerSync[T any](w http.ResponseWriter, body reportBody, collID, base string, dataName xml.Name,
	changes func(since int64) (written []T, deleted []string, seq int64, err error),
	full func(written []T) ([]T, error), f func(T) (string, Props)) error {
	since, ok := syncSince(w, body, collID)
	if !ok {
		return nil
	}
	written, deleted, seq, err := changes(since)
	if app.ErrorCode(err) == app.EValidation || err == nil && since > seq {
		WriteError(w, http.StatusForbidden, Name(NSDAV, "valid-sync-token"))
		return nil
	}
	if err != nil {
		return err
	}
	req := body.propRequest()
	if wantsData(req, dataName) && len(written) > 0 {
		if written, err = full(written); err != nil {
			return err
		}
	}
	rs, _ := resolveEach(req, written, nil, f, dataName)
	if since > 0 {
		for _, n := range deleted {
			rs = append(rs, Response{Href: base + n, Status: http.StatusNotFound})
		}
	}
	WriteMultistatus(w, rs, syncToken(collID, seq))
	return nil
}

// patchProps applies a PROPPATCH body through a door's setters: set and remove
// report whether they took a property. When one is refused nothing is
// committed (RFC 4918 atomicity): the refused are answered 403 and the others
// 424; otherwise commit runs (when anything was taken) and all are 200.
func patchProps(w http.ResponseWriter, r *http.Request, href string, set func(n xml.Name, v string) bool, remove func(n xml.Name) bool, commit func() error) error {
	var u propertyUpdate
	if err := xml.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u); err != nil {
		return badRequest(errors.New("malformed PROPPATCH body"))
	}
	var taken, refused []xml.Name
	note := func(n xml.Name, ok bool) {
		if ok {
			taken = append(taken, n)
		} else {
			refused = append(refused, n)
		}
	}
	for _, s := range u.Set {
		for _, pr := range s.Prop.Props {
			note(pr.XMLName, set(pr.XMLName, pr.Value))
		}
	}
	for _, rm := range u.Remove {
		for _, n := range rm.Prop.names() {
			note(n, remove(n))
		}
	}
	if len(refused) > 0 {
		writePropstat(w, href, refused, http.StatusForbidden, taken, http.StatusFailedDependency)
		return nil
	}
	if len(taken) > 0 {
		if err := commit(); err != nil {
			return err
		}
	}
	writePropstat(w, href, taken, http.StatusOK, nil, 0)
	return nil
}

// mkcolRequest is the body of an extended MKCOL (RFC 5689) or a MKCALENDAR
// (RFC 4791): the text of the properties to set, the resource types asked for
// (nil when none were named) and the components named by
// supported-calendar-component-set.
type mkcolRequest struct {
	Values     map[xml.Name]string
	Types      []xml.Name
	Components []string
}

type mkcolBody struct {
	Set []struct {
		Prop struct {
			Props []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
				Inner   []struct {
					XMLName xml.Name
					Name    string `xml:"name,attr"`
				} `xml:",any"`
			} `xml:",any"`
		} `xml:"DAV: prop"`
	} `xml:"DAV: set"`
}

// readMkcol reads an MKCOL or MKCALENDAR body; an empty one sets nothing.
func readMkcol(r *http.Request) (mkcolRequest, error) {
	m := mkcolRequest{Values: map[xml.Name]string{}}
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return m, badRequest(err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return m, nil
	}
	var b mkcolBody
	if err := xml.Unmarshal(data, &b); err != nil {
		return m, badRequest(fmt.Errorf("malformed %s body", r.Method))
	}
	for _, s := range b.Set {
		for _, pr := range s.Prop.Props {
			m.Values[pr.XMLName] = pr.Value
			for _, e := range pr.Inner {
				switch pr.XMLName {
				case Name(NSDAV, "resourcetype"):
					m.Types = append(m.Types, e.XMLName)
				case Name(NSCalDAV, "supported-calendar-component-set"):
					m.Components = append(m.Components, strings.ToUpper(e.Name))
				}
			}
			if pr.XMLName == Name(NSDAV, "resourcetype") && m.Types == nil {
				m.Types = []xml.Name{}
			}
		}
	}
	return m, nil
}

// door is what a DAV door (CardDAV, CalDAV) answers on its paths; serve
// routes requests to it.
type door interface {
	// propfindHome answers a PROPFIND of the collection of homes (root) or of
	// the caller's home.
	propfindHome(w http.ResponseWriter, r *http.Request, p *app.Principal, root bool) error
	propfindColl(w http.ResponseWriter, r *http.Request, p *app.Principal, coll string) error
	proppatchColl(w http.ResponseWriter, r *http.Request, p *app.Principal, coll string) error
	// makeColl answers MKCOL (and MKCALENDAR) of a collection.
	makeColl(w http.ResponseWriter, r *http.Request, p *app.Principal, coll string) error
	deleteColl(ctx context.Context, p *app.Principal, coll string) error
	getColl(w http.ResponseWriter, r *http.Request, p *app.Principal, coll string) error
	syncCollection(w http.ResponseWriter, r *http.Request, p *app.Principal, coll string, body reportBody) error
	multiget(w http.ResponseWriter, r *http.Request, p *app.Principal, coll string, body reportBody) error
	query(w http.ResponseWriter, r *http.Request, p *app.Principal, coll string, data []byte, body reportBody) error
	getMember(w http.ResponseWriter, r *http.Request, p *app.Principal, coll, name string) error
	putMember(w http.ResponseWriter, r *http.Request, p *app.Principal, coll, name string) error
	deleteMember(ctx context.Context, p *app.Principal, coll, name, ifMatch string) error
	propfindMember(w http.ResponseWriter, r *http.Request, p *app.Principal, coll, name string) error
}

// doorSpec names a door's paths and requests for serve.
type doorSpec struct {
	prefix     string // e.g. /dav/calendars/
	capability string // the DAV class, e.g. calendar-access
	kind       string // what a collection is called in errors, e.g. "calendar"
	// makeMethods make a collection: MKCOL, and MKCALENDAR for CalDAV.
	makeMethods []string
	// multiget and query are the door's REPORTs besides sync-collection.
	multiget, query xml.Name
}

// collAllow are the methods a collection answers.
func (s doorSpec) collAllow() string {
	return "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, REPORT, " + strings.Join(s.makeMethods, ", ")
}

// serve routes a request to a door: it answers a PROPFIND of the collection of
// homes itself (it holds only the caller's home), refuses every path of
// another user (404, as a missing one), answers OPTIONS with the door's DAV
// class, and hands the methods of a home, a collection and a member to d.
func (h reporter) serve(w http.ResponseWriter, r *http.Request, d door, spec doorSpec) {
	p := app.PrincipalFrom(r.Context())
	t, ok := parseTarget(spec.prefix, r.URL.Path)
	var err error
	switch {
	case ok && t.user == "" && r.Method == "PROPFIND":
		err = d.propfindHome(w, r, p, true)
	case !ok || t.user != p.UserID:
		err = app.Errorf(app.ENotFound, "No %s resource at %s.", spec.kind, r.URL.Path)
	case r.Method == http.MethodOptions:
		w.Header().Set("DAV", "1, 3, extended-mkcol, "+spec.capability)
		w.Header().Set("Allow", "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, "+strings.Join(spec.makeMethods, ", "))
		w.WriteHeader(http.StatusOK)
	case t.coll == "":
		if r.Method != "PROPFIND" {
			h.methodNotAllowed(w, r, "OPTIONS, PROPFIND")
			return
		}
		err = d.propfindHome(w, r, p, false)
	case t.item == "":
		err = h.serveColl(w, r, d, spec, p, t.coll)
	default:
		err = h.serveMember(w, r, d, p, t.coll, t.item)
	}
	if err != nil {
		h.problem(w, r, err)
	}
}

func (h reporter) serveColl(w http.ResponseWriter, r *http.Request, d door, spec doorSpec, p *app.Principal, coll string) error {
	switch r.Method {
	case "PROPFIND":
		return d.propfindColl(w, r, p, coll)
	case "PROPPATCH":
		return d.proppatchColl(w, r, p, coll)
	case "REPORT":
		root, data, body, err := readReport(r)
		switch {
		case err != nil:
			return err
		case root == Name(NSDAV, "sync-collection"):
			return d.syncCollection(w, r, p, coll, body)
		case root == spec.multiget:
			return d.multiget(w, r, p, coll, body)
		case root == spec.query:
			return d.query(w, r, p, coll, data, body)
		}
		WriteError(w, http.StatusForbidden, Name(NSDAV, "supported-report"))
		return nil
	case http.MethodDelete:
		if err := d.deleteColl(r.Context(), p, coll); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	case http.MethodGet, http.MethodHead:
		return d.getColl(w, r, p, coll)
	}
	if slices.Contains(spec.makeMethods, r.Method) {
		return d.makeColl(w, r, p, coll)
	}
	h.methodNotAllowed(w, r, spec.collAllow())
	return nil
}

func (h reporter) serveMember(w http.ResponseWriter, r *http.Request, d door, p *app.Principal, coll, name string) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return d.getMember(w, r, p, coll, name)
	case http.MethodPut:
		return d.putMember(w, r, p, coll, name)
	case http.MethodDelete:
		if err := d.deleteMember(r.Context(), p, coll, name, r.Header.Get("If-Match")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	case "PROPFIND":
		return d.propfindMember(w, r, p, coll, name)
	}
	h.methodNotAllowed(w, r, "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND")
	return nil
}
