package webtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/gin-gonic/gin"
)

// The harness holds every answer of the REST API to the OpenAPI document the
// server serves at /api/v1/openapi.json: each response to a request under
// /api/v1/ that the server routes to an operation of the document is
// validated with kin-openapi's openapi3filter (its status must be listed, its
// headers and, for JSON, its body must match the schema), and a mismatch fails
// the test that started the server. kin-openapi validates an OpenAPI 3.1
// document with its JSON Schema 2020-12 validator, so the 3.1 document itself
// is checked, `type: [x, "null"]` included; its 3.0 form
// (/api/v1/openapi-3.0.json) is checked by the document tests of package web.
//
// Bodies the document does not describe as JSON (downloads, exports, vCard
// and iCalendar files) have their status and content type checked, not their
// bytes. Routes outside the document (WebDAV, the hidden operations, the
// document itself) pass through untouched: a request is matched to the route
// gin serves it with, a static segment before a parameter, so that
// /contacts/books/{id}/export (hidden) is not taken for a contact.
//
// Tests send invalid requests on purpose, which the server refuses: a request
// is validated only when the server accepted it (2xx), and then the document
// must take it too (its parameters and JSON body).
//
// Every operation a request reaches is recorded: UncalledOperations lists the
// others (package web's TestMain fails on them).

// openAPI is the document, parsed once per test binary from the first server
// started, with the server's routes: every test server registers the same
// operations (only its address, the document's servers entry, differs, and is
// dropped).
var openAPI struct {
	once   sync.Once
	doc    *openapi3.T
	routes []route
	err    error
}

// called records the operations that requests of this test binary reached.
var called sync.Map // operationId → struct{}

// route is one of the server's routes; op is its operation in the document
// (nil for a route the document does not describe: a hidden operation, a
// mount).
type route struct {
	method string
	segs   []string // ":name" a parameter, "*name" the rest
	op     *routers.Route
}

// loadOpenAPI parses the document the first time it is called (spec marshals
// it: later servers do not pay for that) and returns it with the routes.
func loadOpenAPI(spec func() ([]byte, error), served gin.RoutesInfo) (*openapi3.T, []route, error) {
	openAPI.once.Do(func() {
		b, err := spec()
		if err != nil {
			openAPI.err = fmt.Errorf("marshal the OpenAPI document: %w", err)
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(b)
		if err != nil {
			openAPI.err = fmt.Errorf("load the OpenAPI document: %w", err)
			return
		}
		doc.Servers = nil
		if err := doc.Validate(context.Background()); err != nil {
			openAPI.err = fmt.Errorf("validate the OpenAPI document: %w", err)
			return
		}
		var routes []route
		for _, r := range served {
			if !strings.HasPrefix(r.Path, "/api/v1/") {
				continue
			}
			rt := route{method: r.Method, segs: strings.Split(strings.TrimPrefix(r.Path, "/"), "/")}
			template := make([]string, len(rt.segs))
			for i, seg := range rt.segs {
				template[i] = seg
				if seg != "" && (seg[0] == ':' || seg[0] == '*') {
					template[i] = "{" + seg[1:] + "}"
				}
			}
			path := "/" + strings.Join(template, "/")
			if item := doc.Paths.Value(path); item != nil {
				if op := item.GetOperation(r.Method); op != nil {
					rt.op = &routers.Route{Spec: doc, Path: path, PathItem: item, Method: r.Method, Operation: op}
				}
			}
			routes = append(routes, rt)
		}
		openAPI.doc, openAPI.routes = doc, routes
	})
	return openAPI.doc, openAPI.routes, openAPI.err
}

// find returns the route gin serves a request with, and its path parameters:
// of the routes that match, the one with a static segment where the others
// have a parameter, from the left (gin's precedence).
func find(routes []route, method, path string) (*route, map[string]string) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var best *route
	for i := range routes {
		r := &routes[i]
		if r.method != method || !r.matches(segs) {
			continue
		}
		if best == nil || r.before(best) {
			best = r
		}
	}
	if best == nil {
		return nil, nil
	}
	params := map[string]string{}
	for i, seg := range best.segs {
		switch {
		case seg != "" && seg[0] == ':':
			params[seg[1:]] = segs[i]
		case seg != "" && seg[0] == '*':
			params[seg[1:]] = strings.Join(segs[i:], "/")
		}
	}
	return best, params
}

func (r *route) matches(segs []string) bool {
	for i, seg := range r.segs {
		if seg != "" && seg[0] == '*' {
			return true
		}
		if i >= len(segs) {
			return false
		}
		if seg != "" && seg[0] == ':' {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if seg != segs[i] {
			return false
		}
	}
	return len(segs) == len(r.segs)
}

// before reports whether gin prefers r to o (both matching the same path).
func (r *route) before(o *route) bool {
	for i := 0; i < len(r.segs) && i < len(o.segs); i++ {
		rs, os := kind(r.segs[i]), kind(o.segs[i])
		if rs != os {
			return rs < os
		}
	}
	return false
}

// kind orders segments as gin's tree does: static, parameter, catch-all.
func kind(seg string) int {
	switch {
	case seg != "" && seg[0] == ':':
		return 1
	case seg != "" && seg[0] == '*':
		return 2
	}
	return 0
}

// Operations lists the document's operations as "METHOD /path (operationId)",
// sorted; nil until a server has started.
func Operations() []string {
	return operations(func(string) bool { return true })
}

// UncalledOperations lists the document's operations (as Operations does)
// that no request of this test binary reached.
func UncalledOperations() []string {
	return operations(func(id string) bool {
		_, ok := called.Load(id)
		return !ok
	})
}

func operations(keep func(id string) bool) []string {
	doc := openAPI.doc
	if doc == nil {
		return nil
	}
	var out []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if keep(op.OperationID) {
				out = append(out, method+" "+path+" ("+op.OperationID+")")
			}
		}
	}
	sort.Strings(out)
	return out
}

// validating wraps the server's handler: it records which operation each
// request reached and validates the response against the document.
func validating(report func(*http.Request, string), routes []route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		rt, params := find(routes, r.Method, r.URL.Path)
		if rt == nil || rt.op == nil {
			next.ServeHTTP(w, r)
			return
		}
		route := rt.op
		called.Store(route.Operation.OperationID, struct{}{})
		r, body, whole := requestBody(r)
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if err := validateResponse(r, route, params, rec); err != nil {
			report(r, fmt.Sprintf("OpenAPI: %s %s answered %d, which the document does not describe: %v\nbody: %.2000s",
				r.Method, r.URL.RequestURI(), rec.status(), err, rec.body.Bytes()))
		}
		if whole && rec.status() < 300 {
			if err := validateRequest(r, body, route, params); err != nil {
				report(r, fmt.Sprintf("OpenAPI: %s %s was accepted (%d), but the document refuses it: %v\nrequest body: %.2000s",
					r.Method, r.URL.RequestURI(), rec.status(), err, body))
			}
		}
	})
}

// report fails the test. A fuzz target's shared server may answer while the
// fuzzer runs, when testing.F must not be called: it panics then, so that the
// failure is seen all the same.
func report(t testing.TB, msg string) {
	if _, fuzz := t.(*testing.F); fuzz {
		panic(msg)
	}
	t.Error(msg)
}

func validateResponse(r *http.Request, route *routers.Route, params map[string]string, rec *recorder) error {
	header := rec.Header().Clone()
	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
	if !rec.json || rec.long {
		// Bytes the document does not describe as JSON (or more JSON
		// than the harness keeps): check that the status and content
		// type are the document's, not the bytes.
		opts.ExcludeResponseBody = true
		if err := checkContentType(route, rec.status(), header.Get("Content-Type"), rec.wrote); err != nil {
			return err
		}
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts},
		Status:                 rec.status(),
		Header:                 header,
		Options:                opts,
	}
	input.SetBodyBytes(rec.body.Bytes())
	return openapi3filter.ValidateResponse(context.Background(), input)
}

// checkContentType checks a response whose body is not validated: its status
// must be the document's and, when it has a body, so must its content type.
func checkContentType(route *routers.Route, status int, contentType string, body bool) error {
	resp := route.Operation.Responses.Status(status)
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	if resp == nil || resp.Value == nil {
		return fmt.Errorf("status %d is not listed", status)
	}
	if !body || contentType == "" || len(resp.Value.Content) == 0 || status == http.StatusNoContent {
		return nil
	}
	if resp.Value.Content.Get(contentType) == nil {
		var listed []string
		for ct := range resp.Value.Content {
			listed = append(listed, ct)
		}
		sort.Strings(listed)
		return fmt.Errorf("content type %q is not among the document's %v for status %d", contentType, listed, status)
	}
	return nil
}

// maxRecorded is the most of a JSON body the harness keeps for validation;
// the API's JSON answers are far smaller.
const maxRecorded = 8 << 20

// recorder passes a response through and keeps a copy of a JSON body.
type recorder struct {
	http.ResponseWriter
	code  int
	json  bool // the body is JSON (application/json or +json)
	wrote bool
	long  bool // the body was longer than maxRecorded: not kept whole
	body  bytes.Buffer
}

func (w *recorder) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
		w.json = isJSON(w.Header().Get("Content-Type"))
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.wrote = w.wrote || len(p) > 0
	switch {
	case !w.json || w.long:
	case w.body.Len()+len(p) <= maxRecorded:
		w.body.Write(p)
	default:
		w.long = true
		w.body.Reset()
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom keeps io.Copy's path through the recorder's Write.
func (w *recorder) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{w}, r)
}

// Flush passes a flush through.
func (w *recorder) Flush() {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recorder) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// requestBody reads a request's JSON body (up to maxRecorded) so that the
// request can be validated once answered, and gives the server the same bytes.
// It reports whether the request can be validated: nil bytes then stand for a
// body that is not JSON (the bytes of an upload), which is not validated.
func requestBody(r *http.Request) (*http.Request, []byte, bool) {
	if r.Body == nil || r.Body == http.NoBody || !isJSON(r.Header.Get("Content-Type")) {
		return r, nil, true
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxRecorded+1))
	r2 := r.WithContext(r.Context())
	r2.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	return r2, b, err == nil && len(b) <= maxRecorded
}

// validateRequest checks that the document takes a request the server
// accepted (answered 2xx): tests send invalid requests on purpose, which the
// server refuses, and only a request the server takes but the document
// refuses is the document's mistake.
func validateRequest(r *http.Request, body []byte, route *routers.Route, params map[string]string) error {
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	opts := &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		ExcludeRequestBody: body == nil && r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route, Options: opts,
	})
}
