-- +goose Up
-- Resumable (TUS) uploads of the drive. An upload belongs to the user who created
-- it (created_by). upload_offset counts the durable bytes of its partial data file
-- and hash_state is the marshalled SHA-256 state after them, so a resumed upload
-- continues the hash without reading its bytes again. status: uploading; conflict
-- (complete, but an item of its name exists: content_hash keeps the blob
-- referenced until the upload is resolved, terminated or expires); done (file_id
-- is the file it became). expires_at is 24 h after the last activity.
CREATE TABLE drive_tus_uploads (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    created_by      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    parent_id       TEXT NOT NULL DEFAULT '',
    name            TEXT NOT NULL,
    mime_type       TEXT NOT NULL,
    length          INTEGER NOT NULL DEFAULT 0,
    length_deferred INTEGER NOT NULL DEFAULT 0,
    upload_offset   INTEGER NOT NULL DEFAULT 0,
    hash_state      BLOB,
    status          TEXT NOT NULL,
    content_hash    TEXT NOT NULL DEFAULT '',
    file_id         TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX drive_tus_uploads_expiry ON drive_tus_uploads(expires_at);
CREATE INDEX drive_tus_uploads_hash ON drive_tus_uploads(content_hash) WHERE content_hash <> '';

-- +goose Down
DROP TABLE drive_tus_uploads;
