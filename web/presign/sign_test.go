package presign

import (
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	testKey = []byte("0123456789abcdef0123456789abcdef")
	t0      = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSignerURL(t *testing.T) {
	t.Parallel()
	s := NewSigner(testKey, "http://127.0.0.1:8080/", fixedClock(t0))
	params := url.Values{"fn": {"report é.pdf"}, "ct": {"application/pdf"}, "X-Signature": {"ignored"}}
	raw := s.URL("get", "/blob/o/abc", params, 5*time.Minute)
	if !strings.HasPrefix(raw, "http://127.0.0.1:8080/blob/o/abc?") {
		t.Fatalf("URL = %q", raw)
	}
	u := mustParse(t, raw)
	q := u.Query()
	if got, want := q.Get("X-Expires"), strconv.FormatInt(t0.Add(5*time.Minute).Unix(), 10); got != want {
		t.Errorf("X-Expires = %q, want %q", got, want)
	}
	if sig := q.Get("X-Signature"); len(sig) != 43 || strings.ContainsAny(sig, "=+/") {
		t.Errorf("X-Signature = %q, want 43 characters of unpadded base64url", sig)
	}
	if len(params["X-Signature"]) != 1 || params["X-Signature"][0] != "ignored" {
		t.Error("URL modified the caller's params")
	}

	got, err := s.Verify("GET", u)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := url.Values{"fn": {"report é.pdf"}, "ct": {"application/pdf"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Verify params = %v, want %v", got, want)
	}
}

func TestSignerVerify(t *testing.T) {
	t.Parallel()
	s := NewSigner(testKey, "http://example.test", fixedClock(t0))
	params := url.Values{"ct": {"text/plain"}, "fn": {"a b&c=d.txt"}, "multi": {"1", "2"}}
	raw := s.URL("GET", "/blob/o/0123", params, time.Minute)

	// Each case alters a genuine GET URL (or verifies it some other way).
	cases := []struct {
		name   string
		method string
		alter  func(u *url.URL)
		want   error
	}{
		{"genuine", "GET", nil, nil},
		{"method case is irrelevant", "get", nil, nil},
		{"equivalent escaping", "GET", func(u *url.URL) {
			u.RawQuery = strings.ReplaceAll(u.RawQuery, "+", "%20")
		}, nil},
		{"keys in another order", "GET", func(u *url.URL) {
			parts := strings.Split(u.RawQuery, "&") // X-Expires, X-Signature, ct, fn, multi, multi
			u.RawQuery = strings.Join(append(parts[2:], parts[:2]...), "&")
		}, nil},
		{"used for PUT", "PUT", nil, ErrBadSignature},
		{"used for HEAD", "HEAD", nil, ErrBadSignature},
		{"tampered path", "GET", func(u *url.URL) { u.Path = "/blob/o/0124" }, ErrBadSignature},
		{"path suffix", "GET", func(u *url.URL) { u.Path += "/x" }, ErrBadSignature},
		{"tampered param", "GET", setParam("ct", "text/html"), ErrBadSignature},
		{"added param", "GET", setParam("inline", "1"), ErrBadSignature},
		{"removed param", "GET", delParam("fn"), ErrBadSignature},
		{"one of several values removed", "GET", setParam("multi", "1"), ErrBadSignature},
		{"values reordered", "GET", func(u *url.URL) {
			q := u.Query()
			q["multi"] = []string{"2", "1"}
			u.RawQuery = q.Encode()
		}, ErrBadSignature},
		{"expiry extended", "GET", setParam("X-Expires", strconv.FormatInt(t0.Add(time.Hour).Unix(), 10)), ErrBadSignature},
		{"expiry with a plus sign", "GET", func(u *url.URL) {
			q := u.Query()
			q.Set("X-Expires", "+"+q.Get("X-Expires"))
			u.RawQuery = q.Encode()
		}, ErrBadSignature},
		{"expiry not a number", "GET", setParam("X-Expires", "soon"), ErrBadSignature},
		{"expiry missing", "GET", delParam("X-Expires"), ErrBadSignature},
		{"signature missing", "GET", delParam("X-Signature"), ErrBadSignature},
		{"signature garbage", "GET", setParam("X-Signature", "not*base64!"), ErrBadSignature},
		{"signature short", "GET", setParam("X-Signature", "AAAA"), ErrBadSignature},
		{"signature of zeros", "GET", setParam("X-Signature", strings.Repeat("A", 43)), ErrBadSignature},
		{"signature padded", "GET", func(u *url.URL) {
			q := u.Query()
			q.Set("X-Signature", q.Get("X-Signature")+"=")
			u.RawQuery = q.Encode()
		}, ErrBadSignature},
		{"signature twice", "GET", func(u *url.URL) {
			q := u.Query()
			q.Add("X-Signature", q.Get("X-Signature"))
			u.RawQuery = q.Encode()
		}, ErrBadSignature},
		{"malformed query", "GET", func(u *url.URL) { u.RawQuery += "&%zz=1" }, ErrBadSignature},
		{"no query", "GET", func(u *url.URL) { u.RawQuery = "" }, ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := mustParse(t, raw)
			if c.alter != nil {
				c.alter(u)
			}
			got, err := s.Verify(c.method, u)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if !reflect.DeepEqual(got, params) {
					t.Errorf("params = %v, want %v", got, params)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Verify = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestSignerOtherKey(t *testing.T) {
	t.Parallel()
	a := NewSigner(testKey, "", fixedClock(t0))
	b := NewSigner([]byte("another key of thirty-two bytes!"), "", fixedClock(t0))
	u := mustParse(t, a.URL("GET", "/blob/o/x", nil, time.Minute))
	if _, err := b.Verify("GET", u); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("Verify with another key = %v, want ErrBadSignature", err)
	}
}

func TestSignerExpiry(t *testing.T) {
	t.Parallel()
	now := t0
	s := NewSigner(testKey, "", func() time.Time { return now })
	u := mustParse(t, s.URL("PUT", "/blob/u/ref", url.Values{"limit": {"10"}}, 10*time.Second))
	cases := []struct {
		at   time.Duration
		want error
	}{
		{0, nil},
		{10 * time.Second, nil}, // at the expiry second itself: not yet past it
		{10*time.Second + time.Millisecond, ErrExpired},
		{time.Hour, ErrExpired},
	}
	for _, c := range cases {
		now = t0.Add(c.at)
		if _, err := s.Verify("PUT", u); !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("at +%v: Verify = %v, want %v", c.at, err, c.want)
		}
	}
	// A forged URL past its expiry is a bad signature, not an expired URL.
	now = t0.Add(time.Hour)
	forged := *u
	forged.Path = "/blob/u/other"
	if _, err := s.Verify("PUT", &forged); !errors.Is(err, ErrBadSignature) {
		t.Errorf("forged expired URL: %v, want ErrBadSignature", err)
	}
}

func TestSignerEscapesPath(t *testing.T) {
	t.Parallel()
	s := NewSigner(testKey, "http://h", fixedClock(t0))
	raw := s.URL("PUT", "/blob/u/a b?c#d", nil, time.Minute)
	u := mustParse(t, raw)
	if u.Path != "/blob/u/a b?c#d" {
		t.Fatalf("URL %q parses to path %q", raw, u.Path)
	}
	if _, err := s.Verify("PUT", u); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestNewSignerEmptyKeyPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("NewSigner with an empty key did not panic")
		}
	}()
	NewSigner(nil, "", nil)
}

func setParam(k, v string) func(*url.URL) {
	return func(u *url.URL) {
		q := u.Query()
		q.Set(k, v)
		u.RawQuery = q.Encode()
	}
}

func delParam(k string) func(*url.URL) {
	return func(u *url.URL) {
		q := u.Query()
		q.Del(k)
		u.RawQuery = q.Encode()
	}
}
