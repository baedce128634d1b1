// Package ifheader parses the WebDAV If header (RFC 4918 §10.4), which
// WebDAV and the REST API of the drive accept to submit lock tokens:
// If: (<opaquelocktoken:…>).
package ifheader

import (
	"strings"

	"atrium/app"
)

// Cond is one condition of an If header list.
type Cond struct {
	Not   bool
	Token string
	ETag  string
}

// List is a list of an If header, tagged with a resource or not.
type List struct {
	Tag   string
	Conds []Cond
}

func bad(msg string) error {
	return app.Errorf(app.EBadRequest, "The If header is malformed: %s.", msg)
}

// Parse parses an If header (RFC 4918 §10.4).
func Parse(h string) ([]List, error) {
	var out []List
	tag := ""
	s := h
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		switch s[0] {
		case '<':
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return nil, bad("unterminated resource tag")
			}
			tag, s = s[1:end], s[end+1:]
		case '(':
			end := strings.IndexByte(s, ')')
			if end < 0 {
				return nil, bad("unterminated list")
			}
			conds, err := parseConds(s[1:end])
			if err != nil {
				return nil, err
			}
			out = append(out, List{Tag: tag, Conds: conds})
			s = s[end+1:]
		default:
			return nil, bad("expected a list or a resource tag")
		}
	}
	if len(out) == 0 {
		return nil, bad("no list")
	}
	return out, nil
}

func parseConds(s string) ([]Cond, error) {
	var out []Cond
	not := false
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		switch {
		case len(s) >= 3 && strings.EqualFold(s[:3], "not"):
			not, s = true, s[3:]
			continue
		case s[0] == '<':
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return nil, bad("unterminated state token")
			}
			out = append(out, Cond{Not: not, Token: s[1:end]})
			s = s[end+1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, bad("unterminated entity tag")
			}
			out = append(out, Cond{Not: not, ETag: strings.TrimSpace(s[1:end])})
			s = s[end+1:]
		default:
			return nil, bad("expected Not, a state token or an entity tag")
		}
		not = false
	}
	if len(out) == 0 {
		return nil, bad("empty list")
	}
	return out, nil
}

// Tokens returns the state tokens (lock tokens) the lists submit, in order.
func Tokens(lists []List) []string {
	var out []string
	for _, l := range lists {
		for _, c := range l.Conds {
			if c.Token != "" {
				out = append(out, c.Token)
			}
		}
	}
	return out
}
