// Package webtest starts a fully wired Atrium on a real SQLite file in a temporary
// directory behind a real HTTP server on loopback, and runs request scenarios
// against it. Tests only. The environment moves what it stores: with
// ATRIUM_TEST_DATABASE_URL set, the metadata goes to a PostgreSQL database of
// each test's own; with ATRIUM_TEST_S3_ENDPOINT set, the bytes go to a bucket
// of each test's own on that S3-compatible store.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"atrium/app"
	"atrium/storage/sqldb"
	"atrium/wire"
)

// Server is a running Atrium for a test.
type Server struct {
	*httptest.Server
	Main  *wire.Main
	Clock *Clock
	Data  string
	t     testing.TB
	// test, for a test's handle on the shared server, names the test in
	// its requests (testHeader).
	test  string
	conns *conns
}

// Clock is a settable clock; zero offset is the wall clock.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now returns the wall clock plus the offset.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset).UTC()
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

// Option changes the configuration of a test server.
type Option func(*wire.Config)

// New starts a server on a fresh data directory; it is closed when the test ends.
// Its database is a copy of the migrated template (sqldb.MigratedTemplate),
// made once per schema, rather than migrated anew.
//
// With ATRIUM_TEST_DATABASE_URL set, its database is instead a new database
// on that PostgreSQL server (a copy of a migrated template there), dropped
// when the test ends; its URL is kept in the data directory, so that Start
// on the directory opens it again. With ATRIUM_TEST_S3_ENDPOINT set, its
// bytes are in a new bucket on that store, removed when the test ends (its
// name is kept in the data directory too: Blob).
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	drop, err := newData(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return Start(t, dir, opts...)
}

// testDatabaseFile holds, in a test's data directory, the URL of its
// PostgreSQL database (New).
const testDatabaseFile = "test-database-url"

// testPublicURLFile, in a test data directory, holds the public URL of the
// last server started on it.
const testPublicURLFile = "test-public-url"

// newData puts a copy of the migrated template database into the data
// directory dir, or, with ATRIUM_TEST_DATABASE_URL set, makes a PostgreSQL
// database for it and writes its URL there; with ATRIUM_TEST_S3_ENDPOINT
// set, it also makes a bucket of its own on that store and writes its name
// there. drop removes the database and the bucket.
func newData(dir string) (drop func() error, err error) {
	dropDB, err := newDatabase(dir)
	if err != nil {
		return nil, err
	}
	if !wire.TestS3() {
		return dropDB, nil
	}
	bucket, dropBucket, err := wire.NewTestBucket(context.Background())
	if err != nil {
		dropDB()
		return nil, err
	}
	drop = func() error { return errors.Join(dropBucket(), dropDB()) }
	if err := os.WriteFile(filepath.Join(dir, testBucketFile), []byte(bucket), 0o600); err != nil {
		drop()
		return nil, err
	}
	return drop, nil
}

// testBucketFile holds, in a test's data directory, the name of its bucket
// on the store of ATRIUM_TEST_S3_ENDPOINT (New).
const testBucketFile = "test-s3-bucket"

func newDatabase(dir string) (drop func() error, err error) {
	if admin := sqldb.TestPostgresURL(); admin != "" {
		url, drop, err := sqldb.NewTestPostgres(context.Background(), admin)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, testDatabaseFile), []byte(url), 0o600); err != nil {
			drop()
			return nil, err
		}
		return drop, nil
	}
	template.once.Do(func() { template.path, template.err = sqldb.MigratedTemplate(context.Background()) })
	if template.err != nil {
		return nil, fmt.Errorf("migrated template database: %w", template.err)
	}
	return func() error { return nil }, sqldb.CopyDatabase(template.path, filepath.Join(dir, "atrium.db"))
}

// template is the migrated database New copies.
var template struct {
	once sync.Once
	path string
	err  error
}

// Start starts a server on the data directory dir (reopen an existing one to test
// restarts).
func Start(t testing.TB, dir string, opts ...Option) *Server {
	t.Helper()
	s, err := start(dir, nil, testWriter{t}, func(_ *http.Request, msg string) { report(t, msg) }, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	s.t = t
	t.Cleanup(s.Stop)
	return s
}

// start starts a server on dir that logs to logs and reports the answers the
// OpenAPI document does not describe to report; wrap, when set, wraps the
// handler.
//
// clock, when set, is the server's clock (a second node shares the first's);
// else it gets a clock of its own.
func start(dir string, clock *Clock, logs io.Writer, report func(*http.Request, string), wrap func(http.Handler) http.Handler, opts ...Option) (*Server, error) {
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	cfg, err := wire.LoadConfig("", func(string) string { return "" }, nil)
	if err != nil {
		return nil, err
	}
	cfg.Data = dir
	if url, err := os.ReadFile(filepath.Join(dir, testDatabaseFile)); err == nil {
		cfg.Database.URL = string(url)
	}
	cfg.Blob = Blob(dir)
	cfg.Listen = ts.Listener.Addr().String()
	cfg.PublicURL = "http://" + cfg.Listen
	for _, o := range opts {
		o(&cfg)
	}
	level := slog.LevelWarn
	if os.Getenv("ATRIUM_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level}))
	if clock == nil {
		clock = &Clock{}
	}
	m, err := wire.Open(context.Background(), cfg, log, wire.WithClock(clock.Now), wire.Serving())
	if err != nil {
		ts.Listener.Close()
		return nil, err
	}
	// The commands' configuration (ConfigTOML) names the public URL of the
	// last server started on dir (made by Open), as a node's configuration
	// does.
	if err := os.WriteFile(filepath.Join(dir, testPublicURLFile), []byte(cfg.PublicURL), 0o600); err != nil {
		m.Close()
		ts.Listener.Close()
		return nil, err
	}
	m.StartSearch(context.Background())
	_, routes, err := loadOpenAPI(func() ([]byte, error) { return json.Marshal(m.Server.OpenAPI()) }, m.Server.Routes())
	if err != nil {
		m.Close()
		ts.Listener.Close()
		return nil, err
	}
	h := validating(report, routes, m.Server.Handler())
	if wrap != nil {
		h = wrap(h)
	}
	ts.Config.Handler = h
	ts.Config.ConnContext = m.Server.ConnContext
	conns := &conns{closed: map[string]chan struct{}{}}
	ts.Config.ConnState = conns.state
	ts.Start()
	return &Server{Server: ts, Main: m, Clock: clock, Data: dir, conns: conns}, nil
}

// Node starts another server on the database and the bucket of the test
// data directory dir, with a data directory of its own: another node of a
// cluster, which shares nothing on disk with the first. On PostgreSQL it runs
// beside the server on dir. On SQLite, whose database is a file of the data
// directory, the server on dir must have stopped: the database's files move
// to the new directory (dir keeps everything else, such as its tus/).
func Node(t testing.TB, dir string, opts ...Option) *Server {
	t.Helper()
	other := t.TempDir()
	copyStores(t, dir, other)
	if DatabaseURL(dir) == "" {
		files, err := filepath.Glob(filepath.Join(dir, "atrium.db*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.Rename(f, filepath.Join(other, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return Start(t, other, opts...)
}

// copyStores gives the test data directory to the settings of from's
// database and bucket (which name them, not hold them).
func copyStores(t testing.TB, from, to string) {
	t.Helper()
	for _, name := range []string{testDatabaseFile, testBucketFile} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(to, name), b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Peer starts a second node of s's cluster for a cross-node test: another
// server on s's PostgreSQL database and bucket (or, without a bucket, on
// s's blob directories: a disk both nodes share), with s's clock and a data
// directory of its own, s's public URL (the balancer's), stopped when the
// test ends. It skips the test when s
// runs on SQLite, which one process holds.
func (s *Server) Peer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	if DatabaseURL(s.Data) == "" {
		t.Skip("several nodes need PostgreSQL (" + sqldb.TestDatabaseEnv + ")")
	}
	dir := t.TempDir()
	copyStores(t, s.Data, dir)
	if !S3(s.Data) {
		for _, d := range []string{"blobs", "archive"} {
			if err := os.MkdirAll(filepath.Join(s.Data, d), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(s.Data, d), filepath.Join(dir, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The nodes of a cluster share the balancer's public URL.
	opts = append([]Option{func(c *wire.Config) { c.PublicURL = s.Main.Config.PublicURL }}, opts...)
	p, err := start(dir, s.Clock, testWriter{t}, func(_ *http.Request, msg string) { report(t, msg) }, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p.t = t
	t.Cleanup(p.Stop)
	return p
}

// Closed returns a channel that is closed once the server has closed the
// connection c, a client's connection to it (found by the client's address):
// a test waits on it for the server to cut off a client.
func (s *Server) Closed(c net.Conn) <-chan struct{} {
	return s.conns.of(c.LocalAddr().String())
}

// conns keeps a channel for each client address, closed when the server
// closes the connection from that address.
type conns struct {
	mu     sync.Mutex
	closed map[string]chan struct{}
}

func (cs *conns) of(addr string) chan struct{} {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.chanLocked(addr)
}

func (cs *conns) chanLocked(addr string) chan struct{} {
	ch, ok := cs.closed[addr]
	if !ok {
		ch = make(chan struct{})
		cs.closed[addr] = ch
	}
	return ch
}

// state is the server's ConnState hook.
func (cs *conns) state(c net.Conn, st http.ConnState) {
	addr := c.RemoteAddr().String()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	switch st {
	case http.StateNew: // a new connection from the address of a closed one
		if ch, ok := cs.closed[addr]; ok && isClosed(ch) {
			delete(cs.closed, addr)
		}
	case http.StateClosed, http.StateHijacked:
		if ch := cs.chanLocked(addr); !isClosed(ch) {
			close(ch)
		}
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Stop closes the HTTP server and the database (idempotent). A shared
// server's test cannot stop it (CloseShared does).
func (s *Server) Stop() {
	if s.test != "" {
		s.t.Helper()
		s.t.Fatal("webtest: a shared server is stopped by CloseShared, after the package's tests")
	}
	if s.Main == nil {
		return
	}
	s.Server.Close()
	s.Main.Close()
	s.Main = nil
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	if _, fuzz := w.t.(*testing.F); fuzz {
		// A server shared by a fuzz target's runs may log while one runs, and
		// testing.F panics when logged to from inside its target.
		return os.Stderr.Write(p)
	}
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Creds are a bootstrapped user's credentials.
type Creds = wire.BootstrapOutput

// Bootstrap ensures an organisation and user (as `atrium bootstrap`) and returns
// fresh credentials.
func (s *Server) Bootstrap(org, email, role string) Creds {
	s.t.Helper()
	c, err := s.Main.Bootstrap(context.Background(), org, email, role)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// Token creates a PAT for a user with the given scopes (none: all the role allows).
func (s *Server) Token(email string, scopes ...string) string {
	s.t.Helper()
	tok, err := s.Main.Token(context.Background(), email, scopes, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	return tok.Token
}

// Response is a finished request.
type Response struct {
	*http.Response
	Body []byte
}

// JSON decodes the body into a map.
func (r *Response) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Request is one request of a test.
type Request struct {
	Method  string
	Path    string
	Token   string
	Header  map[string]string
	Body    any // a string or []byte is sent as is; anything else as JSON
	BasicID string
	BasicPW string
}

// Do sends a request to the server.
func (s *Server) Do(r Request) *Response {
	s.t.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		body = bytes.NewReader(j)
	}
	req, err := http.NewRequest(r.Method, s.URL+r.Path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	if r.BasicID != "" {
		req.SetBasicAuth(r.BasicID, r.BasicPW)
	}
	if s.test != "" {
		req.Header.Set(testHeader, s.test)
	}
	for k, v := range r.Header {
		req.Header.Set(k, v)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return &Response{Response: res, Body: b}
}

// Scenario is a table row: a request and what the client must see.
type Scenario struct {
	Name string
	Request
	Status int
	// Problem, when set, is the problem `code` the body must carry (and the body
	// must be application/problem+json).
	Problem string
	// Contains and NotContains are substrings of the body.
	Contains    []string
	NotContains []string
	// Headers are response headers that must have these values.
	Headers map[string]string
}

// Run runs scenarios as subtests.
func (s *Server) Run(t *testing.T, scenarios []Scenario) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			res := s.Do(sc.Request)
			Check(t, res, sc)
		})
	}
}

// Check asserts a response against a scenario's expectations.
func Check(t testing.TB, res *Response, sc Scenario) {
	t.Helper()
	if res.StatusCode != sc.Status {
		t.Fatalf("%s %s: status %d, want %d; body: %s", sc.Method, sc.Path, res.StatusCode, sc.Status, res.Body)
	}
	if sc.Problem != "" {
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
			t.Errorf("content type %q, want application/problem+json", ct)
		}
		var p struct {
			Type   string `json:"type"`
			Title  string `json:"title"`
			Status int    `json:"status"`
			Detail string `json:"detail"`
			Code   string `json:"code"`
		}
		res.Decode(t, &p)
		if p.Code != sc.Problem || p.Status != sc.Status || p.Title == "" || p.Detail == "" || !strings.HasSuffix(p.Type, "/problems/"+sc.Problem) {
			t.Errorf("problem %+v, want code %q status %d with type, title and detail", p, sc.Problem, sc.Status)
		}
	}
	for _, c := range sc.Contains {
		if !bytes.Contains(res.Body, []byte(c)) {
			t.Errorf("body lacks %q: %s", c, res.Body)
		}
	}
	for _, c := range sc.NotContains {
		if bytes.Contains(res.Body, []byte(c)) {
			t.Errorf("body has %q: %s", c, res.Body)
		}
	}
	for k, v := range sc.Headers {
		if got := res.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
}

var _ app.Clock = (&Clock{}).Now

// OpenDatabase opens the database of the data directory dir of a stopped
// test server (New): its SQLite file, or its PostgreSQL database. The caller
// closes it.
func OpenDatabase(t testing.TB, dir string) *sqldb.DB {
	t.Helper()
	var db *sqldb.DB
	var err error
	if url, rerr := os.ReadFile(filepath.Join(dir, testDatabaseFile)); rerr == nil {
		db, err = sqldb.OpenPostgres(context.Background(), string(url), nil)
	} else {
		db, err = sqldb.Open(context.Background(), filepath.Join(dir, "atrium.db"), nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// Blob is the [blob] configuration of the test data directory dir: its
// bucket on the store of ATRIUM_TEST_S3_ENDPOINT (New with it set), else
// empty (the local disk).
func Blob(dir string) wire.BlobConfig {
	bucket, err := os.ReadFile(filepath.Join(dir, testBucketFile))
	if err != nil {
		return wire.BlobConfig{}
	}
	return wire.TestBlob(string(bucket))
}

// DirectS3 is an Option that makes a server on the test store
// (ATRIUM_TEST_S3_ENDPOINT) hand clients URLs of the store itself, as [blob]
// s3_public_endpoint does: that setting is the same store under another host
// name (wire.TestPublicEndpoint: localhost for 127.0.0.1), so that tests
// tell the store's URLs from the nodes' and the nodes' own address of the
// store from the clients'. On the local disk it changes nothing.
func DirectS3(c *wire.Config) {
	if c.Blob.S3() {
		c.Blob.S3PublicEndpoint = wire.TestPublicEndpoint(c.Blob.S3Endpoint)
	}
}

// S3 reports whether the test data directory dir keeps its bytes in a
// bucket rather than on the local disk.
func S3(dir string) bool { return Blob(dir).S3() }

// ConfigTOML is what a configuration file needs for a command to open the
// test data directory dir as its server does: its [database] url on
// PostgreSQL and its [blob] bucket on an object store, with both the public
// URL of its last server; "" when neither.
func ConfigTOML(dir string) string {
	var b strings.Builder
	if url := DatabaseURL(dir); url != "" {
		fmt.Fprintf(&b, "[database]\nurl = %q\n", url)
	}
	c := Blob(dir)
	if c.S3() {
		fmt.Fprintf(&b, "[blob]\ns3_endpoint = %q\ns3_bucket = %q\ns3_access_key = %q\ns3_secret_key = %q\n",
			c.S3Endpoint, c.S3Bucket, c.S3AccessKey, c.S3SecretKey)
	}
	// Several nodes' settings (a database and a bucket) need the public
	// URL: the last server's on dir, at the top level.
	if u, err := os.ReadFile(filepath.Join(dir, testPublicURLFile)); err == nil && c.S3() && DatabaseURL(dir) != "" {
		return fmt.Sprintf("public_url = %q\n", u) + b.String()
	}
	return b.String()
}

// DatabaseURL is the URL of the PostgreSQL database of the test data
// directory dir (New with ATRIUM_TEST_DATABASE_URL set), "" for SQLite.
func DatabaseURL(dir string) string {
	url, err := os.ReadFile(filepath.Join(dir, testDatabaseFile))
	if err != nil {
		return ""
	}
	return string(url)
}
