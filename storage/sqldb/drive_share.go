package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"atrium/app/drive"
)

const shareCols = `s.id, s.organization_id, s.file_id, s.owner_id, s.created_by, coalesce(s.user_id, ''), coalesce(s.token, ''),
	coalesce(s.team_id, ''), s.organization_wide, s.permission, s.expires_at, s.created_at`

func scanShare(sc interface{ Scan(...any) error }, extra ...any) (drive.Share, error) {
	var sh drive.Share
	var exp sql.NullInt64
	var c int64
	err := sc.Scan(append([]any{&sh.ID, &sh.OrgID, &sh.FileID, &sh.OwnerID, &sh.CreatedBy, &sh.UserID, &sh.Token,
		&sh.TeamID, &sh.OrgWide, &sh.Permission, &exp, &c}, extra...)...)
	sh.ExpiresAt, sh.CreatedAt = fromMSPtr(exp), fromMS(c)
	return sh, err
}

// CreateShare inserts a share.
func (s DriveStore) CreateShare(ctx context.Context, sh drive.Share) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO drive_shares (id, organization_id, file_id, owner_id, created_by, user_id,
		token, team_id, organization_wide, permission, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		sh.ID, sh.OrgID, sh.FileID, sh.OwnerID, sh.CreatedBy, emptyNull(sh.UserID), emptyNull(sh.Token), emptyNull(sh.TeamID),
		sh.OrgWide, sh.Permission, msPtr(sh.ExpiresAt), ms(sh.CreatedAt))
	return mapErr(err, "share")
}

// UpdateShare writes the permission and expiry of a share.
func (s DriveStore) UpdateShare(ctx context.Context, sh drive.Share) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE drive_shares SET permission = ?, expires_at = ? WHERE id = ?`,
		sh.Permission, msPtr(sh.ExpiresAt), sh.ID)
	if err != nil {
		return mapErr(err, "share")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapErr(sql.ErrNoRows, "share")
	}
	return nil
}

// Share returns a share by id.
func (s DriveStore) Share(ctx context.Context, id string) (drive.Share, error) {
	sh, err := scanShare(s.read(ctx).QueryRowContext(ctx, `SELECT `+shareCols+` FROM drive_shares s WHERE s.id = ?`, id))
	return sh, mapErr(err, "share")
}

// ShareByToken returns the link share of a token.
func (s DriveStore) ShareByToken(ctx context.Context, token string) (drive.Share, error) {
	sh, err := scanShare(s.read(ctx).QueryRowContext(ctx, `SELECT `+shareCols+` FROM drive_shares s WHERE s.token = ?`, token))
	return sh, mapErr(err, "share")
}

// GranteeShare returns the share of fileID with the user, the team or the
// organisation that g is with.
func (s DriveStore) GranteeShare(ctx context.Context, fileID string, g drive.Share) (drive.Share, error) {
	cond, arg := `s.user_id = ?`, any(g.UserID)
	switch {
	case g.TeamID != "":
		cond, arg = `s.team_id = ?`, g.TeamID
	case g.OrgWide:
		cond, arg = `s.organization_wide = ?`, 1
	}
	sh, err := scanShare(s.read(ctx).QueryRowContext(ctx, `SELECT `+shareCols+` FROM drive_shares s
		WHERE s.file_id = ? AND `+cond+` ORDER BY s.created_at LIMIT 1`, fileID, arg))
	return sh, mapErr(err, "share")
}

const userDisplayName = `CASE WHEN trim(u.first_name || ' ' || u.last_name) = '' THEN u.email ELSE trim(u.first_name || ' ' || u.last_name) END`

// Shares lists a file's shares, the oldest first, with the users and teams
// they are with.
func (s DriveStore) Shares(ctx context.Context, fileID string) ([]drive.ShareInfo, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+shareCols+`, coalesce(u.email, ''), coalesce(`+userDisplayName+`, ''),
		coalesce(t.name, '') FROM drive_shares s LEFT JOIN users u ON u.id = s.user_id LEFT JOIN teams t ON t.id = s.team_id
		WHERE s.file_id = ? ORDER BY s.created_at, s.id`, fileID)
	if err != nil {
		return nil, mapErr(err, "shares")
	}
	defer rows.Close()
	out := []drive.ShareInfo{}
	for rows.Next() {
		var email, name, team string
		sh, err := scanShare(rows, &email, &name, &team)
		if err != nil {
			return nil, mapErr(err, "shares")
		}
		in := drive.ShareInfo{Share: sh}
		if sh.UserID != "" {
			in.SharedWith = &drive.ShareUser{UserID: sh.UserID, Email: email, DisplayName: name}
		}
		if sh.TeamID != "" {
			in.SharedWithTeam = &drive.ShareTeam{ID: sh.TeamID, Name: team}
		}
		out = append(out, in)
	}
	return out, mapErr(rows.Err(), "shares")
}

// DeleteShare removes a share.
func (s DriveStore) DeleteShare(ctx context.Context, id string) error {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM drive_shares WHERE id = ?`, id)
	if err != nil {
		return mapErr(err, "share")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapErr(sql.ErrNoRows, "share")
	}
	return nil
}

// OrgUser finds a user of orgID by id, or by e-mail when id is empty.
func (s DriveStore) OrgUser(ctx context.Context, orgID, id, email string) (drive.ShareUser, error) {
	var u drive.ShareUser
	cond, arg := `u.id = ?`, id
	if id == "" {
		cond, arg = `u.email_key = ?`, strings.ToLower(email)
	}
	err := s.read(ctx).QueryRowContext(ctx, `SELECT u.id, u.email, `+userDisplayName+`, u.status FROM users u
		WHERE u.organization_id = ? AND `+cond, orgID, arg).Scan(&u.UserID, &u.Email, &u.DisplayName, &u.Status)
	return u, mapErr(err, "user")
}

// OrgTeam returns the team teamID of orgID.
func (s DriveStore) OrgTeam(ctx context.Context, orgID, teamID string) (drive.ShareTeam, error) {
	var t drive.ShareTeam
	err := s.read(ctx).QueryRowContext(ctx, `SELECT id, name FROM teams WHERE organization_id = ? AND id = ?`, orgID, teamID).
		Scan(&t.ID, &t.Name)
	return t, mapErr(err, "team")
}

// OrgTeams lists the teams of orgID by name.
func (s DriveStore) OrgTeams(ctx context.Context, orgID string) ([]drive.ShareTeam, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT id, name FROM teams WHERE organization_id = ?
		ORDER BY name COLLATE NOCASE, id`, orgID)
	if err != nil {
		return nil, mapErr(err, "teams")
	}
	defer rows.Close()
	out := []drive.ShareTeam{}
	for rows.Next() {
		var t drive.ShareTeam
		if err := rows.Scan(&t.ID, &t.Name); err != nil {
			return nil, mapErr(err, "teams")
		}
		out = append(out, t)
	}
	return out, mapErr(rows.Err(), "teams")
}

// TeamShares lists the shares with teamID of live items, the newest first.
func (s DriveStore) TeamShares(ctx context.Context, teamID string) ([]drive.TeamShare, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT s.id, f.id, f.name, f.is_folder, f.owner_id, coalesce(`+userDisplayName+`, ''),
		s.permission, s.expires_at, s.created_at
		FROM drive_shares s JOIN drive_files f ON f.id = s.file_id LEFT JOIN users u ON u.id = f.owner_id
		WHERE s.team_id = ? AND f.trashed_at IS NULL AND f.status <> 'pending' ORDER BY s.created_at DESC, s.id`, teamID)
	if err != nil {
		return nil, mapErr(err, "team shares")
	}
	defer rows.Close()
	out := []drive.TeamShare{}
	for rows.Next() {
		var t drive.TeamShare
		var exp sql.NullInt64
		var c int64
		if err := rows.Scan(&t.ID, &t.FileID, &t.FileName, &t.IsFolder, &t.OwnerID, &t.OwnerName, &t.Permission, &exp, &c); err != nil {
			return nil, mapErr(err, "team shares")
		}
		t.ExpiresAt, t.CreatedAt = fromMSPtr(exp), fromMS(c)
		out = append(out, t)
	}
	return out, mapErr(rows.Err(), "team shares")
}

// LinkPlan returns the plan of an active organisation for a link an active
// user of it created.
func (s DriveStore) LinkPlan(ctx context.Context, orgID, userID string) (drive.Plan, error) {
	var p drive.Plan
	var features string
	err := s.read(ctx).QueryRowContext(ctx, `SELECT p.features, p.quota_bytes FROM organizations o
		JOIN subscriptions sub ON sub.organization_id = o.id JOIN plans p ON p.slug = sub.plan_slug
		JOIN users u ON u.organization_id = o.id AND u.id = ? AND u.status = 'active'
		WHERE o.id = ? AND o.status = 'active'`, userID, orgID).Scan(&features, &p.QuotaBytes)
	if err != nil {
		return p, mapErr(err, "organisation")
	}
	if err := json.Unmarshal([]byte(features), &p.Features); err != nil {
		return p, mapErr(err, "plan features")
	}
	return p, nil
}
