-- +goose Up
-- Sessions of the web app: a browser's signed-in state, by the keyed hash of the
-- cookie's random token. A session ends when idle (last_seen_at) or at
-- expires_at (the absolute limit), when revoked, or with its user.
CREATE TABLE web_sessions (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    token_hash      BLOB NOT NULL UNIQUE,
    user_agent      TEXT NOT NULL DEFAULT '',
    address         TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    last_seen_at    INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX web_sessions_user ON web_sessions(user_id, id);
CREATE INDEX web_sessions_org ON web_sessions(organization_id);
CREATE INDEX web_sessions_seen ON web_sessions(last_seen_at);

-- When a PAT or an app password was last used (to the minute), for the lists
-- people review and revoke.
ALTER TABLE personal_access_tokens ADD COLUMN last_used_at INTEGER;
ALTER TABLE app_passwords ADD COLUMN last_used_at INTEGER;

-- +goose Down
ALTER TABLE app_passwords DROP COLUMN last_used_at;
ALTER TABLE personal_access_tokens DROP COLUMN last_used_at;
DROP TABLE web_sessions;
