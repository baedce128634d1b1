-- +goose Up
-- The favourites view (the drive service's Favorites): an owner's live items
-- marked favourite, from anywhere in their drive, folders first by name. The
-- index holds only those rows, so the list and its count read the favourites
-- and nothing else, however big the drive.
CREATE INDEX drive_files_favorites ON drive_files(owner_id, is_folder DESC, name_key, id)
    WHERE is_favorite = 1 AND trashed_at IS NULL AND status <> 'pending';

-- +goose Down
DROP INDEX drive_files_favorites;
