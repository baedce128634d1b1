// Command smallfiles times the many-small-files workload against WebDAV
// servers, for bench/smallfiles.sh (issue 21): -n files of -size bytes PUT
// into one fresh folder by -c clients in parallel (keep-alive connections, as
// a sync client or rclone does), then PROPFIND Depth 1 of that folder, -runs
// times. Each server is given as NAME=URL (the folder URL's parent,
// credentials in the URL's user info); the servers take turns, run by run, so
// that the machine's noise falls on each alike.
//
// Each run starts once the machine is quiet (its CPUs under 15% busy, at most
// -quiet), so that no server's background work after its run (Atrium's search
// index takes in a burst of new files once it is over) falls on the next one.
//
// It prints, per server and run, the wall time of the PUTs, files per second
// and the PUT latency p50/p99, then the PROPFIND time once the server has
// settled (-settle, and the machine quiet again) and the one right after the
// PUTs; and, at the end, per server the median of the runs and its ratio to
// the first server's.
//
//	smallfiles -n 10000 -size 1024 -c 4 -runs 3 atrium=http://u:p@127.0.0.1:8080/dav/ rclone=http://127.0.0.1:8081/
package main

import (
	"bytes"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type server struct {
	name string
	base *url.URL
	user string
	pass string
	puts []time.Duration // wall time of each run's PUTs
	p99  []time.Duration
	find []time.Duration // PROPFIND Depth 1 of the run's folder, settled
	// first are the PROPFINDs right after the PUTs.
	first []time.Duration
}

func main() {
	n := flag.Int("n", 10000, "files per run")
	size := flag.Int("size", 1024, "bytes per file")
	c := flag.Int("c", 4, "parallel clients")
	runs := flag.Int("runs", 3, "runs per server")
	propfinds := flag.Int("propfinds", 3, "PROPFINDs per run (the median counts)")
	settle := flag.Duration("settle", 5*time.Second, "least pause between the PUTs and the PROPFINDs that count, the same for every server, which then wait for a quiet machine too (Atrium's search index takes in new files in the background); one PROPFIND right after the PUTs is shown too")
	quiet := flag.Duration("quiet", 30*time.Second, "longest wait for a quiet machine before a run and before the PROPFINDs that count")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: smallfiles [flags] NAME=URL ...")
		os.Exit(2)
	}
	var servers []*server
	for _, a := range flag.Args() {
		name, raw, ok := strings.Cut(a, "=")
		u, err := url.Parse(raw)
		if !ok || err != nil || u.Host == "" {
			fmt.Fprintf(os.Stderr, "smallfiles: %q is not NAME=URL\n", a)
			os.Exit(2)
		}
		s := &server{name: name, base: u}
		if u.User != nil {
			s.user = u.User.Username()
			s.pass, _ = u.User.Password()
			u.User = nil
		}
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
		}
		servers = append(servers, s)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *c * 2, MaxConnsPerHost: *c * 2, DisableCompression: true}}
	content := make([]byte, *n**size)
	rand.Read(content)

	stamp := time.Now().UnixNano()
	for run := 1; run <= *runs; run++ {
		for _, s := range servers {
			waitQuiet(*quiet)
			folder := fmt.Sprintf("small-%d-%d/", stamp, run)
			if err := s.do(client, "MKCOL", folder, nil, nil, http.StatusCreated); err != nil {
				fail(s, err)
			}
			var next atomic.Int64
			lat := make([]time.Duration, *n)
			var wg sync.WaitGroup
			var firstErr atomic.Value
			t0 := time.Now()
			for range *c {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= *n || firstErr.Load() != nil {
							return
						}
						body := content[i**size : (i+1)**size]
						t := time.Now()
						if err := s.do(client, http.MethodPut, fmt.Sprintf("%sf%05d.bin", folder, i), body, nil, http.StatusCreated); err != nil {
							firstErr.Store(err)
							return
						}
						lat[i] = time.Since(t)
					}
				}()
			}
			wg.Wait()
			wall := time.Since(t0)
			if err, _ := firstErr.Load().(error); err != nil {
				fail(s, err)
			}
			slices.Sort(lat)
			p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
			var finds []time.Duration
			propfind := func() time.Duration {
				t := time.Now()
				var got int
				if err := s.do(client, "PROPFIND", folder, []byte(`<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`),
					func(b []byte) { got = bytes.Count(b, []byte("<D:response")) + bytes.Count(b, []byte("<d:response")) }, http.StatusMultiStatus); err != nil {
					fail(s, err)
				}
				d := time.Since(t)
				if got != *n+1 {
					fail(s, fmt.Errorf("PROPFIND listed %d responses, want %d", got, *n+1))
				}
				return d
			}
			first := propfind()
			time.Sleep(*settle)
			waitQuiet(*quiet)
			for range *propfinds {
				finds = append(finds, propfind())
			}
			slices.Sort(finds)
			s.puts = append(s.puts, wall)
			s.p99 = append(s.p99, p99)
			s.find = append(s.find, finds[len(finds)/2])
			s.first = append(s.first, first)
			fmt.Printf("run %d %-8s %d PUTs of %d B, %d parallel: %7.2f s  %7.0f files/s  p50 %6.2f ms  p99 %6.2f ms   PROPFIND depth 1: %7.1f ms (right after the PUTs %7.1f ms)\n",
				run, s.name, *n, *size, *c, wall.Seconds(), float64(*n)/wall.Seconds(), ms(p50), ms(p99), ms(finds[len(finds)/2]), ms(first))
		}
	}
	fmt.Println()
	ref := servers[0]
	for _, s := range servers {
		put, find := median(s.puts), median(s.find)
		fmt.Printf("median %-8s PUTs %7.2f s (%.2fx %s)  p99 %6.2f ms   PROPFIND %7.1f ms (%.2fx %s)  right-after %7.1f ms\n",
			s.name, put.Seconds(), put.Seconds()/median(ref.puts).Seconds(), ref.name, ms(median(s.p99)),
			ms(find), ms(find)/ms(median(ref.find)), ref.name, ms(median(s.first)))
	}
}

// do sends one request to the server and checks its status; read, when set,
// gets the response body.
func (s *server) do(c *http.Client, method, path string, body []byte, read func([]byte), want int) error {
	u := s.base.JoinPath(path)
	if strings.HasSuffix(path, "/") {
		u.Path += "/"
	}
	req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	if s.user != "" {
		req.SetBasicAuth(s.user, s.pass)
	}
	if method == "PROPFIND" {
		req.Header.Set("Depth", "1")
		req.Header.Set("Content-Type", "application/xml")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want && !(want == http.StatusCreated && resp.StatusCode == http.StatusNoContent) {
		return fmt.Errorf("%s %s: %s: %.200s", method, u.Path, resp.Status, b)
	}
	if read != nil {
		read(b)
	}
	return nil
}

func fail(s *server, err error) {
	fmt.Fprintf(os.Stderr, "smallfiles: %s: %v\n", s.name, err)
	os.Exit(1)
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// waitQuiet returns once the machine's CPUs were under 15% busy in five
// half-seconds in a row, or after max (saying so on stderr): Atrium's search
// indexer takes in a burst of writes at its next tick (drive.index_interval,
// 2 s by default), up to that long after the burst, so one quiet half-second
// before that tick is not enough. Linux only (/proc/stat); elsewhere it
// returns at once.
func waitQuiet(max time.Duration) {
	deadline := time.Now().Add(max)
	quiet := 0
	for {
		b0, i0, ok := cpuTimes()
		if !ok {
			return
		}
		time.Sleep(500 * time.Millisecond)
		b1, i1, _ := cpuTimes()
		if busy, idle := b1-b0, i1-i0; busy+idle > 0 && float64(busy) < 0.15*float64(busy+idle) {
			if quiet++; quiet >= 5 {
				return
			}
		} else {
			quiet = 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "smallfiles: the machine was still busy after %s\n", max)
			return
		}
	}
}

// cpuTimes returns the busy and idle ticks of all CPUs (/proc/stat's cpu line).
func cpuTimes() (busy, idle uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i == 3 || i == 4 {
			idle += n
		} else {
			busy += n
		}
	}
	return busy, idle, true
}
