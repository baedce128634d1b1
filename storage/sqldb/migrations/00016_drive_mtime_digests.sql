-- +goose Up
-- modified_at is a file's modification time as its writer reported it (WebDAV
-- X-OC-Mtime on PUT, PROPPATCH of getlastmodified / lastmodified /
-- Win32LastModifiedTime), else the time of the write; NULL (rows written before
-- this migration) reads as updated_at. updated_at stays the server's time of
-- the item's last change.
ALTER TABLE drive_files ADD COLUMN modified_at INTEGER;

-- The SHA-1 and MD5 of stored contents (blobs are named by their SHA-256),
-- computed in the pass that stores the bytes, or later by maintenance for
-- contents stored without them; the WebDAV mount serves them as
-- oc:checksums. A row goes with its blob.
CREATE TABLE drive_digests (
    content_hash TEXT PRIMARY KEY,
    sha1         TEXT NOT NULL,
    md5          TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE drive_digests;
ALTER TABLE drive_files DROP COLUMN modified_at;
