package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"atrium/app"
	"atrium/app/identity"
)

// IdentityStore implements identity.Store.
type IdentityStore struct{ *DB }

var _ identity.Store = IdentityStore{}

// Secret returns the named server secret, creating it with gen when absent.
func (s IdentityStore) Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	var v []byte
	err := s.InTx(ctx, func(ctx context.Context) error {
		err := s.write(ctx).QueryRowContext(ctx, `SELECT value FROM server_secrets WHERE name = ?`, name).Scan(&v)
		if err == nil {
			return nil
		}
		if err != sql.ErrNoRows {
			return mapErr(err, "server secret")
		}
		if v, err = gen(); err != nil {
			return err
		}
		_, err = s.write(ctx).ExecContext(ctx, `INSERT INTO server_secrets(name, value, created_at) VALUES (?, ?, ?)`, name, v, ms(s.now()))
		return mapErr(err, "server secret")
	})
	return v, err
}

// UpsertPlans creates or updates plans.
func (s IdentityStore) UpsertPlans(ctx context.Context, plans []identity.Plan) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		for _, p := range plans {
			f, _ := json.Marshal(p.Features)
			_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO plans(slug, name, features, quota_bytes, max_seats) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT(slug) DO UPDATE SET name = excluded.name, features = excluded.features,
				quota_bytes = excluded.quota_bytes, max_seats = excluded.max_seats`, p.Slug, p.Name, string(f), p.QuotaBytes, p.MaxSeats)
			if err != nil {
				return mapErr(err, "plan")
			}
		}
		return nil
	})
}

const planCols = `slug, name, features, quota_bytes, max_seats`

func scanPlan(sc interface{ Scan(...any) error }) (identity.Plan, error) {
	var p identity.Plan
	var f string
	if err := sc.Scan(&p.Slug, &p.Name, &f, &p.QuotaBytes, &p.MaxSeats); err != nil {
		return p, err
	}
	_ = json.Unmarshal([]byte(f), &p.Features)
	return p, nil
}

// Plan returns a plan.
func (s IdentityStore) Plan(ctx context.Context, slug string) (identity.Plan, error) {
	p, err := scanPlan(s.read(ctx).QueryRowContext(ctx, `SELECT `+planCols+` FROM plans WHERE slug = ?`, slug))
	return p, mapErr(err, "plan")
}

// Plans returns every plan, by slug.
func (s IdentityStore) Plans(ctx context.Context) ([]identity.Plan, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+planCols+` FROM plans ORDER BY quota_bytes, slug`)
	if err != nil {
		return nil, mapErr(err, "plans")
	}
	defer rows.Close()
	var out []identity.Plan
	for rows.Next() {
		p, err := scanPlan(rows)
		if err != nil {
			return nil, mapErr(err, "plans")
		}
		out = append(out, p)
	}
	return out, mapErr(rows.Err(), "plans")
}

const orgCols = `o.id, o.name, o.slug, o.billing_name, o.billing_email, o.logo_url, o.mail_domain, o.restrict_invitations,
	o.parent_organization_id, o.reseller_depth, o.status, o.created_at, o.updated_at`

func scanOrg(sc interface{ Scan(...any) error }) (identity.Organization, error) {
	var o identity.Organization
	var parent sql.NullString
	var c, u int64
	err := sc.Scan(&o.ID, &o.Name, &o.Slug, &o.BillingName, &o.BillingEmail, &o.LogoURL, &o.MailDomain, &o.RestrictInvitations,
		&parent, &o.ResellerDepth, &o.Status, &c, &u)
	if parent.Valid {
		o.ParentOrganizationID = &parent.String
	}
	o.CreatedAt, o.UpdatedAt = fromMS(c), fromMS(u)
	return o, err
}

// CreateOrg inserts an organisation.
func (s IdentityStore) CreateOrg(ctx context.Context, o identity.Organization) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO organizations(id, name, slug, billing_name, billing_email, logo_url,
		mail_domain, restrict_invitations, parent_organization_id, reseller_depth, status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		o.ID, o.Name, o.Slug, o.BillingName, o.BillingEmail, o.LogoURL, o.MailDomain, o.RestrictInvitations, o.ParentOrganizationID,
		o.ResellerDepth, o.Status, ms(o.CreatedAt), ms(o.UpdatedAt))
	return mapErr(err, "organization")
}

// Org returns an organisation.
func (s IdentityStore) Org(ctx context.Context, id string) (identity.Organization, error) {
	o, err := scanOrg(s.read(ctx).QueryRowContext(ctx, `SELECT `+orgCols+` FROM organizations o WHERE o.id = ?`, id))
	return o, mapErr(err, "organization")
}

// OrgBySlug returns the organisation with a slug.
func (s IdentityStore) OrgBySlug(ctx context.Context, slug string) (identity.Organization, error) {
	o, err := scanOrg(s.read(ctx).QueryRowContext(ctx, `SELECT `+orgCols+` FROM organizations o WHERE o.slug = ?`, slug))
	return o, mapErr(err, "organization")
}

// OrgByName returns the organisation named name under parentID (nil: top level).
func (s IdentityStore) OrgByName(ctx context.Context, parentID *string, name string) (identity.Organization, error) {
	o, err := scanOrg(s.read(ctx).QueryRowContext(ctx, `SELECT `+orgCols+` FROM organizations o
		WHERE o.parent_organization_id IS NOT DISTINCT FROM ? AND o.name = ? ORDER BY o.id LIMIT 1`, parentID, name))
	return o, mapErr(err, "organization")
}

// SetOrgStatus sets an organisation's status.
func (s IdentityStore) SetOrgStatus(ctx context.Context, id, status string) error {
	return s.setStatus(ctx, "organizations", "organization", id, status)
}

// SetUserStatus sets a user's status.
func (s IdentityStore) SetUserStatus(ctx context.Context, id, status string) error {
	return s.setStatus(ctx, "users", "user", id, status)
}

func (s IdentityStore) setStatus(ctx context.Context, table, what, id, status string) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE `+table+` SET status = ?, updated_at = ? WHERE id = ?`, status, ms(s.now()), id)
	if err != nil {
		return mapErr(err, what)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The %s was not found.", what)
	}
	return nil
}

// SetSubscription creates or replaces an organisation's subscription.
func (s IdentityStore) SetSubscription(ctx context.Context, sub identity.Subscription) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO subscriptions(organization_id, plan_slug, seats, status, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT(organization_id) DO UPDATE SET plan_slug = excluded.plan_slug,
		seats = excluded.seats, status = excluded.status, updated_at = excluded.updated_at`,
		sub.OrgID, sub.PlanSlug, sub.Seats, sub.Status, ms(s.now()))
	return mapErr(err, "subscription")
}

// Subscription returns an organisation's subscription.
func (s IdentityStore) Subscription(ctx context.Context, orgID string) (identity.Subscription, error) {
	var sub identity.Subscription
	err := s.read(ctx).QueryRowContext(ctx, `SELECT organization_id, plan_slug, seats, status FROM subscriptions
		WHERE organization_id = ?`, orgID).Scan(&sub.OrgID, &sub.PlanSlug, &sub.Seats, &sub.Status)
	return sub, mapErr(err, "subscription")
}

const userCols = `u.id, u.organization_id, u.email, u.first_name, u.last_name, u.role_slug, u.status, u.created_at, u.updated_at`

func scanUser(sc interface{ Scan(...any) error }) (identity.User, error) {
	var u identity.User
	var c, up int64
	err := sc.Scan(&u.ID, &u.OrgID, &u.Email, &u.FirstName, &u.LastName, &u.RoleSlug, &u.Status, &c, &up)
	u.CreatedAt, u.UpdatedAt = fromMS(c), fromMS(up)
	return u, err
}

// CreateUser inserts a user; the e-mail address is unique across the installation.
func (s IdentityStore) CreateUser(ctx context.Context, u identity.User, passwordHash string) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO users(id, organization_id, email, email_key, first_name, last_name,
		role_slug, status, password_hash, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		u.ID, u.OrgID, u.Email, strings.ToLower(u.Email), u.FirstName, u.LastName, u.RoleSlug, u.Status, passwordHash,
		ms(u.CreatedAt), ms(u.UpdatedAt))
	return mapErr(err, "user")
}

// User returns a user.
func (s IdentityStore) User(ctx context.Context, id string) (identity.User, error) {
	u, err := scanUser(s.read(ctx).QueryRowContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.id = ?`, id))
	return u, mapErr(err, "user")
}

// UserByEmail returns the user with an e-mail address (case-insensitive).
func (s IdentityStore) UserByEmail(ctx context.Context, email string) (identity.User, error) {
	u, err := scanUser(s.read(ctx).QueryRowContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.email_key = ?`,
		strings.ToLower(strings.TrimSpace(email))))
	return u, mapErr(err, "user")
}

// OrgUsers lists an organisation's users by id, after a position.
func (s IdentityStore) OrgUsers(ctx context.Context, orgID string, p app.PageRequest) ([]identity.User, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+userCols+` FROM users u WHERE u.organization_id = ? AND u.id > ?
		ORDER BY u.id LIMIT ?`, orgID, p.After, p.Limit+1)
	if err != nil {
		return nil, mapErr(err, "users")
	}
	defer rows.Close()
	var out []identity.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, mapErr(err, "users")
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err(), "users")
}

// CreateToken stores a PAT by the hash of its secret.
func (s IdentityStore) CreateToken(ctx context.Context, t identity.Token, hash []byte) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO personal_access_tokens(id, user_id, organization_id, name, token_hash,
		scopes, expires_at, created_at) VALUES (?,?,?,?,?,?,?,?)`, t.ID, t.UserID, t.OrgID, t.Name, hash,
		strings.Join(t.Scopes, " "), msPtr(t.ExpiresAt), ms(t.CreatedAt))
	return mapErr(err, "token")
}

// CreateAppPassword stores an app password by the hash of its secret.
func (s IdentityStore) CreateAppPassword(ctx context.Context, a identity.AppPassword, hash []byte) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO app_passwords(id, user_id, label, secret_hash, created_at)
		VALUES (?,?,?,?,?)`, a.ID, a.UserID, a.Label, hash, ms(a.CreatedAt))
	return mapErr(err, "app password")
}

const spCols = `sp.id, sp.organization_id, sp.name, sp.scopes, sp.user_id, sp.created_at`

func scanSP(sc interface{ Scan(...any) error }) (identity.ServicePrincipal, error) {
	var sp identity.ServicePrincipal
	var scopes string
	var uid sql.NullString
	var c int64
	err := sc.Scan(&sp.ID, &sp.OrgID, &sp.Name, &scopes, &uid, &c)
	sp.Scopes = strings.Fields(scopes)
	if uid.Valid {
		sp.UserID = &uid.String
	}
	sp.CreatedAt = fromMS(c)
	return sp, err
}

// CreateServicePrincipal inserts a service principal.
func (s IdentityStore) CreateServicePrincipal(ctx context.Context, sp identity.ServicePrincipal) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO service_principals(id, organization_id, name, scopes, user_id, created_at)
		VALUES (?,?,?,?,?,?)`, sp.ID, sp.OrgID, sp.Name, strings.Join(sp.Scopes, " "), sp.UserID, ms(sp.CreatedAt))
	return mapErr(err, "service principal")
}

// ServicePrincipal returns a service principal of an organisation.
func (s IdentityStore) ServicePrincipal(ctx context.Context, orgID, id string) (identity.ServicePrincipal, error) {
	sp, err := scanSP(s.read(ctx).QueryRowContext(ctx, `SELECT `+spCols+` FROM service_principals sp
		WHERE sp.organization_id = ? AND sp.id = ?`, orgID, id))
	return sp, mapErr(err, "service principal")
}

// ServicePrincipals lists an organisation's service principals, newest first.
func (s IdentityStore) ServicePrincipals(ctx context.Context, orgID string, p app.PageRequest) ([]identity.ServicePrincipal, error) {
	q := `SELECT ` + spCols + ` FROM service_principals sp WHERE sp.organization_id = ?`
	args := []any{orgID}
	if p.After != "" {
		q += ` AND sp.id < ?`
		args = append(args, p.After)
	}
	rows, err := s.read(ctx).QueryContext(ctx, q+` ORDER BY sp.id DESC LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, mapErr(err, "service principals")
	}
	defer rows.Close()
	var out []identity.ServicePrincipal
	for rows.Next() {
		sp, err := scanSP(rows)
		if err != nil {
			return nil, mapErr(err, "service principals")
		}
		out = append(out, sp)
	}
	return out, mapErr(rows.Err(), "service principals")
}

// DeleteServicePrincipal removes a service principal and (by cascade) its tokens.
func (s IdentityStore) DeleteServicePrincipal(ctx context.Context, orgID, id string) error {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM service_principals WHERE organization_id = ? AND id = ?`, orgID, id)
	if err != nil {
		return mapErr(err, "service principal")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The service principal was not found.")
	}
	return nil
}

// CreateSPToken stores a service principal token by the hash of its secret.
func (s IdentityStore) CreateSPToken(ctx context.Context, t identity.SPToken, hash []byte) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO service_principal_tokens(id, service_principal_id, name, token_hash,
		expires_at, created_at) VALUES (?,?,?,?,?,?)`, t.ID, t.ServicePrincipalID, t.Name, hash, msPtr(t.ExpiresAt), ms(t.CreatedAt))
	return mapErr(err, "service principal token")
}

// SPTokens lists a service principal's tokens, newest first.
func (s IdentityStore) SPTokens(ctx context.Context, spID string, p app.PageRequest) ([]identity.SPToken, error) {
	q := `SELECT id, service_principal_id, name, expires_at, created_at FROM service_principal_tokens WHERE service_principal_id = ?`
	args := []any{spID}
	if p.After != "" {
		q += ` AND id < ?`
		args = append(args, p.After)
	}
	rows, err := s.read(ctx).QueryContext(ctx, q+` ORDER BY id DESC LIMIT ?`, append(args, p.Limit+1)...)
	if err != nil {
		return nil, mapErr(err, "service principal tokens")
	}
	defer rows.Close()
	var out []identity.SPToken
	for rows.Next() {
		var t identity.SPToken
		var exp sql.NullInt64
		var c int64
		if err := rows.Scan(&t.ID, &t.ServicePrincipalID, &t.Name, &exp, &c); err != nil {
			return nil, mapErr(err, "service principal tokens")
		}
		t.ExpiresAt, t.CreatedAt = fromMSPtr(exp), fromMS(c)
		out = append(out, t)
	}
	return out, mapErr(rows.Err(), "service principal tokens")
}

// DeleteSPToken deletes a token of a service principal.
func (s IdentityStore) DeleteSPToken(ctx context.Context, spID, id string) error {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM service_principal_tokens WHERE service_principal_id = ? AND id = ?`, spID, id)
	if err != nil {
		return mapErr(err, "service principal token")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The service principal has no token %s.", id)
	}
	return nil
}

// credCols reads a user (possibly absent), its organisation and the plan.
const credCols = `u.id, u.organization_id, u.email, u.first_name, u.last_name, u.role_slug, u.status, u.created_at, u.updated_at,
	u.credentials_not_before,
	` + orgCols + `, COALESCE(p.slug, ''), COALESCE(p.name, ''), COALESCE(p.features, '[]'),
	COALESCE(p.quota_bytes, 0), COALESCE(p.max_seats, 0)`

func scanCred(sc interface{ Scan(...any) error }, extra ...any) (identity.Credential, error) {
	var c identity.Credential
	var uid, uorg, email, fn, ln, role, status sql.NullString
	var uc, uu, notBefore sql.NullInt64
	var parent sql.NullString
	var oc, ou int64
	var feats string
	o := &c.Org
	dest := []any{&uid, &uorg, &email, &fn, &ln, &role, &status, &uc, &uu, &notBefore,
		&o.ID, &o.Name, &o.Slug, &o.BillingName, &o.BillingEmail, &o.LogoURL, &o.MailDomain, &o.RestrictInvitations, &parent, &o.ResellerDepth,
		&o.Status, &oc, &ou, &c.Plan.Slug, &c.Plan.Name, &feats, &c.Plan.QuotaBytes, &c.Plan.MaxSeats}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return c, err
	}
	if parent.Valid {
		o.ParentOrganizationID = &parent.String
	}
	o.CreatedAt, o.UpdatedAt = fromMS(oc), fromMS(ou)
	_ = json.Unmarshal([]byte(feats), &c.Plan.Features)
	if uid.Valid {
		c.User = &identity.User{ID: uid.String, OrgID: uorg.String, Email: email.String, FirstName: fn.String,
			LastName: ln.String, RoleSlug: role.String, Status: status.String,
			CreatedAt: fromMS(uc.Int64), UpdatedAt: fromMS(uu.Int64)}
		if notBefore.Int64 > 0 {
			c.NotBefore = fromMS(notBefore.Int64)
		}
	}
	return c, nil
}

// CredentialByHash finds a PAT or service principal token by its keyed hash.
func (s IdentityStore) CredentialByHash(ctx context.Context, kind string, hash []byte) (identity.Credential, error) {
	var (
		c      identity.Credential
		err    error
		id     string
		h      []byte
		scopes string
		exp    sql.NullInt64
		used   sql.NullInt64
	)
	switch kind {
	case app.CredPAT:
		c, err = scanCred(s.read(ctx).QueryRowContext(ctx, `SELECT `+credCols+`, t.id, t.token_hash, t.scopes, t.expires_at, t.last_used_at
			FROM personal_access_tokens t JOIN users u ON u.id = t.user_id JOIN organizations o ON o.id = u.organization_id
			LEFT JOIN subscriptions s ON s.organization_id = o.id LEFT JOIN plans p ON p.slug = s.plan_slug
			WHERE t.token_hash = ?`, hash), &id, &h, &scopes, &exp, &used)
	case app.CredSPToken:
		var spID, spName, spScopes string
		c, err = scanCred(s.read(ctx).QueryRowContext(ctx, `SELECT `+credCols+`, t.id, t.token_hash, sp.scopes, t.expires_at,
			sp.id, sp.name, sp.scopes
			FROM service_principal_tokens t JOIN service_principals sp ON sp.id = t.service_principal_id
			JOIN organizations o ON o.id = sp.organization_id LEFT JOIN users u ON u.id = sp.user_id
			LEFT JOIN subscriptions s ON s.organization_id = o.id LEFT JOIN plans p ON p.slug = s.plan_slug
			WHERE t.token_hash = ?`, hash), &id, &h, &scopes, &exp, &spID, &spName, &spScopes)
		c.SPID, c.SPName = spID, spName
	default:
		return c, app.Errorf(app.ENotFound, "unknown credential kind")
	}
	if err != nil {
		return c, mapErr(err, "credential")
	}
	c.ID, c.Hash, c.Kind, c.Scopes, c.ExpiresAt, c.LastUsedAt = id, h, kind, strings.Fields(scopes), fromMSPtr(exp), fromMSPtr(used)
	return c, nil
}

// AppPasswordCredential finds a user's app password by e-mail address and keyed hash.
func (s IdentityStore) AppPasswordCredential(ctx context.Context, email string, hash []byte) (identity.Credential, error) {
	var id string
	var h []byte
	var used sql.NullInt64
	c, err := scanCred(s.read(ctx).QueryRowContext(ctx, `SELECT `+credCols+`, a.id, a.secret_hash, a.last_used_at
		FROM users u JOIN app_passwords a ON a.user_id = u.id JOIN organizations o ON o.id = u.organization_id
		LEFT JOIN subscriptions s ON s.organization_id = o.id LEFT JOIN plans p ON p.slug = s.plan_slug
		WHERE u.email_key = ? AND a.secret_hash = ?`, strings.ToLower(email), hash), &id, &h, &used)
	if err != nil {
		return c, mapErr(err, "app password")
	}
	c.ID, c.Hash, c.Kind, c.LastUsedAt = id, h, app.CredAppPassword, fromMSPtr(used)
	return c, nil
}

// UserCredential loads a user with its organisation and plan.
func (s IdentityStore) UserCredential(ctx context.Context, userID string) (identity.Credential, error) {
	c, err := scanCred(s.read(ctx).QueryRowContext(ctx, `SELECT `+credCols+`
		FROM users u JOIN organizations o ON o.id = u.organization_id
		LEFT JOIN subscriptions s ON s.organization_id = o.id LEFT JOIN plans p ON p.slug = s.plan_slug
		WHERE u.id = ?`, userID))
	return c, mapErr(err, "user")
}

// SPCredential loads a service principal with its organisation, plan and bound user.
func (s IdentityStore) SPCredential(ctx context.Context, id string) (identity.Credential, error) {
	var scopes, spID, spName string
	c, err := scanCred(s.read(ctx).QueryRowContext(ctx, `SELECT `+credCols+`, sp.id, sp.name, sp.scopes
		FROM service_principals sp JOIN organizations o ON o.id = sp.organization_id LEFT JOIN users u ON u.id = sp.user_id
		LEFT JOIN subscriptions s ON s.organization_id = o.id LEFT JOIN plans p ON p.slug = s.plan_slug
		WHERE sp.id = ?`, id), &spID, &spName, &scopes)
	if err != nil {
		return c, mapErr(err, "service principal")
	}
	c.SPID, c.SPName, c.Scopes = spID, spName, strings.Fields(scopes)
	return c, nil
}
