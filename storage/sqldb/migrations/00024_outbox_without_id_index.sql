-- +goose Up
-- Every write of the drive, contacts or calendar adds an event to the outbox
-- in its transaction, on the one writer every write waits for. The outbox's
-- UNIQUE (id) kept an index that no query reads (events are read by seq; an
-- event's id travels in its payload): the table is rebuilt without it. Its
-- AUTOINCREMENT high-water mark (sqlite_sequence) carries over, so that a
-- seq is never given twice even after every event was pruned.
CREATE TABLE outbox_rebuilt (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL,
    type            TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    data            TEXT NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;
INSERT INTO outbox_rebuilt (seq, id, type, organization_id, data, created_at)
    SELECT seq, id, type, organization_id, data, created_at FROM outbox ORDER BY seq;
DELETE FROM sqlite_sequence WHERE name = 'outbox_rebuilt';
INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_rebuilt', seq FROM sqlite_sequence WHERE name = 'outbox';
DROP TABLE outbox;
ALTER TABLE outbox_rebuilt RENAME TO outbox;

-- +goose Down
CREATE TABLE outbox_rebuilt (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    type            TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    data            TEXT NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;
INSERT INTO outbox_rebuilt (seq, id, type, organization_id, data, created_at)
    SELECT seq, id, type, organization_id, data, created_at FROM outbox ORDER BY seq;
DELETE FROM sqlite_sequence WHERE name = 'outbox_rebuilt';
INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_rebuilt', seq FROM sqlite_sequence WHERE name = 'outbox';
DROP TABLE outbox;
ALTER TABLE outbox_rebuilt RENAME TO outbox;
