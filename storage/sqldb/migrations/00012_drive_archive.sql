-- +goose Up
-- The drive's archive tier. drive_archive lists the zstd-compressed copies in
-- the archive store (by content hash, "sha256:<hex>"); a copy is deleted once no
-- archived or restoring file refers to it any more.
CREATE TABLE drive_archive (
    content_hash TEXT PRIMARY KEY,
    size_bytes   INTEGER NOT NULL,
    archived_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX drive_files_cold ON drive_files(content_hash) WHERE status IN ('archived', 'restoring');
CREATE INDEX drive_files_access ON drive_files(ifnull(last_access_at, updated_at)) WHERE status = 'active' AND is_folder = 0;

-- +goose Down
DROP INDEX drive_files_access;
DROP INDEX drive_files_cold;
DROP TABLE drive_archive;
