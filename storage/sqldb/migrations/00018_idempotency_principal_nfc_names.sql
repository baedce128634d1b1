-- +goose Up
-- An Idempotency-Key record belongs to the caller that claimed it (a user or a
-- service principal): the same key from another caller of the organisation is
-- refused, never answered with the first caller's response. Records kept from
-- before this migration have no principal and so replay to nobody; they expire
-- within the 24-hour retention.
ALTER TABLE idempotency_keys ADD COLUMN principal TEXT NOT NULL DEFAULT '';

-- Fix-ups SQL cannot do, run in Go right after the migrations (see
-- fixups.go), each in one transaction with the removal of its row.
-- drive_names_nfc: drive item names are stored in Unicode NFC and compared by
-- a key folded from NFC; items named before (NFD names, as macOS sends them)
-- are renamed to NFC and re-keyed.
CREATE TABLE pending_fixups (name TEXT PRIMARY KEY) STRICT;
INSERT INTO pending_fixups(name) VALUES ('drive_names_nfc');

-- +goose Down
DROP TABLE pending_fixups;
ALTER TABLE idempotency_keys DROP COLUMN principal;
