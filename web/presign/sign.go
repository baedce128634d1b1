package presign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

var (
	// ErrExpired is wrapped by Verify when a genuine URL is past its expiry.
	ErrExpired = errors.New("url expired")
	// ErrBadSignature is wrapped by Verify when a URL's signature is missing,
	// malformed or does not match its method, path and parameters.
	ErrBadSignature = errors.New("bad url signature")
)

// The query parameters a Signer adds to the parameters it signs.
const (
	paramExpires   = "X-Expires"
	paramSignature = "X-Signature"
)

// Signer makes and checks presigned URLs: URLs that carry their own expiry and an
// HMAC-SHA256 signature over the method, the path, the expiry and every other
// query parameter, so whoever holds one may make exactly that request until it
// expires, and nothing else.
type Signer struct {
	key  []byte
	base string
	now  func() time.Time
}

// NewSigner returns a Signer that signs with key (which should be at least 32
// random bytes and stay secret; an empty key panics) and makes URLs on baseURL,
// such as "http://127.0.0.1:8080". now is the clock; nil means time.Now.
func NewSigner(key []byte, baseURL string, now func() time.Time) *Signer {
	if len(key) == 0 {
		panic("blob: NewSigner with an empty key")
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{key: append([]byte(nil), key...), base: strings.TrimRight(baseURL, "/"), now: now}
}

// URL returns baseURL + path + "?" + query: a URL good for a method request on
// path until ttl from now. The query holds params plus X-Expires (unix seconds)
// and X-Signature (unpadded base64url HMAC-SHA256). path is the unescaped path
// (as url.URL.Path); it is escaped in the URL where it needs to be. Any
// X-Expires or X-Signature in params is replaced.
func (s *Signer) URL(method, path string, params url.Values, ttl time.Duration) string {
	q := url.Values{}
	for k, v := range params {
		if k != paramExpires && k != paramSignature {
			q[k] = append([]string(nil), v...)
		}
	}
	expires := strconv.FormatInt(s.now().Add(ttl).Unix(), 10)
	sig := s.sign(method, path, expires, q)
	q.Set(paramExpires, expires)
	q.Set(paramSignature, base64.RawURLEncoding.EncodeToString(sig))
	return s.base + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Verify checks that u is a URL this Signer made for method and that it has not
// expired, and returns its parameters without X-Expires and X-Signature. Errors
// wrap ErrBadSignature (any missing, malformed or altered part, or another
// method) or ErrExpired (a genuine URL past its expiry).
func (s *Signer) Verify(method string, u *url.URL) (url.Values, error) {
	params, _, err := s.verify(method, u)
	return params, err
}

// verify is Verify that also returns the expiry.
func (s *Signer) verify(method string, u *url.URL) (url.Values, time.Time, error) {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("blob verify: %w: malformed query", ErrBadSignature)
	}
	exps, sigs := q[paramExpires], q[paramSignature]
	if len(exps) != 1 || len(sigs) != 1 {
		return nil, time.Time{}, fmt.Errorf("blob verify: %w: want one %s and one %s", ErrBadSignature, paramExpires, paramSignature)
	}
	exp, err := strconv.ParseInt(exps[0], 10, 64)
	if err != nil || strconv.FormatInt(exp, 10) != exps[0] {
		return nil, time.Time{}, fmt.Errorf("blob verify: %w: malformed %s", ErrBadSignature, paramExpires)
	}
	got, err := base64.RawURLEncoding.DecodeString(sigs[0])
	if err != nil || len(got) != sha256.Size {
		return nil, time.Time{}, fmt.Errorf("blob verify: %w: malformed %s", ErrBadSignature, paramSignature)
	}
	delete(q, paramExpires)
	delete(q, paramSignature)
	if !hmac.Equal(got, s.sign(method, u.Path, exps[0], q)) {
		return nil, time.Time{}, fmt.Errorf("blob verify: %w", ErrBadSignature)
	}
	expires := time.Unix(exp, 0)
	if s.now().After(expires) {
		return nil, time.Time{}, fmt.Errorf("blob verify: %w", ErrExpired)
	}
	return q, expires, nil
}

// sign is the HMAC of the canonical string of a request: the upper-cased method,
// the path, the expiry and the sorted, encoded parameters, one per line.
func (s *Signer) sign(method, path, expires string, params url.Values) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(strings.ToUpper(method) + "\n" + path + "\n" + expires + "\n" + params.Encode()))
	return m.Sum(nil)
}
