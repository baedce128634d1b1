-- +goose Up
-- Shares with a team of the organisation (team_id: every member, as the
-- membership is at each moment) and with the whole organisation
-- (organization_wide: every user of it but the owner).
ALTER TABLE drive_shares ADD COLUMN team_id TEXT REFERENCES teams(id) ON DELETE CASCADE;
ALTER TABLE drive_shares ADD COLUMN organization_wide INTEGER NOT NULL DEFAULT 0;
-- Whether the shared item is a folder (an item's kind never changes): search
-- looks below shared folders, and reads this without a row of drive_files.
ALTER TABLE drive_shares ADD COLUMN is_folder INTEGER NOT NULL DEFAULT 0;
UPDATE drive_shares SET is_folder = (SELECT f.is_folder FROM drive_files f WHERE f.id = drive_shares.file_id);
-- +goose StatementBegin
CREATE TRIGGER drive_shares_is_folder AFTER INSERT ON drive_shares BEGIN
    UPDATE drive_shares SET is_folder = (SELECT f.is_folder FROM drive_files f WHERE f.id = NEW.file_id) WHERE id = NEW.id;
END;
-- +goose StatementEnd
CREATE UNIQUE INDEX drive_shares_file_team ON drive_shares(file_id, team_id) WHERE team_id IS NOT NULL;
CREATE UNIQUE INDEX drive_shares_file_org ON drive_shares(file_id) WHERE organization_wide = 1;
-- A grant is looked up by user and often by item too: by (team, item) and
-- (organisation, item) rather than a scan of everything the team has; the
-- indexes hold what a grant needs, so a reading of thousands of them reads
-- no table row of drive_shares.
CREATE INDEX drive_shares_team ON drive_shares(team_id, file_id, expires_at, permission, created_at, is_folder, id) WHERE team_id IS NOT NULL;
CREATE INDEX drive_shares_org ON drive_shares(organization_id, file_id, expires_at, permission, created_at, is_folder, id, owner_id) WHERE organization_wide = 1;

-- What shares grant each user, read at each request: a user share, a team
-- share through every current member, an organisation share through every
-- user of the organisation. since is when the grant began (the later of the
-- share and the membership). A query that asks for one user_id reads only
-- that user's rows of each branch.
CREATE VIEW drive_share_grants AS
    SELECT s.id AS share_id, s.file_id, s.user_id, s.permission, s.expires_at, s.created_at AS since, s.is_folder
    FROM drive_shares s WHERE s.user_id IS NOT NULL
    UNION ALL
    SELECT s.id, s.file_id, m.user_id, s.permission, s.expires_at, max(s.created_at, m.created_at), s.is_folder
    FROM team_members m JOIN drive_shares s ON s.team_id = m.team_id
    UNION ALL
    SELECT s.id, s.file_id, u.id, s.permission, s.expires_at, max(s.created_at, u.created_at), s.is_folder
    FROM users u JOIN drive_shares s ON s.organization_id = u.organization_id AND s.organization_wide = 1
    WHERE u.id <> s.owner_id;

-- +goose Down
DROP VIEW drive_share_grants;
DROP TRIGGER drive_shares_is_folder;
DROP INDEX drive_shares_org;
DROP INDEX drive_shares_team;
DROP INDEX drive_shares_file_org;
DROP INDEX drive_shares_file_team;
ALTER TABLE drive_shares DROP COLUMN is_folder;
ALTER TABLE drive_shares DROP COLUMN organization_wide;
ALTER TABLE drive_shares DROP COLUMN team_id;
