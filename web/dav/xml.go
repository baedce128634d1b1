package dav

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// XML namespaces of the DAV doors.
const (
	NSDAV     = "DAV:"
	NSCardDAV = "urn:ietf:params:xml:ns:carddav"
	NSCalDAV  = "urn:ietf:params:xml:ns:caldav"
	NSCS      = "http://calendarserver.org/ns/"
)

var prefixes = map[string]string{NSDAV: "d", NSCardDAV: "card", NSCalDAV: "cal", NSCS: "cs"}

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
	b.WriteString(`<d:multistatus xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/">`)
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
		`<d:error xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cal="urn:ietf:params:xml:ns:caldav">`+
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
