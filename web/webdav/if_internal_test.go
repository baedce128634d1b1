package webdav

import (
	"strings"
	"testing"
	"time"
)

func TestParseTimeout(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
