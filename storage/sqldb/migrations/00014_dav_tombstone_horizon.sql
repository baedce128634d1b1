-- +goose Up
-- CardDAV/CalDAV tombstones are pruned after the sync log's age; pruned_seq is
-- the newest sequence of a pruned tombstone of the collection: a sync token
-- older than it may miss deletions, so it is refused (valid-sync-token) and the
-- client syncs again from the start.
ALTER TABLE address_books ADD COLUMN pruned_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE calendars ADD COLUMN pruned_seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX contact_tombstones_age ON contact_tombstones(deleted_at);
CREATE INDEX calendar_tombstones_age ON calendar_tombstones(deleted_at);

-- +goose Down
DROP INDEX calendar_tombstones_age;
DROP INDEX contact_tombstones_age;
ALTER TABLE calendars DROP COLUMN pruned_seq;
ALTER TABLE address_books DROP COLUMN pruned_seq;
