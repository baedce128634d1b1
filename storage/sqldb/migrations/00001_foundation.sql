-- +goose Up
CREATE TABLE server_secrets (
    name       TEXT PRIMARY KEY,
    value      BLOB NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE plans (
    slug        TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    features    TEXT NOT NULL,            -- JSON array
    quota_bytes INTEGER NOT NULL,
    max_seats   INTEGER NOT NULL
) STRICT;

CREATE TABLE organizations (
    id                     TEXT PRIMARY KEY,
    name                   TEXT NOT NULL,
    slug                   TEXT NOT NULL UNIQUE,
    billing_name           TEXT NOT NULL DEFAULT '',
    billing_email          TEXT NOT NULL DEFAULT '',
    logo_url               TEXT NOT NULL DEFAULT '',
    mail_domain            TEXT NOT NULL DEFAULT '',
    parent_organization_id TEXT REFERENCES organizations(id),
    reseller_depth         INTEGER NOT NULL DEFAULT 0,
    status                 TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL
) STRICT;
CREATE INDEX organizations_parent ON organizations(parent_organization_id, id);
CREATE INDEX organizations_parent_name ON organizations(parent_organization_id, name COLLATE NOCASE);

CREATE TABLE subscriptions (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    plan_slug       TEXT NOT NULL REFERENCES plans(slug),
    seats           INTEGER NOT NULL,
    status          TEXT NOT NULL DEFAULT 'active',
    updated_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE users (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    email           TEXT NOT NULL,
    email_key       TEXT NOT NULL UNIQUE,  -- lower(email)
    first_name      TEXT NOT NULL DEFAULT '',
    last_name       TEXT NOT NULL DEFAULT '',
    role_slug       TEXT NOT NULL CHECK (role_slug IN ('admin', 'member')),
    status          TEXT NOT NULL CHECK (status IN ('invited', 'active', 'suspended')),
    password_hash   TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX users_org ON users(organization_id, id);

CREATE TABLE personal_access_tokens (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name            TEXT NOT NULL DEFAULT '',
    token_hash      BLOB NOT NULL UNIQUE,
    scopes          TEXT NOT NULL,          -- space separated
    expires_at      INTEGER,
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX personal_access_tokens_user ON personal_access_tokens(user_id);

CREATE TABLE app_passwords (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    label       TEXT NOT NULL DEFAULT '',
    secret_hash BLOB NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX app_passwords_user_hash ON app_passwords(user_id, secret_hash);

CREATE TABLE service_principals (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    scopes          TEXT NOT NULL,
    user_id         TEXT REFERENCES users(id) ON DELETE SET NULL,
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX service_principals_org ON service_principals(organization_id, id);

CREATE TABLE service_principal_tokens (
    id                   TEXT PRIMARY KEY,
    service_principal_id TEXT NOT NULL REFERENCES service_principals(id) ON DELETE CASCADE,
    name                 TEXT NOT NULL DEFAULT '',
    token_hash           BLOB NOT NULL UNIQUE,
    expires_at           INTEGER,
    created_at           INTEGER NOT NULL
) STRICT;
CREATE INDEX service_principal_tokens_sp ON service_principal_tokens(service_principal_id, id);

CREATE TABLE audit_log (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL,
    module          TEXT NOT NULL,
    action          TEXT NOT NULL,
    actor_id        TEXT NOT NULL DEFAULT '',
    target_type     TEXT NOT NULL DEFAULT '',
    target_id       TEXT NOT NULL DEFAULT '',
    changed_fields  TEXT NOT NULL DEFAULT '[]',
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX audit_log_org ON audit_log(organization_id, id);

-- The transactional outbox: events written in the same transaction as the change.
CREATE TABLE outbox (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    type            TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    data            TEXT NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE idempotency_keys (
    organization_id TEXT NOT NULL,
    key             TEXT NOT NULL,
    request_hash    BLOB NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
    status          INTEGER NOT NULL DEFAULT 0,
    headers         TEXT NOT NULL DEFAULT '{}',
    body            BLOB,
    lease_until     INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    PRIMARY KEY (organization_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE outbox;
DROP TABLE audit_log;
DROP TABLE service_principal_tokens;
DROP TABLE service_principals;
DROP TABLE app_passwords;
DROP TABLE personal_access_tokens;
DROP TABLE users;
DROP TABLE subscriptions;
DROP TABLE organizations;
DROP TABLE plans;
DROP TABLE server_secrets;
