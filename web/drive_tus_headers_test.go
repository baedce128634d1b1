package web_test

import (
	"strconv"
	"testing"

	"atrium/webtest"
)

// A PATCH body is application/offset+octet-stream and nothing else (415), and
// byte counts are plain decimal numbers (400): nothing of a refused request is
// written.
func TestTusStrictHeaders(t *testing.T) {
	t.Parallel()
	s, c, tc := newTus(t)
	up := tc.create(tusMeta("filename", "strict.txt"), 5)
	patch := func(hdr map[string]string) webtest.Request {
		return webtest.Request{Method: "PATCH", Path: up, Token: c.tok, Body: []byte("hello"), Header: hdr}
	}
	create := func(length string) webtest.Request {
		return webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: c.tok,
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": length, "Upload-Metadata": tusMeta("filename", "x.txt")}}
	}
	unsupported := func(name string, r webtest.Request) webtest.Scenario {
		return webtest.Scenario{Name: name, Request: r, Status: 415, Problem: "unsupported_media_type", Contains: []string{"application/offset+octet-stream"}}
	}
	bad := func(name string, r webtest.Request, header string) webtest.Scenario {
		return webtest.Scenario{Name: name, Request: r, Status: 400, Problem: "bad_request", Contains: []string{header}}
	}
	s.Run(t, []webtest.Scenario{
		unsupported("text/plain", patch(map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "text/plain"})),
		// tusd itself lets an IETF-draft request send any type.
		unsupported("text/plain as an IETF draft", patch(map[string]string{"Upload-Draft-Interop-Version": "5", "Upload-Offset": "0", "Content-Type": "text/plain"})),
		unsupported("with a parameter", patch(map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream; x=1"})),
		bad("Upload-Length +5", create("+5"), "Upload-Length"),
		bad("Upload-Length 05", create("05"), "Upload-Length"),
		bad("Upload-Length 5 5", create("5 5"), "Upload-Length"),
		bad("Upload-Length -1", create("-1"), "Upload-Length"),
		bad("Upload-Length 0x5", create("0x5"), "Upload-Length"),
		bad("Upload-Offset +0", patch(map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "+0", "Content-Type": "application/offset+octet-stream"}), "Upload-Offset"),
		bad("Upload-Offset 00", patch(map[string]string{"Tus-Resumable": "1.0.0", "Upload-Offset": "00", "Content-Type": "application/offset+octet-stream"}), "Upload-Offset"),
		{Name: "Upload-Length 0", Request: create("0"), Status: 201},
	})
	if got := tc.offset(up); got != 0 {
		t.Fatalf("offset %d after refused PATCHes, want 0", got)
	}
	res := tc.patch(up, 0, []byte("hello"))
	webtest.Check(t, res, webtest.Scenario{Status: 204, Headers: map[string]string{"Upload-Offset": strconv.Itoa(5)}})
}
