-- +goose Up
-- Thumbnails and previews of drive images. drive_previews caches the derived
-- WebP images by the content hash of their source ("sha256:<hex>"), the kind
-- (thumb or preview) and the bounding size; derived_hash names the blob in the
-- drive's byte store, counted as a reference by the blob collector. Rows are
-- evicted least recently used first once their bytes exceed the cache cap.
CREATE TABLE drive_previews (
    source_hash  TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    size         INTEGER NOT NULL,
    derived_hash TEXT    NOT NULL,
    size_bytes   INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    PRIMARY KEY (source_hash, kind, size)
) STRICT;
CREATE INDEX drive_previews_lru ON drive_previews(last_used_at);
CREATE INDEX drive_previews_derived ON drive_previews(derived_hash);

-- Single-use preview tokens (5 minutes), stored as the hex SHA-256 of the token.
CREATE TABLE drive_preview_tokens (
    token_hash TEXT PRIMARY KEY,
    file_id    TEXT    NOT NULL,
    org_id     TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX drive_preview_tokens_expiry ON drive_preview_tokens(expires_at);

-- +goose Down
DROP TABLE drive_preview_tokens;
DROP INDEX drive_previews_derived;
DROP INDEX drive_previews_lru;
DROP TABLE drive_previews;
