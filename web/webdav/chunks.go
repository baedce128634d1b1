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
// The chunks are kept by a ChunkStore, one folder an upload under the user's
// id: files in a directory of the data directory (DirChunks), or objects in
// the bucket when the bytes are there, so that any node takes the next chunk
// and the MOVE. A folder untouched for the drive's upload lifetime (24 h by
// default) is deleted (sweep).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
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

// chunkSweepEvery is how often, at most, a node sweeps the chunk folders.
const chunkSweepEvery = 10 * time.Minute

// chunks is the door's state of chunked uploads.
type chunks struct {
	store ChunkStore
	ttl   time.Duration

	mu        sync.Mutex
	lastSweep time.Time
}

// WithChunks turns on chunked uploads, kept in store. Without it the uploads
// path is not served.
func (h *Handler) WithChunks(store ChunkStore) *Handler {
	h.chunks = &chunks{store: store, ttl: h.drive.Options().UploadTTL}
	h.chunks.sweep(context.Background(), time.Now(), h.log)
	return h
}

// sweep deletes the upload folders untouched for the lifetime, at most
// every chunkSweepEvery.
func (c *chunks) sweep(ctx context.Context, now time.Time, log interface{ Warn(string, ...any) }) {
	c.mu.Lock()
	if now.Sub(c.lastSweep) < chunkSweepEvery {
		c.mu.Unlock()
		return
	}
	c.lastSweep = now
	c.mu.Unlock()
	if _, err := c.store.Sweep(ctx, now.Add(-c.ttl)); err != nil {
		log.Warn("expire chunked uploads", "err", err)
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

// listChunks returns the chunks of an upload folder in their order.
func (c *chunks) list(ctx context.Context, user, transfer string) ([]chunkFile, error) {
	stored, err := c.store.List(ctx, user, transfer)
	if err != nil {
		return nil, err
	}
	var out []chunkFile
	for _, e := range stored {
		n, ok := chunkNumber(e.Name)
		if !ok {
			continue
		}
		out = append(out, chunkFile{name: e.Name, n: n, size: e.Size, mod: e.ModTime})
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
	if _, err := q.h.drive.Uploads().TusRoom(q.ctx, q.p); err != nil {
		return err
	}
	c.sweep(q.ctx, time.Now(), q.h.log)
	rest = strings.Trim(rest, "/")
	transfer, chunk, _ := strings.Cut(rest, "/")
	if transfer == "" {
		if q.r.Method == "PROPFIND" || q.r.Method == http.MethodOptions {
			return q.chunkListing(nil, true)
		}
		return methodNotAllowed("Uploads go into a folder of their own.")
	}
	if !validTransfer(transfer) || strings.Contains(chunk, "/") {
		return app.Errorf(app.ENotFound, "No upload at %s.", q.r.URL.Path)
	}
	uid := q.p.UserID
	if chunk == "" {
		switch q.r.Method {
		case "MKCOL":
			made, err := c.store.MakeFolder(q.ctx, uid, transfer)
			if err != nil {
				return err
			}
			if !made {
				return methodNotAllowed("The upload folder exists.")
			}
			q.w.WriteHeader(http.StatusCreated)
			return nil
		case http.MethodDelete:
			removed, err := c.store.RemoveFolder(q.ctx, uid, transfer)
			if err != nil {
				return err
			}
			if !removed {
				return app.Errorf(app.ENotFound, "No upload at %s.", q.r.URL.Path)
			}
			q.w.WriteHeader(http.StatusNoContent)
			return nil
		case "PROPFIND":
			list, err := c.list(q.ctx, uid, transfer)
			if errors.Is(err, os.ErrNotExist) {
				return app.Errorf(app.ENotFound, "No upload at %s.", q.r.URL.Path)
			}
			if err != nil {
				return fmt.Errorf("list chunks: %w", err)
			}
			return q.chunkListing(list, false)
		}
		return methodNotAllowed("The method %s is not allowed on an upload folder.", q.r.Method)
	}
	// In use: not abandoned.
	if exists, err := c.store.Touch(q.ctx, uid, transfer); err != nil {
		return fmt.Errorf("upload folder: %w", err)
	} else if !exists {
		return app.Errorf(app.ENotFound, "No upload folder %s: MKCOL it first.", transfer)
	}
	if chunk == ".file" {
		if q.r.Method != "MOVE" {
			return methodNotAllowed("An upload's .file is only moved.")
		}
		return q.assemble(uid, transfer)
	}
	if _, ok := chunkNumber(chunk); !ok {
		return app.Errorf(app.EBadRequest, "A chunk is named by a number.")
	}
	switch q.r.Method {
	case http.MethodPut:
		return q.putChunk(uid, transfer, chunk)
	case http.MethodDelete:
		removed, err := c.store.RemoveChunk(q.ctx, uid, transfer, chunk)
		if err != nil {
			return err
		}
		if !removed {
			return app.Errorf(app.ENotFound, "No chunk %s.", chunk)
		}
		q.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return methodNotAllowed("The method %s is not allowed on a chunk.", q.r.Method)
}

// putChunk stores a chunk, whole or not at all, within what the quota and
// the upload cap leave beside the transfer's other chunks (the drive's
// UploadAllowance).
func (q *request) putChunk(uid, transfer, name string) error {
	c := q.h.chunks
	list, err := c.list(q.ctx, uid, transfer)
	if err != nil {
		return fmt.Errorf("list chunks: %w", err)
	}
	var stored int64
	for _, c := range list {
		if c.name != name {
			stored += c.size
		}
	}
	room, err := q.h.drive.Uploads().UploadAllowance(q.ctx, q.p, stored)
	if err != nil {
		return err
	}
	if room.Left < 0 || q.r.ContentLength > room.Left {
		return room.Refusal()
	}
	err = c.store.Put(q.ctx, uid, transfer, name, q.r.Body, q.r.ContentLength, room.Left)
	switch {
	case err == nil:
	case errors.Is(err, ErrChunkTooLarge):
		return room.Refusal()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return app.Errorf(app.EBadRequest, "The chunk ended before its Content-Length; it was not kept.")
	default:
		return fmt.Errorf("chunk: %w", err)
	}
	q.w.WriteHeader(http.StatusCreated)
	return nil
}

// assemble serves MOVE .file: the chunks, in order, become the content of
// the destination, through the same write as a PUT's.
func (q *request) assemble(uid, transfer string) error {
	c := q.h.chunks
	list, err := c.list(q.ctx, uid, transfer)
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
	body := &chunkReader{ctx: q.ctx, store: c.store, user: uid, transfer: transfer, list: list}
	defer body.Close()
	q.assembled = &assembled{body: bufio.NewReaderSize(body, 1<<20), size: total}
	if err := q.put(); err != nil {
		return err
	}
	if _, err := c.store.RemoveFolder(q.ctx, uid, transfer); err != nil {
		q.h.log.Warn("remove assembled upload", "transfer", transfer, "err", err)
	}
	return nil
}

// chunkReader reads a transfer's chunks one after the other, each opened
// when the one before it ends, and checks each holds what it was listed
// with (a chunk replaced since is refused, not mixed in).
type chunkReader struct {
	ctx            context.Context
	store          ChunkStore
	user, transfer string
	list           []chunkFile
	cur            io.ReadCloser
	left           int64 // of cur
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if len(r.list) == 0 {
				return 0, io.EOF
			}
			f, err := r.store.Open(r.ctx, r.user, r.transfer, r.list[0].name)
			if err != nil {
				return 0, fmt.Errorf("open chunk %s: %w", r.list[0].name, err)
			}
			r.cur, r.left = f, r.list[0].size
			r.list = r.list[1:]
		}
		n, err := r.cur.Read(p[:min(int64(len(p)), r.left+1)])
		r.left -= int64(n)
		if r.left < 0 {
			return 0, fmt.Errorf("a chunk of %s changed while it was assembled", r.transfer)
		}
		if err == io.EOF {
			if r.left != 0 {
				return n, fmt.Errorf("a chunk of %s changed while it was assembled", r.transfer)
			}
			r.cur.Close()
			r.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (r *chunkReader) Close() error {
	if r.cur != nil {
		return r.cur.Close()
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
