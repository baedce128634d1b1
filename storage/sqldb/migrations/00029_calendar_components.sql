-- +goose Up
-- The kinds of iCalendar objects a calendar holds (RFC 4791
-- supported-calendar-component-set), space separated: events (VEVENT),
-- tasks (VTODO) or both. Every calendar made before holds both.
ALTER TABLE calendars ADD COLUMN components TEXT NOT NULL DEFAULT 'VEVENT VTODO';

-- +goose Down
ALTER TABLE calendars DROP COLUMN components;
