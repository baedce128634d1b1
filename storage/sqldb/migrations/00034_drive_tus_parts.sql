-- +goose Up
-- The parts of a resumable upload whose bytes are objects of a bucket, one
-- per PATCH: a JSON array of the part names its offset counts, in order,
-- each recorded in the transaction that moves the offset (a compare-and-set:
-- of two requests that wrote at the same offset, on any nodes, one counts and
-- the other's object is left to the sweep). '[]': none (the bytes are in one
-- file under the data directory, or nothing has arrived).
ALTER TABLE drive_tus_uploads ADD COLUMN parts TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE drive_tus_uploads DROP COLUMN parts;
