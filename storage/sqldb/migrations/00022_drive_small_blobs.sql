-- +goose Up
-- Small contents (drive.Options.SmallBytes, 64 KiB by default) are kept here
-- rather than as files of the blob store: written in the transaction that
-- commits their first reference, they cost no fsync of their own (the log's,
-- shared by the writes committed together, makes them durable). Named, like
-- the blob store's objects, by the hex SHA-256 of data; created_at (ms) is
-- when the row was written, which stray detection compares with its grace.
-- Backups carry them in the database snapshot.
CREATE TABLE drive_small_blobs (
    hash       TEXT    NOT NULL PRIMARY KEY,
    data       BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE drive_small_blobs;
