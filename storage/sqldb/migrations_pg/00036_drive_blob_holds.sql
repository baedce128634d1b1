-- +goose Up
-- SQLite's 00036: writes' holds on the blobs they are about to reference,
-- which the blob collector of every node leaves alone (see that migration).
CREATE TABLE drive_blob_holds (
    id           text PRIMARY KEY,
    content_hash text NOT NULL,
    until        bigint NOT NULL
);
CREATE INDEX drive_blob_holds_hash ON drive_blob_holds(content_hash, until);

-- +goose Down
DROP TABLE drive_blob_holds;
