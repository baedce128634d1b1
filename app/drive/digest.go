package drive

// Content digests (MD5, SHA-1) that WebDAV sync clients compare, computed once
// per blob and filled in by maintenance for blobs stored before they existed.

import (
	"context"
	"crypto/md5"  //nolint:gosec // MD5 and SHA-1 are what WebDAV sync clients compare, not a security measure
	"crypto/sha1" //nolint:gosec // see above
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
	"time"

	"atrium/app"
)

// Digests are the SHA-1 and MD5 of a content, in lower-case hex. Blobs are
// named by their SHA-256; these other two are what sync clients compare
// (rclone's owncloud and nextcloud vendors read them from oc:checksums).
type Digests struct {
	SHA1 string
	MD5  string
}

// DigestStore keeps the digests of stored contents by content hash
// ("sha256:…").
type DigestStore interface {
	// AddDigests records the digests of a content; an existing row stays.
	// A write records them first in its transaction, right after a small
	// content's bytes (Blobs.PutSmall, storeReferenced): the store may keep
	// them together.
	AddDigests(ctx context.Context, contentHash string, d Digests) error
	// Digests returns the digests known of contentHashes, by content hash.
	Digests(ctx context.Context, contentHashes []string) (map[string]Digests, error)
	// DeleteDigests forgets the digests of a content whose blob went.
	DeleteDigests(ctx context.Context, contentHash string) error
	// VersionsWithoutDigests returns up to limit content hashes of versions
	// with ids after afterID, by id, whose digests are unknown, and the last
	// version id looked at ("" when there are no more versions).
	VersionsWithoutDigests(ctx context.Context, afterID string, limit int) (hashes []string, last string, err error)
}

// digester computes the digests of what is read through it, in the same pass
// that stores the bytes.
type digester struct {
	r         io.Reader
	sha1, md5 hash.Hash
}

func newDigester(r io.Reader) *digester {
	return &digester{r: r, sha1: sha1.New(), md5: md5.New()} //nolint:gosec // see the imports
}

func (d *digester) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		d.sha1.Write(p[:n])
		d.md5.Write(p[:n])
	}
	return n, err
}

func (d *digester) sums() Digests {
	return Digests{SHA1: hex.EncodeToString(d.sha1.Sum(nil)), MD5: hex.EncodeToString(d.md5.Sum(nil))}
}

// digestsOf returns the digests of data.
func digestsOf(data []byte) Digests {
	s1, m5 := sha1.Sum(data), md5.Sum(data) //nolint:gosec // see the imports
	return Digests{SHA1: hex.EncodeToString(s1[:]), MD5: hex.EncodeToString(m5[:])}
}

// ContentDigests returns the digests of the contents of files the caller got
// from this service (a listing of the mount), by content hash. Contents
// stored before digests were kept, or by a door that stores bytes in pieces
// (the resumable upload), have none until maintenance computes them
// (fillDigests): a listing never reads a blob. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan.
func (dv *DerivedData) ContentDigests(ctx context.Context, p *app.Principal, files []File) (map[string]Digests, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	hashes := make([]string, 0, len(files))
	for _, f := range files {
		if !f.IsFolder && f.ContentHash != "" {
			hashes = append(hashes, f.ContentHash)
		}
	}
	if len(hashes) == 0 {
		return map[string]Digests{}, nil
	}
	return dv.core.store.Digests(ctx, hashes)
}

// digestCursor is where fillDigests goes on: the last version id looked at.
type digestCursor struct {
	mu    sync.Mutex
	after string
}

// fillDigests computes the digests of stored contents that have none, the
// versions in id (creation) order from where the last run stopped, a page at
// a time within the step's time budget. A content whose blob is not here (archived, lost)
// is skipped.
func (s *Service) fillDigests(ctx context.Context, _ time.Time) (int, error) {
	s.digests.mu.Lock()
	defer s.digests.mu.Unlock()
	n := 0
	deadline := time.Now().Add(sweepTime)
	for time.Now().Before(deadline) {
		hashes, last, err := s.store.VersionsWithoutDigests(ctx, s.digests.after, batch)
		if err != nil {
			return n, err
		}
		for _, h := range hashes {
			if !s.blobs.Exists(ctx, blobName(h)) {
				continue
			}
			d, err := s.digestBlob(ctx, h)
			if err != nil {
				return n, err
			}
			if err := s.store.AddDigests(ctx, h, d); err != nil {
				return n, err
			}
			n++
		}
		if last == "" {
			return n, nil // every version looked at; new ones come after the cursor
		}
		s.digests.after = last
	}
	return n, nil
}

func (s *Service) digestBlob(ctx context.Context, contentHash string) (Digests, error) {
	rc, err := s.blobs.Open(ctx, blobName(contentHash))
	if err != nil {
		return Digests{}, fmt.Errorf("open blob %s: %w", contentHash, err)
	}
	defer rc.Close()
	d := newDigester(rc)
	if _, err := io.Copy(io.Discard, d); err != nil {
		return Digests{}, fmt.Errorf("read blob %s: %w", contentHash, err)
	}
	return d.sums(), nil
}

// Checksum is a digest a writer sent with the content it wrote: the algorithm
// (ChecksumSHA1, ChecksumMD5 or ChecksumSHA256) and the digest in hex.
type Checksum struct {
	Algorithm string
	Hex       string
}

// The checksum algorithms a write can be verified with.
const (
	ChecksumSHA1   = "SHA1"
	ChecksumMD5    = "MD5"
	ChecksumSHA256 = "SHA256"
)

// ChecksumHexLen is the length in hex of each algorithm's digest.
var ChecksumHexLen = map[string]int{ChecksumSHA1: 40, ChecksumMD5: 32, ChecksumSHA256: 64}

// verify refuses content whose digest (sha256 its content hash, d its SHA-1
// and MD5) is not the one the writer sent; a nil checksum verifies nothing.
func (c *Checksum) verify(sha256 string, d Digests) error {
	if c == nil {
		return nil
	}
	got := map[string]string{ChecksumSHA1: d.SHA1, ChecksumMD5: d.MD5, ChecksumSHA256: sha256}[c.Algorithm]
	if got == "" || !strings.EqualFold(got, c.Hex) {
		return app.Errorf(app.EBadRequest, "The content's %s is %s, not %s as sent with it: it changed on the way, and nothing was stored.",
			c.Algorithm, got, strings.ToLower(c.Hex))
	}
	return nil
}
