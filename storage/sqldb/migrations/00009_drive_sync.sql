-- +goose Up
-- Browsing a folder by name (folders first, then names A→Z: the default order)
-- reads its page straight off this index instead of sorting the whole folder;
-- the count of the folder's live items is answered from it too.
CREATE INDEX drive_files_browse_name ON drive_files(owner_id, parent_id, is_folder DESC, name_key, id)
    WHERE trashed_at IS NULL AND status <> 'pending';
-- Children by parent alone: subtree walks (trash, copy, delete) and the foreign
-- key check of parent_id when a row is deleted would otherwise scan the table.
CREATE INDEX drive_files_children ON drive_files(parent_id);

-- +goose Down
DROP INDEX drive_files_children;
DROP INDEX drive_files_browse_name;
