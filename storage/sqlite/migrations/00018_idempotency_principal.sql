-- +goose Up
-- An Idempotency-Key record belongs to the caller that claimed it (a user or a
-- service principal): the same key from another caller of the organisation is
-- refused, never answered with the first caller's response. Records kept from
-- before this migration have no principal and so replay to nobody; they expire
-- within the 24-hour retention.
ALTER TABLE idempotency_keys ADD COLUMN principal TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE idempotency_keys DROP COLUMN principal;
