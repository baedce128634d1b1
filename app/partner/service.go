package partner

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/identity"
)

// Service applies the partner rules. Every method takes the caller and checks
// that it is a reseller and that the target organisation is one of its children;
// anything else is not_found, so no existence leaks across resellers.
type Service struct {
	store     Store
	ids       *identity.Service
	audit     app.Auditor
	outbox    app.Outbox
	mail      app.Mailer
	clock     app.Clock
	publicURL string
	tokenKey  []byte
	// userData are the modules that keep data of a user, told when one is deleted.
	userData []UserData
}

// UserData is a module that keeps data of users (the drive): it deletes a
// user's data inside the transaction that deletes the user, so that nothing
// of theirs outlives them uncounted.
type UserData interface {
	DeleteUserData(ctx context.Context, orgID, userID string) error
}

// WithUserData adds modules to tell when a user is deleted. Errors: none of its
// own.
func (s *Service) WithUserData(d ...UserData) *Service {
	s.userData = append(s.userData, d...)
	return s
}

// NewService returns the partner service. tokenKey keys the hashes of e-mailed
// tokens; publicURL builds the links in them.
func NewService(store Store, ids *identity.Service, audit app.Auditor, outbox app.Outbox, mail app.Mailer, clock app.Clock, publicURL string, tokenKey []byte) *Service {
	return &Service{store: store, ids: ids, audit: audit, outbox: outbox, mail: mail, clock: clock,
		publicURL: strings.TrimRight(publicURL, "/"), tokenKey: tokenKey}
}

// requireReseller refuses callers without scope (every door alike: the
// REST door's operations name the same scopes, the console's session
// carries those of the caller's role) and callers whose organisation is not
// a reseller.
func requireReseller(p *app.Principal, scope string) error {
	if p == nil {
		return app.Errorf(app.EUnauthorized, "Authentication is required.")
	}
	if err := p.Require(scope); err != nil {
		return err
	}
	if p.ResellerDepth < 1 {
		return app.Errorf(app.EForbidden, "Only a reseller organisation may use the partner API.")
	}
	return nil
}

// child returns the caller's child organisation id, or not_found.
func (s *Service) child(ctx context.Context, p *app.Principal, orgID, scope string) (Org, error) {
	if err := requireReseller(p, scope); err != nil {
		return Org{}, err
	}
	o, err := s.store.ChildOrg(ctx, p.OrgID, orgID)
	if app.ErrorCode(err) == app.ENotFound {
		return Org{}, app.Errorf(app.ENotFound, "No organisation %s among your customers.", orgID)
	}
	return o, err
}

// record writes an audit entry in the target organisation's log: module
// "partner" when a reseller acts on a customer, "admin" when an organisation's
// own admin acts on it.
func (s *Service) record(ctx context.Context, p *app.Principal, orgID, action, targetType, targetID string, changed ...string) error {
	actor := p.UserID
	if actor == "" {
		actor = "sp:" + p.ServicePrincipalID
	}
	module := "partner"
	if orgID == p.OrgID {
		module = "admin"
	}
	return s.audit.Record(ctx, app.AuditEntry{Module: module, Action: action, ActorID: actor, TargetType: targetType,
		TargetID: targetID, OrgID: orgID, ChangedFields: changed, CreatedAt: s.clock.Now()})
}

func (s *Service) emit(ctx context.Context, orgID, typ string, data map[string]any) error {
	return s.outbox.Emit(ctx, app.Event{ID: app.NewID(), Type: typ, OrgID: orgID, CreatedAt: s.clock.Now(), Data: data})
}

// ListOrgs lists the caller's customer organisations. Errors:
// insufficient_scope (no partner:orgs:read), forbidden (not a reseller),
// validation_failed (the status or q).
func (s *Service) ListOrgs(ctx context.Context, p *app.Principal, f OrgFilter, pr app.PageRequest) ([]Org, error) {
	if err := requireReseller(p, app.ScopePartnerOrgsRead); err != nil {
		return nil, err
	}
	if f.Status != "" && f.Status != identity.OrgActive && f.Status != identity.OrgSuspended {
		return nil, app.Invalid("query.status", "must be active or suspended", f.Status)
	}
	f.Q = strings.TrimSpace(f.Q)
	if len(f.Q) > 200 {
		return nil, app.Invalid("query.q", "must be at most 200 characters", f.Q)
	}
	return s.store.ChildOrgs(ctx, p.OrgID, f, pr)
}

// GetOrg returns one customer organisation. Errors: insufficient_scope (no
// partner:orgs:read), forbidden (not a reseller), not_found (no such customer
// organisation).
func (s *Service) GetOrg(ctx context.Context, p *app.Principal, orgID string) (Org, error) {
	return s.child(ctx, p, orgID, app.ScopePartnerOrgsRead)
}

// CreateOrgInput is the body of a new customer organisation.
type CreateOrgInput struct {
	Name           string
	Slug           string
	BillingEmail   string
	PlanSlug       string
	Seats          int
	AdminEmail     string
	AdminFirstName string
	AdminLastName  string
}

// CreateOrg provisions a customer organisation in one transaction: the
// organisation, its subscription, the admin user (invited), the invitation
// e-mail, the audit entry and the organization.user.created event. Errors:
// insufficient_scope (no partner:orgs:write), forbidden (not a reseller),
// validation_failed (the name, the slug, an e-mail address, a plan not
// published to the caller, the seats), conflict (the slug is taken, the admin's
// address is a user's).
func (s *Service) CreateOrg(ctx context.Context, p *app.Principal, in CreateOrgInput) (Org, error) {
	if err := requireReseller(p, app.ScopePartnerOrgsWrite); err != nil {
		return Org{}, err
	}
	var v app.Validator
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "body.name", "must be 1 to 200 characters", in.Name)
	if in.Slug == "" {
		in.Slug = identity.Slugify(in.Name)
	} else {
		v.Check(identity.ValidSlug(in.Slug), "body.slug", "must be lowercase letters, digits and dashes (1 to 64)", in.Slug)
	}
	admin, err := identity.NormalizeEmail(in.AdminEmail)
	v.Check(err == nil, "body.admin_email", "must be a valid e-mail address", in.AdminEmail)
	if in.BillingEmail == "" {
		in.BillingEmail = admin
	} else if _, err := identity.NormalizeEmail(in.BillingEmail); err != nil {
		v.Add("body.billing_email", "must be a valid e-mail address", in.BillingEmail)
	}
	plan, perr := s.publishedPlan(ctx, in.PlanSlug)
	if perr != nil {
		v.Add("body.plan_slug", "no such plan is published to you", in.PlanSlug)
	}
	if in.Seats == 0 {
		in.Seats = min(10, max(plan.MaxSeats, 1))
	}
	v.Check(in.Seats >= 1 && (perr != nil || in.Seats <= plan.MaxSeats), "body.seats", fmt.Sprintf("must be between 1 and the plan's %d", plan.MaxSeats), in.Seats)
	if err := v.Err(); err != nil {
		return Org{}, err
	}
	var out Org
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.store.OrgBySlug(ctx, in.Slug); err == nil {
			return app.Errorf(app.EConflict, "The slug %q is taken.", in.Slug)
		}
		if _, err := s.store.UserByEmail(ctx, admin); err == nil {
			return app.Errorf(app.EConflict, "The e-mail address %s already belongs to a user.", admin)
		}
		now := s.clock.Now()
		parent := p.OrgID
		org := identity.Organization{ID: app.NewID(), Name: in.Name, Slug: in.Slug, BillingName: in.Name, BillingEmail: in.BillingEmail,
			ParentOrganizationID: &parent, ResellerDepth: 0, Status: identity.OrgActive, CreatedAt: now, UpdatedAt: now}
		if err := s.store.CreateOrg(ctx, org); err != nil {
			return err
		}
		if err := s.store.SetSubscription(ctx, identity.Subscription{OrgID: org.ID, PlanSlug: plan.Slug, Seats: in.Seats, Status: "active"}); err != nil {
			return err
		}
		if err := s.record(ctx, p, org.ID, "organization.created", "organization", org.ID); err != nil {
			return err
		}
		u := identity.User{ID: app.NewID(), OrgID: org.ID, Email: admin, FirstName: strings.TrimSpace(in.AdminFirstName),
			LastName: strings.TrimSpace(in.AdminLastName), RoleSlug: app.RoleAdmin, Status: identity.UserInvited, CreatedAt: now, UpdatedAt: now}
		if err := s.invite(ctx, p, org, u); err != nil {
			return err
		}
		out = Org{Organization: org, PlanSlug: plan.Slug, Seats: in.Seats, UserCount: 1}
		return nil
	})
	return out, err
}

func (s *Service) publishedPlan(ctx context.Context, slug string) (identity.Plan, error) {
	plans, err := s.store.PublishedPlans(ctx, app.PageRequest{Limit: 1000})
	if err != nil {
		return identity.Plan{}, err
	}
	for _, pl := range plans {
		if pl.Slug == slug {
			return pl, nil
		}
	}
	return identity.Plan{}, app.Errorf(app.ENotFound, "no plan %q", slug)
}

// UpdateOrgInput holds the changeable fields; nil means unchanged.
type UpdateOrgInput struct {
	Name, BillingName, BillingEmail, LogoURL, MailDomain *string
	// RestrictInvitations limits invitations to addresses at the mail
	// domain; it needs one.
	RestrictInvitations *bool
}

// UpdateOrg changes a customer organisation's profile. Errors:
// insufficient_scope (no partner:orgs:write), forbidden (not a reseller),
// not_found (no such customer organisation), validation_failed (a field).
func (s *Service) UpdateOrg(ctx context.Context, p *app.Principal, orgID string, in UpdateOrgInput) (Org, error) {
	o, err := s.child(ctx, p, orgID, app.ScopePartnerOrgsWrite)
	if err != nil {
		return Org{}, err
	}
	if changed, err := s.updateOrg(ctx, p, o, in); err != nil || !changed {
		return o, err
	}
	return s.store.ChildOrg(ctx, p.OrgID, orgID)
}

// updateOrg validates and writes the given profile fields of o, with an audit
// entry naming the changed fields; it reports whether anything changed.
func (s *Service) updateOrg(ctx context.Context, p *app.Principal, o Org, in UpdateOrgInput) (bool, error) {
	var v app.Validator
	var changed []string
	set := func(field string, dst *string, val *string, check func(string) bool, msg string) {
		if val == nil {
			return
		}
		nv := strings.TrimSpace(*val)
		if check != nil && !check(nv) {
			v.Add("body."+field, msg, *val)
			return
		}
		if nv != *dst {
			*dst = nv
			changed = append(changed, field)
		}
	}
	org := o.Organization
	set("name", &org.Name, in.Name, func(x string) bool { return x != "" && len(x) <= 200 }, "must be 1 to 200 characters")
	set("billing_name", &org.BillingName, in.BillingName, func(x string) bool { return len(x) <= 200 }, "must be at most 200 characters")
	set("billing_email", &org.BillingEmail, in.BillingEmail, func(x string) bool { _, err := identity.NormalizeEmail(x); return x == "" || err == nil }, "must be a valid e-mail address")
	set("logo_url", &org.LogoURL, in.LogoURL, validLogo, logoRule)
	if in.MailDomain != nil {
		d := strings.ToLower(*in.MailDomain)
		in.MailDomain = &d
	}
	set("mail_domain", &org.MailDomain, in.MailDomain, validDomain, "must be a domain name (such as example.com), or empty for none")
	if in.RestrictInvitations != nil && *in.RestrictInvitations != org.RestrictInvitations {
		org.RestrictInvitations = *in.RestrictInvitations
		changed = append(changed, "restrict_invitations_to_mail_domain")
	}
	if org.RestrictInvitations && org.MailDomain == "" {
		if in.RestrictInvitations != nil && *in.RestrictInvitations {
			v.Add("body.restrict_invitations_to_mail_domain", "needs a mail domain: set mail_domain too", *in.RestrictInvitations)
		} else {
			v.Add("body.mail_domain", "cannot be removed while invitations are restricted to it: set restrict_invitations_to_mail_domain to false too", *in.MailDomain)
		}
	}
	if err := v.Err(); err != nil {
		return false, err
	}
	if len(changed) == 0 {
		return false, nil
	}
	org.UpdatedAt = s.clock.Now()
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpdateOrg(ctx, org); err != nil {
			return err
		}
		return s.record(ctx, p, org.ID, "organization.updated", "organization", org.ID, changed...)
	})
	if err == nil {
		s.ids.CredentialsChanged() // profiles are cached with the credentials
	}
	return err == nil, err
}

func validHTTPURL(x string) bool {
	if x == "" {
		return true
	}
	u, err := url.Parse(x)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && len(x) <= 2000
}

// MaxLogoBytes is the largest logo image given inline as a data: URL.
const MaxLogoBytes = 100 << 10

const logoRule = "must be an http(s) URL, or a data: URL (data:image/png;base64,… or data:image/jpeg;base64,…) of a PNG or JPEG image of at most 100 KiB, or empty for none"

// validLogo accepts an organisation's logo: empty, an http(s) URL, or a small
// PNG or JPEG image inline as a base64 data: URL whose bytes are what it says.
// SVG is refused: it can carry scripts.
func validLogo(x string) bool {
	if !strings.HasPrefix(x, "data:") {
		return validHTTPURL(x)
	}
	var magic string
	var data string
	switch {
	case strings.HasPrefix(x, "data:image/png;base64,"):
		magic, data = "\x89PNG\r\n\x1a\n", strings.TrimPrefix(x, "data:image/png;base64,")
	case strings.HasPrefix(x, "data:image/jpeg;base64,"):
		magic, data = "\xff\xd8\xff", strings.TrimPrefix(x, "data:image/jpeg;base64,")
	default:
		return false
	}
	if base64.StdEncoding.DecodedLen(len(data)) > MaxLogoBytes+2 {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(data)
	return err == nil && len(b) <= MaxLogoBytes && strings.HasPrefix(string(b), magic)
}

func validDomain(x string) bool {
	if x == "" {
		return true
	}
	if len(x) > 253 || !strings.Contains(x, ".") {
		return false
	}
	for _, label := range strings.Split(x, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// SetOrgStatus suspends or activates a customer organisation. Its users and
// tokens are refused at once while suspended; data is kept. Errors:
// insufficient_scope (no partner:orgs:manage), forbidden (not a reseller),
// not_found (no such customer organisation).
func (s *Service) SetOrgStatus(ctx context.Context, p *app.Principal, orgID, status string) (Org, error) {
	o, err := s.child(ctx, p, orgID, app.ScopePartnerOrgsManage)
	if err != nil {
		return Org{}, err
	}
	if o.Status != status {
		err = s.store.InTx(ctx, func(ctx context.Context) error {
			if err := s.store.SetOrgStatus(ctx, orgID, status); err != nil {
				return err
			}
			if status == identity.OrgSuspended {
				if err := s.ids.EndOrgSessions(ctx, orgID); err != nil {
					return err
				}
			}
			action := "organization.suspended"
			if status == identity.OrgActive {
				action = "organization.activated"
			}
			return s.record(ctx, p, orgID, action, "organization", orgID, "status")
		})
		s.ids.CredentialsChanged()
		if err != nil {
			return Org{}, err
		}
	}
	return s.store.ChildOrg(ctx, p.OrgID, orgID)
}

// tokenHash keys the hash of an e-mailed token.
func (s *Service) tokenHash(token string) []byte {
	m := hmac.New(sha256.New, s.tokenKey)
	m.Write([]byte(token))
	return m.Sum(nil)
}

// issueToken stores a new single-use token of kind for a user and returns it.
func (s *Service) issueToken(ctx context.Context, userID, kind string, ttl time.Duration) (string, error) {
	now := s.clock.Now()
	if err := s.store.RevokeUserTokens(ctx, userID, kind, now); err != nil {
		return "", err
	}
	token := app.RandomHex(24)
	err := s.store.CreateUserToken(ctx, UserToken{ID: app.NewID(), UserID: userID, Kind: kind, ExpiresAt: now.Add(ttl)}, s.tokenHash(token))
	return token, err
}

// invite creates an invited user, queues the invitation e-mail, and records the
// audit entry and the organization.user.created event.
func (s *Service) invite(ctx context.Context, p *app.Principal, org identity.Organization, u identity.User) error {
	if err := s.store.CreateUser(ctx, u, ""); err != nil {
		return err
	}
	if err := s.sendInvitation(ctx, org, u); err != nil {
		return err
	}
	if err := s.record(ctx, p, org.ID, "user.invited", "user", u.ID); err != nil {
		return err
	}
	return s.emit(ctx, org.ID, EventUserCreated, map[string]any{"user_id": u.ID, "email": u.Email})
}

func (s *Service) sendInvitation(ctx context.Context, org identity.Organization, u identity.User) error {
	token, err := s.issueToken(ctx, u.ID, "invite", InvitationTTL)
	if err != nil {
		return err
	}
	link := s.publicURL + "/invite/" + token
	return s.mail.Queue(ctx, app.Mail{OrgID: org.ID, To: u.Email,
		Subject: fmt.Sprintf("You are invited to %s on Atrium", org.Name),
		Body: fmt.Sprintf("Hello %s,\n\nYou have been invited to join %s on Atrium.\n\nAccept the invitation and choose a password here (the link is valid for 7 days):\n%s\n",
			u.DisplayName(), org.Name, link)})
}

// ListUsers lists a customer organisation's users: active, suspended and invited.
// Errors: insufficient_scope (no partner:users:read), forbidden (not a
// reseller), not_found (no such customer organisation).
func (s *Service) ListUsers(ctx context.Context, p *app.Principal, orgID string, pr app.PageRequest) ([]identity.User, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerUsersRead); err != nil {
		return nil, err
	}
	return s.store.OrgUsers(ctx, orgID, pr)
}

// user returns a user of a customer organisation, or not_found.
func (s *Service) user(ctx context.Context, p *app.Principal, orgID, userID, scope string) (Org, identity.User, error) {
	o, err := s.child(ctx, p, orgID, scope)
	if err != nil {
		return Org{}, identity.User{}, err
	}
	u, err := s.orgUser(ctx, orgID, userID)
	return o, u, err
}

// orgUser returns a user of the organisation orgID; any other is not_found.
func (s *Service) orgUser(ctx context.Context, orgID, userID string) (identity.User, error) {
	u, err := s.store.User(ctx, userID)
	if err != nil || u.OrgID != orgID {
		if err == nil || app.ErrorCode(err) == app.ENotFound {
			return identity.User{}, app.Errorf(app.ENotFound, "No user %s in the organisation.", userID)
		}
		return identity.User{}, err
	}
	return u, nil
}

// GetUser returns a user of a customer organisation. Errors: insufficient_scope
// (no partner:users:read), forbidden (not a reseller), not_found (no such
// customer organisation, no such user in it).
func (s *Service) GetUser(ctx context.Context, p *app.Principal, orgID, userID string) (identity.User, error) {
	_, u, err := s.user(ctx, p, orgID, userID, app.ScopePartnerUsersRead)
	return u, err
}

// InviteInput is the body of a new user.
type InviteInput struct {
	Email, FirstName, LastName, RoleSlug string
}

// InviteUser creates an invited user (a seat is used) and sends the invitation.
// Errors: insufficient_scope (no partner:users:write), forbidden (not a
// reseller), not_found (no such customer organisation), validation_failed (the
// e-mail address, one outside a restricting mail domain, the role, a name),
// conflict (the address is a user's of the organisation), seat_floor (no free
// seat).
func (s *Service) InviteUser(ctx context.Context, p *app.Principal, orgID string, in InviteInput) (identity.User, error) {
	o, err := s.child(ctx, p, orgID, app.ScopePartnerUsersWrite)
	if err != nil {
		return identity.User{}, err
	}
	return s.inviteUser(ctx, p, o, in)
}

// inviteUser is the one invitation rule of both doors: a valid address (at the
// organisation's mail domain when it restricts invitations to it) that belongs to nobody yet, a
// free seat (active users plus pending invitations below the subscription's
// seats, else seat_floor), then the invited user, the e-mail, the audit entry
// and organization.user.created in one transaction.
func (s *Service) inviteUser(ctx context.Context, p *app.Principal, o Org, in InviteInput) (identity.User, error) {
	var v app.Validator
	email, err := identity.NormalizeEmail(in.Email)
	v.Check(err == nil, "body.email", "must be a valid e-mail address", in.Email)
	if err == nil && o.RestrictInvitations && o.MailDomain != "" && !strings.EqualFold(email[strings.LastIndexByte(email, '@')+1:], o.MailDomain) {
		v.Add("body.email", fmt.Sprintf("must be an address at %s, the organisation's mail domain", o.MailDomain), in.Email)
	}
	if in.RoleSlug == "" {
		in.RoleSlug = app.RoleMember
	}
	v.Check(in.RoleSlug == app.RoleAdmin || in.RoleSlug == app.RoleMember, "body.role_slug", "must be admin or member", in.RoleSlug)
	v.Check(len(in.FirstName) <= 100, "body.first_name", "must be at most 100 characters", in.FirstName)
	v.Check(len(in.LastName) <= 100, "body.last_name", "must be at most 100 characters", in.LastName)
	if err := v.Err(); err != nil {
		return identity.User{}, err
	}
	now := s.clock.Now()
	u := identity.User{ID: app.NewID(), OrgID: o.ID, Email: email, FirstName: strings.TrimSpace(in.FirstName), LastName: strings.TrimSpace(in.LastName),
		RoleSlug: in.RoleSlug, Status: identity.UserInvited, CreatedAt: now, UpdatedAt: now}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		other, err := s.store.UserByEmail(ctx, email)
		if err != nil && app.ErrorCode(err) != app.ENotFound {
			return err
		}
		if err == nil && other.OrgID == o.ID {
			return app.Errorf(app.EConflict, "The e-mail address %s already belongs to a user of this organisation.", email)
		}
		if err := s.freeSeat(ctx, o, "invite another user"); err != nil {
			return err
		}
		if err == nil {
			// The address is a user's of another organisation: the answer
			// is an invitation's, so that it tells nobody that; the owner
			// of the address is told instead, and nothing else is made.
			return s.mail.Queue(ctx, app.Mail{OrgID: other.OrgID, To: email,
				Subject: fmt.Sprintf("%s tried to invite you to Atrium", o.Name),
				Body: fmt.Sprintf("Hello %s,\n\nAn administrator of %s tried to invite this address to their organisation on Atrium. "+
					"It already has an account of another organisation, so no invitation was made: if you expected one, "+
					"ask them to invite another address of yours.\n", other.DisplayName(), o.Name)})
		}
		return s.invite(ctx, p, o.Organization, u)
	})
	return u, err
}

// freeSeat refuses, with seat_floor, an operation that takes a seat when every
// seat of the subscription is used by active users and pending invitations.
// It runs in the caller's transaction and reads the seats there, not from o:
// a change of seats committed since o was read counts.
func (s *Service) freeSeat(ctx context.Context, o Org, what string) error {
	sub, err := s.store.Subscription(ctx, o.ID)
	if err != nil {
		return err
	}
	used, err := s.store.SeatsUsed(ctx, o.ID)
	if err != nil {
		return err
	}
	if used >= sub.Seats {
		return app.Errorf(app.ESeatFloor, "Cannot %s: all %d seats are in use (active users plus pending invitations); more seats are needed first.", what, sub.Seats)
	}
	return nil
}

// UpdateUserInput holds the changeable fields; nil means unchanged.
type UpdateUserInput struct {
	FirstName, LastName, RoleSlug *string
}

// adminLoss is asked, inside the transaction, before a change takes away the
// admin rights of an active admin u (suspension, demotion, deletion); verb
// names the change. The partner door has none; the admin door refuses the
// caller's own loss and the organisation's last active admin's.
type adminLoss func(ctx context.Context, u identity.User, verb string) error

func (f adminLoss) check(ctx context.Context, u identity.User, verb string) error {
	if f == nil || u.RoleSlug != app.RoleAdmin || u.Status != identity.UserActive {
		return nil
	}
	return f(ctx, u, verb)
}

// UpdateUser changes a user's names or role and emits organization.user.updated
// with the changed fields. Errors: insufficient_scope (no partner:users:write),
// forbidden (not a reseller), not_found (no such customer organisation, no such
// user in it), validation_failed (a name, the role).
func (s *Service) UpdateUser(ctx context.Context, p *app.Principal, orgID, userID string, in UpdateUserInput) (identity.User, error) {
	o, _, err := s.user(ctx, p, orgID, userID, app.ScopePartnerUsersWrite)
	if err != nil {
		return identity.User{}, err
	}
	return s.updateUser(ctx, p, o, userID, in, nil)
}

func (s *Service) updateUser(ctx context.Context, p *app.Principal, o Org, userID string, in UpdateUserInput, loss adminLoss) (identity.User, error) {
	u, err := s.orgUser(ctx, o.ID, userID)
	if err != nil {
		return identity.User{}, err
	}
	before := u
	var v app.Validator
	var changed []string
	if in.FirstName != nil && strings.TrimSpace(*in.FirstName) != u.FirstName {
		v.Check(len(*in.FirstName) <= 100, "body.first_name", "must be at most 100 characters", *in.FirstName)
		u.FirstName = strings.TrimSpace(*in.FirstName)
		changed = append(changed, "first_name")
	}
	if in.LastName != nil && strings.TrimSpace(*in.LastName) != u.LastName {
		v.Check(len(*in.LastName) <= 100, "body.last_name", "must be at most 100 characters", *in.LastName)
		u.LastName = strings.TrimSpace(*in.LastName)
		changed = append(changed, "last_name")
	}
	if in.RoleSlug != nil && *in.RoleSlug != u.RoleSlug {
		v.Check(*in.RoleSlug == app.RoleAdmin || *in.RoleSlug == app.RoleMember, "body.role_slug", "must be admin or member", *in.RoleSlug)
		u.RoleSlug = *in.RoleSlug
		changed = append(changed, "role_slug")
	}
	if err := v.Err(); err != nil {
		return identity.User{}, err
	}
	if len(changed) == 0 {
		return u, nil
	}
	u.UpdatedAt = s.clock.Now()
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if u.RoleSlug != app.RoleAdmin {
			if err := loss.check(ctx, before, "demote"); err != nil {
				return err
			}
		}
		if err := s.store.UpdateUser(ctx, u); err != nil {
			return err
		}
		if err := s.record(ctx, p, o.ID, "user.updated", "user", u.ID, changed...); err != nil {
			return err
		}
		return s.emit(ctx, o.ID, EventUserUpdated, map[string]any{"user_id": u.ID, "changed_fields": changed})
	})
	s.ids.CredentialsChanged() // a role change narrows or widens every token of the user
	return u, err
}

// DeleteUser removes a user and emits organization.user.deleted. Errors:
// insufficient_scope (no partner:users:manage), forbidden (not a reseller),
// not_found (no such customer organisation, no such user in it).
func (s *Service) DeleteUser(ctx context.Context, p *app.Principal, orgID, userID string) error {
	o, _, err := s.user(ctx, p, orgID, userID, app.ScopePartnerUsersManage)
	if err != nil {
		return err
	}
	return s.deleteUser(ctx, p, o, userID, nil)
}

// deleteUser removes a user of o with their data (the drive frees their files
// and quota through UserData), records it and emits organization.user.deleted.
func (s *Service) deleteUser(ctx context.Context, p *app.Principal, o Org, userID string, loss adminLoss) error {
	orgID := o.ID
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		u, err := s.orgUser(ctx, orgID, userID)
		if err != nil {
			return err
		}
		if err := loss.check(ctx, u, "delete"); err != nil {
			return err
		}
		for _, d := range s.userData {
			if err := d.DeleteUserData(ctx, orgID, userID); err != nil {
				return err
			}
		}
		if err := s.store.DeleteUser(ctx, userID); err != nil {
			return err
		}
		if err := s.record(ctx, p, orgID, "user.deleted", "user", userID); err != nil {
			return err
		}
		return s.emit(ctx, orgID, EventUserDeleted, map[string]any{"user_id": userID})
	})
	s.ids.CredentialsChanged()
	return err
}

// UserAction is one of the state operations on a user.
type UserAction string

// The user state operations (CONTRACT §3).
const (
	ActionSuspend          UserAction = "suspend"
	ActionActivate         UserAction = "activate"
	ActionResendInvitation UserAction = "resend-invitation"
	ActionResetPassword    UserAction = "reset-password"
	ActionResetTwoFactor   UserAction = "reset-two-factor"
)

// UserAct applies a state operation: suspend (active → suspended), activate
// (suspended → active, when a seat is free), resend-invitation (invited only),
// reset-password (active only; sends a reset link), reset-two-factor (a user
// who lost their authenticator: their two-factor sign-in is turned off and
// they are told by e-mail). Any other state is a conflict saying why. Errors:
// insufficient_scope (no partner:users:manage), forbidden (not a reseller),
// not_found (no such customer organisation, no such user in it, an unknown
// action), conflict (a user not in the state the action needs, no two-factor
// sign-in to reset), seat_floor (activating without a free seat).
func (s *Service) UserAct(ctx context.Context, p *app.Principal, orgID, userID string, action UserAction) (identity.User, error) {
	o, _, err := s.user(ctx, p, orgID, userID, app.ScopePartnerUsersManage)
	if err != nil {
		return identity.User{}, err
	}
	return s.userAct(ctx, p, o, userID, action, nil)
}

func (s *Service) userAct(ctx context.Context, p *app.Principal, o Org, userID string, action UserAction, loss adminLoss) (identity.User, error) {
	orgID := o.ID
	var u identity.User
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		if u, err = s.orgUser(ctx, orgID, userID); err != nil {
			return err
		}
		wrong := func(need string) error {
			return app.Errorf(app.EConflict, "Cannot %s a user who is %s; the user must be %s.", action, u.Status, need)
		}
		switch action {
		case ActionSuspend, ActionActivate:
			from, to := identity.UserActive, identity.UserSuspended
			if action == ActionActivate {
				from, to = to, from
			}
			if u.Status == to {
				return nil // already there: idempotent
			}
			if u.Status != from {
				return wrong(from)
			}
			if action == ActionSuspend {
				if err := loss.check(ctx, u, "suspend"); err != nil {
					return err
				}
			} else if err := s.freeSeat(ctx, o, "activate the user"); err != nil {
				return err
			}
			if err := s.store.SetUserStatus(ctx, u.ID, to); err != nil {
				return err
			}
			if to == identity.UserSuspended {
				if err := s.ids.EndUserSessions(ctx, u.ID, ""); err != nil {
					return err
				}
			}
			u.Status = to
			if err := s.record(ctx, p, orgID, "user."+string(action), "user", u.ID, "status"); err != nil {
				return err
			}
			return s.emit(ctx, orgID, EventUserUpdated, map[string]any{"user_id": u.ID, "changed_fields": []string{"status"}})
		case ActionResendInvitation:
			if u.Status != identity.UserInvited {
				return wrong(identity.UserInvited)
			}
			if err := s.sendInvitation(ctx, o.Organization, u); err != nil {
				return err
			}
			return s.record(ctx, p, orgID, "user.invitation_resent", "user", u.ID)
		case ActionResetPassword:
			if u.Status != identity.UserActive {
				return wrong(identity.UserActive)
			}
			if err := s.sendReset(ctx, o.Name, u); err != nil {
				return err
			}
			return s.record(ctx, p, orgID, "user.password_reset_sent", "user", u.ID)
		case ActionResetTwoFactor:
			if u.Status == identity.UserInvited {
				return wrong(identity.UserActive + " or " + identity.UserSuspended)
			}
			if err := s.ids.ResetTwoFactor(ctx, u.ID); err != nil {
				return err
			}
			if err := s.mail.Queue(ctx, app.Mail{OrgID: orgID, To: u.Email, Subject: "Two-factor sign-in turned off",
				Body: fmt.Sprintf("Hello %s,\n\nAn administrator of %s turned off two-factor sign-in for your Atrium account: you now sign in with your password alone.\n\nSet it up again in your settings:\n%s/settings\n\nIf you did not ask for this, tell your administrator.\n",
					u.DisplayName(), o.Name, s.publicURL)}); err != nil {
				return err
			}
			return s.record(ctx, p, orgID, "user.two_factor_reset", "user", u.ID)
		}
		return app.Errorf(app.ENotFound, "No such action.")
	})
	s.ids.CredentialsChanged()
	return u, err
}

// sendReset issues a password reset token for an active user and queues the
// e-mail with its link.
func (s *Service) sendReset(ctx context.Context, orgName string, u identity.User) error {
	token, err := s.issueToken(ctx, u.ID, "reset", PasswordResetTTL)
	if err != nil {
		return err
	}
	return s.mail.Queue(ctx, app.Mail{OrgID: u.OrgID, To: u.Email, Subject: "Reset your Atrium password",
		Body: fmt.Sprintf("Hello %s,\n\nA password reset was requested for your Atrium account in %s.\n\nChoose a new password here (the link is valid for 24 hours):\n%s/reset/%s\n\nIf you did not expect this, ignore this e-mail.\n",
			u.DisplayName(), orgName, s.publicURL, token)})
}

// PasswordSetupLink returns a link where the active user userID, who has no
// account password yet (an operator made by `atrium bootstrap`), chooses one:
// a password reset link, single use and valid PasswordResetTTL like every
// other; a newer link replaces an older one. A user who has a password, or is
// not active, gets "" (they sign in, or use "Forgot password?"). Errors:
// not_found (no user userID).
func (s *Service) PasswordSetupLink(ctx context.Context, userID string) (string, error) {
	var link string
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		u, err := s.store.User(ctx, userID)
		if err != nil {
			return err
		}
		if u.Status != identity.UserActive {
			return nil
		}
		hash, err := s.store.PasswordHash(ctx, u.ID)
		if err != nil || hash != "" {
			return err
		}
		token, err := s.issueToken(ctx, u.ID, "reset", PasswordResetTTL)
		if err != nil {
			return err
		}
		link = s.publicURL + "/reset/" + token
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.password_link_created", TargetType: "user",
			TargetID: u.ID, OrgID: u.OrgID, CreatedAt: s.clock.Now()})
	})
	if err != nil {
		return "", fmt.Errorf("password setup link: %w", err)
	}
	return link, nil
}

// RequestPasswordReset sends the password reset e-mail to the active user with
// the e-mail address email (the web app's "Forgot password?"). It answers the
// same, nil, whether or not such a user exists, so that it reveals nothing; an
// invited, suspended or unknown address gets no e-mail, nor does the user of a
// suspended organisation. Errors: none of its own.
func (s *Service) RequestPasswordReset(ctx context.Context, email string) error {
	u, err := s.store.UserByEmail(ctx, strings.TrimSpace(email))
	if app.ErrorCode(err) == app.ENotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if u.Status != identity.UserActive {
		return nil
	}
	org, err := s.store.Org(ctx, u.OrgID)
	if err != nil {
		return err
	}
	if org.Status != identity.OrgActive {
		return nil
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.sendReset(ctx, org.Name, u); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: "user.password_reset_requested", ActorID: u.ID,
			TargetType: "user", TargetID: u.ID, OrgID: u.OrgID, CreatedAt: s.clock.Now()})
	})
}

// AcceptInvitation activates an invited user with a password, using the
// single-use token from the invitation e-mail. Errors: validation_failed (a
// password the rules refuse), not_found (an unknown, used or expired token),
// conflict (the invitation was accepted already).
func (s *Service) AcceptInvitation(ctx context.Context, token, password string) (identity.User, error) {
	return s.useToken(ctx, "invite", token, password, false)
}

// ResetPassword sets a new password with the single-use token of a reset
// e-mail and ends the user's web sessions; with revokeCredentials (the "I was
// compromised" path) also every app password and personal access token of the
// user, and the JWTs issued before. Errors: validation_failed (a password the
// rules refuse), not_found (an unknown, used or expired token).
func (s *Service) ResetPassword(ctx context.Context, token, password string, revokeCredentials bool) (identity.User, error) {
	return s.useToken(ctx, "reset", token, password, revokeCredentials)
}

// errBadLink is the answer to an unknown, used or expired link token.
var errBadLink = app.Errorf(app.ENotFound, "This link is not valid: it may have expired or been used already.")

// ResetInfo is what the page of a password reset link shows before the reset:
// whose account it is, and the credentials that keep working unless revoked.
type ResetInfo struct {
	Email        string
	AppPasswords []identity.AppPassword
	Tokens       []identity.Token
}

// PasswordResetInfo looks a password reset link's token up without using it
// (not found when it is unknown, used or expired). Errors: not_found (an
// unknown, used or expired token).
func (s *Service) PasswordResetInfo(ctx context.Context, token string) (ResetInfo, error) {
	t, err := s.store.LiveUserToken(ctx, "reset", s.tokenHash(token), s.clock.Now())
	if app.ErrorCode(err) == app.ENotFound {
		return ResetInfo{}, errBadLink
	}
	if err != nil {
		return ResetInfo{}, err
	}
	u, err := s.store.User(ctx, t.UserID)
	if err != nil {
		return ResetInfo{}, err
	}
	apps, toks, err := s.ids.UserCredentials(ctx, u.ID)
	return ResetInfo{Email: u.Email, AppPasswords: apps, Tokens: toks}, err
}

// useToken uses a link's token. The token is looked up before the password is
// hashed (about 50 ms and 19 MiB, two at a time server-wide), so that a flood
// of made-up tokens costs a lookup each and never holds up sign-ins.
func (s *Service) useToken(ctx context.Context, kind, token, password string, revokeCredentials bool) (identity.User, error) {
	if err := identity.CheckPasswordRules(password); err != nil {
		return identity.User{}, app.Invalid("body.password", err.Error(), nil)
	}
	if _, err := s.store.LiveUserToken(ctx, kind, s.tokenHash(token), s.clock.Now()); err != nil {
		if app.ErrorCode(err) == app.ENotFound {
			return identity.User{}, errBadLink
		}
		return identity.User{}, err
	}
	hash, err := identity.HashPassword(password)
	if err != nil {
		return identity.User{}, app.Invalid("body.password", err.Error(), nil)
	}
	var u identity.User
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		t, err := s.store.UseUserToken(ctx, kind, s.tokenHash(token), s.clock.Now())
		if err != nil {
			if app.ErrorCode(err) == app.ENotFound {
				return errBadLink
			}
			return err
		}
		if u, err = s.store.User(ctx, t.UserID); err != nil {
			return err
		}
		if kind == "invite" && u.Status != identity.UserInvited {
			return app.Errorf(app.EConflict, "The invitation was already accepted.")
		}
		if err := s.store.SetPassword(ctx, u.ID, hash); err != nil {
			return err
		}
		if err := s.ids.EndUserSessions(ctx, u.ID, ""); err != nil {
			return err
		}
		if revokeCredentials {
			if _, err := s.ids.RevokeCredentials(ctx, u.ID, u.OrgID); err != nil {
				return err
			}
		}
		action := "user.password_reset"
		if kind == "invite" {
			if err := s.store.SetUserStatus(ctx, u.ID, identity.UserActive); err != nil {
				return err
			}
			u.Status = identity.UserActive
			action = "user.invitation_accepted"
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "identity", Action: action, ActorID: u.ID, TargetType: "user",
			TargetID: u.ID, OrgID: u.OrgID, CreatedAt: s.clock.Now()})
	})
	if err == nil && revokeCredentials {
		s.ids.CredentialsChanged()
	}
	return u, err
}

// ListTeams lists a customer organisation's teams. Errors: insufficient_scope
// (no partner:teams:read), forbidden (not a reseller), not_found (no such
// customer organisation).
func (s *Service) ListTeams(ctx context.Context, p *app.Principal, orgID string, pr app.PageRequest) ([]Team, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsRead); err != nil {
		return nil, err
	}
	return s.store.Teams(ctx, orgID, pr)
}

// GetTeam returns a team of a customer organisation. Errors: insufficient_scope
// (no partner:teams:read), forbidden (not a reseller), not_found (no such
// customer organisation, no such team in it).
func (s *Service) GetTeam(ctx context.Context, p *app.Principal, orgID, teamID string) (Team, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsRead); err != nil {
		return Team{}, err
	}
	return s.store.Team(ctx, orgID, teamID)
}

func validTeamName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return "", app.Invalid("body.name", "must be 1 to 100 characters", name)
	}
	return name, nil
}

// CreateTeam makes a team; names are unique per organisation (case-insensitive).
// Errors: insufficient_scope (no partner:teams:write), forbidden (not a
// reseller), not_found (no such customer organisation), validation_failed (the
// name), conflict (a team of that name exists).
func (s *Service) CreateTeam(ctx context.Context, p *app.Principal, orgID, name string) (Team, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsWrite); err != nil {
		return Team{}, err
	}
	return s.createTeam(ctx, p, orgID, name)
}

func (s *Service) createTeam(ctx context.Context, p *app.Principal, orgID, name string) (Team, error) {
	name, err := validTeamName(name)
	if err != nil {
		return Team{}, err
	}
	t := Team{ID: app.NewID(), OrgID: orgID, Name: name, CreatedAt: s.clock.Now()}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateTeam(ctx, t); err != nil {
			if app.ErrorCode(err) == app.EConflict {
				return app.Errorf(app.EConflict, "A team named %q exists already.", name)
			}
			return err
		}
		return s.record(ctx, p, orgID, "team.created", "team", t.ID)
	})
	return t, err
}

// RenameTeam changes a team's name. Errors: insufficient_scope (no
// partner:teams:write), forbidden (not a reseller), not_found (no such customer
// organisation, no such team in it), validation_failed (the name), conflict (a
// team of that name exists).
func (s *Service) RenameTeam(ctx context.Context, p *app.Principal, orgID, teamID string, name *string) (Team, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsWrite); err != nil {
		return Team{}, err
	}
	return s.renameTeam(ctx, p, orgID, teamID, name)
}

func (s *Service) renameTeam(ctx context.Context, p *app.Principal, orgID, teamID string, name *string) (Team, error) {
	t, err := s.store.Team(ctx, orgID, teamID)
	if err != nil || name == nil {
		return t, err
	}
	n, err := validTeamName(*name)
	if err != nil || n == t.Name {
		return t, err
	}
	t.Name = n
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpdateTeam(ctx, t); err != nil {
			if app.ErrorCode(err) == app.EConflict {
				return app.Errorf(app.EConflict, "A team named %q exists already.", n)
			}
			return err
		}
		return s.record(ctx, p, orgID, "team.updated", "team", t.ID, "name")
	})
	return t, err
}

// DeleteTeam removes a team (not its users). Errors: insufficient_scope (no
// partner:teams:manage), forbidden (not a reseller), not_found (no such
// customer organisation, no such team in it).
func (s *Service) DeleteTeam(ctx context.Context, p *app.Principal, orgID, teamID string) error {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsManage); err != nil {
		return err
	}
	return s.deleteTeam(ctx, p, orgID, teamID)
}

func (s *Service) deleteTeam(ctx context.Context, p *app.Principal, orgID, teamID string) error {
	if _, err := s.store.Team(ctx, orgID, teamID); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteTeam(ctx, orgID, teamID); err != nil {
			return err
		}
		return s.record(ctx, p, orgID, "team.deleted", "team", teamID)
	})
}

// Members lists a team's members. Errors: insufficient_scope (no
// partner:teams:read), forbidden (not a reseller), not_found (no such customer
// organisation, no such team in it).
func (s *Service) Members(ctx context.Context, p *app.Principal, orgID, teamID string, pr app.PageRequest) ([]Member, error) {
	if _, err := s.GetTeam(ctx, p, orgID, teamID); err != nil {
		return nil, err
	}
	return s.store.Members(ctx, teamID, pr)
}

// TeamMembers lists the members of every team of a customer organisation, by
// team id (a team without members is absent): one read for a page of teams.
// Errors: insufficient_scope (no partner:teams:read), forbidden (not a
// reseller), not_found (no such customer organisation).
func (s *Service) TeamMembers(ctx context.Context, p *app.Principal, orgID string) (map[string][]Member, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsRead); err != nil {
		return nil, err
	}
	return s.store.OrgMembers(ctx, orgID)
}

// AddMember adds a user of the organisation to a team; a user of another
// organisation is a validation error. Errors: insufficient_scope (no
// partner:teams:write), forbidden (not a reseller), not_found (no such customer
// organisation, no such team in it), validation_failed (no such user in the
// organisation), conflict (a member already).
func (s *Service) AddMember(ctx context.Context, p *app.Principal, orgID, teamID, userID string) (Member, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsWrite); err != nil {
		return Member{}, err
	}
	return s.addMember(ctx, p, orgID, teamID, userID)
}

func (s *Service) addMember(ctx context.Context, p *app.Principal, orgID, teamID, userID string) (Member, error) {
	if _, err := s.store.Team(ctx, orgID, teamID); err != nil {
		return Member{}, err
	}
	u, err := s.store.User(ctx, userID)
	if err != nil || u.OrgID != orgID {
		return Member{}, app.Invalid("body.user_id", "no such user in the organisation", userID)
	}
	now := s.clock.Now()
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.AddMember(ctx, teamID, userID, now); err != nil {
			if app.ErrorCode(err) == app.EConflict {
				return app.Errorf(app.EConflict, "The user is already a member of the team.")
			}
			return err
		}
		return s.record(ctx, p, orgID, "team.member_added", "team", teamID, "members")
	})
	return Member{UserID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, AddedAt: now}, err
}

// RemoveMember removes a user from a team. Errors: insufficient_scope (no
// partner:teams:manage), forbidden (not a reseller), not_found (no such
// customer organisation, no such team in it, a user not a member of it).
func (s *Service) RemoveMember(ctx context.Context, p *app.Principal, orgID, teamID, userID string) error {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerTeamsManage); err != nil {
		return err
	}
	return s.removeMember(ctx, p, orgID, teamID, userID)
}

func (s *Service) removeMember(ctx context.Context, p *app.Principal, orgID, teamID, userID string) error {
	if _, err := s.store.Team(ctx, orgID, teamID); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.RemoveMember(ctx, teamID, userID); err != nil {
			return err
		}
		return s.record(ctx, p, orgID, "team.member_removed", "team", teamID, "members")
	})
}

// Plans lists the plans published to the caller. Errors: insufficient_scope (no
// partner:plans:read), forbidden (not a reseller).
func (s *Service) Plans(ctx context.Context, p *app.Principal, pr app.PageRequest) ([]identity.Plan, error) {
	if err := requireReseller(p, app.ScopePartnerPlansRead); err != nil {
		return nil, err
	}
	return s.store.PublishedPlans(ctx, pr)
}

// Subscription returns a customer organisation's subscription with its use.
// Errors: insufficient_scope (no partner:billing:read), forbidden (not a
// reseller), not_found (no such customer organisation).
func (s *Service) Subscription(ctx context.Context, p *app.Principal, orgID string) (OrgSubscription, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerBillingRead); err != nil {
		return OrgSubscription{}, err
	}
	return s.subscription(ctx, orgID)
}

func (s *Service) subscription(ctx context.Context, orgID string) (OrgSubscription, error) {
	sub, err := s.store.Subscription(ctx, orgID)
	if err != nil {
		return OrgSubscription{}, err
	}
	used, err := s.store.SeatsUsed(ctx, orgID)
	if err != nil {
		return OrgSubscription{}, err
	}
	plan, err := s.store.Plan(ctx, sub.PlanSlug)
	if err != nil {
		return OrgSubscription{}, err
	}
	stored, err := s.store.StorageUsed(ctx, orgID)
	return OrgSubscription{PlanSlug: sub.PlanSlug, Seats: sub.Seats, UsedSeats: used, Status: sub.Status,
		QuotaBytes: plan.QuotaBytes, StorageUsedBytes: stored}, err
}

// ChangePlan moves a customer organisation to another published plan. Errors:
// insufficient_scope (no partner:plans:write), forbidden (not a reseller),
// not_found (no such customer organisation), validation_failed (a plan not
// published to the caller, or allowing fewer seats than the organisation has).
func (s *Service) ChangePlan(ctx context.Context, p *app.Principal, orgID, planSlug string) (OrgSubscription, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerPlansWrite); err != nil {
		return OrgSubscription{}, err
	}
	plan, err := s.publishedPlan(ctx, planSlug)
	if err != nil {
		return OrgSubscription{}, app.Invalid("body.plan_slug", "no such plan is published to you", planSlug)
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		sub, err := s.store.Subscription(ctx, orgID)
		if err != nil {
			return err
		}
		if sub.PlanSlug == plan.Slug {
			return nil
		}
		if sub.Seats > plan.MaxSeats {
			return app.Invalid("body.plan_slug", fmt.Sprintf("the plan allows at most %d seats; the organisation has %d", plan.MaxSeats, sub.Seats), planSlug)
		}
		sub.PlanSlug = plan.Slug
		if err := s.store.SetSubscription(ctx, sub); err != nil {
			return err
		}
		return s.record(ctx, p, orgID, "subscription.plan_changed", "subscription", orgID, "plan_slug")
	})
	if err != nil {
		return OrgSubscription{}, err
	}
	s.ids.CredentialsChanged() // the plan's features and quota come with every credential of the organisation
	return s.subscription(ctx, orgID)
}

// ChangeSeats sets the seat count; below the active users plus pending
// invitations (the seat floor) it is refused with seat_floor. Errors:
// insufficient_scope (no partner:plans:write), forbidden (not a reseller),
// not_found (no such customer organisation), validation_failed (under 1, over
// the plan's most), seat_floor (under the active users plus pending
// invitations).
func (s *Service) ChangeSeats(ctx context.Context, p *app.Principal, orgID string, seats int) (OrgSubscription, error) {
	if _, err := s.child(ctx, p, orgID, app.ScopePartnerPlansWrite); err != nil {
		return OrgSubscription{}, err
	}
	if seats < 1 {
		return OrgSubscription{}, app.Invalid("body.seats", "must be at least 1", seats)
	}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		sub, err := s.store.Subscription(ctx, orgID)
		if err != nil {
			return err
		}
		plan, err := s.store.Plan(ctx, sub.PlanSlug)
		if err != nil {
			return err
		}
		if seats > plan.MaxSeats {
			return app.Invalid("body.seats", fmt.Sprintf("the %s plan allows at most %d seats", plan.Slug, plan.MaxSeats), seats)
		}
		floor, err := s.store.SeatsUsed(ctx, orgID)
		if err != nil {
			return err
		}
		if seats < floor {
			return app.Errorf(app.ESeatFloor, "Cannot set %d seats: the organisation has %d active users and pending invitations, so the seat floor is %d.", seats, floor, floor)
		}
		if sub.Seats == seats {
			return nil
		}
		sub.Seats = seats
		if err := s.store.SetSubscription(ctx, sub); err != nil {
			return err
		}
		return s.record(ctx, p, orgID, "subscription.seats_changed", "subscription", orgID, "seats")
	})
	if err != nil {
		return OrgSubscription{}, err
	}
	return s.subscription(ctx, orgID)
}
