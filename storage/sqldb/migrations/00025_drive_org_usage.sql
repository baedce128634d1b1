-- +goose Up
-- The quota check of every write read an organisation's stored bytes as the
-- sum of its drive_usage rows (one per owner and kind of file), in the
-- write's transaction on the one writer every write waits for: 4 us for one
-- owner, 48 us for 50, 450 us for 500. Each organisation's totals are kept
-- in a row of their own instead, by triggers on drive_usage, so that any
-- change of the counters moves them.
CREATE TABLE drive_org_usage (
    organization_id TEXT PRIMARY KEY,
    bytes           INTEGER NOT NULL DEFAULT 0,
    file_count      INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;
INSERT INTO drive_org_usage (organization_id, bytes, file_count)
    SELECT organization_id, sum(bytes), sum(file_count) FROM drive_usage GROUP BY organization_id;
-- +goose StatementBegin
CREATE TRIGGER drive_usage_org_ai AFTER INSERT ON drive_usage BEGIN
    INSERT INTO drive_org_usage (organization_id, bytes, file_count) VALUES (new.organization_id, new.bytes, new.file_count)
        ON CONFLICT (organization_id) DO UPDATE SET bytes = bytes + excluded.bytes, file_count = file_count + excluded.file_count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER drive_usage_org_au AFTER UPDATE ON drive_usage WHEN old.organization_id = new.organization_id BEGIN
    UPDATE drive_org_usage SET bytes = bytes + new.bytes - old.bytes, file_count = file_count + new.file_count - old.file_count
        WHERE organization_id = new.organization_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER drive_usage_org_au_moved AFTER UPDATE ON drive_usage WHEN old.organization_id <> new.organization_id BEGIN
    UPDATE drive_org_usage SET bytes = bytes - old.bytes, file_count = file_count - old.file_count
        WHERE organization_id = old.organization_id;
    INSERT INTO drive_org_usage (organization_id, bytes, file_count) VALUES (new.organization_id, new.bytes, new.file_count)
        ON CONFLICT (organization_id) DO UPDATE SET bytes = bytes + excluded.bytes, file_count = file_count + excluded.file_count;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER drive_usage_org_ad AFTER DELETE ON drive_usage BEGIN
    UPDATE drive_org_usage SET bytes = bytes - old.bytes, file_count = file_count - old.file_count
        WHERE organization_id = old.organization_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER drive_usage_org_ad;
DROP TRIGGER drive_usage_org_au_moved;
DROP TRIGGER drive_usage_org_au;
DROP TRIGGER drive_usage_org_ai;
DROP TABLE drive_org_usage;
