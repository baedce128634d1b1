package web_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"atrium/web"
	"atrium/web/ui"
	"atrium/webtest"
	"atrium/wire"
)

func withLimits(f func(*wire.LimitsConfig)) webtest.Option {
	return func(c *wire.Config) { f(&c.Limits) }
}

// checkRateLimited asserts a 429 rate_limited problem with a Retry-After.
func checkRateLimited(t *testing.T, res *webtest.Response) {
	t.Helper()
	webtest.Check(t, res, webtest.Scenario{Status: http.StatusTooManyRequests, Problem: "rate_limited"})
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
	}
}

func TestRateLimitPerToken(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.RatePerToken, l.BurstPerToken = 0.01, 3 }))
	ann := s.Bootstrap("Rate Org", "ann@example.test", "admin")
	bob := s.Bootstrap("Rate Org", "bob@example.test", "member")
	me := func(tok string) *webtest.Response {
		return s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: tok})
	}
	for i := 0; i < 3; i++ {
		webtest.Check(t, me(ann.Token), webtest.Scenario{Status: 200})
	}
	checkRateLimited(t, me(ann.Token))
	// Another credential — even of the same organisation — has its own bucket,
	// and the probes are never limited.
	webtest.Check(t, me(bob.Token), webtest.Scenario{Status: 200})
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/healthz"}), webtest.Scenario{Status: 200})
}

func TestRateLimitPerIP(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.RatePerIP, l.BurstPerIP = 0.01, 2 }))
	ann := s.Bootstrap("Rate Org", "ann@example.test", "admin")
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me"}), webtest.Scenario{Status: 401})
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: ann.Token}), webtest.Scenario{Status: 200})
	// The address's bucket is empty: credentials or not.
	checkRateLimited(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: ann.Token}))
	checkRateLimited(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/openapi.json"}))
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/readyz"}), webtest.Scenario{Status: 200})
}

func TestAuthFailuresPerIP(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.AuthFailuresPerIP = 5 }))
	ann := s.Bootstrap("Rate Org", "ann@example.test", "admin")
	for i := 0; i < 5; i++ {
		res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: fmt.Sprintf("atr_pat_guess%d", i)})
		webtest.Check(t, res, webtest.Scenario{Status: 401, Problem: "unauthorized"})
	}
	// The address is blocked, a valid token included, on every door.
	checkRateLimited(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: ann.Token}))
	checkRateLimited(t, s.Do(webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: ann.Email, BasicPW: ann.AppPassword}))
	res := s.Do(webtest.Request{Method: http.MethodPost, Path: "/oauth/token", Body: "grant_type=client_credentials&client_id=x&client_secret=y",
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("oauth token: %d %s", res.StatusCode, res.Body)
	}
	// A request without a credential is not a failure and still gets its 401.
	webtest.Check(t, s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me"}), webtest.Scenario{Status: 401})
}

func TestOAuthClientFailures(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	form := func(secret string) webtest.Request {
		return webtest.Request{Method: http.MethodPost, Path: "/oauth/token",
			Body:   "grant_type=client_credentials&client_id=sp_guessed&client_secret=" + secret,
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}
	}
	for i := 0; i < 10; i++ {
		if res := s.Do(form(fmt.Sprint("wrong", i))); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d %s", i, res.StatusCode, res.Body)
		}
	}
	res := s.Do(form("another"))
	if res.StatusCode != http.StatusTooManyRequests || res.JSON()["error"] != "slow_down" || res.Header.Get("Retry-After") == "" {
		t.Fatalf("after 10 failures: %d %s", res.StatusCode, res.Body)
	}
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.RequestTimeout = time.Nanosecond }))
	ann := s.Bootstrap("Slow Org", "ann@example.test", "admin")
	res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books", Token: ann.Token})
	webtest.Check(t, res, webtest.Scenario{Status: http.StatusServiceUnavailable, Problem: "timeout"})
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestJSONBodyTooLarge(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := s.Bootstrap("Big Org", "ann@example.test", "admin")
	var books []struct {
		ID string `json:"id"`
	}
	s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/contacts/books", Token: ann.Token}).Decode(t, &books)
	if len(books) == 0 {
		t.Fatal("no address book")
	}
	path := "/api/v1/contacts/books/" + books[0].ID
	body := `{"full_name":"Big","notes":"` + strings.Repeat("x", 2<<20) + `"}`
	res := s.Do(webtest.Request{Method: http.MethodPost, Path: path, Token: ann.Token, Body: body})
	webtest.Check(t, res, webtest.Scenario{Status: http.StatusRequestEntityTooLarge, Problem: "payload_too_large"})
	var list []any
	s.Do(webtest.Request{Method: http.MethodGet, Path: path, Token: ann.Token}).Decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("a contact was created: %d", len(list))
	}
}

// rawConn dials the server and returns the connection; closed at the end.
func rawConn(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func basicHeader(email, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+pw))
}

// A client that stops sending its body is cut off after the idle timeout, and
// nothing of the upload is kept.
func TestSlowRequestBody(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.IOIdleTimeout = 300 * time.Millisecond }))
	ann := s.Bootstrap("Slow Org", "ann@example.test", "admin")
	c := rawConn(t, s.Listener.Addr().String(), "")
	fmt.Fprintf(c, "PUT /api/v1/webdav/stalled.txt HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Length: 1000\r\n\r\n%s",
		basicHeader(ann.Email, ann.AppPassword), strings.Repeat("a", 100))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	_, err := io.ReadAll(c) // the server answers (or not) and closes
	if err != nil {
		t.Fatalf("the server did not close the stalled connection: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("closed after %v", d)
	}
	res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/webdav/stalled.txt", BasicID: ann.Email, BasicPW: ann.AppPassword})
	webtest.Check(t, res, webtest.Scenario{Status: 404})
}

// A client that stops reading a download is cut off after the idle timeout.
//
// The idle timeout is a second, so that a loaded machine (CI running the
// suites side by side) does not stall the test's own well-behaved transfers
// that long; the file, 16 MiB, is still far more than the socket buffers hold.
func TestSlowResponseReader(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.IOIdleTimeout = time.Second }))
	ann := s.Bootstrap("Slow Org", "ann@example.test", "admin")
	const size = 16 << 20
	put := s.Do(webtest.Request{Method: http.MethodPut, Path: "/api/v1/webdav/big.bin", BasicID: ann.Email, BasicPW: ann.AppPassword,
		Body: bytes.Repeat([]byte{7}, size), Header: map[string]string{"Content-Type": "application/octet-stream"}})
	webtest.Check(t, put, webtest.Scenario{Status: 201})

	c := rawConn(t, s.Listener.Addr().String(), "")
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(64 << 10)
	}
	fmt.Fprintf(c, "GET /api/v1/webdav/big.bin HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n", basicHeader(ann.Email, ann.AppPassword))
	// Read nothing: the server's writes stall until it closes the connection.
	select {
	case <-s.Closed(c):
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the stalled connection in 10 s")
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, c)
	if err != nil {
		t.Fatalf("the server did not close the connection: %v", err)
	}
	if n >= size {
		t.Fatalf("read %d bytes: the whole file although the client stalled", n)
	}
	// A client that reads is served the whole file.
	res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/webdav/big.bin", BasicID: ann.Email, BasicPW: ann.AppPassword})
	if res.StatusCode != 200 || len(res.Body) != size {
		t.Fatalf("GET: %d, %d bytes", res.StatusCode, len(res.Body))
	}
}

// Slowloris: one address holding connections with never-finished headers
// cannot take the server: it has a connection cap of its own, the header
// timeout frees its connections, and other addresses are served meanwhile.
func TestSlowloris(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Main.Server.Handler(), ReadHeaderTimeout: time.Second, MaxHeaderBytes: 8 << 10}
	go srv.Serve(web.LimitListener(l, 64, 10, nil))
	t.Cleanup(func() { srv.Close() })
	addr := l.Addr().String()

	get := func(from string) (int, string) {
		c := rawConn(t, addr, from)
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	var slow []net.Conn
	for i := 0; i < 10; i++ {
		c := rawConn(t, addr, "127.0.0.1")
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		slow = append(slow, c)
	}
	// The listener takes connections in the order they were made: the ten
	// are counted before the eleventh.
	if st, body := get("127.0.0.1"); st != http.StatusTooManyRequests || !strings.Contains(body, "rate_limited") {
		t.Fatalf("11th connection of the address: %d %s", st, body)
	}
	if st, body := get("127.0.0.2"); st != http.StatusOK {
		t.Fatalf("another address: %d %s", st, body)
	}
	// The header timeout closes the slow connections; the address is served again.
	for _, c := range slow {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Fatalf("slow connection not closed by the server: %v", err)
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		st, body := get("127.0.0.1")
		if st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the address is still refused: %d %s", st, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Oversized headers are refused.
	c := rawConn(t, addr, "127.0.0.2")
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("b", 16<<10))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("oversized header: %v %v", res, err)
	}
}

// Behind a trusted reverse proxy, limits count the client that X-Forwarded-For
// names (its rightmost address not itself a trusted proxy); from any other peer
// the header is ignored, since a client can send it.
func TestTrustedProxyForwardedFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		proxies []string
		xff     []string // X-Forwarded-For of each further request, after 3 failures as 203.0.113.5
		want    []int
	}{
		{"proxy trusted", []string{"127.0.0.1"}, []string{
			"203.0.113.5",               // the client that failed: blocked
			"203.0.113.6",               // another client behind the proxy: served
			"203.0.113.5, 127.0.0.1",    // the same client through a second trusted hop: blocked
			"198.51.100.9, 203.0.113.5", // a forged hop prepended by the client: still blocked
			"",                          // the proxy's own request: served
			"::ffff:203.0.113.5",        // the mapped IPv6 form of the same client: blocked
		}, []int{429, 200, 429, 429, 200, 429}},
		{"prefix trusted", []string{"127.0.0.0/8", "10.0.0.0/8"}, []string{"203.0.113.5", "203.0.113.7, 10.1.2.3"},
			[]int{429, 200}},
		{"no proxy trusted", nil, []string{"203.0.113.6", "", "198.51.100.1"}, []int{429, 429, 429}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.AuthFailuresPerIP, l.TrustedProxies = 3, tc.proxies }))
			ann := s.Bootstrap("Proxy Org", "ann@example.test", "admin")
			for i := range 3 {
				res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: fmt.Sprintf("atr_pat_guess%d", i),
					Header: map[string]string{"X-Forwarded-For": "203.0.113.5"}})
				webtest.Check(t, res, webtest.Scenario{Status: 401, Problem: "unauthorized"})
			}
			for i, xff := range tc.xff {
				h := map[string]string{}
				if xff != "" {
					h["X-Forwarded-For"] = xff
				}
				res := s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: ann.Token, Header: h})
				if res.StatusCode != tc.want[i] {
					t.Errorf("X-Forwarded-For %q: %d, want %d (%s)", xff, res.StatusCode, tc.want[i], res.Body)
				}
			}
		})
	}
}

// A trusted proxy carries many clients: its connections are not capped per
// address (the total cap still holds).
func TestTrustedProxyConnections(t *testing.T) {
	t.Parallel()
	s := webtest.Shared(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.Main.Server.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(web.LimitListener(l, 64, 2, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}))
	t.Cleanup(func() { srv.Close() })
	var open []net.Conn
	for range 4 { // past the cap of 2, all from the proxy
		c := rawConn(t, l.Addr().String(), "127.0.0.1")
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		open = append(open, c)
	}
	for i, c := range open {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("connection %d from the proxy: %v %v", i+1, res, err)
		}
		res.Body.Close()
	}
	// Another address keeps its cap.
	var other []net.Conn
	for range 2 {
		c := rawConn(t, l.Addr().String(), "127.0.0.2")
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		other = append(other, c)
	}
	// Taken in order: the two are counted before the third.
	c := rawConn(t, l.Addr().String(), "127.0.0.2")
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third connection of 127.0.0.2: %v %v", res, err)
	}
	res.Body.Close()
}

// Failed sign-ins are counted per account and client address, with a
// Retry-After that grows with each further failure: an attacker guessing an
// account's app password slows itself down, not the owner signing in from
// elsewhere, and a success clears the count.
func TestAuthFailuresPerAccountAndAddress(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.TrustedProxies = []string{"127.0.0.1"} }))
	ann := s.Bootstrap("Lock Org", "ann@example.test", "admin")
	propfind := func(from, pw string) *webtest.Response {
		return s.Do(webtest.Request{Method: "PROPFIND", Path: "/webdav/", BasicID: ann.Email, BasicPW: pw,
			Header: map[string]string{"Depth": "0", "X-Forwarded-For": from}})
	}
	const attacker, owner = "198.51.100.66", "203.0.113.1"
	for i := range 10 {
		webtest.Check(t, propfind(attacker, fmt.Sprintf("wrong-%d", i)), webtest.Scenario{Status: 401, Problem: "unauthorized"})
	}
	retryAfter := func(res *webtest.Response, want int) {
		t.Helper()
		checkRateLimited(t, res)
		if got := res.Header.Get("Retry-After"); got != strconv.Itoa(want) {
			t.Fatalf("Retry-After %s, want %d", got, want)
		}
	}
	// The attacker's address waits, right password included …
	retryAfter(propfind(attacker, ann.AppPassword), 5)
	// … but the owner, elsewhere, is not locked out, now or after more failures.
	webtest.Check(t, propfind(owner, ann.AppPassword), webtest.Scenario{Status: 207})
	// Each further failure doubles the wait.
	for _, want := range []int{10, 20, 40} {
		s.Clock.Advance(time.Duration(want/2) * time.Second)
		webtest.Check(t, propfind(attacker, "wrong-again"), webtest.Scenario{Status: 401, Problem: "unauthorized"})
		retryAfter(propfind(attacker, "wrong-again"), want)
		webtest.Check(t, propfind(owner, ann.AppPassword), webtest.Scenario{Status: 207})
	}
	// After the wait, the right password signs in and clears the count.
	s.Clock.Advance(40 * time.Second)
	webtest.Check(t, propfind(attacker, ann.AppPassword), webtest.Scenario{Status: 207})
	webtest.Check(t, propfind(attacker, "wrong-once"), webtest.Scenario{Status: 401, Problem: "unauthorized"})
	webtest.Check(t, propfind(attacker, ann.AppPassword), webtest.Scenario{Status: 207})
}

// An address that sprays credentials is blocked, but not for an account that
// signed in successfully from it before (the owner behind the same NAT keeps
// working); an account never seen from that address is refused.
func TestAuthFailuresPerIPSpareKnownAccounts(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) { l.AuthFailuresPerIP = 5 }))
	ann := s.Bootstrap("Spray Org", "ann@example.test", "admin")
	bob := s.Bootstrap("Spray Org", "bob@example.test", "member")
	dav := func(c webtest.Creds, pw string) *webtest.Response {
		return s.Do(webtest.Request{Method: "PROPFIND", Path: "/dav/", BasicID: c.Email, BasicPW: pw, Header: map[string]string{"Depth": "0"}})
	}
	me := func(tok string) *webtest.Response {
		return s.Do(webtest.Request{Method: http.MethodGet, Path: "/api/v1/me", Token: tok})
	}
	webtest.Check(t, dav(ann, ann.AppPassword), webtest.Scenario{Status: 207})
	webtest.Check(t, me(ann.Token), webtest.Scenario{Status: 200})
	for i := range 5 {
		webtest.Check(t, dav(webtest.Creds{Email: fmt.Sprintf("user%d@example.test", i)}, "guess"), webtest.Scenario{Status: 401})
	}
	// Ann, known from this address, still signs in with either credential.
	webtest.Check(t, dav(ann, ann.AppPassword), webtest.Scenario{Status: 207})
	webtest.Check(t, me(ann.Token), webtest.Scenario{Status: 200})
	// Bob never signed in from here: refused, right credentials included.
	checkRateLimited(t, dav(bob, bob.AppPassword))
	checkRateLimited(t, me(bob.Token))
	checkRateLimited(t, me("atr_pat_guess"))
	// The window moves on: the address is served again.
	s.Clock.Advance(5 * time.Minute)
	webtest.Check(t, dav(bob, bob.AppPassword), webtest.Scenario{Status: 207})
}

// Password guesses at one account are counted from every address together, so
// that a spread of addresses gets no fresh budgets, while the owner's known
// client keeps working; an IPv6 /64 is one address.
func TestAuthFailuresAcrossAddresses(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) {
		l.TrustedProxies, l.AuthFailures, l.AuthFailuresPerAccount = []string{"127.0.0.1"}, 3, 6
	}))
	ann := s.Bootstrap("Spread Org", "ann@example.test", "admin")
	propfind := func(from, pw string) *webtest.Response {
		return s.Do(webtest.Request{Method: "PROPFIND", Path: "/webdav/", BasicID: ann.Email, BasicPW: pw,
			Header: map[string]string{"Depth": "0", "X-Forwarded-For": from}})
	}
	const owner = "203.0.113.1"
	webtest.Check(t, propfind(owner, ann.AppPassword), webtest.Scenario{Status: 207})

	// Three addresses of one /64 are one client: its third failure blocks
	// the fourth address of the same /64, right password included.
	for _, a := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"} {
		webtest.Check(t, propfind(a, "wrong"), webtest.Scenario{Status: 401, Problem: "unauthorized"})
	}
	checkRateLimited(t, propfind("2001:db8:1:2::4", ann.AppPassword))
	// Another /64 is another client.
	webtest.Check(t, propfind("2001:db8:1:3::1", ann.AppPassword), webtest.Scenario{Status: 207})

	// Three more failures from three IPv4 addresses make six for the account:
	// any new address now waits, right password included …
	for i := range 3 {
		webtest.Check(t, propfind(fmt.Sprintf("198.51.100.%d", 10+i), "wrong"), webtest.Scenario{Status: 401, Problem: "unauthorized"})
	}
	checkRateLimited(t, propfind("198.51.100.99", ann.AppPassword))
	// … but not the owner's known clients.
	webtest.Check(t, propfind(owner, ann.AppPassword), webtest.Scenario{Status: 207})
	webtest.Check(t, propfind("2001:db8:1:3::abcd", ann.AppPassword), webtest.Scenario{Status: 207})
	// The web app's password step counts in the same total.
	b := newBrowser(t, s)
	b.from = "198.51.100.150"
	if p := b.signIn(ann.Email, "wrong password"); !strings.Contains(p.Body, "Too many failed sign-in attempts") {
		t.Fatalf("web sign-in from a new address after the account's failures: %d", p.StatusCode)
	}
}

// Wrong two-factor codes are counted per account from every address: a
// thousand addresses that know the password get no more guesses than one.
func TestTwoFactorCodeGuessesPerAccount(t *testing.T) {
	t.Parallel()
	s := webtest.New(t, withLimits(func(l *wire.LimitsConfig) {
		l.TrustedProxies, l.AuthCodeFailures = []string{"127.0.0.1"}, 3
	}))
	person(t, s, "Code Org", "code@example.test", "member")
	owner := newBrowser(t, s)
	owner.mustSignIn("code@example.test", testPassword)
	secret, _ := enableTwoFactor(t, s, owner)
	for i := range 3 {
		b := newBrowser(t, s)
		b.from = fmt.Sprintf("2001:db8:%x::1", i+1) // three /64s
		codeStep(t, b, "code@example.test")
		if p := b.post("/signin/code", url.Values{"code": {"000000"}}); !strings.Contains(p.Body, "not correct") {
			t.Fatalf("wrong code %d: %d", i, p.StatusCode)
		}
	}
	b := newBrowser(t, s)
	b.from = "192.0.2.77"
	codeStep(t, b, "code@example.test")
	p := b.post("/signin/code", url.Values{"code": {totpCode(t, secret, s.Clock.Now())}})
	if p.Header.Get("Retry-After") == "" || !strings.Contains(p.Body, "Too many failed sign-in attempts") || b.cookie(ui.SessionCookie) != nil {
		t.Fatalf("the right code after 3 wrong ones elsewhere: %d %s", p.StatusCode, p.Body)
	}
}
