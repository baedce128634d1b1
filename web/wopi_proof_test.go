package web_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"atrium/webtest"
	"atrium/wire"
)

// proofEditor is a fake editor whose discovery publishes proof keys, and
// that signs WOPI requests as Collabora Online does.
type proofEditor struct {
	*httptest.Server
	keys atomic.Pointer[[2]*rsa.PrivateKey] // current, old (nil: none)
}

func newProofEditor(t *testing.T, current, old *rsa.PrivateKey) *proofEditor {
	t.Helper()
	e := &proofEditor{}
	e.keys.Store(&[2]*rsa.PrivateKey{current, old})
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hosting/discovery" {
			http.NotFound(w, r)
			return
		}
		k := e.keys.Load()
		b64 := base64.StdEncoding.EncodeToString
		attrs := `modulus="` + b64(k[0].N.Bytes()) + `" exponent="AQAB"`
		if k[1] != nil {
			attrs += ` oldmodulus="` + b64(k[1].N.Bytes()) + `" oldexponent="AQAB"`
		}
		doc := strings.Replace(strings.ReplaceAll(fakeDiscovery, "EDITOR", e.URL), "<net-zone", "<proof-key "+attrs+"/><net-zone", 1)
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(doc))
	}))
	t.Cleanup(e.Close)
	return e
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signWOPI returns the X-WOPI-TimeStamp and X-WOPI-Proof of a request to
// rawURL with token at time at: the token, the URL (upper case unless lower
// is set) and the .NET ticks, each after its length.
func signWOPI(t *testing.T, k *rsa.PrivateKey, token, rawURL string, at time.Time, asWritten bool) map[string]string {
	t.Helper()
	ticks := at.UnixNano()/100 + 621355968000000000
	u := rawURL
	if !asWritten {
		u = strings.ToUpper(u)
	}
	var msg []byte
	for _, part := range [][]byte{[]byte(token), []byte(u), binary.BigEndian.AppendUint64(nil, uint64(ticks))} {
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(part)))
		msg = append(msg, part...)
	}
	sum := sha256.Sum256(msg)
	sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"X-WOPI-TimeStamp": strconv.FormatInt(ticks, 10), "X-WOPI-Proof": base64.StdEncoding.EncodeToString(sig)}
}

// With an editor that has a proof key, WOPI requests must be signed by it:
// an access token alone, taken elsewhere, opens nothing.
func TestEditorWOPIProofKeys(t *testing.T) {
	t.Parallel()
	current, old, stranger := rsaKey(t), rsaKey(t), rsaKey(t)
	editor := newProofEditor(t, current, old)
	s := webtest.New(t, withEditor(editor.URL))
	ann := newDavUser(t, s, "Drive Org", "ann@example.test", "admin")
	f := ann.rest.upload("report.odt", "", "application/vnd.oasis.opendocument.text", []byte("v1 content"))
	other := ann.rest.upload("other.odt", "", "application/vnd.oasis.opendocument.text", []byte("other"))
	var es editSession
	ann.rest.ok(200, "GET", "/api/v1/drive/"+f.ID+"/edit-url", nil, &es)
	tok := es.AccessToken
	signed := es.WOPISrc + "?access_token=" + url.QueryEscape(tok)
	now := s.Clock.Now()

	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"signed by the current key", signWOPI(t, current, tok, signed, now, false), 200},
		{"signed by the previous key", signWOPI(t, old, tok, signed, now, false), 200},
		{"URL signed as written (Collabora before 6.4)", signWOPI(t, current, tok, signed, now, true), 200},
		{"signed 19 minutes ago", signWOPI(t, current, tok, signed, now.Add(-19*time.Minute), false), 200},
		{"unsigned", nil, 401},
		{"signed by another key", signWOPI(t, stranger, tok, signed, now, false), 401},
		{"signed 21 minutes ago", signWOPI(t, current, tok, signed, now.Add(-21*time.Minute), false), 401},
		{"signed for another URL", signWOPI(t, current, tok, strings.Replace(signed, f.ID, other.ID, 1), now, false), 401},
		{"signed with another token", signWOPI(t, current, tok+"x", signed, now, false), 401},
		{"timestamp not a number", map[string]string{"X-WOPI-TimeStamp": "soon", "X-WOPI-Proof": "AAAA"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := wopiCall(s, "GET", f.ID, "", tok, tc.header, nil)
			wantWOPI(t, res, tc.status, nil)
			if tc.status == 401 && !strings.Contains(string(res.Body), "WOPI request is refused") {
				t.Fatalf("body %s", res.Body)
			}
		})
	}
	// GetFile is signed for its own URL.
	contents := es.WOPISrc + "/contents?access_token=" + url.QueryEscape(tok)
	res := wopiCall(s, "GET", f.ID, "contents", tok, signWOPI(t, current, tok, contents, now, false), nil)
	wantWOPI(t, res, 200, nil)
	if string(res.Body) != "v1 content" {
		t.Fatalf("GetFile %q", res.Body)
	}
	wantWOPI(t, wopiCall(s, "GET", f.ID, "contents", tok, signWOPI(t, current, tok, signed, now, false), nil), 401, nil)

	// The editor's key is replaced: Atrium reads the discovery again (at most
	// every 30 s) and accepts the new key.
	replacement := rsaKey(t)
	editor.keys.Store(&[2]*rsa.PrivateKey{replacement, current})
	s.Clock.Advance(31 * time.Second)
	now = s.Clock.Now()
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", tok, signWOPI(t, replacement, tok, signed, now, false), nil), 200, nil)
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", tok, signWOPI(t, old, tok, signed, now, false), nil), 401, nil)

	// A bad access token is still 401, signed or not.
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", "nope", signWOPI(t, replacement, "nope", signed, now, false), nil), 401, nil)

	// verify_proof = false: the access token alone is enough again.
	s.Stop()
	s = webtest.Start(t, s.Data, withEditor(editor.URL), func(c *wire.Config) { c.Editor.VerifyProof = false })
	wantWOPI(t, wopiCall(s, "GET", f.ID, "", tok, nil, nil), 200, nil)
}
