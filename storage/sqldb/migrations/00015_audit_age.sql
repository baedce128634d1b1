-- +goose Up
-- The audit log may be kept for a limited time ([audit] max_age): its entries
-- are pruned by age.
CREATE INDEX audit_log_age ON audit_log(created_at);

-- +goose Down
DROP INDEX audit_log_age;
