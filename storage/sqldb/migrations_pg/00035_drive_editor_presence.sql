-- +goose Up
-- SQLite's 00035: who has a file open in the online editor, seen from every
-- node (see that migration).
CREATE TABLE drive_editor_presence (
    file_id     text NOT NULL,
    session_key text NOT NULL,
    user_id     text NOT NULL DEFAULT '',
    name        text NOT NULL DEFAULT '',
    email       text NOT NULL DEFAULT '',
    guest       bigint NOT NULL DEFAULT 0,
    since       bigint NOT NULL,
    seen        bigint NOT NULL,
    PRIMARY KEY (file_id, session_key)
);
CREATE INDEX drive_editor_presence_seen ON drive_editor_presence(seen);

-- +goose Down
DROP TABLE drive_editor_presence;
