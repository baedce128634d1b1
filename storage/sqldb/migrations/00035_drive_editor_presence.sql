-- +goose Up
-- Who has a file open in the online editor (one row per editor session's
-- user or guest link): the editors list of a file while its editor lock
-- lives, seen from every node. seen is when that session last reached any
-- node (refreshed at most once a minute).
CREATE TABLE drive_editor_presence (
    file_id     TEXT NOT NULL,
    session_key TEXT NOT NULL,
    user_id     TEXT NOT NULL DEFAULT '',
    name        TEXT NOT NULL DEFAULT '',
    email       TEXT NOT NULL DEFAULT '',
    guest       INTEGER NOT NULL DEFAULT 0,
    since       INTEGER NOT NULL,
    seen        INTEGER NOT NULL,
    PRIMARY KEY (file_id, session_key)
) STRICT;
CREATE INDEX drive_editor_presence_seen ON drive_editor_presence(seen);

-- +goose Down
DROP TABLE drive_editor_presence;
