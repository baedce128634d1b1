package webdav

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxXMLBody bounds the request bodies of PROPFIND, PROPPATCH and LOCK.
const maxXMLBody = 1 << 20

// maxXMLDepth is the deepest element nesting a body may have. WebDAV bodies are a
// few levels deep (dead property values add some); a deeper one is refused
// rather than parsed, since every level costs a namespace scope.
const maxXMLDepth = 64

const nsDAV = "DAV:"

const nsXML = "http://www.w3.org/XML/1998/namespace"

// node is an element of a parsed request body, with namespaces resolved.
type node struct {
	Name     xml.Name
	Attr     []xml.Attr
	Children []*node
	// Content is the element's children and text in document order, for
	// re-serialising property values: a *node or a string.
	Content []any
}

func (n *node) is(space, local string) bool { return n.Name.Space == space && n.Name.Local == local }

// child returns the first child element with the name, nil when none.
func (n *node) child(space, local string) *node {
	for _, c := range n.Children {
		if c.is(space, local) {
			return c
		}
	}
	return nil
}

func (n *node) text() string {
	var b strings.Builder
	for _, c := range n.Content {
		switch v := c.(type) {
		case string:
			b.WriteString(v)
		case *node:
			b.WriteString(v.text())
		}
	}
	return b.String()
}

var errNoBody = errors.New("empty body")

// parseXML reads one XML document of at most maxXMLBody bytes. It resolves
// namespaces itself so that it can refuse what encoding/xml lets through: an
// undeclared prefix, a prefix bound to the empty namespace, mismatched tags.
// An empty body → errNoBody.
func parseXML(r io.Reader) (*node, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxXMLBody+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if len(data) > maxXMLBody {
		return nil, fmt.Errorf("the body is larger than %d bytes", maxXMLBody)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errNoBody
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	type frame struct {
		n   *node
		ns  map[string]string
		raw xml.Name
	}
	var stack []frame
	var root *node
	lookup := func(prefix string) (string, bool) {
		if prefix == "xml" {
			return nsXML, true
		}
		for i := len(stack) - 1; i >= 0; i-- {
			if v, ok := stack[i].ns[prefix]; ok {
				return v, true
			}
		}
		return "", prefix == ""
	}
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("malformed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root != nil && len(stack) == 0 {
				return nil, errors.New("malformed XML: more than one root element")
			}
			if len(stack) >= maxXMLDepth {
				return nil, fmt.Errorf("malformed XML: elements nested deeper than %d levels", maxXMLDepth)
			}
			ns := map[string]string{}
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					ns[""] = a.Value
				case a.Name.Space == "xmlns":
					if a.Value == "" {
						return nil, fmt.Errorf("malformed XML: the prefix %q is bound to the empty namespace", a.Name.Local)
					}
					ns[a.Name.Local] = a.Value
				}
			}
			stack = append(stack, frame{ns: ns, raw: t.Name})
			space, ok := lookup(t.Name.Space)
			if !ok {
				return nil, fmt.Errorf("malformed XML: undeclared namespace prefix %q", t.Name.Space)
			}
			n := &node{Name: xml.Name{Space: space, Local: t.Name.Local}}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
					continue
				}
				as := ""
				if a.Name.Space != "" {
					if as, ok = lookup(a.Name.Space); !ok {
						return nil, fmt.Errorf("malformed XML: undeclared namespace prefix %q", a.Name.Space)
					}
				}
				n.Attr = append(n.Attr, xml.Attr{Name: xml.Name{Space: as, Local: a.Name.Local}, Value: a.Value})
			}
			stack[len(stack)-1].n = n
			if len(stack) > 1 {
				parent := stack[len(stack)-2].n
				parent.Children = append(parent.Children, n)
				parent.Content = append(parent.Content, n)
			} else {
				root = n
			}
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].raw != t.Name {
				return nil, errors.New("malformed XML: mismatched end tag")
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, errors.New("malformed XML: text outside the root element")
				}
				continue
			}
			n := stack[len(stack)-1].n
			n.Content = append(n.Content, string(t))
		}
	}
	if root == nil || len(stack) != 0 {
		return nil, errors.New("malformed XML: no complete root element")
	}
	return root, nil
}

// innerXML serialises n's content as self-contained XML: every element
// declares its own namespace, so the value can be embedded anywhere.
func innerXML(n *node) string {
	var b strings.Builder
	for _, c := range n.Content {
		writeContent(&b, c)
	}
	return b.String()
}

func writeContent(b *strings.Builder, c any) {
	switch v := c.(type) {
	case string:
		escapeTo(b, v)
	case *node:
		b.WriteByte('<')
		b.WriteString(v.Name.Local)
		b.WriteString(` xmlns="`)
		escapeTo(b, v.Name.Space)
		b.WriteByte('"')
		for i, a := range v.Attr {
			b.WriteByte(' ')
			switch a.Name.Space {
			case "":
			case nsXML:
				b.WriteString("xml:")
			default:
				fmt.Fprintf(b, `xmlns:a%d="`, i)
				escapeTo(b, a.Name.Space)
				fmt.Fprintf(b, `" a%d:`, i)
			}
			b.WriteString(a.Name.Local)
			b.WriteString(`="`)
			escapeTo(b, a.Value)
			b.WriteByte('"')
		}
		if len(v.Content) == 0 {
			b.WriteString("/>")
			return
		}
		b.WriteByte('>')
		for _, cc := range v.Content {
			writeContent(b, cc)
		}
		b.WriteString("</")
		b.WriteString(v.Name.Local)
		b.WriteByte('>')
	}
}

type stringWriter interface {
	io.Writer
	WriteString(string) (int, error)
	WriteByte(byte) error
}

// escapeTo writes s with the XML special characters escaped.
func escapeTo(w stringWriter, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		w.WriteString(s[last:i])
		w.WriteString(esc)
		last = i + 1
	}
	w.WriteString(s[last:])
}

func escape(s string) string {
	var b strings.Builder
	escapeTo(&b, s)
	return b.String()
}

// propElement writes an empty or valued property element of any namespace:
// DAV: properties with the D prefix, others declaring their namespace.
func propElement(w stringWriter, name xml.Name, value string) {
	if name.Space == nsDAV {
		w.WriteString("<D:")
		w.WriteString(name.Local)
	} else {
		w.WriteByte('<')
		w.WriteString(name.Local)
		w.WriteString(` xmlns="`)
		escapeTo(w, name.Space)
		w.WriteByte('"')
	}
	if value == "" {
		w.WriteString("/>")
		return
	}
	w.WriteByte('>')
	w.WriteString(value)
	if name.Space == nsDAV {
		w.WriteString("</D:")
	} else {
		w.WriteString("</")
	}
	w.WriteString(name.Local)
	w.WriteByte('>')
}
