// Package webdav is the drive's file mount (RFC 4918, DAV classes 1 and 2) at
// /api/v1/webdav/ and its alias /webdav/, and at the Nextcloud and ownCloud
// clients' paths with what they need besides (oc.go: remote.php/webdav/,
// remote.php/dav/files/<user>/, their properties; chunks.go: their chunked
// uploads at remote.php/dav/uploads/<user>/). It is an http.Handler over the drive
// service: every method resolves the path to a drive item and calls the same
// service method as the REST API, so permissions, quota, versions, locks,
// events and the sync feed apply unchanged. The gin middleware has already
// authenticated the request (HTTP Basic with e-mail and app password, or a
// bearer token); a request without a principal is answered 401 with a Basic
// challenge.
//
// Layout: the mount's root is the caller's own drive; a virtual, read-only
// folder "Shared with me" at the root holds what others share with the caller
// (writes there → 403 read_only). When a real item at the root has that
// name, the virtual folder is "Shared with me (1)" (or the next free
// number): it never hides a real item. Its date is that of the newest share
// with the caller, else their account's creation.
//
// The protocol is handled here rather than by golang.org/x/net/webdav's
// Handler: its PUT maps every error to 405 and cannot stream into a service
// call, its COPY rewrites content through the file system instead of sharing
// blobs, its PROPFIND stats every child one by one, and its lock system is
// not the drive's. What this door does:
//   - PROPFIND Depth 0 and 1 (infinity, also by omission, → 403 with a
//     propfind-finite-depth body), written as a stream while the folder is
//     paged through, naming at most 256 properties; dead properties are
//     stored by PROPPATCH. oc:checksums (ownCloud's SHA-1 and MD5) on
//     request; getlastmodified is the modification time a client set
//     (X-OC-Mtime on PUT, PROPPATCH of getlastmodified, lastmodified or
//     Win32LastModifiedTime), else the time of the last write.
//   - GET/HEAD with Range, ETag (the content hash) and Last-Modified.
//   - PUT streamed into the drive, at most 512 MiB (413 beyond, also when
//     Content-Length says so up front); an overwrite adds a version; over
//     quota → 507 Insufficient Storage; an interrupted PUT keeps the old
//     version.
//   - LOCK/UNLOCK with the drive's lock manager (exclusive and shared write
//     locks, 30 minute TTL), the If header (lock tokens and entity tags,
//     tagged and untagged lists).
//   - Client quirks: macOS Finder's "._*" and ".DS_Store" files are stored
//     like any file; Windows' Mini-Redirector gets MS-Author-Via: DAV and its
//     Translate header is ignored (content is always served as stored).
package webdav

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/web/ifheader"
	"atrium/web/problem"
)

// Mount points.
const (
	Prefix      = "/api/v1/webdav"
	AliasPrefix = "/webdav"
)

// SharedFolder is the name of the virtual folder of items shared with the caller.
const SharedFolder = "Shared with me"

// MaxPutBytes is the largest file a PUT stores.
const MaxPutBytes = 512 << 20

// Methods are the HTTP methods the mount answers (for route registration).
var Methods = []string{http.MethodOptions, http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete,
	http.MethodPost, "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK"}

const allow = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK"

// Handler serves the mount.
type Handler struct {
	drive    *drive.Service
	log      *slog.Logger
	problems string
	// chunks, when set, serves chunked uploads (WithChunks).
	chunks *chunks
}

// New returns the mount's handler; publicURL names the problem type URIs.
func New(svc *drive.Service, publicURL string, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{drive: svc, log: log, problems: strings.TrimRight(publicURL, "/") + "/problems"}
}

// request is one request being served.
type request struct {
	h      *Handler
	w      http.ResponseWriter
	r      *http.Request
	ctx    context.Context
	p      *app.Principal
	prefix string // the mount point the client used
	res    *resource
	// ifLists is the parsed If header; tokens the lock tokens it submits.
	ifLists []ifheader.List
	tokens  []string
	// shared is the name of the virtual folder Shared with me once known
	// (see sharedName); sharedAt its modification time.
	shared   string
	sharedAt time.Time
	// rootTag and sharedTag are the entity tags of the root and of Shared
	// with me once known (virtualTags).
	rootTag, sharedTag string
	// assembled, when set, is the content a PUT writes in place of the
	// request's body (a chunked upload's MOVE .file).
	assembled *assembled
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := app.PrincipalFrom(r.Context())
	if p == nil {
		h.problem(w, r, app.Errorf(app.EUnauthorized, "Authentication is required: HTTP Basic with your e-mail address and an app password, or a bearer token."))
		return
	}
	if h.chunks != nil && strings.HasPrefix(r.URL.Path, UploadsPrefix) {
		q := &request{h: h, w: w, r: r, ctx: r.Context(), p: p}
		if err := q.uploads(); err != nil {
			h.problem(w, r, err)
		}
		return
	}
	prefix, rel, ok := splitMount(p, r.URL.Path)
	if !ok {
		h.problem(w, r, app.Errorf(app.ENotFound, "No WebDAV resource at %s.", r.URL.Path))
		return
	}
	q := &request{h: h, w: w, r: r, ctx: r.Context(), p: p, prefix: prefix}
	if r.Method == http.MethodOptions {
		q.options()
		return
	}
	segs, err := segments(rel)
	if err != nil {
		h.problem(w, r, err)
		return
	}
	if q.byPath(segs) {
		if err := q.putPath(segs); err != nil {
			h.problem(w, r, err)
		}
		return
	}
	if q.res, err = q.resolve(segs); err != nil {
		h.problem(w, r, err)
		return
	}
	if hdr := r.Header.Get("If"); hdr != "" {
		if q.ifLists, err = ifheader.Parse(hdr); err != nil {
			h.problem(w, r, err)
			return
		}
		q.tokens = ifheader.Tokens(q.ifLists)
	}
	q.ctx = drive.WithStrictLocks(drive.WithLockTokens(q.ctx, q.tokens...))
	if len(q.ifLists) > 0 && r.Method != "LOCK" { // LOCK evaluates If itself (refresh)
		if err := q.checkIf(); err != nil {
			h.problem(w, r, err)
			return
		}
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		err = q.get()
	case http.MethodPut:
		err = q.put()
	case http.MethodDelete:
		err = q.delete()
	case "MKCOL":
		err = q.mkcol()
	case "COPY", "MOVE":
		err = q.copyMove(r.Method == "MOVE")
	case "PROPFIND":
		err = q.propfind()
	case "PROPPATCH":
		err = q.proppatch()
	case "LOCK":
		err = q.lock()
	case "UNLOCK":
		err = q.unlock()
	default:
		err = methodNotAllowed("The method %s is not allowed here.", r.Method)
	}
	if err != nil {
		h.problem(w, r, err)
	}
}

// segments splits a decoded path below the mount into names.
func segments(rel string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(rel, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return nil, app.Errorf(app.EBadRequest, "The path must not contain \"..\".")
		}
		out = append(out, s)
	}
	return out, nil
}

// href is the escaped URL path of segments below the mount; a collection's
// ends with a slash.
func (q *request) href(segs []string, collection bool) string {
	var b strings.Builder
	b.WriteString(q.prefix)
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(escapeSegment(s))
	}
	if collection || len(segs) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}

func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), "+", "%2B")
}

func (q *request) options() {
	h := q.w.Header()
	h.Set("DAV", "1, 2")
	h.Set("MS-Author-Via", "DAV")
	h.Set("Allow", allow)
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusOK)
}

// statuses are the mount's own statuses (the rest is package problem's
// table): a client of WebDAV knows 400 for a request it got wrong, not 422.
var statuses = map[string]int{app.EValidation: http.StatusBadRequest}

// problem answers an error as application/problem+json.
func (h *Handler) problem(w http.ResponseWriter, r *http.Request, err error) {
	code := app.ErrorCode(err)
	st, ok := problem.Status(code, statuses)
	if !ok || st == http.StatusInternalServerError {
		st, code = http.StatusInternalServerError, app.EInternal
		if errors.Is(err, context.Canceled) || errors.Is(r.Context().Err(), context.Canceled) {
			h.log.Info("webdav request abandoned", "method", r.Method, "path", r.URL.Path, "err", err)
		} else {
			h.log.Error("webdav", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	switch st {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Basic realm="atrium", charset="UTF-8"`)
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", allow)
	}
	var retry int
	var ae *app.Error
	if errors.As(err, &ae) {
		retry = ae.RetryAfter
	}
	w.Header().Del("Content-Length")
	w.Header().Del("ETag")
	// A HEAD's answer has no body: net/http drops what is written.
	problem.Write(w, problem.Body{Type: h.problems + "/" + code, Status: st, Detail: app.ErrorMessage(err), Code: code, RetryAfter: retry})
}

func readOnly() error {
	return app.Errorf(app.EReadOnly, "%q is read-only: copy items out of it to change them.", SharedFolder)
}

// methodNotAllowed is a 405, which problem answers with the Allow header.
func methodNotAllowed(format string, args ...any) error {
	return app.Errorf(app.EMethodNotAllowed, format, args...)
}
