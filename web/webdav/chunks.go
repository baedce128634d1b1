package webdav

// Chunked uploads of the Nextcloud and ownCloud clients ("chunking NG", and
// Nextcloud's v2 of it) at /remote.php/dav/uploads/<user>/<transfer>/:
//
//   - MKCOL <transfer>: a folder for one file's chunks.
//   - PUT <transfer>/<n>: a chunk, n decimal (ownCloud and Nextcloud 3.x
//     name chunks by their offset, Nextcloud's v2 by their number: the file
//     is their concatenation in the numbers' order). A chunk has no size
//     limit of its own (nextcloudcmd 3.7 sends the rest of a 600 MiB file as
//     one chunk after a first of 10 MB); what the chunks of one upload add up
//     to is held to the room the organisation's quota leaves, and to the
//     drive's upload cap.
//   - PROPFIND <transfer> (Depth 0 or 1): the chunks stored, so that an
//     interrupted upload goes on from them; DELETE <transfer> or one chunk.
//   - MOVE <transfer>/.file to a path of the mount (Destination, with
//     OC-Total-Length, X-OC-Mtime, OC-Checksum and an If header as a PUT
//     takes them): the chunks become the file through the drive's one
//     content write, as a PUT's body would, and the folder goes.
//
// The chunks are files in a directory of the data directory, one folder an
// upload under the user's id, as the resumable uploads' bytes are (package
// tus); a folder untouched for the drive's upload lifetime (24 h by default)
// is deleted (sweep).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/web/ifheader"
)

// UploadsPrefix, followed by the caller's user id or e-mail address, is
// where chunked uploads go.
const UploadsPrefix = "/remote.php/dav/uploads/"

// chunkSweepEvery is how often, at most, the chunk folders are swept.
const chunkSweepEvery = 10 * time.Minute

// chunks is the store of chunked uploads.
type chunks struct {
	dir string
	ttl time.Duration

	mu        sync.Mutex
	lastSweep time.Time
}

// WithChunks turns on chunked uploads, kept under dir. Without it the
// uploads path is not served.
func (h *Handler) WithChunks(dir string) (*Handler, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("chunk directory: %w", err)
	}
	h.chunks = &chunks{dir: dir, ttl: h.drive.Options().UploadTTL}
	h.chunks.sweep(time.Now(), h.log)
	return h, nil
}

// sweep deletes the upload folders untouched for the lifetime, at most
// every chunkSweepEvery.
func (c *chunks) sweep(now time.Time, log interface{ Warn(string, ...any) }) {
	c.mu.Lock()
	if now.Sub(c.lastSweep) < chunkSweepEvery {
		c.mu.Unlock()
		return
	}
	c.lastSweep = now
	c.mu.Unlock()
	users, _ := os.ReadDir(c.dir)
	for _, u := range users {
		ups, _ := os.ReadDir(filepath.Join(c.dir, u.Name()))
		for _, up := range ups {
			info, err := up.Info()
			if err != nil || now.Sub(info.ModTime()) < c.ttl {
				continue
			}
			if err := os.RemoveAll(filepath.Join(c.dir, u.Name(), up.Name())); err != nil {
				log.Warn("expire chunked upload", "dir", up.Name(), "err", err)
			}
		}
	}
}

// validTransfer reports whether name may name an upload folder (the clients
// use a number).
func validTransfer(name string) bool {
	if name == "" || len(name) > 100 || name == "." || name == ".." {
		return false
	}
	for _, c := range name {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// chunkNumber parses a chunk's name: decimal digits.
func chunkNumber(name string) (uint64, bool) {
	if name == "" || len(name) > 20 || strings.Trim(name, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(name, 10, 64)
	return n, err == nil
}

// chunkFile is a stored chunk.
type chunkFile struct {
	name string
	n    uint64
	size int64
	mod  time.Time
}

// list returns the chunks of an upload folder in their order.
func listChunks(dir string) ([]chunkFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []chunkFile
	for _, e := range ents {
		n, ok := chunkNumber(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, chunkFile{name: e.Name(), n: n, size: info.Size(), mod: info.ModTime()})
	}
	slices.SortFunc(out, func(a, b chunkFile) int {
		switch {
		case a.n < b.n:
			return -1
		case a.n > b.n:
			return 1
		}
		return 0
	})
	return out, nil
}

// uploads serves a request below UploadsPrefix.
func (q *request) uploads() error {
	c := q.h.chunks
	rest := strings.TrimPrefix(q.r.URL.Path, UploadsPrefix)
	user, rest, _ := strings.Cut(rest, "/")
	if !OwnUser(q.p, user) {
		return app.Errorf(app.ENotFound, "No WebDAV resource at %s.", q.r.URL.Path)
	}
	// The checks every drive write makes (scope, a bound user, the plan).
	if _, err := q.h.drive.TusRoom(q.ctx, q.p); err != nil {
		return err
	}
	c.sweep(time.Now(), q.h.log)
	rest = strings.Trim(rest, "/")
	transfer, chunk, _ := strings.Cut(rest, "/")
	userDir := filepath.Join(c.dir, q.p.UserID)
	if transfer == "" {
		if q.r.Method == "PROPFIND" || q.r.Method == http.MethodOptions {
			return q.chunkListing(nil, true)
		}
		return methodNotAllowed("Uploads go into a folder of their own.")
	}
	if !validTransfer(transfer) || strings.Contains(chunk, "/") {
		return app.Errorf(app.ENotFound, "No upload at %s.", q.r.URL.Path)
	}
	dir := filepath.Join(userDir, transfer)
	_, statErr := os.Stat(dir)
	exists := statErr == nil
	if chunk == "" {
		switch q.r.Method {
		case "MKCOL":
			if exists {
				return methodNotAllowed("The upload folder exists.")
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("upload folder: %w", err)
			}
			q.w.WriteHeader(http.StatusCreated)
			return nil
		case http.MethodDelete:
			if !exists {
				return app.Errorf(app.ENotFound, "No upload at %s.", q.r.URL.Path)
			}
			if err := os.RemoveAll(dir); err != nil {
				return fmt.Errorf("remove upload: %w", err)
			}
			q.w.WriteHeader(http.StatusNoContent)
			return nil
		case "PROPFIND":
			if !exists {
				return app.Errorf(app.ENotFound, "No upload at %s.", q.r.URL.Path)
			}
			list, err := listChunks(dir)
			if err != nil {
				return fmt.Errorf("list chunks: %w", err)
			}
			return q.chunkListing(list, false)
		}
		return methodNotAllowed("The method %s is not allowed on an upload folder.", q.r.Method)
	}
	if !exists {
		return app.Errorf(app.ENotFound, "No upload folder %s: MKCOL it first.", transfer)
	}
	now := time.Now()
	_ = os.Chtimes(dir, now, now) // in use: not abandoned
	if chunk == ".file" {
		if q.r.Method != "MOVE" {
			return methodNotAllowed("An upload's .file is only moved.")
		}
		return q.assemble(dir)
	}
	if _, ok := chunkNumber(chunk); !ok {
		return app.Errorf(app.EBadRequest, "A chunk is named by a number.")
	}
	path := filepath.Join(dir, chunk)
	switch q.r.Method {
	case http.MethodPut:
		return q.putChunk(dir, chunk)
	case http.MethodDelete:
		if err := os.Remove(path); errors.Is(err, os.ErrNotExist) {
			return app.Errorf(app.ENotFound, "No chunk %s.", chunk)
		} else if err != nil {
			return fmt.Errorf("remove chunk: %w", err)
		}
		q.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return methodNotAllowed("The method %s is not allowed on a chunk.", q.r.Method)
}

// putChunk stores a chunk: written to a temporary file, made durable and
// renamed, so that a listing shows only whole chunks.
func (q *request) putChunk(dir, name string) error {
	list, err := listChunks(dir)
	if err != nil {
		return fmt.Errorf("list chunks: %w", err)
	}
	var stored int64
	for _, c := range list {
		if c.name != name {
			stored += c.size
		}
	}
	room, err := q.h.drive.TusRoom(q.ctx, q.p)
	if err != nil {
		return err
	}
	limit := min(q.h.drive.MaxTusBytes()-stored, room-stored)
	if limit < 0 || q.r.ContentLength > limit {
		if room-stored < q.h.drive.MaxTusBytes()-stored {
			return drive.QuotaError(max(0, room-stored))
		}
		return app.Errorf(app.EPayloadTooLarge, "An upload is at most %d bytes.", q.h.drive.MaxTusBytes())
	}
	tmp, err := os.CreateTemp(dir, ".part-*")
	if err != nil {
		return fmt.Errorf("chunk: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(q.r.Body, limit+1))
	if err == nil && q.r.ContentLength >= 0 && n != q.r.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err == nil && n > limit {
		err = drive.QuotaError(max(0, room-stored))
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return app.Errorf(app.EBadRequest, "The chunk ended before its Content-Length; it was not kept.")
		}
		if app.ErrorCode(err) != "" && app.ErrorCode(err) != app.EInternal {
			return err
		}
		return fmt.Errorf("chunk: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("chunk: %w", err)
	}
	q.w.WriteHeader(http.StatusCreated)
	return nil
}

// assemble serves MOVE .file: the chunks, in order, become the content of
// the destination, through the same write as a PUT's.
func (q *request) assemble(dir string) error {
	list, err := listChunks(dir)
	if err != nil {
		return fmt.Errorf("list chunks: %w", err)
	}
	var total int64
	for _, c := range list {
		total += c.size
	}
	if v := q.r.Header.Get("OC-Total-Length"); v != "" {
		want, err := strconv.ParseInt(v, 10, 64)
		if err != nil || want < 0 {
			return app.Invalid("header.OC-Total-Length", "The total length is a number of bytes.", v)
		}
		if want != total {
			return app.Errorf(app.EBadRequest, "The chunks hold %d bytes, not the %d of OC-Total-Length: upload the missing ones.", total, want)
		}
	}
	dst, err := q.destination()
	if err != nil {
		return err
	}
	if u, err := url.Parse(q.r.Header.Get("Destination")); err == nil {
		q.prefix, _, _ = splitMount(q.p, u.Path)
	}
	q.res = dst
	if hdr := q.r.Header.Get("If"); hdr != "" {
		if q.ifLists, err = ifheader.Parse(hdr); err != nil {
			return err
		}
		q.tokens = ifheader.Tokens(q.ifLists)
		q.ctx = drive.WithLockTokens(q.ctx, q.tokens...)
		if err := q.checkIf(); err != nil {
			return err
		}
	}
	q.ctx = drive.WithStrictLocks(q.ctx)
	files := make([]*os.File, 0, len(list))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	readers := make([]io.Reader, 0, len(list))
	for _, c := range list {
		f, err := os.Open(filepath.Join(dir, c.name))
		if err != nil {
			return fmt.Errorf("open chunk: %w", err)
		}
		files = append(files, f)
		readers = append(readers, f)
	}
	q.assembled = &assembled{body: bufio.NewReaderSize(io.MultiReader(readers...), 1<<20), size: total}
	if err := q.put(); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		q.h.log.Warn("remove assembled upload", "dir", dir, "err", err)
	}
	return nil
}

// assembled is the content of a chunked upload, written in place of a
// PUT's body.
type assembled struct {
	body io.Reader
	size int64
}

// chunkListing answers PROPFIND of an upload folder (or of the user's
// uploads, empty): the chunks with their sizes.
func (q *request) chunkListing(list []chunkFile, top bool) error {
	depth := strings.TrimSpace(q.r.Header.Get("Depth"))
	q.w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	q.w.WriteHeader(http.StatusMultiStatus)
	bw := bufio.NewWriter(q.w)
	bw.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<D:multistatus xmlns:D="DAV:">`)
	self := strings.TrimSuffix(q.r.URL.EscapedPath(), "/") + "/"
	bw.WriteString("<D:response><D:href>")
	escapeTo(bw, self)
	bw.WriteString("</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>\n")
	if depth != "0" && !top {
		for _, c := range list {
			bw.WriteString("<D:response><D:href>")
			escapeTo(bw, self+c.name)
			bw.WriteString("</D:href><D:propstat><D:prop><D:resourcetype/><D:getcontentlength>")
			bw.WriteString(strconv.FormatInt(c.size, 10))
			bw.WriteString("</D:getcontentlength><D:getlastmodified>")
			bw.WriteString(httpTime(c.mod))
			bw.WriteString(`</D:getlastmodified><D:getetag>"`)
			bw.WriteString(c.name + "-" + strconv.FormatInt(c.size, 10))
			bw.WriteString(`"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>` + "\n")
		}
	}
	bw.WriteString("</D:multistatus>\n")
	return bw.Flush()
}
