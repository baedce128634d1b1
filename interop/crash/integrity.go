package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite"
)

// integrity checks a stopped server's data directory as the kill left it. The
// database and its WAL are copied to a temp directory first, so the server's
// own recovery at the next start finds them untouched: PRAGMA integrity_check
// and foreign_key_check must pass, and every blob a live file row, a version
// or a finished TUS upload references must be stored (on disk, or a small
// content in the database), of its size and hash.
func integrity(data string) error {
	tmp, err := os.MkdirTemp("", "crash-db-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(filepath.Join(data, "atrium.db"+suffix), filepath.Join(tmp, "atrium.db"+suffix)); err != nil {
			if suffix == "-wal" && os.IsNotExist(err) {
				continue
			}
			return err
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(tmp, "atrium.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	counted("integrity", 1)
	rows, err := db.Query(`PRAGMA integrity_check`)
	if err != nil {
		fail("integrity", "PRAGMA integrity_check: %v", err)
		return nil
	}
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	rows.Close()
	if len(msgs) != 1 || msgs[0] != "ok" {
		fail("integrity", "PRAGMA integrity_check: %s", strings.Join(msgs, "; "))
	}
	var fk int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil {
		fail("integrity", "PRAGMA foreign_key_check: %v", err)
	} else if fk != 0 {
		fail("integrity", "PRAGMA foreign_key_check: %d violations", fk)
	}

	type ref struct {
		what, hash string
		size       int64
	}
	var refs []ref
	q := `SELECT 'file ' || id || ' ' || name, content_hash, size_bytes FROM drive_files
	        WHERE is_folder = 0 AND status IN ('active') AND content_hash <> ''
	      UNION ALL SELECT 'version ' || v.id || ' of ' || f.name, v.content_hash, v.size_bytes
	        FROM drive_versions v JOIN drive_files f ON f.id = v.file_id WHERE f.status = 'active'
	      UNION ALL SELECT 'tus upload ' || id || ' ' || name, content_hash, length FROM drive_tus_uploads
	        WHERE status = 'conflict' AND content_hash <> ''`
	rows, err = db.Query(q)
	if err != nil {
		fail("blobs", "query blob references: %v", err)
		return nil
	}
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.what, &r.hash, &r.size); err != nil {
			return err
		}
		r.hash = strings.TrimPrefix(r.hash, "sha256:")
		refs = append(refs, r)
	}
	rows.Close()
	hashed := map[string]string{} // hash → "" when the object is right, else what is wrong
	for _, r := range refs {
		counted("blobs", 1)
		bad, done := hashed[r.hash]
		if !done {
			bad = checkContent(db, data, r.hash, r.size)
			hashed[r.hash] = bad
		}
		if bad != "" {
			fail("blobs", "%s (%d bytes, sha256 %s): %s", r.what, r.size, r.hash, bad)
		}
	}

	// Counters and versions commit with the file row: the head version is the
	// file's content, stored bytes are the sum of the versions kept, the
	// usage counters are the sum of the files, and an organisation's totals
	// the sum of its counters.
	invariants := []struct{ what, q string }{
		{"file whose head version is not its content", `SELECT count(*) FROM drive_files f WHERE f.is_folder = 0 AND f.status = 'active'
			AND NOT EXISTS (SELECT 1 FROM drive_versions v WHERE v.file_id = f.id AND v.version = f.version
			AND v.content_hash = f.content_hash AND v.size_bytes = f.size_bytes)`},
		{"file whose stored_bytes is not the sum of its versions", `SELECT count(*) FROM drive_files f WHERE f.is_folder = 0 AND f.status = 'active'
			AND f.stored_bytes <> (SELECT ifnull(sum(size_bytes), 0) FROM drive_versions v WHERE v.file_id = f.id)`},
		{"usage counter that is not the sum of its files", `SELECT count(*) FROM (
			SELECT u.bytes, u.file_count, ifnull(sum(f.stored_bytes), 0) AS b, count(f.id) AS n
			FROM drive_usage u LEFT JOIN drive_files f ON f.organization_id = u.organization_id AND f.owner_id = u.owner_id
			  AND f.mime_group = u.mime_group AND f.is_folder = 0 AND f.status <> 'pending'
			GROUP BY u.organization_id, u.owner_id, u.mime_group) WHERE bytes <> b OR file_count <> n`},
		{"organisation total that is not the sum of its usage counters", `SELECT count(*) FROM (
			SELECT organization_id, sum(bytes) AS b, sum(file_count) AS n FROM drive_usage GROUP BY organization_id) u
			FULL JOIN drive_org_usage o ON o.organization_id = u.organization_id
			WHERE ifnull(o.bytes, 0) <> ifnull(u.b, 0) OR ifnull(o.file_count, 0) <> ifnull(u.n, 0)`},
	}
	for _, inv := range invariants {
		counted("counters", 1)
		var n int
		if err := db.QueryRow(inv.q).Scan(&n); err != nil {
			fail("counters", "%s: %v", inv.what, err)
		} else if n != 0 {
			fail("counters", "%d %s", n, inv.what)
		}
	}

	// Partial TUS uploads: the recorded offset never runs ahead of the bytes.
	rows, err = db.Query(`SELECT id, name, upload_offset, length, hash_state FROM drive_tus_uploads WHERE status = 'uploading'`)
	if err != nil {
		fail("tus", "query uploads: %v", err)
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		var off, length int64
		var state []byte
		if err := rows.Scan(&id, &name, &off, &length, &state); err != nil {
			return err
		}
		counted("tus", 1)
		fi, err := os.Stat(filepath.Join(data, "tus", id))
		if os.IsNotExist(err) && off == length && length > 0 {
			// Stopped between the move of the finished bytes into the store
			// and the commit: the object the hash state names must be there.
			h := sha256.New()
			if uerr := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); uerr != nil {
				fail("tus", "upload %s (%s): hash state: %v", id, name, uerr)
				continue
			}
			hash := hex.EncodeToString(h.Sum(nil))
			if bad := checkContent(db, data, hash, length); bad != "" {
				fail("tus", "upload %s (%s) complete but not committed, no data file, and its blob %s: %s", id, name, hash, bad)
			}
			continue
		}
		switch {
		case os.IsNotExist(err) && off == 0:
			// Stopped between the upload's row and its data file: the server
			// creates the file at the first PATCH.
		case err != nil:
			fail("tus", "upload %s (%s) at offset %d: data file: %v", id, name, off, err)
		case fi.Size() < off:
			fail("tus", "upload %s (%s): offset %d recorded, %d bytes on disk", id, name, off, fi.Size())
		}
	}
	return rows.Err()
}

// checkContent checks the content hash of size bytes: a small content in the
// database (drive_small_blobs), else an object of the blob store.
func checkContent(db *sql.DB, data, hash string, size int64) string {
	var small []byte
	switch err := db.QueryRow(`SELECT data FROM drive_small_blobs WHERE hash = ?`, hash).Scan(&small); {
	case err == nil:
		if got := sha256.Sum256(small); hex.EncodeToString(got[:]) != hash || int64(len(small)) != size {
			return fmt.Sprintf("the database holds %d bytes with sha256 %x", len(small), got)
		}
		return ""
	case !errors.Is(err, sql.ErrNoRows):
		return "read small content: " + err.Error()
	}
	return checkObject(filepath.Join(data, "blobs", "objects", hash[:2], hash[2:4], hash), hash, size)
}

func checkObject(path, hash string, size int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err.Error()
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hash || n != size {
		return fmt.Sprintf("object holds %d bytes with sha256 %s", n, got)
	}
	return ""
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
