package sqldb

import (
	"context"
	"strings"
	"time"

	"atrium/app/drive"
)

// AddDigests records the SHA-1 and MD5 of a content; an existing row stays.
// In a transaction, the digests of the small content the transaction just
// put (SmallBlobs.Put) go into its row instead.
func (s DriveStore) AddDigests(ctx context.Context, contentHash string, d drive.Digests) error {
	if st, ok := ctx.Value(txKey{}).(*txState); ok && st.w.small.set {
		if h, ok := strings.CutPrefix(contentHash, "sha256:"); ok && h == st.w.small.hash {
			return st.w.small.write(ctx, st.w.stmts, d)
		}
	}
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_digests (content_hash, sha1, md5) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, contentHash, d.SHA1, d.MD5)
	return mapErr(err, "content digests")
}

// Digests returns the digests known of contentHashes, by content hash.
func (s DriveStore) Digests(ctx context.Context, contentHashes []string) (map[string]drive.Digests, error) {
	out := map[string]drive.Digests{}
	if len(contentHashes) == 0 {
		return out, nil
	}
	// A small content's may be in its row (migration 00026).
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT j.value, coalesce(d.sha1, b.sha1), coalesce(d.md5, b.md5) FROM json_each(?) j
		LEFT JOIN drive_digests d ON d.content_hash = j.value
		LEFT JOIN drive_small_blobs b ON d.content_hash IS NULL AND b.hash = substr(j.value, 8) AND j.value LIKE 'sha256:%'
		WHERE coalesce(d.sha1, b.sha1) IS NOT NULL AND coalesce(d.md5, b.md5) IS NOT NULL`, distinctJSONIDs(contentHashes))
	if err != nil {
		return nil, mapErr(err, "content digests")
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		var d drive.Digests
		if err := rows.Scan(&h, &d.SHA1, &d.MD5); err != nil {
			return nil, mapErr(err, "content digests")
		}
		out[h] = d
	}
	return out, mapErr(rows.Err(), "content digests")
}

// DeleteDigests forgets the digests of a content.
func (s DriveStore) DeleteDigests(ctx context.Context, contentHash string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_digests WHERE content_hash = ?`, contentHash)
	return mapErr(err, "content digests")
}

// VersionsWithoutDigests looks at up to limit versions after afterID, by id,
// and returns the content hashes among them without digests and the last id
// looked at ("" when none was).
func (s DriveStore) VersionsWithoutDigests(ctx context.Context, afterID string, limit int) ([]string, string, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT v.id, v.content_hash, d.content_hash IS NULL AND NOT EXISTS (
			SELECT 1 FROM drive_small_blobs b WHERE b.hash = substr(v.content_hash, 8) AND b.sha1 IS NOT NULL AND b.md5 IS NOT NULL)
		FROM drive_versions v
		LEFT JOIN drive_digests d ON d.content_hash = v.content_hash
		WHERE v.id > ? ORDER BY v.id LIMIT ?`, afterID, limit)
	if err != nil {
		return nil, "", mapErr(err, "drive versions")
	}
	defer rows.Close()
	var hashes []string
	last := ""
	seen := map[string]bool{}
	for rows.Next() {
		var id, h string
		var missing bool
		if err := rows.Scan(&id, &h, &missing); err != nil {
			return nil, "", mapErr(err, "drive versions")
		}
		last = id
		if missing && h != "" && !seen[h] {
			seen[h] = true
			hashes = append(hashes, h)
		}
	}
	return hashes, last, mapErr(rows.Err(), "drive versions")
}

// SharedSince returns when the newest unexpired share with userID of a live
// item of the organisation was made, else when the user was created.
func (s DriveStore) SharedSince(ctx context.Context, orgID, userID string, now time.Time) (time.Time, error) {
	var t int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT `+s.greatest(
		`coalesce((SELECT max(sh.since) FROM drive_share_grants sh JOIN drive_files f ON f.id = sh.file_id
			WHERE sh.user_id = ? AND (sh.expires_at IS NULL OR sh.expires_at > ?)
			AND f.organization_id = ? AND f.trashed_at IS NULL AND f.status <> 'pending'), 0)`,
		`coalesce((SELECT created_at FROM users WHERE id = ?), 0)`), userID, ms(now), orgID, userID).Scan(&t)
	if err != nil {
		return time.Time{}, mapErr(err, "shares")
	}
	return fromMS(t), nil
}
