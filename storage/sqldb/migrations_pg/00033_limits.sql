-- +goose Up
-- SQLite's 00033: what the sign-in and request limits count, for the nodes
-- of a cluster to count together (see that migration). UNLOGGED: a crash
-- forgets them, which costs an attacker's count at most, and their many small
-- writes skip the WAL.
CREATE UNLOGGED TABLE auth_failures (
    key text NOT NULL,
    at  bigint NOT NULL
);
CREATE INDEX auth_failures_key ON auth_failures(key, at);
CREATE INDEX auth_failures_at ON auth_failures(at);
CREATE UNLOGGED TABLE known_clients (
    ip      text NOT NULL,
    account text NOT NULL,
    at      bigint NOT NULL,
    PRIMARY KEY (ip, account)
);
CREATE INDEX known_clients_at ON known_clients(at);
CREATE UNLOGGED TABLE rate_windows (
    key   text NOT NULL,
    start bigint NOT NULL,
    n     integer NOT NULL,
    PRIMARY KEY (key, start)
);
CREATE INDEX rate_windows_start ON rate_windows(start);

-- +goose Down
DROP TABLE rate_windows;
DROP TABLE known_clients;
DROP TABLE auth_failures;
