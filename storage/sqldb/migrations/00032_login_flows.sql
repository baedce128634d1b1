-- +goose Up
-- A sync client's pending sign-in (Nextcloud's Login Flow v2), kept in the
-- database so that a client polling any node of a cluster gets the app
-- password its person approved on any other. Both tokens are stored as their
-- keyed hashes (HMAC with the server's pepper); once approved, the app
-- password waits sealed to a public key (seal_key) whose private key only the
-- client's poll token gives, and the row goes when the client takes it (once)
-- or at expires_at (the leader's housekeeping deletes the expired ones).
CREATE TABLE login_flows (
    poll_hash  BLOB PRIMARY KEY,
    login_hash BLOB NOT NULL UNIQUE,
    seal_key   BLOB NOT NULL,
    device     TEXT NOT NULL,
    login_name TEXT NOT NULL DEFAULT '',
    sealed     BLOB,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX login_flows_expiry ON login_flows(expires_at);

-- +goose Down
DROP TABLE login_flows;
