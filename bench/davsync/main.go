// Command davsync times one CardDAV/CalDAV sync client against two servers
// (Atrium and a peer such as Radicale), for bench/radicale.sh (issue 10,
// "Benchmark report"). For contacts and for events, against each server, it
// times:
//
//   - upload: N objects PUT one after another (If-None-Match: *), one connection,
//     as a client does when it first syncs a local store up;
//   - full sync: an initial sync-collection (RFC 6578, empty token) into an empty
//     local store: the listing, then multiget REPORTs of -batch objects, each
//     object written to a file;
//   - incremental sync: 10 objects changed (untimed PUTs), then sync-collection
//     from the last token and a multiget of what changed, written to the store.
//
// The two servers get exactly the same requests; the sync phases run -runs
// times, alternating between the servers, and the median is reported. Each
// figure line ends with the ratio atrium/peer and PASS when Atrium is not
// slower (ratio <= 1).
//
//	davsync -a-card URL -a-cal URL -a-user U -a-pass P -b-card URL -b-cal URL -b-user U -b-pass P
package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type target struct {
	name, user, pass string
	card, cal        string // collection URLs, ending in /
}

type kind struct {
	name, coll          string // "contacts", "carddav"/"caldav"
	ns, dataElem, multi string // namespace, data element, multiget element
	ext, ctype          string
	gen                 func(i, rev int) string
}

var (
	client = &http.Client{Timeout: 5 * time.Minute}
	n      = flag.Int("n", 1000, "objects of each kind")
	batch  = flag.Int("batch", 100, "objects per multiget")
	runs   = flag.Int("runs", 3, "runs of each sync phase (median)")
	local  = flag.String("local", os.TempDir(), "directory for the local stores")
)

func main() {
	var a, b target
	flag.StringVar(&a.card, "a-card", "", "Atrium address book URL")
	flag.StringVar(&a.cal, "a-cal", "", "Atrium calendar URL")
	flag.StringVar(&a.user, "a-user", "", "Atrium user")
	flag.StringVar(&a.pass, "a-pass", "", "Atrium password")
	flag.StringVar(&b.name, "b-name", "radicale", "peer name")
	flag.StringVar(&b.card, "b-card", "", "peer address book URL")
	flag.StringVar(&b.cal, "b-cal", "", "peer calendar URL")
	flag.StringVar(&b.user, "b-user", "", "peer user")
	flag.StringVar(&b.pass, "b-pass", "", "peer password")
	flag.Parse()
	a.name = "atrium"
	if a.card == "" || a.cal == "" || b.card == "" || b.cal == "" {
		fmt.Fprintln(os.Stderr, "usage: davsync -a-card URL -a-cal URL -a-user U -a-pass P -b-card URL -b-cal URL -b-user U -b-pass P")
		os.Exit(2)
	}
	kinds := []kind{
		{name: "contacts", coll: "card", ns: "urn:ietf:params:xml:ns:carddav", dataElem: "address-data", multi: "addressbook-multiget",
			ext: ".vcf", ctype: "text/vcard; charset=utf-8", gen: vcard},
		{name: "events", coll: "cal", ns: "urn:ietf:params:xml:ns:caldav", dataElem: "calendar-data", multi: "calendar-multiget",
			ext: ".ics", ctype: "text/calendar; charset=utf-8", gen: vevent},
	}
	fmt.Printf("== one client, %d objects of each kind, multiget batches of %d, sync phases: median of %d runs\n", *n, *batch, *runs)
	for _, k := range kinds {
		if err := compare(k, a, b); err != nil {
			fmt.Fprintln(os.Stderr, "davsync:", err)
			os.Exit(2)
		}
	}
}

func (t target) coll(k kind) string {
	if k.coll == "card" {
		return t.card
	}
	return t.cal
}

// state is a client's view of one collection: its sync token and local store.
type state struct {
	token string
	dir   string
	hrefs []string
	rev   int
}

func compare(k kind, a, b target) error {
	sa, sb := &state{}, &state{}
	// Upload, once per server (a second upload would be an update).
	ua, err := timed(func() error { return upload(k, a, sa) })
	if err != nil {
		return fmt.Errorf("%s upload to %s: %w", k.name, a.name, err)
	}
	ub, err := timed(func() error { return upload(k, b, sb) })
	if err != nil {
		return fmt.Errorf("%s upload to %s: %w", k.name, b.name, err)
	}
	line(fmt.Sprintf("%s: upload %d (PUT each)", k.name, *n), ua, ub, b.name)

	var fa, fb, ia, ib []time.Duration
	for r := range *runs {
		for _, x := range []struct {
			t  target
			s  *state
			to *[]time.Duration
		}{{a, sa, &fa}, {b, sb, &fb}} {
			x.s.dir = filepath.Join(*local, fmt.Sprintf("%s-%s-full-%d", x.t.name, k.name, r))
			d, err := timed(func() error { return fullSync(k, x.t, x.s) })
			if err != nil {
				return fmt.Errorf("%s full sync from %s: %w", k.name, x.t.name, err)
			}
			*x.to = append(*x.to, d)
		}
	}
	line(fmt.Sprintf("%s: full sync of %d into an empty store", k.name, *n), median(fa), median(fb), b.name)
	for range *runs {
		for _, x := range []struct {
			t  target
			s  *state
			to *[]time.Duration
		}{{a, sa, &ia}, {b, sb, &ib}} {
			if err := change(k, x.t, x.s, 10); err != nil {
				return fmt.Errorf("%s changes on %s: %w", k.name, x.t.name, err)
			}
			var got int
			d, err := timed(func() error {
				var err error
				got, err = incremental(k, x.t, x.s)
				return err
			})
			if err != nil {
				return fmt.Errorf("%s incremental sync from %s: %w", k.name, x.t.name, err)
			}
			if got != 10 {
				return fmt.Errorf("%s incremental sync from %s brought %d objects, want the 10 changed", k.name, x.t.name, got)
			}
			*x.to = append(*x.to, d)
		}
	}
	line(fmt.Sprintf("%s: incremental sync after 10 changes", k.name), median(ia), median(ib), b.name)
	return nil
}

func line(label string, a, b time.Duration, peer string) {
	r := a.Seconds() / b.Seconds()
	v := "PASS"
	if r > 1 {
		v = "MISS"
	}
	fmt.Printf("%-50s atrium %9.1f ms   %-8s %9.1f ms   ratio atrium/%s %5.2f  %s\n", label, ms(a), peer, ms(b), peer, r, v)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func timed(f func() error) (time.Duration, error) {
	t := time.Now()
	err := f()
	return time.Since(t), err
}

func do(t target, method, u string, hdr map[string]string, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(t.user, t.pass)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func upload(k kind, t target, s *state) error {
	for i := range *n {
		href := fmt.Sprintf("bench-%05d%s", i, k.ext)
		code, b, err := do(t, "PUT", t.coll(k)+href, map[string]string{"Content-Type": k.ctype, "If-None-Match": "*"}, k.gen(i, 0))
		if err != nil {
			return err
		}
		if code != 201 && code != 204 {
			return fmt.Errorf("PUT %s: %d %.300s", href, code, b)
		}
		s.hrefs = append(s.hrefs, href)
	}
	return nil
}

// change rewrites count objects through PUT (the next ones in turn).
func change(k kind, t target, s *state, count int) error {
	s.rev++
	for j := range count {
		i := (s.rev*count + j) % len(s.hrefs)
		code, b, err := do(t, "PUT", t.coll(k)+s.hrefs[i], map[string]string{"Content-Type": k.ctype}, k.gen(i, s.rev))
		if err != nil {
			return err
		}
		if code != 201 && code != 204 {
			return fmt.Errorf("PUT %s: %d %.300s", s.hrefs[i], code, b)
		}
	}
	return nil
}

type multistatus struct {
	Responses []struct {
		Href     string `xml:"href"`
		Status   string `xml:"status"`
		Propstat []struct {
			Status string `xml:"status"`
			Prop   struct {
				ETag string `xml:"getetag"`
				Data string `xml:",any"`
			} `xml:"prop"`
		} `xml:"propstat"`
	} `xml:"response"`
	SyncToken string `xml:"sync-token"`
}

// syncCollection lists what changed since s.token and returns the hrefs to fetch.
func syncCollection(k kind, t target, s *state) ([]string, error) {
	body := `<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>` + s.token +
		`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`
	code, b, err := do(t, "REPORT", t.coll(k), map[string]string{"Content-Type": "application/xml; charset=utf-8", "Depth": "1"}, body)
	if err != nil {
		return nil, err
	}
	if code != 207 {
		return nil, fmt.Errorf("sync-collection: %d %.300s", code, b)
	}
	var ms multistatus
	if err := xml.Unmarshal(b, &ms); err != nil {
		return nil, fmt.Errorf("sync-collection: %w", err)
	}
	if ms.SyncToken == "" {
		return nil, errors.New("sync-collection: no sync-token")
	}
	s.token = ms.SyncToken
	base := collPath(t.coll(k))
	var hrefs []string
	for _, r := range ms.Responses {
		h, err := url.PathUnescape(r.Href)
		if err != nil {
			return nil, err
		}
		if strings.TrimSuffix(h, "/") == strings.TrimSuffix(base, "/") || strings.Contains(r.Status, "404") {
			continue // the collection itself, or a deletion
		}
		hrefs = append(hrefs, r.Href)
	}
	return hrefs, nil
}

func collPath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Path
}

// fetch gets hrefs by multiget in batches and writes each object into s.dir.
func fetch(k kind, t target, s *state, hrefs []string) (int, error) {
	got := 0
	for i := 0; i < len(hrefs); i += *batch {
		var body bytes.Buffer
		fmt.Fprintf(&body, `<?xml version="1.0" encoding="utf-8"?><c:%s xmlns:d="DAV:" xmlns:c="%s"><d:prop><d:getetag/><c:%s/></d:prop>`, k.multi, k.ns, k.dataElem)
		for _, h := range hrefs[i:min(i+*batch, len(hrefs))] {
			body.WriteString("<d:href>")
			_ = xml.EscapeText(&body, []byte(h))
			body.WriteString("</d:href>")
		}
		fmt.Fprintf(&body, "</c:%s>", k.multi)
		code, b, err := do(t, "REPORT", t.coll(k), map[string]string{"Content-Type": "application/xml; charset=utf-8", "Depth": "1"}, body.String())
		if err != nil {
			return got, err
		}
		if code != 207 {
			return got, fmt.Errorf("multiget: %d %.300s", code, b)
		}
		var ms multistatus
		if err := xml.Unmarshal(b, &ms); err != nil {
			return got, fmt.Errorf("multiget: %w", err)
		}
		for _, r := range ms.Responses {
			for _, ps := range r.Propstat {
				if !strings.Contains(ps.Status, "200") || ps.Prop.Data == "" {
					continue
				}
				name := path.Base(r.Href)
				if err := os.WriteFile(filepath.Join(s.dir, name), []byte(ps.Prop.Data), 0o600); err != nil {
					return got, err
				}
				got++
			}
		}
	}
	return got, nil
}

func fullSync(k kind, t target, s *state) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	s.token = ""
	hrefs, err := syncCollection(k, t, s)
	if err != nil {
		return err
	}
	got, err := fetch(k, t, s, hrefs)
	if err != nil {
		return err
	}
	if got != *n {
		return fmt.Errorf("full sync wrote %d objects (of %d listed), want %d", got, len(hrefs), *n)
	}
	return nil
}

func incremental(k kind, t target, s *state) (int, error) {
	hrefs, err := syncCollection(k, t, s)
	if err != nil {
		return 0, err
	}
	return fetch(k, t, s, hrefs)
}

var (
	firstNames = []string{"Anna", "Björn", "Chloé", "David", "Émile", "Fatima", "Günter", "Hana", "Iñigo", "Jana", "Kofi", "Lena", "Mateo", "Nora", "Olaf", "Priya", "Quentin", "Rosa", "Søren", "Tomás"}
	lastNames  = []string{"Müller", "Smith", "García", "Nguyen", "Dubois", "Kowalski", "Rossi", "Andersson", "Yilmaz", "O'Brien", "Novák", "Silva", "Tanaka", "Ivanova", "Fischer", "Jensen", "Moreau", "Lopez", "Schmidt", "Khan"}
)

func vcard(i, rev int) string {
	f, l := firstNames[i%len(firstNames)], fmt.Sprintf("%s %d", lastNames[(i/len(firstNames))%len(lastNames)], i)
	return fmt.Sprintf("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:bench-%05d\r\nFN:%s %s\r\nN:%s;%s;;;\r\nEMAIL;TYPE=INTERNET,WORK:user%d@example.com\r\n"+
		"TEL;TYPE=CELL:+49 30 %07d\r\nORG:Company %d\r\nTITLE:Revision %d\r\nNOTE:Seeded by bench/davsync.\r\nEND:VCARD\r\n",
		i, f, l, l, f, i, i, i%50, rev)
}

func vevent(i, rev int) string {
	start := time.Date(2026, 1, 1, 8+i%9, 0, 0, 0, time.UTC).AddDate(0, 0, (i*7)%365)
	rrule := ""
	if i%10 == 0 {
		rrule = "RRULE:FREQ=WEEKLY;COUNT=20\r\n"
	}
	return fmt.Sprintf("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//atrium//davsync//EN\r\nBEGIN:VEVENT\r\nUID:bench-%05d\r\nDTSTAMP:20260101T000000Z\r\n"+
		"DTSTART:%s\r\nDTEND:%s\r\n%sSUMMARY:Meeting %d (revision %d)\r\nLOCATION:Room %d\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
		i, start.Format("20060102T150405Z"), start.Add(time.Hour).Format("20060102T150405Z"), rrule, i, rev, i%40)
}
