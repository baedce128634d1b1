package web

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Fair turns between connections.
//
// A keep-alive connection whose next request is already waiting when its
// response goes out never parks: net/http reads the request at once, and the
// goroutine it wakes around each response (its background read) hands the
// processor straight back. The Go scheduler then lets that one connection keep
// a processor for its whole time slice (10 ms) while the runnable goroutines of
// other connections wait; under load the waits add up to tens of milliseconds
// (a runtime trace of 64 busy connections on two cores: 1% of goroutines
// waited over 19 ms to run, the longest 56 ms, while a request takes 40 us).
// So a request that arrives within backToBack of the end of its connection's
// previous one, which itself took less than backToBack, first yields, and is
// served in its turn behind the goroutines already waiting. A connection that
// waited for its request (it parked, and was queued when the request came)
// does not yield, nor one whose last request took longer: it waited for
// something (a write's commit, the disk) and gave the processor away then.
// Yielding there too only queued small uploads behind the search indexer's
// batches (30,000 WebDAV PUTs: p99 15-24 ms against 5-19 ms before turns and
// 4-5 ms with this rule).
const backToBack = 200 * time.Microsecond

// connRecord is one connection's record, for fairTurns and ioDeadlines.
type connRecord struct {
	last atomic.Int64 // when its last request ended (turnClock); 0 before the first
	took atomic.Int64 // how long its last request took (turnClock's unit)

	// writeSet is when ioDeadlines last set the connection's write deadline
	// (to writeSet plus the idle timeout); zero before. Only HTTP/1 requests
	// use it, one at a time.
	writeSet time.Time
}

type connRecordKey struct{}

// ConnContext is the http.Server's ConnContext: it gives each connection the
// record fair turns and the I/O deadlines keep. A server without it serves
// every request without yielding, and sets every request's write deadline.
func (s *Server) ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connRecordKey{}, new(connRecord))
}

// connRecordOf is the record of r's connection, or nil.
func connRecordOf(r *http.Request) *connRecord {
	rec, _ := r.Context().Value(connRecordKey{}).(*connRecord)
	return rec
}

// turnEpoch is where turnClock counts from.
var turnEpoch = time.Now()

// turnClock is the monotonic time in nanoseconds since turnEpoch (never 0 once
// a request has been served).
func turnClock() int64 { return int64(time.Since(turnEpoch)) + 1 }

// fairTurns serves each request through next, first calling yield when it
// arrived within window of the end of its connection's previous request and
// that request took less than window.
func fairTurns(window time.Duration, yield func(), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := connRecordOf(r)
		if t == nil {
			next.ServeHTTP(w, r)
			return
		}
		start := turnClock()
		if last := t.last.Load(); last != 0 && start-last < int64(window) && t.took.Load() < int64(window) {
			yield()
			start = turnClock() // its own time, not its wait for a turn
		}
		next.ServeHTTP(w, r)
		end := turnClock()
		t.took.Store(end - start)
		t.last.Store(end)
	})
}
