package webtest

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The shared server serves the tests of a package that only read from it
// (the documents, the static pages, the probes) or keep to an organisation
// of their own, which no other test sees: one boot for all of them instead of
// one each. Such a test must not move its clock, stop it or change what
// others read.
//
// It belongs to no test: the first test that asks for it starts it, and the
// package's TestMain closes it after m.Run (CloseShared). Each test reaches it
// through its own handle (Shared), whose requests name the test in a header:
// an answer the OpenAPI document does not describe fails the test that asked
// for it, and the test ends only once the server is done with its requests.

// testHeader names the test that sent a request to the shared server.
const testHeader = "Webtest-Test"

var shared struct {
	once  sync.Once
	s     *Server
	err   error
	dir   string
	drop  func() error // removes the shared server's database (newData)
	tests sync.Map     // testHeader value → *sharedTest
	next  int64        // under mu
	mu    sync.Mutex
	// unknown counts the answers not described by the document to
	// requests that named no test (a client of the test's own); CloseShared
	// reports them.
	unknown []string
}

// sharedTest is a test using the shared server, and its requests being
// served.
type sharedTest struct {
	t       testing.TB
	serving sync.WaitGroup
}

// Shared returns the test's handle on the package's shared server, started
// on first use with the default configuration.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "webtest-shared-")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = dir
		if shared.drop, err = newData(dir); err != nil {
			shared.err = err
			return
		}
		// Its log is no test's: warnings go to the standard error.
		shared.s, shared.err = start(dir, nil, os.Stderr, reportShared, serving)
	})
	if shared.err != nil {
		t.Fatalf("webtest: the shared server: %v", shared.err)
	}
	shared.mu.Lock()
	shared.next++
	key := strconv.FormatInt(shared.next, 10)
	shared.mu.Unlock()
	st := &sharedTest{t: t}
	shared.tests.Store(key, st)
	t.Cleanup(func() {
		st.serving.Wait()
		shared.tests.Delete(key)
	})
	s := *shared.s
	s.t, s.test = t, key
	return &s
}

// serving counts the requests being served for each test, so that its end
// waits for their checks.
func serving(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, ok := shared.tests.Load(r.Header.Get(testHeader)); ok {
			st := v.(*sharedTest)
			st.serving.Add(1)
			defer st.serving.Done()
		}
		next.ServeHTTP(w, r)
	})
}

// reportShared fails the test that sent r.
func reportShared(r *http.Request, msg string) {
	if v, ok := shared.tests.Load(r.Header.Get(testHeader)); ok {
		v.(*sharedTest).t.Error(msg)
		return
	}
	shared.mu.Lock()
	shared.unknown = append(shared.unknown, msg)
	shared.mu.Unlock()
}

// CloseShared stops the shared server, if a test started it, and removes its
// data directory; the package's TestMain calls it after m.Run. Its error
// lists the answers to requests of no test that the document does not
// describe: the run fails then.
func CloseShared() error {
	if shared.s != nil {
		shared.s.Server.Close()
		shared.s.Main.Close()
		shared.s.Main = nil
	}
	if shared.drop != nil {
		if err := shared.drop(); err != nil {
			return fmt.Errorf("webtest: drop the shared server's database: %w", err)
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if len(shared.unknown) > 0 {
		return fmt.Errorf("webtest: the shared server answered %d requests of no test as the OpenAPI document does not describe:\n%s",
			len(shared.unknown), strings.Join(shared.unknown, "\n"))
	}
	return nil
}
