// Command pgcompare measures one Atrium server for bench/postgres.sh (issue
// 49: PostgreSQL against SQLite), the same way whichever database the server
// keeps its metadata in:
//
//  1. REST GET /api/v1/me and GET /api/v1/contacts/books with a bearer token,
//     -rest-c keep-alive clients for -rest-d each: requests/s and p99
//  2. -puts WebDAV PUTs of -size bytes by -c clients (folders of at most
//     -folder files): wall time and p99
//  3. the drive filled up to -files files (untimed, WebDAV PUTs too), then a
//     browse of one full folder through REST (GET /api/v1/drive/browse/{id},
//     500 a page, to the end): median of -browse-runs
//  4. the delta snapshot of the whole drive (GET /api/v1/drive/sync/delta,
//     1,000 a page, to has_more false): median of -delta-runs
//  5. once the search index took in every item (/metrics
//     atrium_search_documents), -searches searches of words of the files'
//     text (GET /api/v1/drive/search): p50
//
// Every file's text is words of a vocabulary of -vocab made-up words, so
// that each word is in some of the files. Prints one "key value" line a
// figure (times in ms) and progress on stderr.
//
//	pgcompare -base http://127.0.0.1:8080 -token atr_pat_... -user a@b.test -pass ... -files 100000
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
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
	base   = flag.String("base", "", "server URL, e.g. http://127.0.0.1:8080")
	token  = flag.String("token", "", "bearer token (REST)")
	user   = flag.String("user", "", "WebDAV user (e-mail)")
	pass   = flag.String("pass", "", "WebDAV app password")
	restC  = flag.Int("rest-c", 8, "REST clients")
	restD  = flag.Duration("rest-d", 10*time.Second, "REST duration per endpoint")
	puts   = flag.Int("puts", 10000, "timed WebDAV PUTs")
	size   = flag.Int("size", 1024, "bytes per file")
	c      = flag.Int("c", 4, "WebDAV clients of the timed PUTs")
	fillC  = flag.Int("fill-c", 8, "WebDAV clients filling the drive (untimed)")
	files  = flag.Int("files", 100000, "files in the drive for the browse, delta and search figures (the timed PUTs count)")
	folder = flag.Int("folder", 5000, "files per folder")
	vocabN = flag.Int("vocab", 2000, "words in the vocabulary of the files' text")
	bruns  = flag.Int("browse-runs", 5, "browses of a full folder")
	druns  = flag.Int("delta-runs", 3, "delta snapshots")
	nsrch  = flag.Int("searches", 50, "searches")
	copyF  = flag.Bool("fill-copy", false, "fill the drive with WebDAV COPYs of the first folder (full after the timed PUTs) instead of PUTs")
	prefix = flag.String("prefix", "d", "folder names' prefix")
	wait   = flag.Duration("index-wait", 15*time.Minute, "longest wait for the search index")
)

var client *http.Client

func main() {
	flag.Parse()
	if *base == "" || *token == "" || *user == "" {
		fmt.Fprintln(os.Stderr, "usage: pgcompare -base URL -token T -user E -pass P [flags]")
		os.Exit(2)
	}
	*base = strings.TrimSuffix(*base, "/")
	n := max(*restC, *fillC, *c) * 2
	client = &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true}}
	words := vocab.Words(*vocabN)

	// 1. REST.
	for _, ep := range []struct{ key, path string }{{"me", "/api/v1/me"}, {"books", "/api/v1/contacts/books"}} {
		rps, p99 := restLoad(ep.path)
		fmt.Printf("rest_%s_rps %.1f\nrest_%s_p99_ms %.2f\n", ep.key, rps, ep.key, p99)
	}

	// 2. the timed PUTs, then 3. the rest of the drive, untimed.
	*files = max(*files, *puts)
	nf := (*files + *folder - 1) / *folder
	// With -fill-copy, the folders after the timed PUTs' are copies of the
	// first one (made by COPY), all but a last partial one.
	made := nf
	if *copyF {
		made = max((*puts+*folder-1) / *folder, 1)
	}
	for i := range made {
		must(dav("MKCOL", fmt.Sprintf("%s%03d/", *prefix, i), nil, http.StatusCreated))
	}
	wall, p99 := putRange(0, *puts, *c, words)
	fmt.Printf("puts_s %.3f\nputs_p99_ms %.2f\nputs_per_s %.1f\n", wall.Seconds(), p99, float64(*puts)/wall.Seconds())
	if *copyF && *files > *puts && *puts >= *folder {
		t := time.Now()
		done := made * *folder
		for i := made; done+*folder <= *files; i++ {
			req, err := http.NewRequest("COPY", fmt.Sprintf("%s/api/v1/webdav/%s000/", *base, *prefix), nil)
			must(err)
			req.SetBasicAuth(*user, *pass)
			req.Header.Set("Destination", fmt.Sprintf("%s/api/v1/webdav/%s%03d/", *base, *prefix, i))
			req.Header.Set("Depth", "infinity")
			req.Header.Set("Overwrite", "F")
			resp, err := client.Do(req)
			must(err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				must(fmt.Errorf("COPY into folder %d: %s %.300s", i, resp.Status, b))
			}
			done += *folder
			made = i + 1
		}
		fmt.Fprintf(os.Stderr, "copied %d files in %.1f s\n", done-*puts, time.Since(t).Seconds())
		fmt.Printf("copy_s %.1f\n", time.Since(t).Seconds())
		if done < *files { // a last folder, partial: PUTs
			must(dav("MKCOL", fmt.Sprintf("%s%03d/", *prefix, made), nil, http.StatusCreated))
			w, _ := putRange(made**folder, made**folder+*files-done, *fillC, words)
			fmt.Printf("fill_s %.1f\n", w.Seconds())
		}
	} else if *files > *puts {
		for i := made; i < nf; i++ {
			must(dav("MKCOL", fmt.Sprintf("%s%03d/", *prefix, i), nil, http.StatusCreated))
		}
		w, _ := putRange(*puts, *files, *fillC, words)
		fmt.Fprintf(os.Stderr, "filled %d more files in %.1f s\n", *files-*puts, w.Seconds())
		fmt.Printf("fill_s %.1f\n", w.Seconds())
	}

	// 3. browse d000 (a full folder when files >= folder).
	var root struct {
		Items []struct{ ID, Name string }
	}
	must(getJSON("/api/v1/drive/browse?per_page=500", &root))
	var fid string
	for _, it := range root.Items {
		if it.Name == *prefix+"000" {
			fid = it.ID
		}
	}
	if fid == "" {
		must(fmt.Errorf("browse: no folder %s000 at the root", *prefix))
	}
	want := min(*folder, *files)
	var bt []float64
	for range *bruns {
		t := time.Now()
		got := 0
		for page := 1; ; page++ {
			var l struct {
				Items      []json.RawMessage
				TotalPages int `json:"total_pages"`
			}
			must(getJSON(fmt.Sprintf("/api/v1/drive/browse/%s?per_page=500&page=%d", fid, page), &l))
			got += len(l.Items)
			if page >= l.TotalPages {
				break
			}
		}
		bt = append(bt, ms(time.Since(t)))
		if got != want {
			must(fmt.Errorf("browse listed %d items, want %d", got, want))
		}
	}
	fmt.Printf("browse_items %d\nbrowse_ms %.1f\n", want, median(bt))

	// 4. delta snapshots.
	var dt []float64
	var items int
	for r := range *druns {
		t := time.Now()
		items = 0
		cursor := ""
		for {
			q := fmt.Sprintf("/api/v1/drive/sync/delta?device_id=bench-%d-%d&limit=1000", time.Now().UnixNano(), r)
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			var pg struct {
				Items   []json.RawMessage
				Cursor  string
				HasMore bool `json:"has_more"`
			}
			must(getJSON(q, &pg))
			items += len(pg.Items)
			cursor = pg.Cursor
			if !pg.HasMore {
				break
			}
		}
		dt = append(dt, ms(time.Since(t)))
		if items < *files {
			must(fmt.Errorf("delta snapshot: %d items, want at least %d", items, *files))
		}
	}
	fmt.Printf("delta_items %d\ndelta_ms %.1f\n", items, median(dt))

	// 5. search, once the index has every item.
	t := time.Now()
	var docs float64
	last := -1.0
	for {
		d, err := documents()
		if err == nil && d >= float64(*files) && d == last {
			docs = d
			break
		}
		if err == nil {
			last = d
		}
		if time.Since(t) > *wait {
			must(fmt.Errorf("the search index has %v documents after %s, want %d (%v)", last, *wait, *files, err))
		}
		time.Sleep(500 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "index: %.0f documents, %.1f s after the delta snapshots\n", docs, time.Since(t).Seconds())
	fmt.Printf("index_wait_s %.1f\n", time.Since(t).Seconds())
	rng := rand.New(rand.NewPCG(7, 49))
	var st []float64
	hits := 0
	for range *nsrch {
		w := words[rng.IntN(len(words))]
		var res struct {
			TotalHits int `json:"total_hits"`
		}
		t := time.Now()
		must(getJSON("/api/v1/drive/search?q="+url.QueryEscape(w), &res))
		st = append(st, ms(time.Since(t)))
		if res.TotalHits == 0 {
			must(fmt.Errorf("search %q: no hits", w))
		}
		hits += res.TotalHits
	}
	slices.Sort(st)
	fmt.Printf("search_p50_ms %.2f\nsearch_p99_ms %.2f\nsearch_mean_hits %d\n", st[len(st)/2], st[len(st)*99/100], hits/len(st))
}

// putRange PUTs files [from, to) with k clients; returns the wall time and the p99 in ms.
func putRange(from, to, k int, words []string) (time.Duration, float64) {
	var next atomic.Int64
	next.Store(int64(from))
	lat := make([]time.Duration, to-from)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	t0 := time.Now()
	for range k {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= to || firstErr.Load() != nil {
					return
				}
				t := time.Now()
				if err := dav(http.MethodPut, fmt.Sprintf("%s%03d/f%06d.txt", *prefix, i / *folder, i), vocab.Text(i, words, *size), http.StatusCreated); err != nil {
					firstErr.Store(err)
					return
				}
				lat[i-from] = time.Since(t)
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	if err, _ := firstErr.Load().(error); err != nil {
		must(err)
	}
	slices.Sort(lat)
	return wall, ms(lat[len(lat)*99/100])
}

func dav(method, path string, body []byte, want int) error {
	req, err := http.NewRequest(method, *base+"/api/v1/webdav/"+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(*user, *pass)
	if method == http.MethodPut {
		req.Header.Set("Content-Type", "text/plain")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s %.300s", method, path, resp.Status, b)
	}
	return nil
}

func get(path string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, *base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+*token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s %.300s", path, resp.Status, b)
	}
	return b, err
}

func getJSON(path string, v any) error {
	b, err := get(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// restLoad runs restC clients against path for restD; returns requests/s and the p99 in ms.
func restLoad(path string) (float64, float64) {
	if _, err := get(path); err != nil {
		must(err)
	}
	var mu sync.Mutex
	var all []time.Duration
	var firstErr atomic.Value
	var wg sync.WaitGroup
	t0 := time.Now()
	end := t0.Add(*restD)
	for range *restC {
		wg.Go(func() {
			var lat []time.Duration
			for time.Now().Before(end) && firstErr.Load() == nil {
				t := time.Now()
				if _, err := get(path); err != nil {
					firstErr.Store(err)
					break
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	wall := time.Since(t0)
	if err, _ := firstErr.Load().(error); err != nil {
		must(err)
	}
	slices.Sort(all)
	return float64(len(all)) / wall.Seconds(), ms(all[len(all)*99/100])
}

// documents returns /metrics' atrium_search_documents (NaN while the indexer is at work).
func documents() (float64, error) {
	resp, err := client.Get(*base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "atrium_search_documents "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) {
				return 0, fmt.Errorf("atrium_search_documents %q", v)
			}
			return f, nil
		}
	}
	return 0, errors.New("metrics: no atrium_search_documents")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgcompare:", err)
		os.Exit(1)
	}
}
