-- +goose Up
-- SQLite's 00031: a folder's tree_seq, the owner's change sequence of the
-- last change of anything below it (see that migration).
ALTER TABLE drive_files ADD COLUMN tree_seq bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE drive_files DROP COLUMN tree_seq;
