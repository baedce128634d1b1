-- +goose Up
-- Every new file writes a row into each index of drive_files whose condition
-- it meets, in the write's transaction: the writer's time, which every write
-- waits for. Two of them served no query the others do not:
-- drive_files_parent (owner, folder, kind, name) duplicated
-- drive_files_browse_name for the live items a listing reads and
-- drive_files_children for every item of a folder (subtrees, locks, the
-- folder's foreign key). drive_files_access orders the files by last access
-- for the archive tier's scan of cold files, which is off unless
-- [drive] archive_after is set: the server builds it at start when it is
-- (sqlite.DB.ColdScanIndex) and drops it when it is not.
DROP INDEX drive_files_parent;
DROP INDEX drive_files_access;

-- +goose Down
CREATE INDEX IF NOT EXISTS drive_files_access ON drive_files(ifnull(last_access_at, updated_at)) WHERE status = 'active' AND is_folder = 0;
CREATE INDEX drive_files_parent ON drive_files(owner_id, parent_id, is_folder, name_key);
