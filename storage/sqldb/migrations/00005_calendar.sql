-- +goose Up
-- A user's calendars. sync_seq is the calendar's change sequence: every write to
-- one of its objects takes the next value (CalDAV ctag and sync-token).
CREATE TABLE calendars (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    color           TEXT NOT NULL DEFAULT '',
    timezone        TEXT NOT NULL DEFAULT 'UTC',
    is_default      INTEGER NOT NULL DEFAULT 0,
    sync_seq        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX calendars_user ON calendars(organization_id, user_id, id);
CREATE UNIQUE INDEX calendars_user_default ON calendars(user_id) WHERE is_default = 1;

-- One iCalendar resource: every VEVENT of one UID (the master and its
-- RECURRENCE-ID overrides) with the VTIMEZONEs they use, kept as the client wrote
-- it. name is the resource name under the CalDAV collection.
CREATE TABLE calendar_objects (
    id              TEXT PRIMARY KEY,
    calendar_id     TEXT NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    uid             TEXT NOT NULL,
    name            TEXT NOT NULL,
    ics             TEXT NOT NULL,
    etag            TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    tzids           TEXT NOT NULL DEFAULT '',    -- space separated TZIDs the object uses
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX calendar_objects_uid ON calendar_objects(calendar_id, uid);
CREATE UNIQUE INDEX calendar_objects_name ON calendar_objects(calendar_id, name);
CREATE INDEX calendar_objects_seq ON calendar_objects(calendar_id, seq);

-- The index of an object's VEVENTs, derived from its iCalendar data: one row for
-- the master (recurrence_id NULL) and one per override. [range_start, range_end)
-- bounds every occurrence the row can produce; range_end NULL is an unbounded rule.
CREATE TABLE calendar_components (
    object_id      TEXT NOT NULL REFERENCES calendar_objects(id) ON DELETE CASCADE,
    calendar_id    TEXT NOT NULL,
    user_id        TEXT NOT NULL,
    uid            TEXT NOT NULL,
    recurrence_id  INTEGER,                     -- Unix ms of the original start of an override
    has_overrides  INTEGER NOT NULL DEFAULT 0,  -- on a master: the object holds overrides
    title          TEXT NOT NULL DEFAULT '',
    location       TEXT NOT NULL DEFAULT '',
    start_ms       INTEGER NOT NULL,
    end_ms         INTEGER NOT NULL,
    all_day        INTEGER NOT NULL DEFAULT 0,
    timezone       TEXT NOT NULL DEFAULT '',
    rrule          TEXT NOT NULL DEFAULT '',
    rdates         TEXT NOT NULL DEFAULT '',    -- space separated Unix ms
    exdates        TEXT NOT NULL DEFAULT '',    -- space separated Unix ms
    busy           INTEGER NOT NULL DEFAULT 1,  -- counts for free/busy (opaque, not cancelled)
    cancelled      INTEGER NOT NULL DEFAULT 0,
    range_start_ms INTEGER NOT NULL,
    range_end_ms   INTEGER
) STRICT;
CREATE INDEX calendar_components_object ON calendar_components(object_id);
-- Covering the range test, so rows outside a window are skipped from the index.
CREATE INDEX calendar_components_range ON calendar_components(calendar_id, range_start_ms, range_end_ms);
CREATE INDEX calendar_components_user_range ON calendar_components(user_id, range_start_ms, range_end_ms);

-- Tombstones of deleted objects, for sync-collection (RFC 6578).
CREATE TABLE calendar_tombstones (
    calendar_id TEXT NOT NULL REFERENCES calendars(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    uid         TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    deleted_at  INTEGER NOT NULL,
    PRIMARY KEY (calendar_id, name)
) STRICT, WITHOUT ROWID;
CREATE INDEX calendar_tombstones_seq ON calendar_tombstones(calendar_id, seq);

-- +goose Down
DROP TABLE calendar_tombstones;
DROP TABLE calendar_components;
DROP TABLE calendar_objects;
DROP TABLE calendars;
