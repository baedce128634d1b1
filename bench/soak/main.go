// Command soak drives a running Atrium server with an open-loop, steady-rate
// mix of reads and writes across the modules (issue 10, "Load"), and says
// whether the server stayed healthy: no errors, and p99 latency and RSS flat
// (growth < 10% from the second window to the last).
//
// Requests are scheduled at fixed instants (rate per second); each one's
// latency is measured from its scheduled instant, not from when it was sent,
// so a stall of the server shows up as latency instead of being absorbed by a
// waiting client (coordinated omission). Every window (a minute by default)
// prints requests, errors, p50, p99, the server's RSS (/proc/PID/status VmRSS)
// and the size of its database.
//
// The writes keep a bounded working set (created contacts, events and files
// are deleted again once more than -ring of them exist; WebDAV PUTs overwrite
// a fixed set of names), so that reads of lists cost the same in minute 10 as
// in minute 2 on a healthy server, while the database still grows with the
// audit log, the outbox, versions and webhook deliveries.
//
//	go run ./bench/soak -base http://127.0.0.1:8080 -token PAT -email E -password APPPW -user USERID -pid PID -data DIR
//
// bench/soak.sh builds the server, starts it on a temporary data directory and
// runs this program against it.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type config struct {
	base, token, email, password, user string
	pid                                int
	data                               string
	duration, window                   time.Duration
	rate                               float64
	contacts, events, files, ring      int
	maxInFlight                        int
}

func main() {
	var c config
	flag.StringVar(&c.base, "base", "", "server base URL, e.g. http://127.0.0.1:8080")
	flag.StringVar(&c.token, "token", "", "personal access token of an admin")
	flag.StringVar(&c.email, "email", "", "the admin's e-mail address (DAV user)")
	flag.StringVar(&c.password, "password", "", "the admin's app password (DAV)")
	flag.StringVar(&c.user, "user", "", "the admin's user id (DAV paths)")
	flag.IntVar(&c.pid, "pid", 0, "server process id, for RSS (0: not reported)")
	flag.StringVar(&c.data, "data", "", "server data directory, for the database size (empty: not reported)")
	flag.DurationVar(&c.duration, "duration", 10*time.Minute, "how long to drive load")
	flag.DurationVar(&c.window, "window", time.Minute, "length of one reporting window")
	flag.Float64Var(&c.rate, "rate", 40, "operations scheduled per second")
	flag.IntVar(&c.contacts, "contacts", 1000, "contacts to seed")
	flag.IntVar(&c.events, "events", 1000, "events to seed")
	flag.IntVar(&c.files, "files", 200, "files to seed (WebDAV)")
	flag.IntVar(&c.ring, "ring", 200, "created contacts, events and files kept before the oldest is deleted")
	flag.IntVar(&c.maxInFlight, "max-in-flight", 1000, "operations in flight before new ones count as errors (client overload)")
	flag.Parse()
	if c.base == "" || c.token == "" || c.email == "" || c.password == "" || c.user == "" || c.rate <= 0 || c.window <= 0 {
		fmt.Fprintln(os.Stderr, "usage: soak -base URL -token PAT -email E -password APPPW -user ID [-pid PID] [-data DIR] [-duration 10m] [-rate 40]")
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ok, err := run(context.Background(), c, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// ---- the client ------------------------------------------------------------

type client struct {
	c     config
	http  *http.Client
	mu    sync.Mutex
	rng   *rand.Rand
	world world
}

// world holds what the seed made and what the operations keep.
type world struct {
	bookID, calID, seedFolder, soakFolder string
	seedFiles                             []string // ids of the seeded files
	seedNames                             []string // their names (WebDAV)
	contacts                              []string // ids of seeded contacts
	ring                                  map[string][]string
	cardToken, calToken                   string
	seq                                   int
}

type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("status %d: %.200s", e.status, e.body) }

// do sends one request and returns the body; a status other than want is an error.
func (cl *client) do(ctx context.Context, method, path string, hdr map[string]string, body []byte, want ...int) ([]byte, http.Header, error) {
	u := path
	if !strings.HasPrefix(path, "http") {
		u = cl.c.base + path
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, nil, fmt.Errorf("new request: %w", err)
	}
	if _, ok := hdr["Authorization"]; !ok && hdr["-noauth"] == "" {
		req.Header.Set("Authorization", "Bearer "+cl.c.token)
	}
	for k, v := range hdr {
		if k != "-noauth" {
			req.Header.Set(k, v)
		}
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := cl.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	if !slices.Contains(want, res.StatusCode) {
		return b, res.Header, fmt.Errorf("%s %s: %w", method, path, &httpError{res.StatusCode, string(b)})
	}
	return b, res.Header, nil
}

func (cl *client) json(ctx context.Context, method, path string, in, out any, want ...int) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("encode: %w", err)
		}
	}
	b, _, err := cl.do(ctx, method, path, nil, body, want...)
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

func (cl *client) dav() map[string]string {
	return map[string]string{"Authorization": basic(cl.c.email, cl.c.password)}
}

// intn, pick and next are the client's deterministic choices.
func (cl *client) intn(n int) int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.rng.IntN(n)
}

func (cl *client) next() int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.world.seq++
	return cl.world.seq
}

// push adds id to the ring of kind and returns the id to evict, if any.
func (cl *client) push(kind, id string) string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	r := append(cl.world.ring[kind], id)
	evict := ""
	if len(r) > cl.c.ring {
		evict, r = r[0], r[1:]
	}
	cl.world.ring[kind] = r
	return evict
}

// member returns a random id of the ring of kind, or fallback when it is empty.
func (cl *client) member(kind string, fallback []string) string {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	r := cl.world.ring[kind]
	if len(r) == 0 {
		if len(fallback) == 0 {
			return ""
		}
		return fallback[cl.rng.IntN(len(fallback))]
	}
	return r[cl.rng.IntN(len(r))]
}

// ---- data ------------------------------------------------------------------

var (
	firstNames = []string{"Anna", "Björn", "Chloé", "David", "Émile", "Fatima", "Günter", "Hana", "Iñigo", "Jana", "Kofi", "Lena", "Mateo", "Nora", "Olaf", "Priya", "Quentin", "Rosa", "Søren", "Tomás"}
	lastNames  = []string{"Müller", "Smith", "García", "Nguyen", "Dubois", "Kowalski", "Rossi", "Andersson", "Yilmaz", "O'Brien", "Novák", "Silva", "Tanaka", "Ivanova", "Fischer", "Jensen", "Moreau", "Lopez", "Schmidt", "Khan"}
	words      = []string{"budget", "roadmap", "invoice", "meeting", "quarterly", "report", "design", "review", "contract", "proposal", "summary", "agenda", "minutes", "release", "customer", "onboarding", "security", "audit", "forecast", "hiring", "travel", "expense", "marketing", "launch", "incident", "retrospective", "migration", "backup", "policy", "training"}
)

func contactBody(i int) map[string]any {
	return map[string]any{
		"first_name": firstNames[i%len(firstNames)], "last_name": fmt.Sprintf("%s %d", lastNames[(i/len(firstNames))%len(lastNames)], i),
		"emails":       []map[string]string{{"type": "work", "value": fmt.Sprintf("user%d@example.com", i)}},
		"phones":       []map[string]string{{"type": "cell", "value": fmt.Sprintf("+49 30 %07d", i)}},
		"organization": words[i%len(words)] + " GmbH",
	}
}

// eventBody is an hour-long event on a day of 2026 (every tenth a weekly series).
func eventBody(i int) map[string]any {
	start := time.Date(2026, 1, 1, 8+i%9, 0, 0, 0, time.UTC).AddDate(0, 0, (i*7)%365)
	e := map[string]any{"title": fmt.Sprintf("%s %s %d", words[i%len(words)], words[(i/3)%len(words)], i),
		"start": start.Format(time.RFC3339), "end": start.Add(time.Hour).Format(time.RFC3339), "location": "Room " + strconv.Itoa(i%40)}
	if i%10 == 0 {
		e["rrule"] = "FREQ=WEEKLY;COUNT=20"
	}
	return e
}

// fileBody is a small text document of a few hundred words.
func fileBody(i int) []byte {
	var b bytes.Buffer
	n := 100 + i%400
	for j := range n {
		b.WriteString(words[(i*7+j*j)%len(words)])
		if j%12 == 11 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()
}

func basic(user, pass string) string {
	req, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	req.SetBasicAuth(user, pass)
	return req.Header.Get("Authorization")
}

// ---- seeding ---------------------------------------------------------------

func (cl *client) seed(ctx context.Context, receiver string) error {
	var books []struct{ ID string }
	if err := cl.json(ctx, "GET", "/api/v1/contacts/books", nil, &books, 200); err != nil || len(books) == 0 {
		return fmt.Errorf("address books (%d): %w", len(books), err)
	}
	var cals []struct{ ID string }
	if err := cl.json(ctx, "GET", "/api/v1/calendar/calendars", nil, &cals, 200); err != nil || len(cals) == 0 {
		return fmt.Errorf("calendars (%d): %w", len(cals), err)
	}
	w := &cl.world
	w.bookID, w.calID = books[0].ID, cals[0].ID
	for _, f := range []struct {
		name string
		id   *string
	}{{"seed", &w.seedFolder}, {"soak", &w.soakFolder}} {
		var item struct{ ID string }
		if err := cl.json(ctx, "POST", "/api/v1/drive/folders", map[string]string{"name": f.name}, &item, 201); err != nil {
			return fmt.Errorf("folder %s: %w", f.name, err)
		}
		*f.id = item.ID
	}
	if _, _, err := cl.do(ctx, "MKCOL", "/api/v1/webdav/soak-dav/", cl.dav(), nil, 201); err != nil {
		return err
	}
	var mu sync.Mutex
	par := func(n int, f func(i int) error) error {
		errs := make(chan error, 8)
		var next atomic.Int64
		for range 8 {
			go func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						errs <- nil
						return
					}
					if err := f(i); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		var first error
		for range 8 {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	t0 := time.Now()
	err := par(cl.c.contacts, func(i int) error {
		var out struct{ ID string }
		if err := cl.json(ctx, "POST", "/api/v1/contacts/books/"+w.bookID, contactBody(i), &out, 201); err != nil {
			return err
		}
		mu.Lock()
		w.contacts = append(w.contacts, out.ID)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed contacts: %w", err)
	}
	err = par(cl.c.events, func(i int) error {
		return cl.json(ctx, "POST", "/api/v1/calendar/calendars/"+w.calID+"/events", eventBody(i), nil, 201)
	})
	if err != nil {
		return fmt.Errorf("seed events: %w", err)
	}
	err = par(cl.c.files, func(i int) error {
		h := cl.dav()
		h["Content-Type"] = "text/plain"
		_, _, err := cl.do(ctx, "PUT", fmt.Sprintf("/api/v1/webdav/seed/%s-%04d.txt", words[i%len(words)], i), h, fileBody(i), 201)
		return err
	})
	if err != nil {
		return fmt.Errorf("seed files: %w", err)
	}
	for page := 1; ; page++ {
		var fc struct {
			Items []struct{ ID, Name string }
		}
		if err := cl.json(ctx, "GET", fmt.Sprintf("/api/v1/drive/browse/%s?per_page=500&page=%d&sort_by=name&sort_order=asc", w.seedFolder, page), nil, &fc, 200); err != nil {
			return err
		}
		for _, it := range fc.Items {
			w.seedFiles, w.seedNames = append(w.seedFiles, it.ID), append(w.seedNames, it.Name)
		}
		if len(fc.Items) < 500 {
			break
		}
	}
	if len(w.seedFiles) != cl.c.files {
		return fmt.Errorf("seed folder lists %d files, want %d", len(w.seedFiles), cl.c.files)
	}
	if w.cardToken, err = cl.syncCollection(ctx, cl.cardPath(), ""); err != nil {
		return fmt.Errorf("initial CardDAV sync: %w", err)
	}
	if w.calToken, err = cl.syncCollection(ctx, cl.calPath(), ""); err != nil {
		return fmt.Errorf("initial CalDAV sync: %w", err)
	}
	// Three webhook subscriptions to the loopback receiver: every write of the soak (not
	// of the seed) is delivered.
	for i := range 3 {
		if err := cl.json(ctx, "POST", "/api/v1/webhooks/subscriptions",
			map[string]any{"url": fmt.Sprintf("%s/hook/%d", receiver, i), "description": "soak", "events": []string{}}, nil, 201); err != nil {
			return fmt.Errorf("webhook subscription: %w", err)
		}
	}
	fmt.Printf("seeded %d contacts, %d events, %d files in %.1f s\n", cl.c.contacts, cl.c.events, cl.c.files, time.Since(t0).Seconds())
	return nil
}

func (cl *client) cardPath() string {
	return "/dav/addressbooks/" + cl.c.user + "/" + cl.world.bookID + "/"
}

func (cl *client) calPath() string {
	return "/dav/calendars/" + cl.c.user + "/" + cl.world.calID + "/"
}

var syncTokenRe = regexp.MustCompile(`<[A-Za-z]*:?sync-token>([^<]+)</`)

// syncCollection runs an RFC 6578 sync-collection REPORT from token and returns the new token.
func (cl *client) syncCollection(ctx context.Context, path, token string) (string, error) {
	body := `<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>` + token +
		`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`
	h := cl.dav()
	h["Content-Type"] = "application/xml; charset=utf-8"
	b, _, err := cl.do(ctx, "REPORT", path, h, []byte(body), 207)
	if err != nil {
		return "", err
	}
	m := syncTokenRe.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("REPORT %s: no sync-token in %.200s", path, b)
	}
	return string(m[1]), nil
}

// ---- operations ------------------------------------------------------------

type op struct {
	name   string
	weight int
	run    func(ctx context.Context, cl *client) error
}

var propfindBody = []byte(`<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:getlastmodified/><d:getcontentlength/><d:resourcetype/><d:getetag/></d:prop></d:propfind>`)

func ops() []op {
	return []op{
		{"drive.browse", 10, func(ctx context.Context, cl *client) error {
			page := 1 + cl.intn(4)
			_, _, err := cl.do(ctx, "GET", fmt.Sprintf("/api/v1/drive/browse/%s?per_page=50&page=%d&sort_by=name&sort_order=asc", cl.world.seedFolder, page), nil, nil, 200)
			return err
		}},
		{"drive.browse-soak", 3, func(ctx context.Context, cl *client) error {
			_, _, err := cl.do(ctx, "GET", "/api/v1/drive/browse/"+cl.world.soakFolder+"?per_page=50", nil, nil, 200)
			return err
		}},
		{"drive.download", 6, func(ctx context.Context, cl *client) error {
			id := cl.world.seedFiles[cl.intn(len(cl.world.seedFiles))]
			var dl struct{ URL string }
			if err := cl.json(ctx, "GET", "/api/v1/drive/"+id+"/download", nil, &dl, 200); err != nil {
				return err
			}
			_, _, err := cl.do(ctx, "GET", dl.URL, map[string]string{"-noauth": "1"}, nil, 200)
			return err
		}},
		{"drive.search", 6, func(ctx context.Context, cl *client) error {
			q := words[cl.intn(len(words))]
			if cl.intn(2) == 0 {
				q += " " + words[cl.intn(len(words))]
			}
			_, _, err := cl.do(ctx, "GET", "/api/v1/drive/search?limit=20&q="+url.QueryEscape(q), nil, nil, 200)
			return err
		}},
		{"drive.upload", 5, func(ctx context.Context, cl *client) error {
			i := cl.next()
			data := fileBody(i)
			var t struct {
				UploadURL string `json:"upload_url"`
				File      struct{ ID string }
			}
			if err := cl.json(ctx, "POST", "/api/v1/drive/upload", map[string]any{"name": fmt.Sprintf("up-%06d.txt", i), "size": len(data),
				"mime_type": "text/plain", "parent_id": cl.world.soakFolder}, &t, 201); err != nil {
				return err
			}
			if _, _, err := cl.do(ctx, "PUT", t.UploadURL, map[string]string{"-noauth": "1", "Content-Type": "text/plain"}, data, 200, 201, 204); err != nil {
				return err
			}
			if err := cl.json(ctx, "POST", "/api/v1/drive/"+t.File.ID+"/confirm", nil, nil, 200); err != nil {
				return err
			}
			if old := cl.push("file", t.File.ID); old != "" {
				_, _, err := cl.do(ctx, "DELETE", "/api/v1/drive/"+old, nil, nil, 204)
				return err
			}
			return nil
		}},
		{"webdav.propfind", 5, func(ctx context.Context, cl *client) error {
			h := cl.dav()
			h["Depth"], h["Content-Type"] = "1", "application/xml"
			_, _, err := cl.do(ctx, "PROPFIND", "/api/v1/webdav/seed/", h, propfindBody, 207)
			return err
		}},
		{"webdav.get", 5, func(ctx context.Context, cl *client) error {
			name := cl.world.seedNames[cl.intn(len(cl.world.seedNames))]
			_, _, err := cl.do(ctx, "GET", "/api/v1/webdav/seed/"+url.PathEscape(name), cl.dav(), nil, 200)
			return err
		}},
		{"webdav.put", 5, func(ctx context.Context, cl *client) error {
			i := cl.next()
			h := cl.dav()
			h["Content-Type"] = "text/plain"
			// 50 names overwritten again and again: new versions, bounded by the version cap.
			_, _, err := cl.do(ctx, "PUT", fmt.Sprintf("/api/v1/webdav/soak-dav/doc-%02d.txt", i%50), h, fileBody(i), 201, 204)
			return err
		}},
		{"contacts.get", 6, func(ctx context.Context, cl *client) error {
			id := cl.world.contacts[cl.intn(len(cl.world.contacts))]
			_, _, err := cl.do(ctx, "GET", "/api/v1/contacts/books/"+cl.world.bookID+"/"+id, nil, nil, 200)
			return err
		}},
		{"contacts.list", 2, func(ctx context.Context, cl *client) error {
			_, _, err := cl.do(ctx, "GET", "/api/v1/contacts/books/"+cl.world.bookID, nil, nil, 200)
			return err
		}},
		{"contacts.search", 3, func(ctx context.Context, cl *client) error {
			q := strings.ToLower(firstNames[cl.intn(len(firstNames))])
			_, _, err := cl.do(ctx, "GET", "/api/v1/contacts/search?q="+url.QueryEscape(q), nil, nil, 200)
			return err
		}},
		{"contacts.create", 4, func(ctx context.Context, cl *client) error {
			var out struct{ ID string }
			if err := cl.json(ctx, "POST", "/api/v1/contacts/books/"+cl.world.bookID, contactBody(100000+cl.next()), &out, 201); err != nil {
				return err
			}
			if old := cl.push("contact", out.ID); old != "" {
				_, _, err := cl.do(ctx, "DELETE", "/api/v1/contacts/books/"+cl.world.bookID+"/"+old, nil, nil, 204)
				return err
			}
			return nil
		}},
		{"contacts.update", 4, func(ctx context.Context, cl *client) error {
			id := cl.world.contacts[cl.intn(len(cl.world.contacts))]
			return cl.json(ctx, "PUT", "/api/v1/contacts/books/"+cl.world.bookID+"/"+id,
				map[string]string{"job_title": fmt.Sprintf("Title %d", cl.next())}, nil, 200)
		}},
		{"calendar.range", 6, func(ctx context.Context, cl *client) error {
			start := time.Date(2026, time.Month(1+cl.intn(12)), 1, 0, 0, 0, 0, time.UTC)
			q := url.Values{"start": {start.Format(time.RFC3339)}, "end": {start.AddDate(0, 1, 0).Format(time.RFC3339)}}
			_, _, err := cl.do(ctx, "GET", "/api/v1/calendar/calendars/"+cl.world.calID+"/events?"+q.Encode(), nil, nil, 200)
			return err
		}},
		{"calendar.create", 4, func(ctx context.Context, cl *client) error {
			var out struct{ UID string }
			if err := cl.json(ctx, "POST", "/api/v1/calendar/calendars/"+cl.world.calID+"/events", eventBody(1+cl.next()), &out, 201); err != nil {
				return err
			}
			if old := cl.push("event", out.UID); old != "" {
				_, _, err := cl.do(ctx, "DELETE", "/api/v1/calendar/calendars/"+cl.world.calID+"/events/"+url.PathEscape(old), nil, nil, 204)
				return err
			}
			return nil
		}},
		{"calendar.update", 2, func(ctx context.Context, cl *client) error {
			uid := cl.member("event", nil)
			if uid == "" {
				return nil
			}
			return cl.json(ctx, "PUT", "/api/v1/calendar/calendars/"+cl.world.calID+"/events/"+url.PathEscape(uid),
				map[string]string{"location": fmt.Sprintf("Room %d", cl.next()%40)}, nil, 200)
		}},
		{"carddav.sync", 4, func(ctx context.Context, cl *client) error { return cl.sync(ctx, &cl.world.cardToken, cl.cardPath()) }},
		{"caldav.sync", 3, func(ctx context.Context, cl *client) error { return cl.sync(ctx, &cl.world.calToken, cl.calPath()) }},
		{"webhooks.list", 2, func(ctx context.Context, cl *client) error {
			_, _, err := cl.do(ctx, "GET", "/api/v1/webhooks/subscriptions?limit=20", nil, nil, 200)
			return err
		}},
		{"me", 2, func(ctx context.Context, cl *client) error {
			_, _, err := cl.do(ctx, "GET", "/api/v1/me", nil, nil, 200)
			return err
		}},
	}
}

// sync is an incremental sync-collection from the client's last token, as a
// polling DAV client does.
func (cl *client) sync(ctx context.Context, token *string, path string) error {
	cl.mu.Lock()
	t := *token
	cl.mu.Unlock()
	nt, err := cl.syncCollection(ctx, path, t)
	if err != nil {
		return err
	}
	cl.mu.Lock()
	*token = nt
	cl.mu.Unlock()
	return nil
}

// ---- measurement -----------------------------------------------------------

type window struct {
	mu          sync.Mutex
	lat         []float64 // ms from the scheduled instant
	errs        int
	outstanding atomic.Int64
	rssKiB      int64 // median of the per-second samples of the window
	anonKiB     int64 // the same for RssAnon
	rssSamples  []int64
	anonSamples []int64
	tail        []tailSample // every request with its operation, to name the slowest 1%
	heapBytes   int64
	dbBytes     int64
	dataBytes   int64
	deliveries  int64
	load        string
}

// slowMS is the latency from which an operation is logged (stderr) with its scheduled time.
const slowMS = 250

type tailSample struct {
	ms float64
	op string
}

// tailOps names the operations of the slowest 1% of a window's requests, most frequent first.
func tailOps(samples []tailSample) string {
	slices.SortFunc(samples, func(a, b tailSample) int { return cmp.Compare(b.ms, a.ms) })
	n := max(1, len(samples)/100)
	count := map[string]int{}
	for _, t := range samples[:min(n, len(samples))] {
		count[t.op]++
	}
	names := make([]string, 0, len(count))
	for k := range count {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s×%d", k, count[k]))
	}
	return strings.Join(parts, " ")
}

func medianKiB(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

type opStat struct {
	mu   sync.Mutex
	lat  []float64
	errs int
	last string
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// statusKiB reads a KiB figure (VmRSS, RssAnon) of process pid from /proc/PID/status.
func statusKiB(pid int, key string) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key+":") {
			v, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return v
		}
	}
	return 0
}

// goHeap reads the server's Go heap in use (bytes) from its /metrics; 0 when absent.
func (cl *client) goHeap(ctx context.Context) int64 {
	b, _, err := cl.do(ctx, "GET", "/metrics", map[string]string{"-noauth": "1"}, nil, 200)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int64(f)
		}
	}
	return 0
}

// sizes returns the bytes of the database files (atrium.db and its WAL) and of the whole data directory.
func sizes(dir string) (db, all int64) {
	if dir == "" {
		return 0, 0
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		all += fi.Size()
		if strings.HasPrefix(filepath.Base(p), "atrium.db") && filepath.Dir(p) == filepath.Clean(dir) {
			db += fi.Size()
		}
		return nil
	})
	return db, all
}

func listenLoopback() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	return ln, nil
}

func run(ctx context.Context, c config, log *slog.Logger) (bool, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	cl := &client{c: c, http: &http.Client{Transport: tr, Timeout: 60 * time.Second}, rng: rand.New(rand.NewPCG(10, 10)),
		world: world{ring: map[string][]string{}}}

	// The webhook receiver: answers 204 and counts.
	var delivered atomic.Int64
	recv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})}
	ln, err := listenLoopback()
	if err != nil {
		return false, err
	}
	go func() { _ = recv.Serve(ln) }()
	defer recv.Close()

	if err := cl.seed(ctx, "http://"+ln.Addr().String()); err != nil {
		return false, fmt.Errorf("seed: %w", err)
	}

	all := ops()
	total := 0
	for _, o := range all {
		total += o.weight
	}
	stats := map[string]*opStat{}
	for _, o := range all {
		stats[o.name] = &opStat{}
	}
	nw := int((c.duration + c.window - 1) / c.window)
	wins := make([]*window, nw)
	for i := range wins {
		wins[i] = &window{}
	}
	var inflight atomic.Int64
	var slowLogged atomic.Int64 // the first 50 operations slower than slowMS are logged with their time, to match the server log
	interval := time.Duration(float64(time.Second) / c.rate)
	fmt.Printf("driving %.0f ops/s for %v (windows of %v), %d kinds of operation\n", c.rate, c.duration, c.window, len(all))
	fmt.Printf("%-7s %9s %7s %9s %9s %9s %9s %9s %9s %9s %10s %11s %6s  %s\n", "window", "requests", "errors", "p50 ms", "p99 ms", "max ms",
		"RSS MiB", "anon MiB", "heap MiB", "DB MiB", "data MiB", "deliveries", "load", "slowest 1% by operation")

	start := time.Now()
	printed := make(chan struct{})
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	if c.pid != 0 {
		go func() { // RSS once a second: a window reports the median of its samples, not one instant
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-sampling.Done():
					return
				case t := <-tick.C:
					i := int(t.Sub(start) / c.window)
					if i < 0 || i >= len(wins) {
						continue
					}
					rss, anon := statusKiB(c.pid, "VmRSS"), statusKiB(c.pid, "RssAnon")
					w := wins[i]
					w.mu.Lock()
					w.rssSamples, w.anonSamples = append(w.rssSamples, rss), append(w.anonSamples, anon)
					w.mu.Unlock()
				}
			}
		}()
	}
	go func() { // prints each window once its requests are done (or after 60 s)
		defer close(printed)
		for i, w := range wins {
			end := start.Add(time.Duration(i+1) * c.window)
			time.Sleep(time.Until(end))
			w.mu.Lock()
			w.rssKiB, w.anonKiB = medianKiB(w.rssSamples), medianKiB(w.anonSamples)
			w.mu.Unlock()
			w.heapBytes = cl.goHeap(ctx)
			if b, err := os.ReadFile("/proc/loadavg"); err == nil {
				w.load = strings.Fields(string(b))[0]
			}
			w.dbBytes, w.dataBytes = sizes(c.data)
			w.deliveries = delivered.Load()
			for t := time.Now(); w.outstanding.Load() > 0 && time.Since(t) < 60*time.Second; {
				time.Sleep(50 * time.Millisecond)
			}
			w.mu.Lock()
			slices.Sort(w.lat)
			fmt.Printf("%-7d %9d %7d %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %10.1f %11d %6s  %s\n", i+1, len(w.lat), w.errs,
				quantile(w.lat, 0.5), quantile(w.lat, 0.99), quantile(w.lat, 1), float64(w.rssKiB)/1024, float64(w.anonKiB)/1024,
				float64(w.heapBytes)/(1<<20), float64(w.dbBytes)/(1<<20), float64(w.dataBytes)/(1<<20), w.deliveries, w.load, tailOps(w.tail))
			w.mu.Unlock()
		}
	}()

	pick := rand.New(rand.NewPCG(1, 2))
	var wg sync.WaitGroup
	for k := 0; ; k++ {
		at := start.Add(time.Duration(k) * interval)
		if at.Sub(start) >= c.duration {
			break
		}
		time.Sleep(time.Until(at))
		n := pick.IntN(total)
		var o op
		for _, o = range all {
			if n < o.weight {
				break
			}
			n -= o.weight
		}
		w := wins[int(at.Sub(start)/c.window)]
		st := stats[o.name]
		if inflight.Load() >= int64(c.maxInFlight) {
			w.mu.Lock()
			w.errs++
			w.lat = append(w.lat, float64(time.Since(at).Microseconds())/1000)
			w.mu.Unlock()
			st.mu.Lock()
			st.errs++
			st.last = "client overload: too many operations in flight"
			st.mu.Unlock()
			continue
		}
		inflight.Add(1)
		w.outstanding.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer inflight.Add(-1)
			defer w.outstanding.Add(-1)
			err := o.run(ctx, cl)
			ms := float64(time.Since(at).Microseconds()) / 1000
			w.mu.Lock()
			w.lat = append(w.lat, ms)
			w.tail = append(w.tail, tailSample{ms, o.name})
			if err != nil {
				w.errs++
			}
			w.mu.Unlock()
			if ms >= slowMS && slowLogged.Add(1) <= 50 {
				log.Warn("slow operation", "op", o.name, "scheduled", at.Format("15:04:05.000"), "ms", ms)
			}
			st.mu.Lock()
			st.lat = append(st.lat, ms)
			if err != nil {
				if st.errs == 0 {
					log.Warn("operation failed", "op", o.name, "err", err)
				}
				st.errs++
				st.last = err.Error()
			}
			st.mu.Unlock()
		}()
	}
	wg.Wait()
	<-printed

	fmt.Println("\nper operation (whole run):")
	fmt.Printf("%-20s %8s %7s %9s %9s\n", "operation", "count", "errors", "p50 ms", "p99 ms")
	reqs, errs := 0, 0
	for _, o := range all {
		st := stats[o.name]
		slices.Sort(st.lat)
		fmt.Printf("%-20s %8d %7d %9.1f %9.1f\n", o.name, len(st.lat), st.errs, quantile(st.lat, 0.5), quantile(st.lat, 0.99))
		if st.errs > 0 {
			fmt.Printf("  last error: %.300s\n", st.last)
		}
	}
	for _, w := range wins {
		reqs += len(w.lat)
		errs += w.errs
	}
	fmt.Println()
	ok := true
	verdict := func(label, value, target string, pass bool) {
		v := "PASS"
		if !pass {
			v, ok = "MISS", false
		}
		fmt.Printf("%-44s %-36s target %-10s %s\n", label, value, target, v)
	}
	verdict("soak error rate", fmt.Sprintf("%d of %d (%.3f%%)", errs, reqs, 100*float64(errs)/float64(max(reqs, 1))), "0", errs == 0)
	if len(wins) < 2 {
		return false, errors.New("fewer than two windows: nothing to compare (make -duration at least two -window)")
	}
	second, last := wins[1], wins[len(wins)-1]
	growth := func(a, b float64) float64 { return 100 * (b - a) / a }
	p2, pl := quantile(second.lat, 0.99), quantile(last.lat, 0.99)
	verdict("soak p99 growth, window 2 → last", fmt.Sprintf("%.1f ms → %.1f ms (%+.1f%%)", p2, pl, growth(p2, pl)), "< 10%", growth(p2, pl) < 10)
	if c.pid != 0 {
		r2, rl := float64(second.rssKiB)/1024, float64(last.rssKiB)/1024
		verdict("soak RSS growth, window 2 → last", fmt.Sprintf("%.1f MiB → %.1f MiB (%+.1f%%)", r2, rl, growth(r2, rl)), "< 10%", growth(r2, rl) < 10)
	}
	fmt.Printf("%-44s %.1f ops/s over %v, %d webhook deliveries received\n", "soak achieved", float64(reqs)/c.duration.Seconds(), c.duration, delivered.Load())
	return ok, nil
}
