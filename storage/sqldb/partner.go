package sqldb

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/identity"
	"atrium/app/partner"
)

// PartnerStore implements partner.Store.
type PartnerStore struct{ IdentityStore }

var _ partner.Store = PartnerStore{}

const partnerOrgCols = orgCols + `, COALESCE(s.plan_slug, ''), COALESCE(s.seats, 0),
	(SELECT count(*) FROM users u WHERE u.organization_id = o.id)`

func scanPartnerOrg(sc interface{ Scan(...any) error }) (partner.Org, error) {
	var po partner.Org
	var parent sql.NullString
	var c, u int64
	o := &po.Organization
	err := sc.Scan(&o.ID, &o.Name, &o.Slug, &o.BillingName, &o.BillingEmail, &o.LogoURL, &o.MailDomain, &o.RestrictInvitations,
		&parent, &o.ResellerDepth, &o.Status, &c, &u, &po.PlanSlug, &po.Seats, &po.UserCount)
	if parent.Valid {
		o.ParentOrganizationID = &parent.String
	}
	o.CreatedAt, o.UpdatedAt = fromMS(c), fromMS(u)
	return po, err
}

// ftsQuery turns user text into an FTS5 trigram query: each word a quoted
// phrase (quotes doubled), all required.
func ftsQuery(q string) string {
	var parts []string
	for _, w := range strings.Fields(q) {
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(parts, " AND ")
}

// ChildOrgs lists the child organisations of parentID by id, filtered by name
// (q) and status. Names of three or more characters per word use the trigram
// index; shorter searches match a name prefix through the name index.
func (s PartnerStore) ChildOrgs(ctx context.Context, parentID string, f partner.OrgFilter, p app.PageRequest) ([]partner.Org, error) {
	q := `SELECT ` + partnerOrgCols + ` FROM organizations o LEFT JOIN subscriptions s ON s.organization_id = o.id
		WHERE o.parent_organization_id = ? AND o.id > ?`
	args := []any{parentID, p.After}
	if f.Status != "" {
		q += ` AND o.status = ?`
		args = append(args, f.Status)
	}
	if f.Q != "" {
		short := false
		for _, w := range strings.Fields(f.Q) {
			if len([]rune(w)) < 3 {
				short = true
			}
		}
		if short {
			q += ` AND o.name LIKE ? ESCAPE '\'`
			args = append(args, likeEscape(f.Q)+"%")
		} else {
			if s.pg != nil {
				// A name containing every word, any case (the trigram
				// index organizations_name_trgm), as FTS5's trigram
				// tokenizer matches on SQLite.
				for _, w := range strings.Fields(f.Q) {
					q += ` AND o.name ILIKE ? ESCAPE '\'`
					args = append(args, "%"+likeEscape(w)+"%")
				}
			} else {
				q += ` AND o.rowid IN (SELECT rowid FROM organizations_fts WHERE organizations_fts MATCH ?)`
				args = append(args, ftsQuery(f.Q))
			}
		}
	}
	rows, err := s.read(ctx).QueryContext(ctx, q+` ORDER BY o.id LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, mapErr(err, "organizations")
	}
	defer rows.Close()
	var out []partner.Org
	for rows.Next() {
		o, err := scanPartnerOrg(rows)
		if err != nil {
			return nil, mapErr(err, "organizations")
		}
		out = append(out, o)
	}
	return out, mapErr(rows.Err(), "organizations")
}

func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// ChildOrg returns a direct child organisation of parentID.
func (s PartnerStore) ChildOrg(ctx context.Context, parentID, id string) (partner.Org, error) {
	o, err := scanPartnerOrg(s.read(ctx).QueryRowContext(ctx, `SELECT `+partnerOrgCols+` FROM organizations o
		LEFT JOIN subscriptions s ON s.organization_id = o.id WHERE o.id = ? AND o.parent_organization_id = ?`, id, parentID))
	return o, mapErr(err, "organization")
}

// OrgWithSeats returns any organisation with its plan, seats and user count.
func (s PartnerStore) OrgWithSeats(ctx context.Context, id string) (partner.Org, error) {
	o, err := scanPartnerOrg(s.read(ctx).QueryRowContext(ctx, `SELECT `+partnerOrgCols+` FROM organizations o
		LEFT JOIN subscriptions s ON s.organization_id = o.id WHERE o.id = ?`, id))
	return o, mapErr(err, "organization")
}

// UpdateOrg writes an organisation's profile fields.
func (s PartnerStore) UpdateOrg(ctx context.Context, o identity.Organization) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE organizations SET name = ?, billing_name = ?, billing_email = ?, logo_url = ?,
		mail_domain = ?, restrict_invitations = ?, updated_at = ? WHERE id = ?`, o.Name, o.BillingName, o.BillingEmail, o.LogoURL, o.MailDomain, o.RestrictInvitations, ms(o.UpdatedAt), o.ID)
	return mapErr(err, "organization")
}

// UpdateUser writes a user's names and role.
func (s PartnerStore) UpdateUser(ctx context.Context, u identity.User) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE users SET first_name = ?, last_name = ?, role_slug = ?, updated_at = ? WHERE id = ?`,
		u.FirstName, u.LastName, u.RoleSlug, ms(u.UpdatedAt), u.ID)
	return mapErr(err, "user")
}

// DeleteUser removes a user (tokens, app passwords and memberships cascade).
func (s PartnerStore) DeleteUser(ctx context.Context, id string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
	return mapErr(err, "user")
}

// SeatsUsed counts active and invited users.
func (s PartnerStore) SeatsUsed(ctx context.Context, orgID string) (int, error) {
	var n int
	err := s.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM users WHERE organization_id = ? AND status IN ('active', 'invited')`, orgID).Scan(&n)
	return n, mapErr(err, "users")
}

// ActiveAdmins counts the active admins of an organisation.
func (s PartnerStore) ActiveAdmins(ctx context.Context, orgID string) (int, error) {
	var n int
	err := s.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM users WHERE organization_id = ? AND status = 'active' AND role_slug = 'admin'`, orgID).Scan(&n)
	return n, mapErr(err, "users")
}

// orgUserCols are a user's columns with their last sign-in, their last
// activity (the latest of their sessions' last requests and their tokens' and
// app passwords' last uses) and whether two-factor sign-in is on.
func (s PartnerStore) orgUserCols() string {
	return userCols + `, u.last_sign_in_at, nullif(` + s.greatest(
		`coalesce((SELECT max(last_seen_at) FROM web_sessions WHERE user_id = u.id), 0)`,
		`coalesce((SELECT max(last_used_at) FROM personal_access_tokens WHERE user_id = u.id), 0)`,
		`coalesce((SELECT max(last_used_at) FROM app_passwords WHERE user_id = u.id), 0)`) + `, 0),
	EXISTS (SELECT 1 FROM user_two_factor WHERE user_id = u.id AND enabled_at IS NOT NULL)`
}

func scanOrgUser(sc interface{ Scan(...any) error }) (partner.OrgUser, error) {
	var ou partner.OrgUser
	var c, up int64
	var signIn, active sql.NullInt64
	u := &ou.User
	err := sc.Scan(&u.ID, &u.OrgID, &u.Email, &u.FirstName, &u.LastName, &u.RoleSlug, &u.Status, &c, &up, &signIn, &active, &ou.TwoFactor)
	u.CreatedAt, u.UpdatedAt = fromMS(c), fromMS(up)
	if signIn.Valid {
		t := fromMS(signIn.Int64)
		ou.LastSignInAt = &t
	}
	if active.Valid {
		t := fromMS(active.Int64)
		ou.LastActiveAt = &t
	}
	return ou, err
}

// FindOrgUsers lists an organisation's users by id, filtered by any part of
// the e-mail address or full name and by status.
func (s PartnerStore) FindOrgUsers(ctx context.Context, orgID string, f partner.UserFilter, p app.PageRequest) ([]partner.OrgUser, error) {
	q := `SELECT ` + s.orgUserCols() + ` FROM users u WHERE u.organization_id = ? AND u.id > ?`
	args := []any{orgID, p.After}
	if f.Status != "" {
		q += ` AND u.status = ?`
		args = append(args, f.Status)
	}
	if f.Q != "" {
		like := "%" + likeEscape(f.Q) + "%"
		q += ` AND (u.email LIKE ? ESCAPE '\' OR (u.first_name || ' ' || u.last_name) LIKE ? ESCAPE '\')`
		args = append(args, like, like)
	}
	rows, err := s.read(ctx).QueryContext(ctx, q+` ORDER BY u.id LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, mapErr(err, "users")
	}
	defer rows.Close()
	var out []partner.OrgUser
	for rows.Next() {
		u, err := scanOrgUser(rows)
		if err != nil {
			return nil, mapErr(err, "users")
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err(), "users")
}

// OrgUser returns a user of an organisation with their activity.
func (s PartnerStore) OrgUser(ctx context.Context, orgID, id string) (partner.OrgUser, error) {
	u, err := scanOrgUser(s.read(ctx).QueryRowContext(ctx, `SELECT `+s.orgUserCols()+` FROM users u WHERE u.id = ? AND u.organization_id = ?`, id, orgID))
	return u, mapErr(err, "user")
}

// StorageUsed returns the bytes an organisation's drive holds (the drive's own
// usage counters).
func (s PartnerStore) StorageUsed(ctx context.Context, orgID string) (int64, error) {
	b, _, err := DriveStore{s.DB}.OrgUsage(ctx, orgID)
	return b, err
}

// StorageByOwner sums the drive's usage counters by owner, with the owner's
// name, most bytes first.
func (s PartnerStore) StorageByOwner(ctx context.Context, orgID string) ([]partner.UserStorage, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT d.owner_id, coalesce(u.email, ''), coalesce(u.first_name, ''), coalesce(u.last_name, ''),
			sum(d.bytes) AS b, sum(d.file_count)
		FROM drive_usage d LEFT JOIN users u ON u.id = d.owner_id AND u.organization_id = d.organization_id
		WHERE d.organization_id = ? GROUP BY d.owner_id, u.email, u.first_name, u.last_name HAVING sum(d.bytes) > 0
		ORDER BY b DESC, d.owner_id`, orgID)
	if err != nil {
		return nil, mapErr(err, "drive usage")
	}
	defer rows.Close()
	var out []partner.UserStorage
	for rows.Next() {
		var u partner.UserStorage
		if err := rows.Scan(&u.UserID, &u.Email, &u.FirstName, &u.LastName, &u.Bytes, &u.Files); err != nil {
			return nil, mapErr(err, "drive usage")
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err(), "drive usage")
}

// StorageByType sums the drive's usage counters by mime group, most bytes first.
func (s PartnerStore) StorageByType(ctx context.Context, orgID string) ([]partner.TypeStorage, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT mime_group, sum(bytes) AS b, sum(file_count) FROM drive_usage
		WHERE organization_id = ? GROUP BY mime_group HAVING sum(bytes) > 0 ORDER BY b DESC, mime_group`, orgID)
	if err != nil {
		return nil, mapErr(err, "drive usage")
	}
	defer rows.Close()
	var out []partner.TypeStorage
	for rows.Next() {
		var t partner.TypeStorage
		if err := rows.Scan(&t.MimeGroup, &t.Bytes, &t.Files); err != nil {
			return nil, mapErr(err, "drive usage")
		}
		out = append(out, t)
	}
	return out, mapErr(rows.Err(), "drive usage")
}

// CreateUserToken stores an e-mailed token by its keyed hash.
func (s PartnerStore) CreateUserToken(ctx context.Context, t partner.UserToken, hash []byte) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO user_tokens(id, user_id, kind, token_hash, expires_at, created_at)
		VALUES (?,?,?,?,?,?)`, t.ID, t.UserID, t.Kind, hash, ms(t.ExpiresAt), ms(s.now()))
	return mapErr(err, "token")
}

// UseUserToken marks a live token used and returns it.
func (s PartnerStore) UseUserToken(ctx context.Context, kind string, hash []byte, now time.Time) (partner.UserToken, error) {
	var t partner.UserToken
	var exp int64
	err := s.write(ctx).QueryRowContext(ctx, `UPDATE user_tokens SET used_at = ? WHERE kind = ? AND token_hash = ? AND used_at IS NULL
		AND expires_at > ? RETURNING id, user_id, kind, expires_at`, ms(now), kind, hash, ms(now)).Scan(&t.ID, &t.UserID, &t.Kind, &exp)
	t.ExpiresAt = fromMS(exp)
	return t, mapErr(err, "token")
}

// LiveUserToken returns a live token without using it.
func (s PartnerStore) LiveUserToken(ctx context.Context, kind string, hash []byte, now time.Time) (partner.UserToken, error) {
	var t partner.UserToken
	var exp int64
	err := s.read(ctx).QueryRowContext(ctx, `SELECT id, user_id, kind, expires_at FROM user_tokens WHERE kind = ? AND token_hash = ?
		AND used_at IS NULL AND expires_at > ?`, kind, hash, ms(now)).Scan(&t.ID, &t.UserID, &t.Kind, &exp)
	t.ExpiresAt = fromMS(exp)
	return t, mapErr(err, "token")
}

// RevokeUserTokens marks a user's unused tokens of kind used.
func (s PartnerStore) RevokeUserTokens(ctx context.Context, userID, kind string, now time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE user_tokens SET used_at = ? WHERE user_id = ? AND kind = ? AND used_at IS NULL`, ms(now), userID, kind)
	return mapErr(err, "token")
}

const teamCols = `t.id, t.organization_id, t.name, t.created_at, (SELECT count(*) FROM team_members m WHERE m.team_id = t.id)`

func scanTeam(sc interface{ Scan(...any) error }) (partner.Team, error) {
	var t partner.Team
	var c int64
	err := sc.Scan(&t.ID, &t.OrgID, &t.Name, &c, &t.MemberCount)
	t.CreatedAt = fromMS(c)
	return t, err
}

// Teams lists an organisation's teams by id.
func (s PartnerStore) Teams(ctx context.Context, orgID string, p app.PageRequest) ([]partner.Team, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+teamCols+` FROM teams t WHERE t.organization_id = ? AND t.id > ?
		ORDER BY t.id LIMIT ?`, orgID, p.After, p.Limit+1)
	if err != nil {
		return nil, mapErr(err, "teams")
	}
	defer rows.Close()
	var out []partner.Team
	for rows.Next() {
		t, err := scanTeam(rows)
		if err != nil {
			return nil, mapErr(err, "teams")
		}
		out = append(out, t)
	}
	return out, mapErr(rows.Err(), "teams")
}

// Team returns a team of an organisation.
func (s PartnerStore) Team(ctx context.Context, orgID, id string) (partner.Team, error) {
	t, err := scanTeam(s.read(ctx).QueryRowContext(ctx, `SELECT `+teamCols+` FROM teams t WHERE t.organization_id = ? AND t.id = ?`, orgID, id))
	return t, mapErr(err, "team")
}

// CreateTeam inserts a team.
func (s PartnerStore) CreateTeam(ctx context.Context, t partner.Team) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO teams(id, organization_id, name, created_at, updated_at) VALUES (?,?,?,?,?)`,
		t.ID, t.OrgID, t.Name, ms(t.CreatedAt), ms(t.CreatedAt))
	return mapErr(err, "team")
}

// UpdateTeam renames a team.
func (s PartnerStore) UpdateTeam(ctx context.Context, t partner.Team) error {
	_, err := s.write(ctx).ExecContext(ctx, `UPDATE teams SET name = ?, updated_at = ? WHERE id = ? AND organization_id = ?`,
		t.Name, ms(s.now()), t.ID, t.OrgID)
	return mapErr(err, "team")
}

// DeleteTeam removes a team and its memberships.
func (s PartnerStore) DeleteTeam(ctx context.Context, orgID, id string) error {
	_, err := s.write(ctx).ExecContext(ctx, `DELETE FROM teams WHERE id = ? AND organization_id = ?`, id, orgID)
	return mapErr(err, "team")
}

// Members lists a team's members by user id.
func (s PartnerStore) Members(ctx context.Context, teamID string, p app.PageRequest) ([]partner.Member, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT u.id, u.email, u.first_name, u.last_name, m.created_at FROM team_members m
		JOIN users u ON u.id = m.user_id WHERE m.team_id = ? AND u.id > ? ORDER BY u.id LIMIT ?`, teamID, p.After, p.Limit+1)
	if err != nil {
		return nil, mapErr(err, "members")
	}
	defer rows.Close()
	var out []partner.Member
	for rows.Next() {
		var m partner.Member
		var c int64
		if err := rows.Scan(&m.UserID, &m.Email, &m.FirstName, &m.LastName, &c); err != nil {
			return nil, mapErr(err, "members")
		}
		m.AddedAt = fromMS(c)
		out = append(out, m)
	}
	return out, mapErr(rows.Err(), "members")
}

// OrgMembers lists the members of every team of an organisation (partner.Store).
func (s PartnerStore) OrgMembers(ctx context.Context, orgID string) (map[string][]partner.Member, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT m.team_id, u.id, u.email, u.first_name, u.last_name, m.created_at
		FROM teams t JOIN team_members m ON m.team_id = t.id JOIN users u ON u.id = m.user_id
		WHERE t.organization_id = ? ORDER BY m.team_id, u.id`, orgID)
	if err != nil {
		return nil, mapErr(err, "members")
	}
	defer rows.Close()
	out := map[string][]partner.Member{}
	for rows.Next() {
		var team string
		var m partner.Member
		var c int64
		if err := rows.Scan(&team, &m.UserID, &m.Email, &m.FirstName, &m.LastName, &c); err != nil {
			return nil, mapErr(err, "members")
		}
		m.AddedAt = fromMS(c)
		out[team] = append(out[team], m)
	}
	return out, mapErr(rows.Err(), "members")
}

// AddMember adds a user to a team.
func (s PartnerStore) AddMember(ctx context.Context, teamID, userID string, at time.Time) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO team_members(team_id, user_id, created_at) VALUES (?,?,?)`, teamID, userID, ms(at))
	return mapErr(err, "team member")
}

// RemoveMember removes a user from a team; not a member is not_found.
func (s PartnerStore) RemoveMember(ctx context.Context, teamID, userID string) error {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM team_members WHERE team_id = ? AND user_id = ?`, teamID, userID)
	if err != nil {
		return mapErr(err, "team member")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The user is not a member of the team.")
	}
	return nil
}

// PublishedPlans lists published plans by slug.
func (s PartnerStore) PublishedPlans(ctx context.Context, p app.PageRequest) ([]identity.Plan, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+planCols+` FROM plans WHERE published = 1 AND slug > ? ORDER BY slug LIMIT ?`,
		p.After, p.Limit+1)
	if err != nil {
		return nil, mapErr(err, "plans")
	}
	defer rows.Close()
	var out []identity.Plan
	for rows.Next() {
		pl, err := scanPlan(rows)
		if err != nil {
			return nil, mapErr(err, "plans")
		}
		out = append(out, pl)
	}
	return out, mapErr(rows.Err(), "plans")
}

// MailOutbox implements app.Mailer on the mail_outbox table; a sender delivers
// queued rows.
type MailOutbox struct {
	*DB
	// Deliver is false when no SMTP server is configured: mail is kept as
	// "logged" in the outbox.
	Deliver bool
}

var _ app.Mailer = MailOutbox{}

// Queue writes an e-mail in the caller's transaction.
func (m MailOutbox) Queue(ctx context.Context, mail app.Mail) error {
	if mail.ID == "" {
		mail.ID = app.NewID()
	}
	status := "logged"
	if m.Deliver {
		status = "queued"
	}
	now := ms(m.now())
	_, err := m.write(ctx).ExecContext(ctx, `INSERT INTO mail_outbox(id, organization_id, to_addr, subject, body, status, next_attempt_at, created_at)
		VALUES (?,?,?,?,?,?,?,?)`, mail.ID, mail.OrgID, mail.To, mail.Subject, mail.Body, status, now, now)
	return mapErr(err, "mail")
}

// List returns the outbox, newest first.
func (m MailOutbox) List(ctx context.Context, limit int) ([]app.Mail, error) {
	rows, err := m.read(ctx).QueryContext(ctx, `SELECT id, to_addr, subject, body, status, created_at FROM mail_outbox
		ORDER BY id DESC LIMIT ?`, limit)
	return scanMails(rows, err)
}

func scanMails(rows *sql.Rows, err error) ([]app.Mail, error) {
	if err != nil {
		return nil, mapErr(err, "mail")
	}
	defer rows.Close()
	var out []app.Mail
	for rows.Next() {
		var ml app.Mail
		var c int64
		if err := rows.Scan(&ml.ID, &ml.To, &ml.Subject, &ml.Body, &ml.Status, &c); err != nil {
			return nil, mapErr(err, "mail")
		}
		ml.CreatedAt = fromMS(c)
		out = append(out, ml)
	}
	return out, mapErr(rows.Err(), "mail")
}

// Due returns queued e-mail whose next attempt is due.
func (m MailOutbox) Due(ctx context.Context, now time.Time, limit int) ([]app.Mail, error) {
	rows, err := m.read(ctx).QueryContext(ctx, `SELECT id, to_addr, subject, body, status, created_at FROM mail_outbox
		WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`, ms(now), limit)
	return scanMails(rows, err)
}

// Claim takes a due e-mail for one attempt (mail.Outbox): its next attempt
// moves to until, in one statement, so that of two senders (two nodes around
// a change of leader) one gets it.
func (m MailOutbox) Claim(ctx context.Context, id string, now, until time.Time) (bool, error) {
	res, err := m.write(ctx).ExecContext(ctx, `UPDATE mail_outbox SET next_attempt_at = ?
		WHERE id = ? AND status = 'queued' AND next_attempt_at <= ?`, ms(until), id, ms(now))
	if err != nil {
		return false, mapErr(err, "mail")
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err, "mail")
}

// MarkSent records a delivered e-mail.
func (m MailOutbox) MarkSent(ctx context.Context, id string) error {
	_, err := m.write(ctx).ExecContext(ctx, `UPDATE mail_outbox SET status = 'sent', attempts = attempts + 1, last_error = '' WHERE id = ?`, id)
	return mapErr(err, "mail")
}

// MarkFailed records a failed attempt: retried at next, or failed for good when
// next is nil.
func (m MailOutbox) MarkFailed(ctx context.Context, id, reason string, next *time.Time) error {
	if next == nil {
		_, err := m.write(ctx).ExecContext(ctx, `UPDATE mail_outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?`, reason, id)
		return mapErr(err, "mail")
	}
	_, err := m.write(ctx).ExecContext(ctx, `UPDATE mail_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? WHERE id = ?`,
		reason, ms(*next), id)
	return mapErr(err, "mail")
}

// Attempts returns how many times an e-mail was tried.
func (m MailOutbox) Attempts(ctx context.Context, id string) (int, error) {
	var n int
	err := m.read(ctx).QueryRowContext(ctx, `SELECT attempts FROM mail_outbox WHERE id = ?`, id).Scan(&n)
	return n, mapErr(err, "mail")
}
