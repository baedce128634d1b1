-- +goose Up
-- SQLite's 00034: the parts of a resumable upload whose bytes are objects of
-- a bucket, a JSON array of part names in order (see that migration).
ALTER TABLE drive_tus_uploads ADD COLUMN parts text NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE drive_tus_uploads DROP COLUMN parts;
