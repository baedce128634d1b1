-- +goose Up
-- SQLite's 00032: sync clients' pending sign-ins (see that migration).
CREATE TABLE login_flows (
    poll_hash  bytea PRIMARY KEY,
    login_hash bytea NOT NULL UNIQUE,
    seal_key   bytea NOT NULL,
    device     text NOT NULL,
    login_name text NOT NULL DEFAULT '',
    sealed     bytea,
    expires_at bigint NOT NULL
);
CREATE INDEX login_flows_expiry ON login_flows(expires_at);

-- +goose Down
DROP TABLE login_flows;
