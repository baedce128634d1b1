// Command mixload drives bench/cluster.sh (issue "Several nodes"): a mixed
// workload through the balancer in front of N Atrium nodes.
//
//	mixload -mode seed   ...  # folders d00.. of files, a folder up/, events in the default calendar, waits for the index
//	mixload -mode mix    ...  # -c clients for -d: the weighted mix; requests/s, p50/p99 per operation, errors
//	mixload -mode serial -op browse -k 200 ...  # K operations of one type, one at a time (for pg_stat_statements)
//	mixload -mode proxy -listen A -to B -stats S  # a TCP proxy that counts bytes each way (the nodes' link to the store)
//
// The operations: browse (REST GET /api/v1/drive/browse/{folder}, 100 items),
// propfind (WebDAV PROPFIND Depth 1 of a folder of 100 files), download
// (WebDAV GET of a file), search (REST GET /api/v1/drive/search?q=word),
// upload (WebDAV PUT of a new -upload-size file into up/; upload_big, serial
// only, the same of -big-size), caldav (CalDAV
// REPORT calendar-query of one month of the default calendar). Prints one
// "key value" line a figure; progress on stderr.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"atrium/bench/internal/vocab"
)

var (
	mode     = flag.String("mode", "mix", "seed, mix, serial or proxy")
	base     = flag.String("base", "", "balancer URL")
	token    = flag.String("token", "", "bearer token (REST)")
	user     = flag.String("user", "", "WebDAV/CalDAV user (e-mail)")
	userID   = flag.String("user-id", "", "the user's id (CalDAV path)")
	pass     = flag.String("pass", "", "app password")
	folders  = flag.Int("folders", 20, "folders d00.. of the seed")
	perDir   = flag.Int("per-folder", 100, "files per folder")
	fileSize = flag.Int("size", 2048, "bytes per seeded file")
	upSize   = flag.Int("upload-size", 4096, "bytes per small upload")
	bigSize  = flag.Int("big-size", 1<<20, "bytes per upload_big (serial only: larger than the 64 KiB kept in the database)")
	events   = flag.Int("events", 200, "events in the default calendar")
	conc     = flag.Int("c", 16, "clients (mix); seed clients")
	dur      = flag.Duration("d", 20*time.Second, "mix duration")
	weights  = flag.String("mix", "browse=30,propfind=20,download=20,search=10,upload=10,caldav=10", "operation weights")
	op       = flag.String("op", "browse", "serial: the operation")
	k        = flag.Int("k", 200, "serial: operations")
	tag      = flag.String("tag", "x", "upload names' prefix (unique per run)")
	listen   = flag.String("listen", "", "proxy: listen address")
	to       = flag.String("to", "", "proxy: upstream address")
	stats    = flag.String("stats", "", "proxy: address serving the counters")
	metrics  = flag.String("metrics", "", "seed: a node's URL for /metrics (served to local clients only, not through the balancer)")
	idxWait  = flag.Duration("index-wait", 5*time.Minute, "seed: longest wait for the search index")
)

var (
	client          *http.Client
	wireOut, wireIn atomic.Int64 // bytes written to and read from the balancer (wire, headers included)
	words           []string
)

type countConn struct{ net.Conn }

func (c countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	wireIn.Add(int64(n))
	return n, err
}
func (c countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	wireOut.Add(int64(n))
	return n, err
}

func main() {
	flag.Parse()
	if *mode == "proxy" {
		proxy()
		return
	}
	*base = strings.TrimSuffix(*base, "/")
	n := *conc * 2
	d := &net.Dialer{Timeout: 10 * time.Second}
	client = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true,
		DialContext: func(ctx context.Context, nw, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, nw, addr)
			if err != nil {
				return nil, err
			}
			return countConn{c}, nil
		},
	}}
	words = vocab.Words(500)
	switch *mode {
	case "seed":
		seed()
	case "mix":
		mix()
	case "serial":
		serial()
	default:
		die(fmt.Errorf("unknown -mode %q", *mode))
	}
}

// ---- the target: what the operations need ----

type target struct {
	folderIDs []string // REST ids of d00..
	calID     string
}

func discover() *target {
	var root struct {
		Items []struct{ ID, Name string }
	}
	must(getJSON("/api/v1/drive/browse?per_page=500", &root))
	t := &target{folderIDs: make([]string, *folders)}
	for _, it := range root.Items {
		var i int
		if _, err := fmt.Sscanf(it.Name, "d%02d", &i); err == nil && i < *folders && len(it.Name) == 3 {
			t.folderIDs[i] = it.ID
		}
	}
	for i, id := range t.folderIDs {
		if id == "" {
			die(fmt.Errorf("no folder d%02d at the root (seed first)", i))
		}
	}
	var cals []struct{ ID string }
	must(getJSON("/api/v1/calendar/calendars", &cals))
	if len(cals) == 0 {
		die(fmt.Errorf("no calendar"))
	}
	t.calID = cals[0].ID
	return t
}

var upSeq atomic.Int64

// do runs one operation; rng picks its folder, file or word.
func (t *target) do(name string, rng *rand.Rand) error {
	f := rng.IntN(*folders)
	switch name {
	case "browse":
		_, err := req("GET", "/api/v1/drive/browse/"+t.folderIDs[f]+"?per_page=100", nil, nil, true, 200)
		return err
	case "propfind":
		_, err := req("PROPFIND", fmt.Sprintf("/api/v1/webdav/d%02d/", f), []byte(propfindBody),
			map[string]string{"Depth": "1", "Content-Type": "application/xml"}, false, 207)
		return err
	case "download":
		i := rng.IntN(*perDir)
		b, err := req("GET", fmt.Sprintf("/api/v1/webdav/d%02d/f%04d.txt", f, f**perDir+i), nil, nil, false, 200)
		if err == nil && len(b) != *fileSize {
			err = fmt.Errorf("download: %d bytes, want %d", len(b), *fileSize)
		}
		return err
	case "search":
		b, err := req("GET", "/api/v1/drive/search?q="+url.QueryEscape(words[rng.IntN(len(words))]), nil, nil, true, 200)
		if err == nil && !bytes.Contains(b, []byte("total_hits")) {
			err = fmt.Errorf("search: no total_hits in %.200s", b)
		}
		return err
	case "upload":
		i := upSeq.Add(1)
		_, err := req("PUT", fmt.Sprintf("/api/v1/webdav/up/%s-%06d.txt", *tag, i), vocab.Text(int(1e6+i), words, *upSize),
			map[string]string{"Content-Type": "text/plain"}, false, 201)
		return err
	case "upload_big":
		i := upSeq.Add(1)
		_, err := req("PUT", fmt.Sprintf("/api/v1/webdav/up/%s-big-%06d.txt", *tag, i), vocab.Text(int(2e6+i), words, *bigSize),
			map[string]string{"Content-Type": "text/plain"}, false, 201)
		return err
	case "caldav":
		m := 1 + rng.IntN(12)
		start := time.Date(2027, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		body := fmt.Sprintf(reportBody, start.Format("20060102T150405Z"), start.AddDate(0, 1, 0).Format("20060102T150405Z"))
		_, err := req("REPORT", fmt.Sprintf("/dav/calendars/%s/%s/", *userID, t.calID), []byte(body),
			map[string]string{"Depth": "1", "Content-Type": "application/xml; charset=utf-8"}, false, 207)
		return err
	}
	return fmt.Errorf("unknown operation %q", name)
}

const propfindBody = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><d:getcontentlength/><d:getlastmodified/><d:getetag/><d:resourcetype/></d:prop></d:propfind>`

const reportBody = `<?xml version="1.0" encoding="utf-8"?>
<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
  <d:prop><d:getetag/><c:calendar-data/></d:prop>
  <c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">
    <c:time-range start="%s" end="%s"/>
  </c:comp-filter></c:comp-filter></c:filter>
</c:calendar-query>`

// ---- seed ----

func seed() {
	t0 := time.Now()
	for i := range *folders {
		_, err := req("MKCOL", fmt.Sprintf("/api/v1/webdav/d%02d/", i), nil, nil, false, 201)
		must(err)
	}
	_, err := req("MKCOL", "/api/v1/webdav/up/", nil, nil, false, 201)
	must(err)
	total := *folders * *perDir
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range *conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total || firstErr.Load() != nil {
					return
				}
				if _, err := req("PUT", fmt.Sprintf("/api/v1/webdav/d%02d/f%04d.txt", i / *perDir, i), vocab.Text(i, words, *fileSize),
					map[string]string{"Content-Type": "text/plain"}, false, 201); err != nil {
					firstErr.Store(err)
				}
			}
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		die(err)
	}
	fmt.Fprintf(os.Stderr, "seed: %d files in %.1f s\n", total, time.Since(t0).Seconds())
	var cals []struct{ ID string }
	must(getJSON("/api/v1/calendar/calendars", &cals))
	if len(cals) == 0 {
		die(fmt.Errorf("no calendar"))
	}
	for i := range *events {
		s := time.Date(2027, 1, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * 365 * 24 * time.Hour / time.Duration(*events))
		body, _ := json.Marshal(map[string]string{"title": fmt.Sprintf("Event %d %s", i, words[i%len(words)]),
			"start": s.Format(time.RFC3339), "end": s.Add(time.Hour).Format(time.RFC3339)})
		_, err := req("POST", "/api/v1/calendar/calendars/"+cals[0].ID+"/events", body,
			map[string]string{"Content-Type": "application/json"}, true, 201)
		must(err)
	}
	fmt.Fprintf(os.Stderr, "seed: %d events\n", *events)
	// The search index: every file in (atrium_search_documents), stable.
	t := time.Now()
	last := -1.0
	for {
		d, err := documents()
		if err == nil && d >= float64(total) && d == last {
			break
		}
		if err == nil {
			last = d
		}
		if time.Since(t) > *idxWait {
			die(fmt.Errorf("the search index has %v documents after %s, want %d (%v)", last, *idxWait, total, err))
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Printf("seed_files %d\nseed_events %d\nseed_s %.1f\nindex_wait_s %.1f\n", total, *events, time.Since(t0).Seconds(), time.Since(t).Seconds())
}

func documents() (float64, error) {
	u := *metrics
	if u == "" {
		u = *base
	}
	resp, err := client.Get(strings.TrimSuffix(u, "/") + "/metrics")
	if err != nil {
		return 0, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		die(fmt.Errorf("GET /metrics: %s %.200s", resp.Status, b))
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "atrium_search_documents "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) {
				return 0, fmt.Errorf("atrium_search_documents %q", v)
			}
			return f, nil
		}
	}
	return 0, fmt.Errorf("metrics: no atrium_search_documents")
}

// ---- mix ----

func mix() {
	t := discover()
	var names []string
	var cum []int
	sum := 0
	for kv := range strings.SplitSeq(*weights, ",") {
		name, w, _ := strings.Cut(kv, "=")
		n, err := strconv.Atoi(w)
		must(err)
		sum += n
		names = append(names, name)
		cum = append(cum, sum)
	}
	type res struct {
		lat  []time.Duration
		errs int
	}
	var mu sync.Mutex
	all := map[string]*res{}
	for _, n := range names {
		all[n] = &res{}
	}
	var errSample atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	end := t0.Add(*dur)
	for w := range *conc {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			local := map[string]*res{}
			for _, n := range names {
				local[n] = &res{}
			}
			for time.Now().Before(end) {
				x := rng.IntN(sum)
				i, _ := slices.BinarySearch(cum, x+1)
				name := names[i]
				s := time.Now()
				if err := t.do(name, rng); err != nil {
					local[name].errs++
					errSample.CompareAndSwap(nil, err.Error())
					continue
				}
				local[name].lat = append(local[name].lat, time.Since(s))
			}
			mu.Lock()
			for n, r := range local {
				all[n].lat = append(all[n].lat, r.lat...)
				all[n].errs += r.errs
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(t0).Seconds()
	ok, errs := 0, 0
	for _, n := range names {
		r := all[n]
		slices.Sort(r.lat)
		ok += len(r.lat)
		errs += r.errs
		p50, p99 := 0.0, 0.0
		if len(r.lat) > 0 {
			p50, p99 = ms(r.lat[len(r.lat)/2]), ms(r.lat[len(r.lat)*99/100])
		}
		fmt.Printf("op_%s count=%d rps=%.1f p50_ms=%.2f p99_ms=%.2f errors=%d\n", n, len(r.lat), float64(len(r.lat))/wall, p50, p99, r.errs)
	}
	fmt.Printf("mix_rps %.1f\nmix_requests %d\nmix_errors %d\nmix_seconds %.1f\n", float64(ok)/wall, ok, errs, wall)
	if s, _ := errSample.Load().(string); s != "" {
		fmt.Fprintf(os.Stderr, "mix: first error: %s\n", s)
		fmt.Printf("mix_first_error %q\n", s)
	}
}

// ---- serial ----

func serial() {
	t := discover()
	rng := rand.New(rand.NewPCG(11, 13))
	// A warm-up operation, not counted (connections open, caches warm).
	must(t.do(*op, rng))
	out0, in0 := wireOut.Load(), wireIn.Load()
	t0 := time.Now()
	var lat []time.Duration
	for range *k {
		s := time.Now()
		must(t.do(*op, rng))
		lat = append(lat, time.Since(s))
	}
	wall := time.Since(t0).Seconds()
	slices.Sort(lat)
	fmt.Printf("serial_op %s\nserial_k %d\nserial_seconds %.3f\nserial_p50_ms %.2f\nserial_wire_out_per_op %.0f\nserial_wire_in_per_op %.0f\n",
		*op, *k, wall, ms(lat[len(lat)/2]), float64(wireOut.Load()-out0)/float64(*k), float64(wireIn.Load()-in0)/float64(*k))
}

// ---- proxy ----

func proxy() {
	var up, down, conns, reqs atomic.Int64
	ln, err := net.Listen("tcp", *listen)
	must(err)
	go func() {
		must(http.ListenAndServe(*stats, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "up %d\ndown %d\nconns %d\nrequests %d\n", up.Load(), down.Load(), conns.Load(), reqs.Load())
		})))
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			die(err)
		}
		conns.Add(1)
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", *to)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{}, 2)
			// HTTP requests to the store: request lines (" HTTP/1.1\r\n"
			// followed by a header) in the upstream direction.
			pat := []byte(" HTTP/1.1\r\nHost: ")
			cp := func(dst, src net.Conn, n *atomic.Int64) {
				b := make([]byte, 32<<10)
				var carry []byte
				for {
					r, err := src.Read(b)
					if r > 0 {
						n.Add(int64(r))
						if n == &up {
							buf := append(carry, b[:r]...)
							reqs.Add(int64(bytes.Count(buf, pat)))
							carry = append([]byte(nil), buf[max(0, len(buf)-len(pat)+1):]...)
						}
						if _, werr := dst.Write(b[:r]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				if tc, ok := dst.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				done <- struct{}{}
			}
			go cp(u, c, &up)
			go cp(c, u, &down)
			<-done
			<-done
		}()
	}
}

// ---- helpers ----

// req sends one request (bearer token when rest, else Basic with the app
// password); the body is read whole; a status other than want is an error.
func req(method, path string, body []byte, hdr map[string]string, rest bool, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequest(method, *base+path, rd)
	if err != nil {
		return nil, err
	}
	if rest {
		r.Header.Set("Authorization", "Bearer "+*token)
	} else if path != "/metrics" {
		r.SetBasicAuth(*user, *pass)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	resp, err := client.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != want {
		err = fmt.Errorf("%s %s: %s %.300s", method, path, resp.Status, b)
	}
	return b, err
}

func getJSON(path string, v any) error {
	b, err := req("GET", path, nil, nil, true, 200)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func must(err error) {
	if err != nil {
		die(err)
	}
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "mixload:", err)
	os.Exit(1)
}
