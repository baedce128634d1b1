-- +goose Up
ALTER TABLE plans ADD COLUMN published INTEGER NOT NULL DEFAULT 1;

CREATE TABLE teams (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX teams_org_name ON teams(organization_id, name COLLATE NOCASE);

CREATE TABLE team_members (
    team_id    TEXT NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, user_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX team_members_user ON team_members(user_id);

-- Single-use tokens sent by e-mail: invitations and password resets.
CREATE TABLE user_tokens (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('invite', 'reset')),
    token_hash BLOB NOT NULL UNIQUE,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX user_tokens_user ON user_tokens(user_id, kind);

-- Outgoing e-mail, written in the same transaction as the change that sends it.
CREATE TABLE mail_outbox (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL DEFAULT '',
    to_addr         TEXT NOT NULL,
    subject         TEXT NOT NULL,
    body            TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed', 'logged')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);

-- Name search over organisations: a trigram index finds any substring of three or
-- more characters without scanning the table.
CREATE VIRTUAL TABLE organizations_fts USING fts5(name, content='organizations', content_rowid='rowid', tokenize='trigram');
INSERT INTO organizations_fts(rowid, name) SELECT rowid, name FROM organizations;
-- +goose StatementBegin
CREATE TRIGGER organizations_fts_ai AFTER INSERT ON organizations BEGIN
    INSERT INTO organizations_fts(rowid, name) VALUES (new.rowid, new.name);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER organizations_fts_ad AFTER DELETE ON organizations BEGIN
    INSERT INTO organizations_fts(organizations_fts, rowid, name) VALUES ('delete', old.rowid, old.name);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER organizations_fts_au AFTER UPDATE OF name ON organizations BEGIN
    INSERT INTO organizations_fts(organizations_fts, rowid, name) VALUES ('delete', old.rowid, old.name);
    INSERT INTO organizations_fts(rowid, name) VALUES (new.rowid, new.name);
END;
-- +goose StatementEnd
CREATE INDEX organizations_parent_status ON organizations(parent_organization_id, status, id);

-- +goose Down
DROP INDEX organizations_parent_status;
DROP TRIGGER organizations_fts_au;
DROP TRIGGER organizations_fts_ad;
DROP TRIGGER organizations_fts_ai;
DROP TABLE organizations_fts;
DROP TABLE mail_outbox;
DROP TABLE user_tokens;
DROP TABLE team_members;
DROP TABLE teams;
ALTER TABLE plans DROP COLUMN published;
