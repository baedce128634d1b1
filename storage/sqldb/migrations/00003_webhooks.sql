-- +goose Up
-- Webhook subscriptions of an organisation. The signing secret is kept usable
-- (deliveries are signed with it) and never returned except on create and rotate.
CREATE TABLE webhook_subscriptions (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    url             TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    events          TEXT NOT NULL DEFAULT '[]',   -- JSON array; empty = every catalog event
    is_active       INTEGER NOT NULL DEFAULT 1,
    signing_secret  TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_subscriptions_org ON webhook_subscriptions(organization_id, id);

-- One row per (event, subscription), written in the transaction of the event.
-- body is the serialized event, sent unchanged by every attempt and replay.
-- A claimed delivery carries a lease (lease_id, lease_until) and its
-- next_attempt_at moves to the lease's end: only the lease holder may record the
-- attempt, and an expired lease makes the delivery due again.
CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    body            BLOB NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'retrying', 'successful', 'failed', 'skipped')),
    attempts        INTEGER NOT NULL DEFAULT 0,   -- over the delivery's life
    cycle_attempts  INTEGER NOT NULL DEFAULT 0,   -- since creation or the last replay
    next_attempt_at INTEGER,
    lease_id        TEXT,
    lease_until     INTEGER,
    response_status INTEGER,
    error           TEXT NOT NULL DEFAULT '',
    duration_ms     INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (event_id, subscription_id)
) STRICT;
CREATE INDEX webhook_deliveries_sub ON webhook_deliveries(subscription_id, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(subscription_id, next_attempt_at) WHERE status IN ('pending', 'retrying');
CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at);

-- Each attempt: what was sent (headers; the body is the delivery's) and what came back.
CREATE TABLE webhook_attempts (
    delivery_id      TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number           INTEGER NOT NULL,
    started_at       INTEGER NOT NULL,
    request_headers  TEXT NOT NULL,
    response_status  INTEGER,
    response_headers TEXT NOT NULL DEFAULT '{}',
    response_body    TEXT NOT NULL DEFAULT '',
    duration_ms      INTEGER NOT NULL,
    error            TEXT NOT NULL DEFAULT '',
    outcome          TEXT NOT NULL,
    PRIMARY KEY (delivery_id, number)
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_subscriptions;
