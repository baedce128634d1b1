package web_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"atrium/webtest"
)

// uncalledOperations are the operations of the OpenAPI document that no test of
// this package calls, each with the reason. Keep it empty: a new operation
// gets a test that calls it, and its answers are then validated against the
// document (webtest's harness).
var uncalledOperations = map[string]string{}

// TestMain runs the package's tests and closes the server some of them share
// (webtest.Shared), then fails the run when an operation of the document was
// called by none of them (coverage of the document). It only checks when
// every test ran: not under -run, -skip, -short or -fuzz.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := webtest.CloseShared(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		code = 1
	}
	if wholeRun() && checkCoverage() != 0 && code == 0 {
		code = 1
	}
	os.Exit(code)
}

func wholeRun() bool {
	for _, name := range []string{"test.run", "test.skip", "test.fuzz"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}

func checkCoverage() int {
	var missing, stale []string
	uncalled := map[string]bool{}
	for _, op := range webtest.UncalledOperations() {
		id := op[strings.LastIndex(op, "(")+1 : len(op)-1]
		uncalled[id] = true
		if uncalledOperations[id] == "" {
			missing = append(missing, op)
		}
	}
	for id := range uncalledOperations {
		if !uncalled[id] {
			stale = append(stale, id)
		}
	}
	if len(missing) == 0 && len(stale) == 0 {
		if testing.Verbose() {
			fmt.Printf("OpenAPI coverage: tests called %d of the document's %d operations\n", len(webtest.Operations())-len(uncalled), len(webtest.Operations()))
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "FAIL: OpenAPI coverage: %d operations of the document no test calls:\n  %s\n", len(missing), strings.Join(missing, "\n  "))
	if len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "operations listed in uncalledOperations that tests call now (remove them): %v\n", stale)
	}
	return 1
}
