-- +goose Up
-- When a user last signed in to the web app, kept after the session ends (the
-- own-organisation admin API lists it). Sessions still open give the start.
ALTER TABLE users ADD COLUMN last_sign_in_at INTEGER;
UPDATE users SET last_sign_in_at = (SELECT max(created_at) FROM web_sessions WHERE web_sessions.user_id = users.id);

-- +goose Down
ALTER TABLE users DROP COLUMN last_sign_in_at;
