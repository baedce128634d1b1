-- +goose Up
-- Drive items: files and folders of one owner. parent_id NULL is the owner's root.
-- name_key is the name folded for case-insensitive uniqueness among the live
-- (non-trashed, non-pending) items of a folder. A trashed folder's descendants are
-- trashed with it: trash_root names the item the user trashed, so restoring it
-- restores exactly that subtree. seq is the owner's change sequence number at the
-- item's last change (delta sync); stored_bytes is the sum of the item's versions.
CREATE TABLE drive_files (
    id               TEXT PRIMARY KEY,
    organization_id  TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    owner_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    parent_id        TEXT REFERENCES drive_files(id),
    name             TEXT NOT NULL,
    name_key         TEXT NOT NULL,
    is_folder        INTEGER NOT NULL,
    mime_type        TEXT NOT NULL,
    mime_group       TEXT NOT NULL,
    size_bytes       INTEGER NOT NULL DEFAULT 0,
    stored_bytes     INTEGER NOT NULL DEFAULT 0,
    content_hash     TEXT NOT NULL DEFAULT '',
    version          INTEGER NOT NULL DEFAULT 0,
    status           TEXT NOT NULL,
    is_favorite      INTEGER NOT NULL DEFAULT 0,
    description      TEXT NOT NULL DEFAULT '',
    tags             TEXT NOT NULL DEFAULT '[]',
    custom           TEXT NOT NULL DEFAULT '{}',
    trashed_at       INTEGER,
    trash_root       TEXT,
    trash_parent_id  TEXT,
    comments_channel TEXT,
    seq              INTEGER NOT NULL,
    last_access_at   INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX drive_files_live_name ON drive_files(owner_id, ifnull(parent_id, ''), name_key)
    WHERE trashed_at IS NULL AND status <> 'pending';
CREATE INDEX drive_files_parent ON drive_files(owner_id, parent_id, is_folder, name_key);
CREATE INDEX drive_files_owner_seq ON drive_files(owner_id, seq);
CREATE INDEX drive_files_trash ON drive_files(owner_id, trash_root) WHERE trashed_at IS NOT NULL;
CREATE INDEX drive_files_pending ON drive_files(status, created_at) WHERE status = 'pending';
CREATE INDEX drive_files_size ON drive_files(organization_id, owner_id, size_bytes) WHERE is_folder = 0 AND status <> 'pending';

-- Every stored content of a file; the head is the row with the file's version.
CREATE TABLE drive_versions (
    id           TEXT PRIMARY KEY,
    file_id      TEXT NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    version      INTEGER NOT NULL,
    size_bytes   INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    mime_type    TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    UNIQUE (file_id, version)
) STRICT;
CREATE INDEX drive_versions_hash ON drive_versions(content_hash);

-- Uploads announced (three-step upload) and not yet confirmed. file_id is the
-- pending file, or the existing file the upload will add a version to.
CREATE TABLE drive_uploads (
    id           TEXT PRIMARY KEY,
    file_id      TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    owner_id     TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    name         TEXT NOT NULL,
    mime_type    TEXT NOT NULL,
    size_bytes   INTEGER NOT NULL,
    content_hash TEXT NOT NULL DEFAULT '',
    received_at  INTEGER,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX drive_uploads_file ON drive_uploads(file_id, created_at);
CREATE INDEX drive_uploads_expiry ON drive_uploads(expires_at);
CREATE INDEX drive_uploads_hash ON drive_uploads(content_hash) WHERE content_hash <> '';

-- Storage counters per owner and mime group, maintained with every write: usage
-- and breakdown never scan the files.
CREATE TABLE drive_usage (
    organization_id TEXT NOT NULL,
    owner_id        TEXT NOT NULL,
    mime_group      TEXT NOT NULL,
    bytes           INTEGER NOT NULL DEFAULT 0,
    file_count      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, owner_id, mime_group)
) STRICT, WITHOUT ROWID;

-- The per-owner change sequence of delta sync, and the sequence below which
-- deletions have been forgotten (older cursors are expired).
CREATE TABLE drive_seq (
    owner_id   TEXT PRIMARY KEY,
    seq        INTEGER NOT NULL DEFAULT 0,
    pruned_seq INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;

-- Permanently deleted items, for delta sync.
CREATE TABLE drive_tombstones (
    owner_id   TEXT NOT NULL,
    file_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    parent_id  TEXT,
    seq        INTEGER NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (owner_id, seq)
) STRICT, WITHOUT ROWID;

-- Sync devices and their committed cursors.
CREATE TABLE drive_devices (
    owner_id     TEXT NOT NULL,
    device_id    TEXT NOT NULL,
    cursor       TEXT NOT NULL DEFAULT '',
    cursor_seq   INTEGER NOT NULL DEFAULT 0,
    committed_at INTEGER,
    last_seen_at INTEGER NOT NULL,
    PRIMARY KEY (owner_id, device_id)
) STRICT, WITHOUT ROWID;

-- Shares: with a user of the organisation (user_id) or by link (token).
CREATE TABLE drive_shares (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    file_id         TEXT NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    owner_id        TEXT NOT NULL,
    created_by      TEXT NOT NULL,
    user_id         TEXT REFERENCES users(id) ON DELETE CASCADE,
    token           TEXT UNIQUE,
    permission      TEXT NOT NULL,
    expires_at      INTEGER,
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX drive_shares_file ON drive_shares(file_id);
CREATE INDEX drive_shares_user ON drive_shares(user_id) WHERE user_id IS NOT NULL;

-- Write locks (WebDAV LOCK and editor sessions share them).
CREATE TABLE drive_locks (
    file_id    TEXT PRIMARY KEY REFERENCES drive_files(id) ON DELETE CASCADE,
    token      TEXT NOT NULL UNIQUE,
    owner_id   TEXT NOT NULL,
    kind       TEXT NOT NULL,
    owner_info TEXT NOT NULL DEFAULT '',
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

-- Blobs no version or upload refers to any more; the collector deletes them.
CREATE TABLE drive_orphans (
    content_hash TEXT PRIMARY KEY,
    since        INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE drive_orphans;
DROP TABLE drive_locks;
DROP TABLE drive_shares;
DROP TABLE drive_devices;
DROP TABLE drive_tombstones;
DROP TABLE drive_seq;
DROP TABLE drive_usage;
DROP TABLE drive_uploads;
DROP TABLE drive_versions;
DROP TABLE drive_files;
