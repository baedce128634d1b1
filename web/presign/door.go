// Package presign is the door of presigned URLs: it makes and checks them
// (Signer) and serves them under /blob/ (NewHandler): downloads of stored
// objects, and uploads handed to the drive service. Its errors are problems
// of the one vocabulary (web/problem).
package presign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/web/problem"
)

// The routes NewHandler serves; the caller mounts the handler under /blob/.
const (
	objectPrefix = "/blob/o/"
	uploadPrefix = "/blob/u/"
)

// ObjectPath is the path of the presigned download of the object hash, to sign
// with Signer.URL for GET (which also allows HEAD).
func ObjectPath(hash string) string { return objectPrefix + hash }

// UploadPath is the path of the presigned upload ref, to sign with Signer.URL
// for PUT. ref is opaque to this package and handed to the PutFunc.
func UploadPath(ref string) string { return uploadPrefix + ref }

// The signed parameters a download URL may carry.
const (
	// ParamContentType is the Content-Type to serve (default
	// application/octet-stream).
	ParamContentType = "ct"
	// ParamFilename is the file name offered in Content-Disposition.
	ParamFilename = "fn"
	// ParamInline, when "1", makes the Content-Disposition inline rather than
	// attachment.
	ParamInline = "inline"
)

// PutFunc performs a presigned upload: ref is the <ref> of /blob/u/<ref>, params
// the URL's signed parameters and r the request, whose body it typically streams
// into the store with Store.Put(ctx, r.Body, limit). It runs only for a
// correctly signed, unexpired PUT URL.
//
// Returning nil makes the handler reply 200 with an empty body; headers the
// function set through ResponseHeader(ctx) (an ETag, say) are sent with it. An
// error is turned into a problem response: an *app.Error by its code, through
// the one status table (web/problem), with its message as the detail; any
// other error is 500 (logged, with a generic detail).
type PutFunc func(ctx context.Context, ref string, params url.Values, r *http.Request) error

type headerKey struct{}

// ResponseHeader returns the header of the response to the presigned PUT that
// ctx (the context passed to a PutFunc) belongs to, for the PutFunc to set
// headers such as ETag. Outside a PutFunc it returns a fresh header that goes
// nowhere.
func ResponseHeader(ctx context.Context) http.Header {
	if h, ok := ctx.Value(headerKey{}).(http.Header); ok {
		return h
	}
	return http.Header{}
}

// Objects is what GET serves objects from: the blob store, or a store of
// more tiers than files. A missing object is an error wrapping
// fs.ErrNotExist.
type Objects interface {
	Open(ctx context.Context, hash string) (io.ReadSeekCloser, error)
}

type handler struct {
	objects Objects
	signer  *Signer
	onPut   PutFunc
	log     *slog.Logger
}

// NewHandler serves presigned URLs made by signer, at the paths it receives
// (mount it under /blob/ without stripping the prefix):
//
//   - GET and HEAD /blob/o/<hash> serve the object (Range, conditional requests
//     and HEAD through http.ServeContent) with the Content-Type of the signed
//     parameter ct, a Content-Disposition from fn and inline, ETag "<hash>" and
//     a private Cache-Control that lasts until the URL expires. HEAD is allowed
//     with a URL signed for GET.
//   - PUT /blob/u/<ref> calls onPut; a nil onPut disables uploads (405).
//
// A bad signature is 403 forbidden, an expired URL 403 url_expired, an unknown
// object 404 not_found, another method 405; errors are application/problem+json.
// log may be nil (slog.Default).
func NewHandler(objects Objects, signer *Signer, onPut PutFunc, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return &handler{objects: objects, signer: signer, onPut: onPut, log: log}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, objectPrefix):
		h.get(w, r, p[len(objectPrefix):])
	case strings.HasPrefix(p, uploadPrefix):
		h.put(w, r, p[len(uploadPrefix):])
	default:
		h.writeProblem(w, http.StatusNotFound, "not_found", "There is no such blob URL.")
	}
}

// verify checks r's signature for its method, letting HEAD use a GET URL, and
// answers 403 when it fails.
func (h *handler) verify(w http.ResponseWriter, r *http.Request) (url.Values, time.Time, bool) {
	params, expires, err := h.signer.verify(r.Method, r.URL)
	if err != nil && r.Method == http.MethodHead && errors.Is(err, ErrBadSignature) {
		params, expires, err = h.signer.verify(http.MethodGet, r.URL)
	}
	switch {
	case err == nil:
		return params, expires, true
	case errors.Is(err, ErrExpired):
		h.writeProblem(w, http.StatusForbidden, "url_expired", "The URL has expired; request a new one.")
	default:
		h.writeProblem(w, http.StatusForbidden, "forbidden", "The URL signature is not valid.")
	}
	// The query is not logged: its signature is a credential.
	h.log.InfoContext(r.Context(), "blob url rejected", "method", r.Method, "path", r.URL.Path, "err", err)
	return nil, time.Time{}, false
}

// get serves GET and HEAD of an object.
func (h *handler) get(w http.ResponseWriter, r *http.Request, hash string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.writeProblem(w, http.StatusMethodNotAllowed, "method_not_allowed", "Objects are read with GET or HEAD.")
		return
	}
	params, expires, ok := h.verify(w, r)
	if !ok {
		return
	}
	if !validHash(hash) {
		h.writeProblem(w, http.StatusNotFound, "not_found", "The object does not exist.")
		return
	}
	f, err := h.objects.Open(r.Context(), hash)
	if errors.Is(err, fs.ErrNotExist) {
		h.writeProblem(w, http.StatusNotFound, "not_found", "The object does not exist.")
		return
	}
	if err != nil {
		h.log.ErrorContext(r.Context(), "blob open failed", "hash", hash, "err", err)
		h.writeProblem(w, http.StatusInternalServerError, "internal", "The object could not be read.")
		return
	}
	defer f.Close()

	hd := w.Header()
	hd.Set("Content-Type", contentType(params.Get(ParamContentType)))
	hd.Set("ETag", `"`+hash+`"`)
	hd.Set("Content-Disposition", ContentDisposition(params.Get(ParamFilename), params.Get(ParamInline) == "1"))
	maxAge := int64(expires.Sub(h.signer.now()) / time.Second)
	hd.Set("Cache-Control", "private, max-age="+strconv.FormatInt(max(maxAge, 0), 10))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Accept-Ranges", "bytes")
	// A zero modtime leaves Last-Modified out: the ETag identifies the content
	// exactly. ServeContent sets Content-Length and handles Range, If-Range,
	// If-None-Match, If-Match and HEAD.
	http.ServeContent(w, r, "", time.Time{}, f)
}

// put serves PUT of an upload.
func (h *handler) put(w http.ResponseWriter, r *http.Request, ref string) {
	if h.onPut == nil {
		w.Header().Set("Allow", "") // uploads are disabled
		h.writeProblem(w, http.StatusMethodNotAllowed, "method_not_allowed", "Uploads are not enabled.")
		return
	}
	if r.Method != http.MethodPut {
		w.Header().Set("Allow", "PUT")
		h.writeProblem(w, http.StatusMethodNotAllowed, "method_not_allowed", "Uploads are made with PUT.")
		return
	}
	params, _, ok := h.verify(w, r)
	if !ok {
		return
	}
	if ref == "" {
		h.writeProblem(w, http.StatusNotFound, "not_found", "There is no such upload.")
		return
	}
	ctx := context.WithValue(r.Context(), headerKey{}, w.Header())
	err := h.onPut(ctx, ref, params, r.WithContext(ctx))
	if err == nil {
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Del("ETag")
	var ae *app.Error
	switch {
	case errors.As(err, &ae):
		status, _ := problem.Status(ae.Code, nil)
		if status < 500 {
			h.writeProblem(w, status, ae.Code, ae.Message)
			return
		}
		h.log.ErrorContext(r.Context(), "blob upload failed", "ref", ref, "status", status, "err", err)
		h.writeProblem(w, status, ae.Code, ae.Message)
	case r.Context().Err() != nil:
		// The client went away mid-upload; nobody will read the reply.
		h.log.InfoContext(r.Context(), "blob upload aborted", "ref", ref, "err", err)
		h.writeProblem(w, http.StatusBadRequest, app.EBadRequest, "The upload was interrupted.")
	default:
		h.log.ErrorContext(r.Context(), "blob upload failed", "ref", ref, "err", err)
		h.writeProblem(w, http.StatusInternalServerError, app.EInternal, "The upload failed.")
	}
}

// validHash reports whether hash is an object's name: 64 lowercase hex digits.
func validHash(hash string) bool {
	if len(hash) != 64 {
		return false
	}
	for i := 0; i < len(hash); i++ {
		if c := hash[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// contentType returns ct when it is a well-formed media type, else
// application/octet-stream.
func contentType(ct string) string {
	if ct == "" {
		return "application/octet-stream"
	}
	if _, _, err := mime.ParseMediaType(ct); err != nil {
		return "application/octet-stream"
	}
	return ct
}

// ContentDisposition returns an attachment (or inline) Content-Disposition
// offering name as the file name, per RFC 6266: an ASCII fallback in filename=
// for old clients and the exact UTF-8 name in filename*= (RFC 5987/8187).
func ContentDisposition(name string, inline bool) string {
	typ := "attachment"
	if inline {
		typ = "inline"
	}
	// Never offer directory separators, control characters or invalid UTF-8.
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
			return '_'
		}
		return r
	}, strings.ToValidUTF8(name, "_"))
	if name == "" {
		return typ
	}
	var fallback, ext strings.Builder
	for _, r := range name {
		if r >= 0x80 || r == '"' || r == '%' {
			fallback.WriteByte('_')
		} else {
			fallback.WriteRune(r)
		}
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; isAttrChar(c) {
			ext.WriteByte(c)
		} else {
			fmt.Fprintf(&ext, "%%%02X", c)
		}
	}
	return typ + `; filename="` + fallback.String() + `"; filename*=UTF-8''` + ext.String()
}

// isAttrChar reports whether c may appear unencoded in an RFC 8187 ext-value.
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

// writeProblem sends a problem response (web/problem's writer): its type is
// the code's page under the public URL's /problems, its instance the request
// id the server's middleware put on the response.
func (h *handler) writeProblem(w http.ResponseWriter, status int, code, detail string) {
	hd := w.Header()
	for _, k := range []string{"Content-Disposition", "Content-Length", "Accept-Ranges"} {
		hd.Del(k)
	}
	hd.Set("Cache-Control", "no-store")
	problem.Write(w, problem.Body{Type: h.signer.base + "/problems/" + code, Status: status, Detail: detail, Code: code,
		Instance: problem.Instance(hd.Get("X-Request-Id"))})
}
