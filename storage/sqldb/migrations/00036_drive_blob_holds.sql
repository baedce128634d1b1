-- +goose Up
-- A hold is a write's claim on a blob it is about to reference (stored, or
-- found already stored and not stored again), taken before it checks that the
-- blob exists and dropped in the transaction that commits the reference. The
-- blob collector of any process leaves a held blob alone; a hold that
-- outlives its write (the process died) ends at until. Holds and the
-- collector's decision about a blob take the blob's lock (on PostgreSQL an
-- advisory lock; on SQLite the one writer), so that a blob is never deleted
-- between a write finding it and its reference committing, whichever node
-- runs either.
CREATE TABLE drive_blob_holds (
    id           TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    until        INTEGER NOT NULL
) STRICT;
CREATE INDEX drive_blob_holds_hash ON drive_blob_holds(content_hash, until);

-- +goose Down
DROP TABLE drive_blob_holds;
