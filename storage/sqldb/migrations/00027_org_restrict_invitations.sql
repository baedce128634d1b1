-- +goose Up
-- An organisation's mail domain no longer limits whom it may invite by
-- itself: the limit is a setting of its own, off by default. Organisations
-- that set a mail domain before this migration had the limit, and keep it.
ALTER TABLE organizations ADD COLUMN restrict_invitations INTEGER NOT NULL DEFAULT 0 CHECK (restrict_invitations IN (0, 1));
UPDATE organizations SET restrict_invitations = 1 WHERE mail_domain <> '';

-- +goose Down
ALTER TABLE organizations DROP COLUMN restrict_invitations;
