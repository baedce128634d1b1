-- +goose Up
-- A window query bounds the start of a component's range from above only: with
-- the old indexes it walked every event that starts before the window ends. Most
-- components are short (a one-off event, up to a week long), and a short one that
-- overlaps a window starts at most a week before it, so the query bounds their
-- start from both sides; the long ones (series, long events) are few and keep
-- the one-sided test. long_span is computed, never written.
ALTER TABLE calendar_components ADD COLUMN long_span INTEGER
    GENERATED ALWAYS AS (range_end_ms IS NULL OR range_end_ms - range_start_ms > 604800000) VIRTUAL;
DROP INDEX calendar_components_range;
DROP INDEX calendar_components_user_range;
CREATE INDEX calendar_components_range ON calendar_components(calendar_id, long_span, range_start_ms, range_end_ms);
CREATE INDEX calendar_components_user_range ON calendar_components(user_id, long_span, range_start_ms, range_end_ms);

-- +goose Down
DROP INDEX calendar_components_user_range;
DROP INDEX calendar_components_range;
ALTER TABLE calendar_components DROP COLUMN long_span;
CREATE INDEX calendar_components_range ON calendar_components(calendar_id, range_start_ms, range_end_ms);
CREATE INDEX calendar_components_user_range ON calendar_components(user_id, range_start_ms, range_end_ms);
