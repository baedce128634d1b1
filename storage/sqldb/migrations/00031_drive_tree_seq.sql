-- +goose Up
-- A folder's tree_seq is the owner's change sequence of the last change of
-- anything below it (an item added, changed, renamed, moved in or out, or
-- trashed), raised on every folder above a changed item in the change's own
-- transaction. A folder's entity tag is made of its id and the larger of its
-- seq and tree_seq, so it changes whenever anything below it does: sync
-- clients (Nextcloud, ownCloud) read again only the folders whose tag
-- changed. 0: nothing below has changed since the column was added.
ALTER TABLE drive_files ADD COLUMN tree_seq INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE drive_files DROP COLUMN tree_seq;
