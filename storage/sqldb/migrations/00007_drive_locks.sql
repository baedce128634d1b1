-- +goose Up
-- Locks become one row per lock token (WebDAV class 2): a file carries one
-- exclusive lock or several shared ones, and a folder's lock may cover what is
-- below it (deep = depth infinity). Expired rows are ignored by every query and
-- removed when the item is locked again.
CREATE TABLE drive_locks_v2 (
    token      TEXT PRIMARY KEY,
    file_id    TEXT NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    owner_id   TEXT NOT NULL,
    kind       TEXT NOT NULL,
    shared     INTEGER NOT NULL DEFAULT 0,
    deep       INTEGER NOT NULL DEFAULT 0,
    owner_info TEXT NOT NULL DEFAULT '',
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
INSERT INTO drive_locks_v2 (token, file_id, owner_id, kind, owner_info, expires_at, created_at)
    SELECT token, file_id, owner_id, kind, owner_info, expires_at, created_at FROM drive_locks;
DROP TABLE drive_locks;
ALTER TABLE drive_locks_v2 RENAME TO drive_locks;
CREATE INDEX drive_locks_file ON drive_locks(file_id, expires_at);

-- Dead properties of items (WebDAV PROPPATCH): one row per property, the value
-- is the property element's content as self-contained XML.
CREATE TABLE drive_props (
    file_id TEXT NOT NULL REFERENCES drive_files(id) ON DELETE CASCADE,
    ns      TEXT NOT NULL,
    name    TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (file_id, ns, name)
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE drive_props;
CREATE TABLE drive_locks_v1 (
    file_id    TEXT PRIMARY KEY REFERENCES drive_files(id) ON DELETE CASCADE,
    token      TEXT NOT NULL UNIQUE,
    owner_id   TEXT NOT NULL,
    kind       TEXT NOT NULL,
    owner_info TEXT NOT NULL DEFAULT '',
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
INSERT OR IGNORE INTO drive_locks_v1 (file_id, token, owner_id, kind, owner_info, expires_at, created_at)
    SELECT file_id, token, owner_id, kind, owner_info, expires_at, created_at FROM drive_locks;
DROP TABLE drive_locks;
ALTER TABLE drive_locks_v1 RENAME TO drive_locks;
