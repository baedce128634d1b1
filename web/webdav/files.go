package webdav

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

// get serves GET and HEAD: a file's content with Range and conditional
// requests, or a small HTML index of a folder.
func (q *request) get() error {
	res := q.res
	if !res.exists {
		return app.Errorf(app.ENotFound, "Nothing is at %s.", q.r.URL.Path)
	}
	if res.isCollection() {
		return q.index()
	}
	f, rc, err := q.h.drive.Open(q.ctx, q.p, res.file.ID)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := q.w.Header()
	h.Set("ETag", etag(f))
	h.Set("Content-Type", f.MimeType)
	h.Set("Accept-Ranges", "bytes")
	h.Set("X-Content-Type-Options", "nosniff")
	// The content is the user's: a browser must not run it on our origin.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	http.ServeContent(q.w, q.r, "", modTime(f), rc)
	return nil
}

// index writes an HTML list of a folder's items.
func (q *request) index() error {
	q.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q.w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	q.w.Header().Set("X-Frame-Options", "DENY")
	q.w.Header().Set("X-Content-Type-Options", "nosniff")
	if q.r.Method == http.MethodHead {
		q.w.WriteHeader(http.StatusOK)
		return nil
	}
	bw := bufio.NewWriterSize(q.w, 32<<10)
	bw.WriteString("<!doctype html><meta charset=\"utf-8\"><title>")
	bw.WriteString(html.EscapeString("/" + strings.Join(q.res.segs, "/")))
	bw.WriteString("</title><ul>\n")
	err := q.children(func(c child) error {
		name := c.name
		if c.file.IsFolder || c.kind == kindShared {
			name += "/"
		}
		bw.WriteString(`<li><a href="`)
		bw.WriteString(html.EscapeString(q.href(append(q.res.segs[:len(q.res.segs):len(q.res.segs)], c.name), c.file.IsFolder || c.kind == kindShared)))
		bw.WriteString(`">`)
		bw.WriteString(html.EscapeString(name))
		bw.WriteString("</a>\n")
		return nil
	})
	if err != nil {
		return err
	}
	bw.WriteString("</ul>\n")
	return bw.Flush()
}

// put stores the body as the file at the path resolved before it (a path
// below Shared with me, or one whose If header is evaluated against it): a
// new file (201) or a new version of the existing one (204). Every other PUT
// is putPath's.
func (q *request) put() error {
	res := q.res
	if err := res.writable(); err != nil {
		return err
	}
	var existing *drive.File
	if res.exists {
		existing = &res.file
	}
	if err := q.putAllowed(existing); err != nil {
		return err
	}
	if !res.exists && !res.parentOK {
		return app.Errorf(app.EConflict, "The folder to put %q in does not exist.", res.name())
	}
	req, err := q.putRequest(res.name())
	if err != nil {
		return err
	}
	req.ParentID = res.parentID
	if res.exists {
		req.FileID = res.file.ID
	}
	return q.putDone(req, res.segs)
}

// byPath reports whether a PUT of segs leaves the path to the write
// (putPath): any path in the caller's own drive when no If header needs the
// state of the path before the write.
func (q *request) byPath(segs []string) bool {
	return q.r.Method == http.MethodPut && len(segs) > 0 && q.r.Header.Get("If") == "" && !maybeShared(segs[0])
}

// putPath is a PUT whose path the write itself resolves (drive.PutRequest's
// Folder), with the preconditions decided in the write's transaction: for a
// small file, no read of the path before the write.
func (q *request) putPath(segs []string) error {
	q.ctx = drive.WithStrictLocks(q.ctx)
	name := segs[len(segs)-1]
	req, err := q.putRequest(name)
	if err != nil {
		return err
	}
	req.Folder, req.Check = segs[:len(segs)-1], q.putAllowed
	return q.putDone(req, segs)
}

// putRequest reads a PUT's headers into the request for a file called name.
func (q *request) putRequest(name string) (drive.PutRequest, error) {
	body, size, limit := io.Reader(q.r.Body), q.r.ContentLength, int64(MaxPutBytes)
	if q.assembled != nil {
		body, size, limit = q.assembled.body, q.assembled.size, q.h.drive.Uploads().MaxTusBytes()
	}
	if size > limit {
		return drive.PutRequest{}, app.Errorf(app.EPayloadTooLarge, "A file stored over WebDAV is at most %d bytes (512 MiB); upload larger files in chunks or with the resumable upload.", MaxPutBytes)
	}
	mtime, err := ocMtime(q.r.Header.Get("X-OC-Mtime"))
	if err != nil {
		return drive.PutRequest{}, err
	}
	sum, err := ocChecksum(q.r.Header.Get("OC-Checksum"))
	if err != nil {
		return drive.PutRequest{}, err
	}
	return drive.PutRequest{Name: name, MimeType: q.r.Header.Get("Content-Type"), Size: size, Body: body,
		MaxBytes: limit, ModifiedAt: mtime, Checksum: sum}, nil
}

// putDone writes req and answers.
func (q *request) putDone(req drive.PutRequest, segs []string) error {
	f, created, err := q.h.drive.Put(q.ctx, q.p, req)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return app.Errorf(app.EBadRequest, "The body ended before its Content-Length; nothing was stored.")
		}
		return err
	}
	setFileHeaders(q, f)
	if !req.ModifiedAt.IsZero() {
		q.w.Header().Set("X-OC-MTime", "accepted")
	}
	if created {
		q.w.Header().Set("Location", q.href(segs, false))
		q.w.WriteHeader(http.StatusCreated)
	} else {
		q.w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// putAllowed decides a PUT against the live item at its path (nil: none): no
// file over a folder, and If-Match and If-None-Match honoured.
func (q *request) putAllowed(existing *drive.File) error {
	if existing != nil && existing.IsFolder {
		return methodNotAllowed("%q is a folder; PUT writes files.", existing.Name)
	}
	return q.preconditions(existing)
}

// checkPreconditions honours If-Match and If-None-Match on writes.
func (q *request) checkPreconditions() error {
	if q.res.exists {
		return q.preconditions(&q.res.file)
	}
	return q.preconditions(nil)
}

// preconditions decides If-Match and If-None-Match against existing (nil:
// nothing at the path).
func (q *request) preconditions(existing *drive.File) error {
	if im := q.r.Header.Get("If-Match"); im != "" {
		if existing == nil || (strings.TrimSpace(im) != "*" && !etagListHas(im, etag(*existing))) {
			return app.Errorf(app.EPreconditionFailed, "If-Match does not match the current entity tag.")
		}
	}
	if inm := q.r.Header.Get("If-None-Match"); inm != "" && existing != nil {
		if strings.TrimSpace(inm) == "*" || etagListHas(inm, etag(*existing)) {
			return app.Errorf(app.EPreconditionFailed, "If-None-Match: the resource exists with that entity tag.")
		}
	}
	return nil
}

func etagListHas(list, tag string) bool {
	for _, t := range strings.Split(list, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == tag {
			return true
		}
	}
	return false
}

// delete moves the item to the trash.
func (q *request) delete() error {
	res := q.res
	if err := res.writable(); err != nil {
		return err
	}
	if !res.exists {
		return app.Errorf(app.ENotFound, "Nothing is at %s.", q.r.URL.Path)
	}
	if q.r.URL.Fragment != "" || strings.Contains(q.r.RequestURI, "#") {
		return app.Errorf(app.EBadRequest, "A request URI carries no fragment.")
	}
	if err := q.checkPreconditions(); err != nil {
		return err
	}
	if err := q.h.drive.Trash(q.ctx, q.p, res.file.ID); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// mkcol creates a folder.
func (q *request) mkcol() error {
	res := q.res
	if res.exists {
		return methodNotAllowed("Something already exists at %s.", q.r.URL.Path)
	}
	if err := res.writable(); err != nil {
		return err
	}
	if q.r.ContentLength > 0 || len(q.r.TransferEncoding) > 0 {
		n, _ := io.Copy(io.Discard, io.LimitReader(q.r.Body, 1))
		if n > 0 {
			return app.Errorf(app.EUnsupportedMediaType, "MKCOL takes no body.")
		}
	}
	if !res.parentOK {
		return app.Errorf(app.EConflict, "The folder to create %q in does not exist.", res.name())
	}
	f, err := q.h.drive.CreateFolder(q.ctx, q.p, res.name(), res.parentID)
	if app.ErrorCode(err) == app.EConflict {
		// Another request made the item since this one looked: as when it
		// was there first (RFC 4918 §9.3.1).
		if now, rerr := q.resolve(res.segs); rerr == nil && now.exists {
			return methodNotAllowed("Something already exists at %s.", q.r.URL.Path)
		}
	}
	if err != nil {
		return err
	}
	setFileHeaders(q, f)
	q.w.Header().Set("Location", q.href(res.segs, true))
	q.w.WriteHeader(http.StatusCreated)
	return nil
}

// destination resolves the Destination header.
func (q *request) destination() (*resource, error) {
	raw := q.r.Header.Get("Destination")
	if raw == "" {
		return nil, app.Errorf(app.EBadRequest, "COPY and MOVE need a Destination header.")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, app.Errorf(app.EBadRequest, "The Destination header is not a URL.")
	}
	if u.Host != "" && u.Host != q.r.Host {
		return nil, app.Errorf(app.EBadGateway, "The destination is on another server.")
	}
	_, rel, ok := splitMount(q.p, u.Path)
	if !ok {
		return nil, app.Errorf(app.EBadGateway, "The destination is outside the file mount.")
	}
	segs, err := segments(rel)
	if err != nil {
		return nil, err
	}
	return q.resolve(segs)
}

// copyMove serves COPY and MOVE.
func (q *request) copyMove(move bool) error {
	src := q.res
	if !src.exists {
		return app.Errorf(app.ENotFound, "Nothing is at %s.", q.r.URL.Path)
	}
	if src.kind != kindItem {
		return app.Errorf(app.EForbidden, "The root and %q cannot be copied or moved.", SharedFolder)
	}
	if move && src.shared {
		return readOnly()
	}
	depth := strings.ToLower(strings.TrimSpace(q.r.Header.Get("Depth")))
	switch {
	case depth == "" || depth == "infinity":
	case depth == "0" && !move:
	default:
		return app.Errorf(app.EBadRequest, "Depth must be infinity%s.", map[bool]string{false: " or 0", true: ""}[move])
	}
	overwrite := true
	switch strings.ToUpper(strings.TrimSpace(q.r.Header.Get("Overwrite"))) {
	case "", "T":
	case "F":
		overwrite = false
	default:
		return app.Errorf(app.EBadRequest, "Overwrite is T or F.")
	}
	dst, err := q.destination()
	if err != nil {
		return err
	}
	if err := dst.writable(); err != nil {
		return err
	}
	same := dst.exists && dst.file.ID == src.file.ID
	if same && (!move || dst.name() == src.file.Name) {
		return app.Errorf(app.EForbidden, "The source and the destination are the same.")
	}
	if !same && isPrefix(src.segs, dst.segs) && len(dst.segs) > len(src.segs) {
		return app.Errorf(app.EForbidden, "An item cannot be copied or moved into itself.")
	}
	if !dst.parentOK {
		return app.Errorf(app.EConflict, "The destination folder does not exist.")
	}
	status, replace := http.StatusCreated, ""
	if dst.exists && !same {
		if !overwrite {
			return app.Errorf(app.EPreconditionFailed, "The destination exists and Overwrite is F.")
		}
		status, replace = http.StatusNoContent, dst.file.ID
	}
	// One service call each: the destination goes to the trash in the
	// transaction of the move or copy, or stays when that is refused.
	var f drive.File
	if move {
		f, err = q.h.drive.MoveOver(q.ctx, q.p, src.file.ID, dst.parentID, dst.name(), replace)
	} else {
		f, err = q.h.drive.CopyOver(q.ctx, q.p, src.file.ID, dst.parentID, dst.name(), depth == "0", replace)
	}
	if err != nil {
		return err
	}
	setFileHeaders(q, f)
	q.w.Header().Set("Location", q.href(dst.segs, src.file.IsFolder))
	q.w.WriteHeader(status)
	return nil
}

// isPrefix reports whether a is a prefix of b, comparing names as the drive does.
func isPrefix(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if drive.NameKey(a[i]) != drive.NameKey(b[i]) {
			return false
		}
	}
	return true
}

// ocMtime parses the X-OC-Mtime header of a PUT (ownCloud's, sent by rclone
// and the ownCloud and Nextcloud clients): the file's modification time in
// Unix seconds; zero when absent.
// ocChecksum reads OC-Checksum, the digest ownCloud and Nextcloud clients
// (and rclone's owncloud vendor) send with a PUT: "SHA1:<hex>", "MD5:<hex>"
// or "SHA256:<hex>"; the service refuses content that does not match. Other
// algorithms (ADLER32) are not verified; none sent, nil.
func ocChecksum(v string) (*drive.Checksum, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	alg, sum, ok := strings.Cut(v, ":")
	alg = strings.ToUpper(strings.TrimSpace(alg))
	n, known := drive.ChecksumHexLen[alg]
	switch {
	case !ok:
		return nil, app.Invalid("header.OC-Checksum", "A checksum is ALGORITHM:HEX, such as SHA1:<40 hex digits>.", v)
	case !known:
		return nil, nil
	}
	sum = strings.TrimSpace(sum)
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != n {
		return nil, app.Invalid("header.OC-Checksum", fmt.Sprintf("A %s checksum is %d hex digits.", alg, n), v)
	}
	return &drive.Checksum{Algorithm: alg, Hex: sum}, nil
}

func ocMtime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, ok := unixSeconds(strings.TrimSpace(v))
	if !ok {
		return time.Time{}, app.Invalid("header.X-OC-Mtime", "The modification time is a number of seconds since 1970-01-01 UTC.", v)
	}
	if err := drive.CheckModifiedTime("header.X-OC-Mtime", t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}
