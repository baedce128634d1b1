-- +goose Up
-- A user's "revoke every credential" (offered by a password reset) deletes
-- their app passwords and tokens, and refuses the JWTs issued before it:
-- credentials_not_before is that moment (0: none).
ALTER TABLE users ADD COLUMN credentials_not_before INTEGER NOT NULL DEFAULT 0;
-- A web session's last proof of the account password (sign-in or a
-- confirmation): making a credential or turning two-factor sign-in on from a
-- session asks for the password again when it is older than a few minutes.
ALTER TABLE web_sessions ADD COLUMN authenticated_at INTEGER NOT NULL DEFAULT 0;
UPDATE web_sessions SET authenticated_at = created_at;

-- +goose Down
ALTER TABLE web_sessions DROP COLUMN authenticated_at;
ALTER TABLE users DROP COLUMN credentials_not_before;
