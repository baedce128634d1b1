package webdav

import (
	"strings"
	"testing"
)

// FuzzParseXML checks that parsing an arbitrary PROPFIND, PROPPATCH or LOCK body
// never panics.
func FuzzParseXML(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><D:resourcetype/></D:prop></D:propfind>`,
		`<propfind xmlns="DAV:"><allprop/></propfind>`,
		`<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>`,
		`<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:color xml:lang="en">red<b xmlns="urn:b">&amp;</b></Z:color></D:prop></D:set><D:remove><D:prop><Z:old/></D:prop></D:remove></D:propertyupdate>`,
		`<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner><D:href>mailto:ada@example.org</D:href></D:owner></D:lockinfo>`,
		`<D:a xmlns:D="DAV:"><X:b/></D:a>`,
		`<a xmlns:p=""><p:b/></a>`,
		`<a></b>`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		n, err := parseXML(strings.NewReader(body))
		if err == nil && n != nil {
			_ = innerXML(n)
			_ = n.text()
		}
	})
}
