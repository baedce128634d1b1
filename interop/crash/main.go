// Command crash is the workload driver and verifier of the interop crash test
// (interop/suites/90-crash.sh): it writes to a running Atrium through every
// door (presigned and TUS uploads, WebDAV PUT, contacts, events), journals
// every write it tries and every write the server acknowledges, and after the
// server was killed and restarted checks that every acknowledged write is
// there, whole, and that nothing is half-applied.
//
// Subcommands (configuration from the environment, see config):
//
//	crash setup       create the webhook subscription and the WebDAV folder
//	crash work        run the workload until SIGTERM or the server goes away
//	crash verify      check the journal against the running server (and resume TUS uploads)
//	crash integrity   check the database and blobs of a stopped server (-data DIR)
//	crash hooks       start the webhook receiver and check every event arrives
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

type config struct {
	URL, Token, Email, AppPassword string
	Dir                            string // journal and results
	Round                          int
	Seed                           uint64
	HookPort                       string
}

var cfg config

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "crash: "+format+"\n", a...)
	os.Exit(2)
}

func loadConfig() {
	cfg = config{
		URL: strings.TrimRight(os.Getenv("CRASH_URL"), "/"), Token: os.Getenv("CRASH_TOKEN"),
		Email: os.Getenv("CRASH_EMAIL"), AppPassword: os.Getenv("CRASH_APP_PASSWORD"),
		Dir: os.Getenv("CRASH_DIR"), HookPort: os.Getenv("CRASH_HOOK_PORT"),
	}
	cfg.Round, _ = strconv.Atoi(os.Getenv("CRASH_ROUND"))
	cfg.Seed, _ = strconv.ParseUint(os.Getenv("CRASH_SEED"), 10, 64)
	if cfg.Dir == "" {
		fatalf("CRASH_DIR is not set")
	}
	for _, d := range []string{"fail", "count"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o700); err != nil {
			fatalf("%v", err)
		}
	}
}

func journalPath() string { return filepath.Join(cfg.Dir, "journal.jsonl") }

var resMu sync.Mutex

// fail records a violated property; the suite prints these files.
func fail(prop, format string, a ...any) {
	resMu.Lock()
	defer resMu.Unlock()
	f, err := os.OpenFile(filepath.Join(cfg.Dir, "fail", prop), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fatalf("%v", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "round %d: %s\n", cfg.Round, fmt.Sprintf(format, a...))
}

// counted adds n to the number of checks of prop.
func counted(prop string, n int) {
	resMu.Lock()
	defer resMu.Unlock()
	p := filepath.Join(cfg.Dir, "count", prop)
	b, _ := os.ReadFile(p)
	old, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := os.WriteFile(p, []byte(strconv.Itoa(old+n)+"\n"), 0o600); err != nil {
		fatalf("%v", err)
	}
}

var client = &http.Client{Timeout: 60 * time.Second}

// call sends a request; body may be nil, []byte, io.Reader or a value to encode as JSON.
type call struct {
	Method, Path string
	Body         any
	Header       map[string]string
	Basic        bool // WebDAV: e-mail and app password instead of the bearer token
	Raw          bool // Path is an absolute URL needing no credential
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) decode(v any) error {
	if err := json.Unmarshal(r.Body, v); err != nil {
		return fmt.Errorf("decode %d %.200s: %w", r.Status, r.Body, err)
	}
	return nil
}

func (r resp) ok() bool { return r.Status >= 200 && r.Status < 300 }

func (r resp) String() string { return fmt.Sprintf("%d %.300s", r.Status, r.Body) }

func do(ctx context.Context, c call) (resp, error) {
	var body io.Reader
	ctype := ""
	switch b := c.Body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case io.Reader:
		body = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return resp{}, err
		}
		body, ctype = bytes.NewReader(j), "application/json"
	}
	u := c.Path
	if !c.Raw {
		u = cfg.URL + c.Path
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, u, body)
	if err != nil {
		return resp{}, err
	}
	if b, ok := c.Body.([]byte); ok {
		req.ContentLength = int64(len(b))
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	switch {
	case c.Raw:
	case c.Basic:
		req.SetBasicAuth(cfg.Email, cfg.AppPassword)
	default:
		req.Header.Set("Authorization", "Bearer "+cfg.Token)
	}
	for k, v := range c.Header {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{}, err
	}
	return resp{Status: res.StatusCode, Header: res.Header, Body: b}, nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func printString(parts ...string) string { return sum([]byte(strings.Join(parts, "\x1f"))) }

// defaultBook and defaultCalendar find the user's default address book and calendar.
func defaultBook(ctx context.Context) (string, error) {
	r, err := do(ctx, call{Method: "GET", Path: "/api/v1/contacts/books"})
	if err != nil || !r.ok() {
		return "", fmt.Errorf("list books: %v %v", r, err)
	}
	var books []struct {
		ID        string `json:"id"`
		IsDefault bool   `json:"is_default"`
	}
	if err := r.decode(&books); err != nil {
		return "", err
	}
	for _, b := range books {
		if b.IsDefault {
			return b.ID, nil
		}
	}
	return "", errors.New("no default address book")
}

func defaultCalendar(ctx context.Context) (string, error) {
	r, err := do(ctx, call{Method: "GET", Path: "/api/v1/calendar/calendars"})
	if err != nil || !r.ok() {
		return "", fmt.Errorf("list calendars: %v %v", r, err)
	}
	var cals []struct {
		ID        string `json:"id"`
		IsDefault bool   `json:"is_default"`
	}
	if err := r.decode(&cals); err != nil {
		return "", err
	}
	for _, c := range cals {
		if c.IsDefault {
			return c.ID, nil
		}
	}
	return "", errors.New("no default calendar")
}

func main() {
	if len(os.Args) < 2 {
		fatalf("usage: crash setup|work|verify|integrity|hooks")
	}
	loadConfig()
	ctx := context.Background()
	var err error
	switch os.Args[1] {
	case "setup":
		err = setup(ctx)
	case "work":
		err = work(ctx)
	case "verify":
		err = verify(ctx, len(os.Args) > 2 && os.Args[2] == "-full")
	case "integrity":
		if len(os.Args) < 4 || os.Args[2] != "-data" {
			fatalf("usage: crash integrity -data DIR")
		}
		err = integrity(os.Args[3])
	case "hooks":
		err = hooks(ctx)
	default:
		fatalf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fatalf("%s: %v", os.Args[1], err)
	}
}
