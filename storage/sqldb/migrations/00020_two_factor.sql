-- +goose Up
-- Two-factor sign-in to the web app (TOTP, RFC 6238). The secret is kept as is
-- (base32): the server must compute the codes to verify them, like the signing
-- secrets of webhooks. enabled_at NULL: set up but not confirmed yet (not in
-- force). last_step is the last accepted 30-second step, so that a code is
-- accepted once.
CREATE TABLE user_two_factor (
    user_id    TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    secret     TEXT NOT NULL,
    enabled_at INTEGER,
    last_step  INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
) STRICT;

-- One-time recovery codes, by their keyed hash (like app passwords); a used
-- code is deleted.
CREATE TABLE user_recovery_codes (
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash  BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, code_hash)
) STRICT;

-- The pending second step of a sign-in: the password was right, the code is
-- still to come. By the keyed hash of the browser's random token; short-lived
-- and deleted when used.
CREATE TABLE sign_in_challenges (
    token_hash BLOB PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    attempts   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX sign_in_challenges_user ON sign_in_challenges(user_id);
CREATE INDEX sign_in_challenges_expires ON sign_in_challenges(expires_at);

-- +goose Down
DROP TABLE sign_in_challenges;
DROP TABLE user_recovery_codes;
DROP TABLE user_two_factor;
