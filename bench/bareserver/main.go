// Command bareserver is the bare net/http server bench/requestpath.sh measures
// Atrium's REST path against: it answers every GET with the same bytes and
// headers Atrium gave (-body, -type), nothing else — no routing, logging or
// authentication. With -cpu it also spends that much CPU on every request
// (SHA-256 rounds, counted at start), so the benchmark can show what a bare
// server with Atrium's CPU per request does to throughput and latency.
//
//	bareserver -listen 127.0.0.1:8081 -body me.json -type application/json [-cpu 20us]
package main

import (
	"crypto/sha256"
	"flag"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8081", "address")
	bodyFile := flag.String("body", "", "file whose bytes every response carries")
	ctype := flag.String("type", "application/json", "Content-Type")
	cpu := flag.Duration("cpu", 0, "CPU to spend on every request besides answering it")
	flag.Parse()
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	rounds := 0
	if *cpu > 0 {
		rounds = max(1, int(float64(*cpu)/float64(roundTime())))
	}
	size := strconv.Itoa(len(body))
	log.Fatal(http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rounds > 0 {
			spend(rounds)
		}
		h := w.Header()
		h.Set("Content-Type", *ctype)
		h.Set("Content-Length", size)
		w.Write(body)
	})))
}

// spend hashes a block n times, each hash over the last.
func spend(n int) [32]byte {
	var sum [32]byte
	for range n {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

// roundTime is the time of one round of spend: the fastest of several
// trials, which is its CPU time when the trial was not preempted.
func roundTime() time.Duration {
	const n = 20000
	best := time.Duration(1 << 62)
	for range 15 {
		start := time.Now()
		spend(n)
		best = min(best, time.Since(start))
	}
	return best / n
}
