// Command memburst measures a server's resident set through a burst of small
// files and the search indexing after it, for bench/memory-burst.sh (issue 47):
//
//	memburst put -pid PID -base URL -dav URL -folder F -n N     N small text files PUT into F
//	memburst copy -pid PID -base URL -dav URL -from F -to G -add N   COPY Depth infinity of F to G
//	memburst exec -- CMD ARGS...                                 the peak RSS of a command
//
// put and copy sample /proc/PID/status every -every (VmRSS, and VmHWM, the
// kernel's own high-water mark, which no sample can miss) from before the
// burst until the search index has taken in every new item (the server's
// /metrics: atrium_search_documents, NaN while the indexer is at work) and at
// least -after since the burst ended. They print the burst's time, when the
// index caught up and at what rate, and the peak RSS. The files are text
// (-size bytes of words), so each one's content is extracted and indexed, as
// a folder of notes or source code would be. exec runs a command and prints
// its peak RSS from the kernel's account (getrusage's ru_maxrss).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "put", "copy":
		err = burst(os.Args[1], os.Args[2:])
	case "exec":
		err = run(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "memburst:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: memburst put|copy [flags] | memburst exec -- CMD ARGS...")
	os.Exit(2)
}

// server is the server under measurement.
type server struct {
	pid     int
	metrics string // its /metrics URL
	dav     *url.URL
	user    string
	pass    string
	client  *http.Client
	// heapInuse and goSys are the largest Go heap in use and Go runtime
	// memory (of the OS) /metrics showed, bytes.
	heapInuse, goSys float64
	// goHeld is the largest Go runtime memory not returned to the OS
	// (sys less the heap's released pages), bytes: at most what of the
	// process's own memory is Go's.
	goHeld float64
}

func burst(mode string, args []string) error {
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	pid := fs.Int("pid", 0, "the server's process id")
	base := fs.String("base", "", "the server's base URL (for /metrics)")
	dav := fs.String("dav", "", "the WebDAV root URL, credentials in its user info")
	folder := fs.String("folder", "burst", "put: the folder the files go into (created)")
	n := fs.Int("n", 10000, "put: files")
	size := fs.Int("size", 1024, "put: bytes per file")
	c := fs.Int("c", 4, "put: parallel clients (keep-alive)")
	from := fs.String("from", "", "copy: the folder copied")
	to := fs.String("to", "", "copy: the copy's path")
	add := fs.Int("add", 0, "copy: the items the copy adds (the folder and everything in it)")
	every := fs.Duration("every", 100*time.Millisecond, "RSS sampling interval")
	after := fs.Duration("after", 30*time.Second, "least sampling after the burst ends")
	limit := fs.Duration("timeout", 15*time.Minute, "longest wait for the index to catch up")
	fs.Parse(args)
	u, err := url.Parse(*dav)
	if err != nil || *pid == 0 || *base == "" || u.Host == "" {
		return errors.New("-pid, -base and -dav are required")
	}
	s := &server{pid: *pid, metrics: strings.TrimSuffix(*base, "/") + "/metrics", dav: u,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *c * 2, MaxConnsPerHost: *c * 2, DisableCompression: true}}}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		u.User = nil
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	docs0, err := s.settledDocuments(time.Minute)
	if err != nil {
		return err
	}
	want := docs0 + float64(*add)
	if mode == "put" {
		want = docs0 + float64(*n) + 1 // the files and their folder
	}

	smp := startSampler(*pid, *every)
	t0 := time.Now()
	w := s.watch(docs0, want, *every)
	var what string
	switch mode {
	case "put":
		if err := s.do("MKCOL", *folder+"/", nil, nil, http.StatusCreated); err != nil {
			return err
		}
		if err := s.put(*folder, *n, *size, *c); err != nil {
			return err
		}
		what = fmt.Sprintf("%d PUTs of %d B, %d parallel", *n, *size, *c)
	case "copy":
		if *from == "" || *to == "" || *add <= 0 {
			return errors.New("copy needs -from, -to and -add")
		}
		dst := s.dav.JoinPath(*to)
		if err := s.do("COPY", *from+"/", nil, map[string]string{"Depth": "infinity", "Overwrite": "F", "Destination": dst.String() + "/"}, http.StatusCreated); err != nil {
			return err
		}
		what = fmt.Sprintf("COPY Depth infinity of a folder of %d items", *add-1)
	}
	t1 := time.Now()
	burstPeak := smp.peak()
	// Until the index holds every new item, and at least -after past the burst.
	select {
	case <-w.done:
	case <-time.After(*limit):
		return fmt.Errorf("the index did not take in %v documents in %s", want, *limit)
	}
	if w.err != nil {
		return w.err
	}
	time.Sleep(time.Until(t1.Add(*after)))
	firstBusy, caughtUp := w.firstBusy, w.caughtUp
	rss := smp.stop()
	added := want - docs0
	fmt.Printf("burst: %s: %.2f s (%.0f items/s)\n", what, t1.Sub(t0).Seconds(), added/t1.Sub(t0).Seconds())
	busy := caughtUp.Sub(firstBusy)
	fmt.Printf("index: caught up %.1f s after the burst began (%.1f s after it ended); %.0f items in %.1f s of indexing: %.0f items/s\n",
		caughtUp.Sub(t0).Seconds(), max(0, caughtUp.Sub(t1).Seconds()), added, busy.Seconds(), added/max(busy.Seconds(), 0.1))
	fmt.Printf("rss: peak %.1f MiB (high-water mark; %.1f MiB during the burst itself), %.1f MiB at the end (%.0f s after the burst); sampled peaks: own memory (RssAnon) %.1f MiB, mapped files (RssFile) %.1f MiB\n",
		mib(smp.hwm), mib(burstPeak), mib(rss), time.Since(t1).Seconds(), mib(smp.anon), mib(smp.file))
	fmt.Printf("smaps: read after the largest sample (%.1f MiB), %s\n", mib(smp.splitAtRSS), smp.split)
	fmt.Printf("go: peak heap in use %.1f MiB, peak runtime memory %.1f MiB, of it not released to the OS %.1f MiB (/metrics, sampled)\n", s.heapInuse/(1<<20), s.goSys/(1<<20), s.goHeld/(1<<20))
	return nil
}

// put PUTs n text files of size bytes into folder, c at a time.
func (s *server) put(folder string, n, size, c int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for w := range c {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 47))
			var buf bytes.Buffer
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				words(&buf, rng, size, i)
				if err := s.do(http.MethodPut, fmt.Sprintf("%s/note-%06d.txt", folder, i), buf.Bytes(), nil, http.StatusCreated); err != nil {
					first.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

// words fills buf with size bytes of text: words of a synthetic vocabulary of
// 50,000, the frequent ones more often (about as in prose), and one word of
// the file's own (its number), so that every file is found by it.
func words(buf *bytes.Buffer, rng *rand.Rand, size, i int) {
	buf.Reset()
	fmt.Fprintf(buf, "note%d ", i)
	for buf.Len() < size {
		// An exponential rank: rank r about e^(-r/5000).
		r := int(rng.ExpFloat64()*5000) % 50000
		buf.WriteString(word(r))
		buf.WriteByte(' ')
	}
	buf.Truncate(size)
}

// word is the r-th word of the vocabulary: syllables spelling r.
func word(r int) string {
	syl := [...]string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "su", "do", "fa", "gi", "ho", "ju", "be"}
	var b strings.Builder
	for {
		b.WriteString(syl[r%16])
		r /= 16
		if r == 0 {
			return b.String()
		}
	}
}

func (s *server) do(method, path string, body []byte, header map[string]string, want int) error {
	u := s.dav.JoinPath(path)
	if strings.HasSuffix(path, "/") {
		u.Path += "/"
	}
	req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth(s.user, s.pass)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u.Path, err)
	}
	if resp.StatusCode != want && !(want == http.StatusCreated && resp.StatusCode == http.StatusNoContent) {
		return fmt.Errorf("%s %s: %s: %.200s", method, u.Path, resp.Status, b)
	}
	return nil
}

// watcher follows the index's documents until they reach want.
type watcher struct {
	done                chan struct{}
	firstBusy, caughtUp time.Time // the indexer first seen at work (or done); every item in
	err                 error
}

// watch polls the index's documents every interval from now on.
func (s *server) watch(docs0, want float64, every time.Duration) *watcher {
	w := &watcher{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			v, err := s.documents()
			if err != nil {
				w.err = err
				return
			}
			now := time.Now()
			if w.firstBusy.IsZero() && (math.IsNaN(v) || v > docs0) {
				w.firstBusy = now
			}
			if v >= want {
				w.caughtUp = now
				return
			}
			time.Sleep(every)
		}
	}()
	return w
}

// documents returns atrium_search_documents (NaN while the indexer is at work)
// and keeps the largest Go heap in use and Go runtime memory seen.
func (s *server) documents() (float64, error) {
	resp, err := s.client.Get(s.metrics)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("metrics: %s %v", resp.Status, err)
	}
	docs := math.Inf(-1)
	var sys, released float64
	for line := range strings.SplitSeq(string(b), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch name {
		case "atrium_search_documents":
			docs = f
		case "go_memstats_heap_inuse_bytes":
			s.heapInuse = max(s.heapInuse, f)
		case "go_memstats_sys_bytes":
			s.goSys = max(s.goSys, f)
			sys = f
		case "go_memstats_heap_released_bytes":
			released = f
		}
	}
	s.goHeld = max(s.goHeld, sys-released)
	if math.IsInf(docs, -1) {
		return 0, errors.New("metrics: no atrium_search_documents")
	}
	return docs, nil
}

// settledDocuments returns the index's documents once it answers with a
// number twice in a row, 200 ms apart.
func (s *server) settledDocuments(limit time.Duration) (float64, error) {
	deadline := time.Now().Add(limit)
	prev := math.NaN()
	for time.Now().Before(deadline) {
		v, err := s.documents()
		if err != nil {
			return 0, err
		}
		if !math.IsNaN(v) && v == prev {
			return v, nil
		}
		prev = v
		time.Sleep(200 * time.Millisecond)
	}
	return 0, fmt.Errorf("the search index did not settle in %s", limit)
}

// sampler reads a process's VmRSS and VmHWM every interval.
type sampler struct {
	mu   sync.Mutex
	max  int64 // the largest VmRSS sampled, KiB
	anon int64 // the largest RssAnon sampled (the process's own memory), KiB
	file int64 // the largest RssFile sampled (mapped files: the binary, the index's segments), KiB
	hwm  int64 // the last VmHWM read, KiB
	last int64 // the last VmRSS read, KiB
	// split is what /proc/PID/smaps showed at the largest VmRSS sampled
	// (read again whenever a sample tops the last read by a MiB or more).
	split      smapsSplit
	splitAtRSS int64
	smaps      string
	done       chan struct{}
	stopped    chan struct{}
}

func startSampler(pid int, every time.Duration) *sampler {
	s := &sampler{done: make(chan struct{}), stopped: make(chan struct{})}
	path := fmt.Sprintf("/proc/%d/status", pid)
	s.smaps = fmt.Sprintf("/proc/%d/smaps", pid)
	read := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				s.last = kib(v)
				s.max = max(s.max, s.last)
				if s.last >= s.splitAtRSS+1024 {
					if sp, err := readSmaps(s.smaps); err == nil {
						s.split, s.splitAtRSS = sp, s.last
					}
				}
			} else if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				s.hwm = kib(v)
			} else if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
				s.anon = max(s.anon, kib(v))
			} else if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
				s.file = max(s.file, kib(v))
			}
		}
	}
	read()
	go func() {
		defer close(s.stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return s
}

// smapsSplit is a process's resident memory by what it maps, KiB.
type smapsSplit struct {
	anon     int64 // anonymous: the Go heap and runtime, whatever else the process allocated
	binary   int64 // the executable's pages
	segments int64 // the search index's files (under a directory named index or index.new)
	nSegs    int   // how many of those files are mapped
	other    int64 // other mapped files
}

func (sp smapsSplit) String() string {
	return fmt.Sprintf("%.1f MiB in all: %.1f MiB own (anonymous), %.1f MiB the binary, %.1f MiB the search index's %d mapped files, %.1f MiB other files",
		mib(sp.anon+sp.binary+sp.segments+sp.other), mib(sp.anon), mib(sp.binary), mib(sp.segments), sp.nSegs, mib(sp.other))
}

// readSmaps sums the resident memory of each mapping of a process's smaps
// file by what it maps.
func readSmaps(path string) (smapsSplit, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return smapsSplit{}, err
	}
	exe, _ := os.Readlink(strings.TrimSuffix(path, "smaps") + "exe")
	var sp smapsSplit
	var file string
	var into *int64
	segs := map[string]bool{}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			// A mapping's header: start-end perms offset dev inode [path].
			file = ""
			if len(f) >= 6 {
				file = f[5]
			}
			switch {
			case !strings.HasPrefix(file, "/"):
				into = &sp.anon
			case file == exe:
				into = &sp.binary
			case strings.Contains(file, "/index/") || strings.Contains(file, "/index.new/"):
				into = &sp.segments
			default:
				into = &sp.other
			}
			continue
		}
		if len(f) >= 2 && f[0] == "Rss:" && into != nil {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			*into += v
			if into == &sp.segments && v > 0 {
				segs[file] = true
			}
		}
	}
	sp.nSegs = len(segs)
	return sp, nil
}

// peak returns the largest VmRSS sampled so far, KiB.
func (s *sampler) peak() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// stop ends the sampling and returns the last VmRSS, KiB.
func (s *sampler) stop() int64 {
	close(s.done)
	<-s.stopped
	return s.last
}

func kib(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return n
}

func mib(k int64) float64 { return float64(k) / 1024 }

// run runs a command and prints its wall time and peak RSS.
func run(args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		usage()
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	smp := startSampler(cmd.Process.Pid, 100*time.Millisecond)
	err := cmd.Wait()
	smp.stop()
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return errors.New("no resource usage on this system")
	}
	fmt.Printf("exec: %.2f s; peak RSS %.1f MiB\n", time.Since(t0).Seconds(), mib(ru.Maxrss))
	fmt.Printf("rss: sampled peaks: own memory (RssAnon) %.1f MiB, mapped files (RssFile) %.1f MiB\n", mib(smp.anon), mib(smp.file))
	fmt.Printf("smaps: read after the largest sample (%.1f MiB), %s\n", mib(smp.splitAtRSS), smp.split)
	return nil
}
