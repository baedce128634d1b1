package webdav

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseIf(t *testing.T) {
	tok := "opaquelocktoken:01a20257-01ed-76db-8876-597ca579ff84"
	tests := []struct {
		in   string
		want []ifList
		bad  bool
	}{
		{in: "(<" + tok + ">)", want: []ifList{{conds: []ifCond{{token: tok}}}}},
		{in: `(<` + tok + `> ["abc"]) (Not <DAV:no-lock> ["abc"])`, want: []ifList{
			{conds: []ifCond{{token: tok}, {etag: `"abc"`}}},
			{conds: []ifCond{{not: true, token: "DAV:no-lock"}, {etag: `"abc"`}}}}},
		{in: `<http://h/api/v1/webdav/a> (<` + tok + `>) <http://h/api/v1/webdav/b> ([W/"x"])`, want: []ifList{
			{tag: "http://h/api/v1/webdav/a", conds: []ifCond{{token: tok}}},
			{tag: "http://h/api/v1/webdav/b", conds: []ifCond{{etag: `W/"x"`}}}}},
		{in: "", bad: true},
		{in: "(<" + tok, bad: true},
		{in: "()", bad: true},
		{in: "(<a> [b)", bad: true},
		{in: "token", bad: true},
	}
	for _, tt := range tests {
		got, err := parseIf(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("parseIf(%q) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseIf(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"":                            30 * time.Minute,
		"Infinite":                    30 * time.Minute,
		"Second-600":                  10 * time.Minute,
		"Infinite, Second-4100000000": 1 << 30 * time.Second,
		"Second-x":                    30 * time.Minute,
	} {
		if got := parseTimeout(in); got != want {
			t.Errorf("parseTimeout(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParseXMLRefuses(t *testing.T) {
	for _, in := range []string{
		`<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>`,
		`<D:propfind xmlns:D="DAV:"><D:prop><x:foo/></D:prop></D:propfind>`,
		`<D:propfind xmlns:D="DAV:"><D:prop></D:propfind>`,
		`<a/><b/>`,
	} {
		if _, err := parseXML(strings.NewReader(in)); err == nil {
			t.Errorf("parseXML(%q) accepted", in)
		}
	}
	n, err := parseXML(strings.NewReader(`<D:set xmlns:D="DAV:"><D:prop><Z:v xmlns:Z="urn:z" xml:lang="en">a<b xmlns="urn:b">&amp;</b></Z:v></D:prop></D:set>`))
	if err != nil {
		t.Fatal(err)
	}
	v := n.child(nsDAV, "prop").Children[0]
	if got, want := innerXML(v), `a<b xmlns="urn:b">&amp;</b>`; got != want {
		t.Errorf("innerXML = %q, want %q", got, want)
	}
}
