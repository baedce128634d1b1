// Command readyz measures how long `atrium serve` takes from process start to its
// first 200 from /readyz, and its resident memory once idle (bench/foundation.sh).
// Each run starts the binary on the data directory and a free loopback port,
// polls /readyz every -interval, waits -idle, reads VmRSS from /proc/PID/status,
// then stops the server with SIGTERM. It prints one line per run:
//
//	run=1 ready_ms=123.4 rss_kb=23456
//
//	go run ./bench/readyz -bin bin/atrium -data /tmp/atrium-bench -runs 5
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/atrium", "atrium binary")
	data := flag.String("data", "", "data directory")
	runs := flag.Int("runs", 5, "number of starts")
	interval := flag.Duration("interval", 2*time.Millisecond, "poll interval")
	idle := flag.Duration("idle", 2*time.Second, "idle time before reading VmRSS")
	timeout := flag.Duration("timeout", 30*time.Second, "give up when not ready after this long")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "usage: readyz -bin BIN -data DIR [-runs N]")
		os.Exit(2)
	}
	for i := 1; i <= *runs; i++ {
		ms, rss, anon, err := once(*bin, *data, *interval, *idle, *timeout)
		if err != nil {
			fmt.Fprintf(os.Stderr, "readyz: run %d: %v\n", i, err)
			os.Exit(1)
		}
		fmt.Printf("run=%d ready_ms=%.1f rss_kb=%d rss_anon_kb=%d\n", i, ms, rss, anon)
	}
}

// once starts the server, returns milliseconds to the first ready answer and the
// idle VmRSS and RssAnon in KiB, and stops it.
func once(bin, data string, interval, idle, timeout time.Duration) (ms float64, rss, anon int64, err error) {
	addr, err := freeAddr()
	if err != nil {
		return 0, 0, 0, err
	}
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
	}
	url := "http://" + addr + "/readyz"
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", addr)
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return nil
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return errors.New("server did not stop on SIGTERM")
		}
	}

	var ready time.Duration
	for {
		res, err := client.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				ready = time.Since(start)
				break
			}
		}
		select {
		case err := <-exited:
			return 0, 0, 0, fmt.Errorf("server exited before ready (%v): %s", err, stderr.String())
		default:
		}
		if time.Since(start) > timeout {
			stop()
			return 0, 0, 0, fmt.Errorf("not ready after %s: %s", timeout, stderr.String())
		}
		time.Sleep(interval)
	}

	time.Sleep(idle)
	rss, err = statusKB(cmd.Process.Pid, "VmRSS")
	if err == nil {
		// Anonymous memory (heap, stacks, SQLite's cache) apart from the
		// file-backed pages of the mapped binary, which the kernel may drop.
		anon, err = statusKB(cmd.Process.Pid, "RssAnon")
	}
	if serr := stop(); err == nil {
		err = serr
	}
	return float64(ready.Microseconds()) / 1000, rss, anon, err
}

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// statusKB reads a KiB figure (VmRSS, RssAnon) of process pid from /proc/PID/status.
func statusKB(pid int, key string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in /proc status", key)
}
