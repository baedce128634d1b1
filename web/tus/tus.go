// Package tus is the drive's resumable upload door (tus 1.0.0 with the
// creation, creation-with-upload, creation-defer-length, termination and
// expiration extensions) at /api/v1/drive/tus/, served by tusd v2 over a data
// store of our own: each upload's bytes go to its parts (Parts) while their
// SHA-256 is computed, the hash state is saved with the offset after every
// PATCH (so a resumed upload, also after a restart or on another node,
// continues the hash), and the finished bytes become a blob under that hash
// without hashing them again. The drive service decides everything else: who
// may upload where, the quota, the upload's owner, expiry, conflicts and the
// resulting file.
//
// The parts are a data file per upload in a local directory (the blob store
// on the local disk: renamed into it when finished), or, with the bytes in a
// bucket, one object per PATCH in it (storage/s3blob), so that any node takes
// an upload's next PATCH and reports its offset: nothing of an upload stays
// on a node's disk. A PATCH's bytes are durable in the parts before the
// offset is recorded, and the offset moves by a compare-and-set, so that of
// two PATCHes racing at one offset exactly one counts (the other answers 409).
//
// This store rather than tusd's own S3 store: that one would pull
// aws-sdk-go-v2 in beside minio-go, and keep each upload's state in .info
// objects and its offset in the bucket's multipart listing, beside the row
// the drive keeps anyway (owner, folder, quota, expiry, conflict, hash
// state); its parts need 5 MiB, so short PATCHes go through an extra object
// it must fetch and send again. Here the row stays the one source of truth
// and the hash is computed once, as the bytes arrive; a finished upload's
// parts are read back once, into its blob (docs/ARCHITECTURE.md, "Object
// store").
package tus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tus/tusd/v2/pkg/handler"
	"github.com/tus/tusd/v2/pkg/memorylocker"

	"atrium/app"
	"atrium/app/drive"
	"atrium/web/problem"
)

// BasePath is where the door is mounted.
const BasePath = "/api/v1/drive/tus/"

// Response headers beyond the protocol's: the state of a complete upload
// (done or conflict) and the file it became.
const (
	HeaderStatus = "Atrium-Upload-Status"
	HeaderFileID = "Atrium-File-Id"
)

// Routes are the method and path patterns (gin syntax) the door answers.
var Routes = []struct{ Method, Path string }{
	{http.MethodOptions, "/api/v1/drive/tus"},
	{http.MethodOptions, BasePath},
	{http.MethodOptions, BasePath + ":upload_id"},
	{http.MethodPost, "/api/v1/drive/tus"},
	{http.MethodPost, BasePath},
	{http.MethodHead, BasePath + ":upload_id"},
	{http.MethodPatch, BasePath + ":upload_id"},
	{http.MethodDelete, BasePath + ":upload_id"},
}

// Blobs is what the tus door needs of the blob store: to take a finished
// upload's file as the object hash (the file is gone after it: moved into a
// store on the disk, uploaded to a bucket), and to tell an object's size (an
// error when it is not stored).
type Blobs interface {
	Adopt(path, hash string, size int64) error
	Stat(hash string) (int64, error)
}

// ProblemFunc answers an error as application/problem+json.
type ProblemFunc func(w http.ResponseWriter, r *http.Request, err error)

// Config is what the door needs.
type Config struct {
	// Uploads is the drive's uploads part, the one the door calls.
	Uploads *drive.Uploads
	// Parts keeps the bytes of uploads in progress; nil: one file per upload
	// in Dir, moved into Blobs when finished.
	Parts Parts
	// Blobs and Dir are the blob store and the directory of the data files,
	// without Parts. Dir must survive restarts and, with the blob store on
	// the local disk, be on the store's file system (finished uploads are
	// renamed into it).
	Blobs Blobs
	Dir   string
	// PublicURL makes the absolute Location of new uploads.
	PublicURL string
	Log       *slog.Logger
}

// Handler serves the resumable upload protocol.
type Handler struct {
	svc    *drive.Uploads
	store  *store
	tusd   *handler.UnroutedHandler
	routes http.Handler
	log    *slog.Logger
}

var corsHeaders = handler.CorsConfig{
	AllowOrigin:   regexp.MustCompile(".*"),
	AllowMethods:  "POST, HEAD, PATCH, OPTIONS, DELETE",
	AllowHeaders:  handler.DefaultCorsConfig.AllowHeaders,
	MaxAge:        "86400",
	ExposeHeaders: handler.DefaultCorsConfig.ExposeHeaders + ", Upload-Expires, " + HeaderStatus + ", " + HeaderFileID + ", X-Request-Id",
}

// New returns the door; without cfg.Parts it creates cfg.Dir when missing.
func New(cfg Config) (*Handler, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	parts := cfg.Parts
	if parts == nil {
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("tus: create upload dir: %w", err)
		}
		parts = dirParts{dir: cfg.Dir, blobs: cfg.Blobs}
	}
	st := &store{svc: cfg.Uploads, parts: parts, log: cfg.Log}
	composer := handler.NewStoreComposer()
	composer.UseCore(st)
	composer.UseTerminater(st)
	composer.UseLengthDeferrer(st)
	memorylocker.New().UseIn(composer)
	tusd, err := handler.NewUnroutedHandler(handler.Config{
		StoreComposer:        composer,
		MaxSize:              cfg.Uploads.MaxTusBytes(),
		BasePath:             strings.TrimRight(cfg.PublicURL, "/") + BasePath,
		DisableDownload:      true,
		DisableConcatenation: true,
		Cors:                 &corsHeaders,
		Logger:               newTusdLogger(cfg.Log),
	})
	if err != nil {
		return nil, fmt.Errorf("tus: %w", err)
	}
	h := &Handler{svc: cfg.Uploads, store: st, tusd: tusd, log: cfg.Log}
	// tusd takes the upload id from the whole path.
	h.routes = http.StripPrefix(strings.TrimSuffix(BasePath, "/"), tusd.Middleware(http.HandlerFunc(h.route)))
	return h, nil
}

// Mount returns the door's http.Handler, answering errors with problem (the
// server's problem+json writer).
func (h *Handler) Mount(answer ProblemFunc) http.Handler {
	return mounted{h: h, problem: answer}
}

type mounted struct {
	h       *Handler
	problem ProblemFunc
}

// Extensions is the Tus-Extension list.
func (h *Handler) Extensions() string { return h.tusd.SupportedExtensions() + ",expiration" }

// ServeHTTP authenticates (the server's middleware resolved the credential),
// checks the scope of the method and hands the request to tusd; error
// responses become problem+json.
func (m mounted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := m.h
	fail := func(err error) {
		if app.ErrorCode(err) == "" {
			h.log.ErrorContext(r.Context(), "tus request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		m.problem(w, r, err)
	}
	if r.Method == http.MethodOptions {
		h.options(w, r)
		return
	}
	p := app.PrincipalFrom(r.Context())
	if p == nil {
		fail(app.Errorf(app.EUnauthorized, "Authentication is required: send Authorization: Bearer <token>."))
		return
	}
	scope := app.ScopeDriveWrite
	if r.Method == http.MethodHead {
		scope = app.ScopeDriveRead
	}
	if err := p.Require(scope); err != nil {
		fail(err)
		return
	}
	if err := checkHeaders(r); err != nil {
		fail(err)
		return
	}
	rq := &request{p: p, header: w.Header()}
	if r.Method == http.MethodPost && strings.Trim(strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(BasePath, "/")), "/") == "" {
		// Before tusd's middleware, which hands its own copy of the request on.
		var err error
		if rq.whole, err = h.takeWhole(r); err != nil {
			fail(err)
			return
		}
	}
	ew := &errorWriter{ResponseWriter: w}
	h.routes.ServeHTTP(ew, r.WithContext(context.WithValue(r.Context(), requestKey{}, rq)))
	if ew.status == 0 {
		return
	}
	err := rq.err
	if err == nil {
		err = tusdError(ew.status, ew.body.String())
	}
	for _, k := range []string{"Content-Type", "Content-Length"} {
		w.Header().Del(k)
	}
	fail(err)
}

// checkHeaders refuses what tusd would take too leniently: a PATCH whose body is
// not application/offset+octet-stream (tusd lets IETF-draft requests send any
// type), and byte counts that are not plain decimal numbers (Go's ParseInt
// takes "+5" and "007").
func checkHeaders(r *http.Request) error {
	method := r.Method
	if o := r.Header.Get("X-HTTP-Method-Override"); o != "" {
		method = o
	}
	if strings.EqualFold(method, http.MethodPatch) {
		if ct := r.Header.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/offset+octet-stream" {
			return app.Errorf(app.EUnsupportedMediaType, "A PATCH carries Content-Type: application/offset+octet-stream (got %q).", strings.Join(ct, ", "))
		}
	}
	for _, h := range []string{"Upload-Length", "Upload-Offset"} {
		vs := r.Header.Values(h)
		if len(vs) == 0 {
			continue
		}
		if len(vs) > 1 || !canonicalCount(vs[0]) {
			return app.Errorf(app.EBadRequest, "%s must be one number of bytes in plain decimal digits, without sign, spaces or leading zeros (got %q).", h, strings.Join(vs, ", "))
		}
	}
	return nil
}

// canonicalCount reports whether v is a non-negative decimal integer in its
// one canonical spelling ("0", "5", "1024"), small enough for an int64.
func canonicalCount(v string) bool {
	if v == "" || len(v) > 18 || (v[0] == '0' && len(v) > 1) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// route dispatches within tusd's middleware (which checked Tus-Resumable and
// applied X-HTTP-Method-Override).
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	id := strings.Trim(r.URL.Path, "/")
	switch {
	case id == "" && r.Method == http.MethodPost:
		h.tusd.PostFile(w, r)
	case id != "" && r.Method == http.MethodHead:
		h.tusd.HeadFile(w, r)
	case id != "" && r.Method == http.MethodPatch:
		h.tusd.PatchFile(w, r)
	case id != "" && r.Method == http.MethodDelete:
		h.tusd.DelFile(w, r)
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		if id != "" {
			w.Header().Set("Allow", "HEAD, PATCH, DELETE, OPTIONS")
		}
		requestFrom(r.Context()).err = app.Errorf(app.EBadRequest, "%s is not a tus request here.", r.Method)
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// takeWhole reads the body of a tus 1.0 creation that carries a small
// upload's whole content (creation-with-upload) into the request, for
// NewUpload to create the upload complete in one transaction (the drive's
// TusCreate.Content); tusd then finds an empty body and the upload at its
// end. Any other creation is left to tusd as it came. A body that ends
// before its length is refused, and nothing is created.
func (h *Handler) takeWhole(r *http.Request) ([]byte, error) {
	if r.Header.Get("Content-Type") != "application/offset+octet-stream" || r.Header.Get("X-HTTP-Method-Override") != "" ||
		r.Header.Get("Upload-Draft-Interop-Version") != "" || r.Header.Get("Upload-Defer-Length") != "" || r.Header.Get("Upload-Concat") != "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(r.Header.Get("Upload-Length"), 10, 64)
	if err != nil || r.ContentLength != n || !h.svc.SmallContent(n) {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, n))
	if err != nil || int64(len(data)) != n {
		return nil, app.Errorf(app.EBadRequest, "The body ended before its Content-Length; nothing was stored.")
	}
	r.Body, r.ContentLength = http.NoBody, 0
	return data, nil
}

// options answers protocol discovery (and CORS preflight) with 204.
func (h *Handler) options(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	if origin := r.Header.Get("Origin"); origin != "" {
		hd.Set("Access-Control-Allow-Origin", origin)
		hd.Set("Vary", "Origin")
		hd.Set("Access-Control-Allow-Methods", corsHeaders.AllowMethods)
		hd.Set("Access-Control-Allow-Headers", corsHeaders.AllowHeaders)
		hd.Set("Access-Control-Max-Age", corsHeaders.MaxAge)
	}
	hd.Set("Tus-Resumable", "1.0.0")
	hd.Set("Tus-Version", "1.0.0")
	hd.Set("Tus-Extension", h.Extensions())
	hd.Set("Tus-Max-Size", fmt.Sprint(h.svc.MaxTusBytes()))
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNoContent)
}

// Sweep drops the uploads abandoned longer than the upload TTL and frees their
// bytes, and the bytes of uploads that are gone (with a deleted user); it
// returns how many went.
func (h *Handler) Sweep(ctx context.Context) (int, error) {
	n, err := h.svc.ExpireTusUploads(ctx, func(u drive.TusUpload) error { return h.store.remove(ctx, u.ID) })
	if err != nil {
		return n, err
	}
	strays, err := h.store.removeStrays(ctx)
	return n + strays, err
}

// Run sweeps at once and then every interval until ctx ends.
func (h *Handler) Run(ctx context.Context, interval time.Duration) {
	app.RunMaintenance(ctx, interval, h.log, "tus", func(ctx context.Context) (map[string]int, error) {
		n, err := h.Sweep(ctx)
		return map[string]int{"uploads_freed": n}, err
	})
}

// request is what one request's store calls share: the caller, the response
// headers to add to, and the last error the store returned (answered as a
// problem instead of tusd's text).
type request struct {
	p      *app.Principal
	header http.Header
	err    error
	// whole is the content a creation carried whole (takeWhole).
	whole []byte
}

type requestKey struct{}

func requestFrom(ctx context.Context) *request {
	rq, _ := ctx.Value(requestKey{}).(*request)
	if rq == nil {
		// Unreachable through ServeHTTP; a request without one has no rights.
		return &request{header: http.Header{}}
	}
	return rq
}

// fail records err for the response and returns it as a tusd error; the door
// replaces tusd's response with the problem of err.
func (rq *request) fail(err error) error {
	rq.err = err
	return handler.Error{ErrorCode: "ERR_ATRIUM", Message: app.ErrorMessage(err), HTTPResponse: handler.HTTPResponse{
		StatusCode: http.StatusInternalServerError, // replaced by the problem's status
		Header:     handler.HTTPHeader{"Content-Type": "text/plain; charset=utf-8"},
	}}
}

// tusdCodes are the problem codes of tusd's own error statuses where they
// differ from the one reverse table (web/problem): tusd answers 405 and 501
// for requests the client got wrong. Another status it answers, not known
// to the table, is an internal error.
var tusdCodes = map[int]string{
	http.StatusMethodNotAllowed: app.EBadRequest,
	http.StatusNotImplemented:   app.EBadRequest,
}

// tusdMessages words tusd's errors for people.
var tusdMessages = map[string]string{
	"ERR_MISMATCHED_OFFSET":     "Upload-Offset does not match the upload's offset; send HEAD to learn where to resume.",
	"ERR_INVALID_OFFSET":        "Upload-Offset is required: a number of bytes, 0 or more.",
	"ERR_INVALID_CONTENT_TYPE":  "A PATCH carries Content-Type: application/offset+octet-stream.",
	"ERR_UNSUPPORTED_VERSION":   "Send Tus-Resumable: 1.0.0.",
	"ERR_INVALID_UPLOAD_LENGTH": "Upload-Length must be a number of bytes (or send Upload-Defer-Length: 1), and can be declared once.",
	"ERR_UPLOAD_SIZE_EXCEEDED":  "The body goes beyond the upload's length.",
	"ERR_MAX_SIZE_EXCEEDED":     "The upload is larger than Tus-Max-Size allows.",
}

// tusdError turns a tusd error response ("ERR_CODE: message") into an app error.
func tusdError(status int, body string) error {
	code, msg, _ := strings.Cut(strings.TrimSpace(body), ": ")
	if m, ok := tusdMessages[code]; ok {
		msg = m
	} else if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:] + "."
	}
	if c, ok := tusdCodes[status]; ok {
		return app.Errorf(c, "%s", msg)
	}
	if c := problem.CodeOf(status); c != "error" && status < 500 || status == http.StatusServiceUnavailable {
		return app.Errorf(c, "%s", msg)
	}
	return fmt.Errorf("tusd answered %d: %s", status, body)
}

// errorWriter holds back an error response of tusd (status ≥ 400) so that the
// door can answer a problem instead.
type errorWriter struct {
	http.ResponseWriter
	status  int
	body    strings.Builder
	written bool
}

func (w *errorWriter) WriteHeader(code int) {
	if code >= 400 && !w.written {
		w.status = code
		return
	}
	w.written = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorWriter) Write(b []byte) (int, error) {
	if w.status != 0 {
		if w.body.Len() < 1024 {
			w.body.Write(b)
		}
		return len(b), nil
	}
	w.written = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController (tusd's read deadlines) reach the connection.
func (w *errorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var errNotServed = errors.New("tus: downloads are not served by this door")
