-- +goose Up
-- What the sign-in and request limits count, for the nodes of a cluster to
-- count together (on PostgreSQL, where these tables are UNLOGGED: a crash
-- forgets them, as a restart forgets a single node's counts). One process on
-- SQLite counts in its memory and leaves these empty. The leader's
-- housekeeping deletes what is past its window.
-- A failed sign-in of a key (a limiter's name and its key).
CREATE TABLE auth_failures (
    key TEXT NOT NULL,
    at  INTEGER NOT NULL
) STRICT;
CREATE INDEX auth_failures_key ON auth_failures(key, at);
CREATE INDEX auth_failures_at ON auth_failures(at);
-- The latest successful sign-in of an account from a client address.
CREATE TABLE known_clients (
    ip      TEXT NOT NULL,
    account TEXT NOT NULL,
    at      INTEGER NOT NULL,
    PRIMARY KEY (ip, account)
) STRICT;
CREATE INDEX known_clients_at ON known_clients(at);
-- Requests of a key (a credential, a client address) in the fixed window
-- that starts at start.
CREATE TABLE rate_windows (
    key   TEXT NOT NULL,
    start INTEGER NOT NULL,
    n     INTEGER NOT NULL,
    PRIMARY KEY (key, start)
) STRICT;
CREATE INDEX rate_windows_start ON rate_windows(start);

-- +goose Down
DROP TABLE rate_windows;
DROP TABLE known_clients;
DROP TABLE auth_failures;
