package webhooks

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr   string
		public bool
	}{
		{"93.184.215.14", true}, {"8.8.8.8", true}, {"2606:4700::1111", true},
		{"127.0.0.1", false}, {"127.255.0.9", false}, {"::1", false}, {"0.0.0.0", false}, {"::", false},
		{"10.0.0.1", false}, {"172.16.5.4", false}, {"172.31.255.255", false}, {"192.168.0.1", false},
		{"169.254.169.254", false}, {"fd00:ec2::254", false}, {"fe80::1", false}, {"100.64.0.1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false}, {"224.0.0.1", false}, {"255.255.255.255", false},
		{"192.0.2.1", false}, {"2001:db8::1", false}, {"64:ff9b::7f00:1", false},
		{"172.32.0.1", true}, {"100.128.0.1", true},
	} {
		if got := PublicAddr(netip.MustParseAddr(c.addr)); got != c.public {
			t.Errorf("PublicAddr(%s) = %v, want %v", c.addr, got, c.public)
		}
	}
}

type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	r := fakeResolver{
		"hooks.example.com": {"93.184.215.14"},
		"rebind.example":    {"93.184.215.14", "10.0.0.5"}, // one private address is enough to refuse
		"internal.example":  {"192.168.1.4"},
	}
	for _, c := range []struct {
		url, want string // want: "" accepted, else a part of the message
	}{
		{"https://hooks.example.com/in?x=1", ""},
		{"http://hooks.example.com:8443/", ""},
		{"https://93.184.215.14/hook", ""},
		{"https://rebind.example/", "resolves to"},
		{"https://internal.example/", "resolves to"},
		{"https://unknown.example/", "does not resolve"},
		{"http://localhost/", "local"},
		{"http://LOCALHOST./", "local"},
		{"http://db.internal/", "local"},
		{"http://metadata/", "metadata"},
		{"http://127.0.0.1:8080/", "loopback"},
		{"http://[::1]/", "loopback"},
		{"ftp://hooks.example.com/", "http or https"},
		{"hooks.example.com/in", "http or https"},
		{"http://hooks.example.com:99999/", "port"},
		{"http://u:p@hooks.example.com/", "credentials"},
		{"http://hooks.example.com/#x", "fragment"},
		{"", "empty"},
		{"https://hooks.example.com/" + strings.Repeat("a", MaxURLLength), "at most"},
	} {
		got := checkURL(context.Background(), c.url, false, r)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("checkURL(%q) = %q, want %q", c.url, got, c.want)
		}
	}
	// allow_private_targets accepts private hosts, but still only http(s).
	if got := checkURL(context.Background(), "http://127.0.0.1:9/", true, r); got != "" {
		t.Errorf("private allowed: %q", got)
	}
	if got := checkURL(context.Background(), "file:///etc/passwd", true, r); got == "" {
		t.Error("file URL accepted")
	}
}

func TestSignVerify(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("ab", 32)
	body := []byte(`{"id":"e1"}`)
	now := time.Unix(1_800_000_000, 0)
	sig := Sign(secret, now.Unix(), body)
	// Known answer: HMAC-SHA256(secret, "1800000000.{\"id\":\"e1\"}").
	if !strings.HasPrefix(sig, "sha256=") || len(sig) != len("sha256=")+64 {
		t.Fatalf("signature %q", sig)
	}
	ts := "1800000000"
	for _, c := range []struct {
		name            string
		secret, ts, sig string
		body            []byte
		at              time.Time
		ok              bool
	}{
		{"valid", secret, ts, sig, body, now, true},
		{"valid within tolerance", secret, ts, sig, body, now.Add(299 * time.Second), true},
		{"too old", secret, ts, sig, body, now.Add(301 * time.Second), false},
		{"from the future", secret, ts, sig, body, now.Add(-301 * time.Second), false},
		{"other secret", strings.Repeat("cd", 32), ts, sig, body, now, false},
		{"body changed", secret, ts, sig, []byte(`{"id":"e2"}`), now, false},
		{"timestamp changed", secret, "1800000001", sig, body, now, false},
		{"bad timestamp", secret, "soon", sig, body, now, false},
		{"uppercase hex", secret, ts, strings.ToUpper(sig), body, now, false},
	} {
		if got := Verify(c.secret, c.ts, c.sig, c.body, c.at); got != c.ok {
			t.Errorf("%s: Verify = %v", c.name, got)
		}
	}
}

func TestBody(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 5, 9, 36, 123456789, time.FixedZone("x", 3600))
	b, err := Body("e1", EventDriveFileCreated, at, "o1", []byte(`{"file_id":"f"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"e1","type":"drive.file.created","created_at":"2026-11-22T04:09:36.123Z","organization_id":"o1","data":{"file_id":"f"}}`
	if string(b) != want {
		t.Fatalf("body\n%s\nwant\n%s", b, want)
	}
	if b, _ := Body("e1", "t", at, "o", []byte("null")); !strings.HasSuffix(string(b), `"data":{}}`) {
		t.Fatalf("null data: %s", b)
	}
}

func TestScheduleAndRetryAfter(t *testing.T) {
	t.Parallel()
	s := DefaultSchedule
	for _, c := range []struct {
		n          int
		retryAfter time.Duration
		want       time.Duration
		more       bool
	}{
		{1, 0, 30 * time.Second, true},
		{2, 0, 5 * time.Minute, true},
		{5, 0, 12 * time.Hour, true},
		{6, 0, 0, false}, // the sixth failure is final
		{1, time.Hour, time.Hour, true},
		{3, time.Second, 30 * time.Minute, true}, // shorter than the schedule: the schedule wins
	} {
		got, more := NextAttempt(s, c.n, c.retryAfter)
		if got != c.want || more != c.more {
			t.Errorf("NextAttempt(%d, %s) = %s %v, want %s %v", c.n, c.retryAfter, got, more, c.want, c.more)
		}
	}
	if len(Catalog()) != 10 || !InCatalog("calendar.event.updated") || InCatalog("calendar.event.deleted") {
		t.Error("catalog")
	}
	if !RoutesToParent(EventOrgUserUpdated) || RoutesToParent(EventDriveFileCreated) {
		t.Error("routing")
	}
}
