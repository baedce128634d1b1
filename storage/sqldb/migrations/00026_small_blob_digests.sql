-- +goose Up
-- A small content's SHA-1 and MD5 are kept in its row of drive_small_blobs
-- when they are known as it is written (DriveStore.AddDigests right after
-- SmallBlobs.Put in one transaction), rather than in a row of drive_digests:
-- that table is keyed by a random hash, and its row cost every small write a
-- statement and about 1.7 pages of the log (5 of a commit's 38 in a run of
-- small WebDAV PUTs). Rows written before, and contents whose digests came
-- later (maintenance), keep theirs in drive_digests; readers look in both.
-- The table is rebuilt so that the digests come before the bytes: a column
-- after a content of more than about 4 KiB would be read through its
-- overflow pages, and a listing reads the digests of every file.
CREATE TABLE drive_small_blobs_rebuilt (
    hash       TEXT    NOT NULL PRIMARY KEY,
    created_at INTEGER NOT NULL,
    sha1       TEXT,
    md5        TEXT,
    data       BLOB    NOT NULL
);
INSERT INTO drive_small_blobs_rebuilt (hash, created_at, data)
    SELECT hash, created_at, data FROM drive_small_blobs ORDER BY rowid;
DROP TABLE drive_small_blobs;
ALTER TABLE drive_small_blobs_rebuilt RENAME TO drive_small_blobs;

-- +goose Down
-- The digests kept with small contents go back to drive_digests first.
INSERT INTO drive_digests (content_hash, sha1, md5)
    SELECT 'sha256:' || hash, sha1, md5 FROM drive_small_blobs WHERE sha1 IS NOT NULL AND md5 IS NOT NULL
    ON CONFLICT DO NOTHING;
CREATE TABLE drive_small_blobs_rebuilt (
    hash       TEXT    NOT NULL PRIMARY KEY,
    data       BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);
INSERT INTO drive_small_blobs_rebuilt (hash, data, created_at)
    SELECT hash, data, created_at FROM drive_small_blobs ORDER BY rowid;
DROP TABLE drive_small_blobs;
ALTER TABLE drive_small_blobs_rebuilt RENAME TO drive_small_blobs;
