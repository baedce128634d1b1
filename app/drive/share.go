package drive

// Shares and share links: sharing an item with users of the organisation,
// revoking, and everything a share link (token) may do: list, download,
// preview, and read or write a text file.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"atrium/app"
)

// ShareStore keeps shares. Methods return not_found for a missing row.
type ShareStore interface {
	// SharePermission returns the best permission that unexpired user shares
	// of any of fileIDs grant userID, "" when none.
	SharePermission(ctx context.Context, userID string, fileIDs []string, now time.Time) (string, error)
	CreateShare(ctx context.Context, sh Share) error
	// UpdateShare writes the permission and expiry of a share.
	UpdateShare(ctx context.Context, sh Share) error
	Share(ctx context.Context, id string) (Share, error)
	ShareByToken(ctx context.Context, token string) (Share, error)
	// GranteeShare returns the share of fileID with the user, the team or the
	// organisation that g is with (g.UserID, g.TeamID or g.OrgWide).
	GranteeShare(ctx context.Context, fileID string, g Share) (Share, error)
	// Shares lists a file's shares, the oldest first, with the users and teams they are with.
	Shares(ctx context.Context, fileID string) ([]ShareInfo, error)
	DeleteShare(ctx context.Context, id string) error
	// OrgUser finds a user of orgID by id, or by e-mail (any case) when id is empty.
	OrgUser(ctx context.Context, orgID, id, email string) (ShareUser, error)
	// OrgTeam returns the team teamID of orgID; not_found when orgID has none.
	OrgTeam(ctx context.Context, orgID, teamID string) (ShareTeam, error)
	// OrgTeams lists the teams of orgID by name.
	OrgTeams(ctx context.Context, orgID string) ([]ShareTeam, error)
	// TeamShares lists the shares with teamID of live items, the newest first.
	TeamShares(ctx context.Context, teamID string) ([]TeamShare, error)
	// LinkPlan returns the plan of organisation orgID for a link userID created:
	// not_found unless the organisation and the user are active.
	LinkPlan(ctx context.Context, orgID, userID string) (Plan, error)
}

// Plan is what the drive needs of an organisation's plan.
type Plan struct {
	Features   []string
	QuotaBytes int64
}

// ShareUser is the user a share is with (ShareInfo.shared_with).
type ShareUser struct {
	UserID      string `json:"user_id"`
	Email       string `json:"email"`
	DisplayName string `json:"display_name"`
	Status      string `json:"-"`
}

// ShareTeam is the team a share is with (ShareInfo.shared_with_team).
type ShareTeam struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// TeamShare is a share with a team as the organisation's admin sees it.
type TeamShare struct {
	ID         string     `json:"id"`
	FileID     string     `json:"file_id"`
	FileName   string     `json:"file_name"`
	IsFolder   bool       `json:"is_folder"`
	OwnerID    string     `json:"owner_id"`
	OwnerName  string     `json:"owner_name"`
	Permission string     `json:"permission"`
	ExpiresAt  *time.Time `json:"expires_at"`
	CreatedAt  time.Time  `json:"created_at"`
}

// ShareInfo is a share as its owner sees it: with a user (shared_with), a team
// (shared_with_team), the whole organisation (shared_with_organization) or by
// link (share_link).
type ShareInfo struct {
	Share
	SharedWith     *ShareUser `json:"shared_with"`
	SharedWithTeam *ShareTeam `json:"shared_with_team"`
	ShareLink      *string    `json:"share_link"`
}

// ShareRequest creates a share (ShareCreate): by link, with a user given by id
// or e-mail, with a team of the organisation, or with the whole organisation.
type ShareRequest struct {
	CreateLink   bool
	UserID       string
	Email        string
	TeamID       string
	Organization bool
	Permission   string
	ExpiresAt    *time.Time
}

// SharedLink is what a shared link shows (SharedLinkResponse): the shared item
// and, for a folder, the items of the folder browsed (the shared one or a
// subfolder of it).
type SharedLink struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	IsFolder   bool       `json:"is_folder"`
	MimeType   string     `json:"mime_type"`
	SizeBytes  int64      `json:"size_bytes"`
	Permission string     `json:"permission"`
	ExpiresAt  *time.Time `json:"expires_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	// Folder is the folder whose items are listed (folders only).
	Folder *LinkItem `json:"folder,omitempty"`
	// Breadcrumbs lead from the shared folder to Folder (folders only).
	Breadcrumbs []Breadcrumb `json:"breadcrumbs,omitempty"`
	// Items of Folder, folders first (null for a shared file).
	Items      []LinkItem `json:"items"`
	Page       int        `json:"page,omitempty"`
	PerPage    int        `json:"per_page,omitempty"`
	Total      int        `json:"total,omitempty"`
	TotalPages int        `json:"total_pages,omitempty"`
}

// LinkItem is an item as a shared link shows it: no owner, no metadata.
type LinkItem struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	IsFolder  bool      `json:"is_folder"`
	MimeType  string    `json:"mime_type"`
	SizeBytes int64     `json:"size_bytes"`
	UpdatedAt time.Time `json:"updated_at"`
}

func linkItem(f File) LinkItem {
	return LinkItem{ID: f.ID, Name: f.Name, IsFolder: f.IsFolder, MimeType: f.MimeType, SizeBytes: f.SizeBytes, UpdatedAt: f.UpdatedAt}
}

// LinkQuery selects what a folder link lists.
type LinkQuery struct {
	// FolderID is a folder inside the shared folder; "" is the shared folder.
	FolderID string
	Page     int
	PerPage  int
}

// MaxLinkText caps the text a shared link reads or writes as a string.
const MaxLinkText = 1 << 20

// Audit actions of sharing.
const (
	AuditShareCreated = "share.created"
	AuditShareUpdated = "share.updated"
	AuditShareRevoked = "share.revoked"
)

// WithPublicURL returns o with the base URL of share links set.
func (o Options) WithPublicURL(u string) Options {
	o.PublicURL = strings.TrimRight(u, "/")
	return o
}

// ShareLink returns the URL of the page of a link token. Errors: none of its
// own.
func (s *Service) ShareLink(token string) string {
	return s.opts.PublicURL + "/s/" + token
}

// newLinkToken returns 192 random bits, URL-safe.
func newLinkToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("share link token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func (s *Service) info(sh Share, u *ShareUser, t *ShareTeam) ShareInfo {
	in := ShareInfo{Share: sh}
	switch {
	case sh.Token != "":
		l := s.ShareLink(sh.Token)
		in.ShareLink = &l
	case sh.TeamID != "":
		in.SharedWithTeam = t
	case sh.UserID != "":
		in.SharedWith = u
	}
	return in
}

// CreateShare shares an item the caller owns: with an active user of their
// organisation, with a team of it (every member, as the membership is at each
// request), with the whole organisation, or by a new link. A second share
// with the same user, team or organisation changes its permission and expiry.
// It emits drive.share.created and records share.created (share.updated for
// a change). Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, validation_failed (no or several recipients, a user who
// is not an active user of the organisation or is the owner, a permission
// other than view or edit, a past expiry), not_found (the item, or a team the
// organisation does not have), forbidden (an item shared with the caller),
// conflict (a pending upload, an item in the trash).
func (s *Service) CreateShare(ctx context.Context, p *app.Principal, fileID string, req ShareRequest) (ShareInfo, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return ShareInfo{}, err
	}
	now := s.clock.Now()
	var v app.Validator
	if req.Permission == "" {
		req.Permission = PermView
	}
	v.Check(req.Permission == PermView || req.Permission == PermEdit, "body.permission", "The permission is view or edit.", req.Permission)
	req.UserID, req.Email, req.TeamID = strings.TrimSpace(req.UserID), strings.TrimSpace(req.Email), strings.TrimSpace(req.TeamID)
	user := req.UserID != "" || req.Email != ""
	kinds := 0
	for _, k := range []bool{req.CreateLink, user, req.TeamID != "", req.Organization} {
		if k {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		v.Add("body", "Share with one recipient at a time: a link (create_link), a user (user_id or email), a team (team_id) or the organisation (organization).", nil)
	case kinds == 0:
		v.Add("body", "Set create_link to true for a link, user_id or email to share with a user of your organisation, team_id for one of its teams, or organization to true for all of it.", nil)
	}
	if req.ExpiresAt != nil {
		v.Check(req.ExpiresAt.After(now), "body.expires_at", "The expiry must be in the future.", req.ExpiresAt.Format(time.RFC3339))
	}
	if err := v.Err(); err != nil {
		return ShareInfo{}, err
	}
	f, err := s.access(ctx, p, fileID, PermOwner)
	if err != nil {
		return ShareInfo{}, err
	}
	if f.Status == StatusPending {
		return ShareInfo{}, app.Errorf(app.EConflict, "The upload of %q is not confirmed yet.", f.Name)
	}
	if f.TrashedAt != nil {
		return ShareInfo{}, app.Errorf(app.EConflict, "%q is in the trash; restore it first.", f.Name)
	}
	var target ShareUser
	var team ShareTeam
	switch {
	case user:
		loc, val := "body.user_id", req.UserID
		if req.UserID == "" {
			loc, val = "body.email", req.Email
		}
		target, err = s.store.OrgUser(ctx, p.OrgID, req.UserID, req.Email)
		switch {
		case app.ErrorCode(err) == app.ENotFound || (err == nil && target.Status != "active"):
			return ShareInfo{}, app.Invalid(loc, "No active user of your organisation has this "+strings.TrimPrefix(loc, "body.")+".", val)
		case err != nil:
			return ShareInfo{}, err
		case target.UserID == f.OwnerID:
			return ShareInfo{}, app.Invalid(loc, "The owner has the item already; share it with someone else.", val)
		}
	case req.TeamID != "":
		team, err = s.store.OrgTeam(ctx, f.OrgID, req.TeamID)
		if app.ErrorCode(err) == app.ENotFound {
			return ShareInfo{}, app.Errorf(app.ENotFound, "Your organisation has no team %s.", req.TeamID)
		}
		if err != nil {
			return ShareInfo{}, err
		}
	}
	if req.ExpiresAt != nil {
		t := req.ExpiresAt.UTC().Truncate(time.Millisecond)
		req.ExpiresAt = &t
	}
	grantee := Share{UserID: target.UserID, TeamID: team.ID, OrgWide: req.Organization}
	var out ShareInfo
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if !req.CreateLink {
			sh, err := s.store.GranteeShare(ctx, f.ID, grantee)
			if err == nil {
				var changed []string
				if sh.Permission != req.Permission {
					changed = append(changed, "permission")
				}
				if !sameTime(sh.ExpiresAt, req.ExpiresAt) {
					changed = append(changed, "expires_at")
				}
				sh.Permission, sh.ExpiresAt = req.Permission, req.ExpiresAt
				if err := s.store.UpdateShare(ctx, sh); err != nil {
					return err
				}
				out = s.info(sh, &target, &team)
				return s.record(ctx, p, AuditShareUpdated, "share", sh.ID, changed...)
			}
			if app.ErrorCode(err) != app.ENotFound {
				return err
			}
		}
		sh := Share{ID: app.NewID(), FileID: f.ID, OrgID: f.OrgID, OwnerID: f.OwnerID, CreatedBy: p.UserID,
			UserID: grantee.UserID, TeamID: grantee.TeamID, OrgWide: grantee.OrgWide,
			Permission: req.Permission, ExpiresAt: req.ExpiresAt, CreatedAt: now}
		var link any
		if req.CreateLink {
			tok, err := newLinkToken()
			if err != nil {
				return err
			}
			sh.Token = tok
			link = s.ShareLink(tok)
		}
		if err := s.store.CreateShare(ctx, sh); err != nil {
			return err
		}
		out = s.info(sh, &target, &team)
		data := map[string]any{"share_id": sh.ID, "link": link, "permission": sh.Permission}
		switch {
		case sh.TeamID != "":
			data["team_id"] = sh.TeamID
		case sh.OrgWide:
			data["organization"] = true
		case sh.UserID != "":
			data["user_id"] = sh.UserID
		}
		if err := s.emit(ctx, EventShareCreated, f, data); err != nil {
			return err
		}
		return s.record(ctx, p, AuditShareCreated, "share", sh.ID)
	})
	if err != nil {
		return ShareInfo{}, err
	}
	return out, nil
}

// ShareTeams lists the teams of the caller's organisation, by name: those an
// item can be shared with. Errors: insufficient_scope (no drive:read),
// no_bound_user, feature_not_in_plan.
func (s *Service) ShareTeams(ctx context.Context, p *app.Principal) ([]ShareTeam, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	return s.store.OrgTeams(ctx, p.OrgID)
}

// TeamShares lists what is shared with a team of the caller's organisation
// (items in the trash left out), the newest share first; for the
// organisation's admins. Errors: insufficient_scope (no admin:access),
// not_found (a team of another organisation).
func (s *Service) TeamShares(ctx context.Context, p *app.Principal, teamID string) ([]TeamShare, error) {
	if err := p.Require(app.ScopeAdmin); err != nil {
		return nil, err
	}
	if _, err := s.store.OrgTeam(ctx, p.OrgID, teamID); err != nil {
		if app.ErrorCode(err) == app.ENotFound {
			return nil, app.Errorf(app.ENotFound, "Your organisation has no team %s.", teamID)
		}
		return nil, err
	}
	return s.store.TeamShares(ctx, teamID)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// ListShares lists an item's shares, expired ones included; its owner and
// users it is shared with for editing may list them. Errors: insufficient_scope
// (no drive:read), no_bound_user, feature_not_in_plan, not_found (no such item,
// or not shared with the caller), forbidden (an item shared for viewing).
func (s *Service) ListShares(ctx context.Context, p *app.Principal, fileID string) ([]ShareInfo, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	f, err := s.access(ctx, p, fileID, PermEdit)
	if err != nil {
		return nil, err
	}
	list, err := s.store.Shares(ctx, f.ID)
	if err != nil {
		return nil, err
	}
	out := make([]ShareInfo, 0, len(list))
	for _, in := range list {
		out = append(out, s.info(in.Share, in.SharedWith, in.SharedWithTeam))
	}
	return out, nil
}

// RevokeShare deletes a share of an item the caller owns; a revoked link
// answers not_found from then on. Errors: insufficient_scope (no drive:write),
// no_bound_user, feature_not_in_plan, not_found (no such item, or not shared
// with the caller, no such share of it), forbidden (an item the caller does not
// own).
func (s *Service) RevokeShare(ctx context.Context, p *app.Principal, fileID, shareID string) error {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return err
	}
	f, err := s.access(ctx, p, fileID, PermOwner)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		sh, err := s.store.Share(ctx, shareID)
		if app.ErrorCode(err) == app.ENotFound || (err == nil && sh.FileID != f.ID) {
			return app.Errorf(app.ENotFound, "The item has no share %s.", shareID)
		}
		if err != nil {
			return err
		}
		if err := s.store.DeleteShare(ctx, sh.ID); err != nil {
			return err
		}
		return s.record(ctx, p, AuditShareRevoked, "share", sh.ID)
	})
}

// sharedPending returns the pending file a user announced in a folder shared
// with them for editing (it belongs to the folder's owner, so access hides it):
// the caller must have an upload of it and still edit permission on its folder.
func (s *Service) sharedPending(ctx context.Context, p *app.Principal, id string) (File, error) {
	f, err := s.store.File(ctx, id)
	if app.ErrorCode(err) == app.ENotFound {
		return File{}, notFound()
	}
	if err != nil {
		return File{}, err
	}
	if f.OrgID != p.OrgID || f.OwnerID == p.UserID || f.Status != StatusPending || f.TrashedAt != nil || f.Parent() == "" {
		return File{}, notFound()
	}
	if _, err := s.store.LatestUpload(ctx, f.ID, p.UserID); err != nil {
		if app.ErrorCode(err) == app.ENotFound {
			return File{}, notFound()
		}
		return File{}, err
	}
	if _, err := s.parentFolder(ctx, p, f.Parent(), "path.file_id"); err != nil {
		if app.ErrorCode(err) == app.ENotFound {
			return File{}, notFound()
		}
		return File{}, err
	}
	f.Permission = PermEdit
	return f, nil
}

func linkGone() error {
	return app.Errorf(app.ENotFound, "This shared link does not exist, has expired or was revoked.")
}

// sharedItem is a resolved link: the share, the shared item, and a principal
// acting for the link's creator with the link's permission.
type sharedItem struct {
	share Share
	root  File
	p     *app.Principal
}

// link resolves a link token; unknown, expired and revoked links, links to
// items in the trash and links of suspended organisations or plans without
// the drive answer not_found.
func (lk *Links) link(ctx context.Context, token string) (sharedItem, error) {
	if token == "" || len(token) > 200 {
		return sharedItem{}, linkGone()
	}
	sh, err := lk.core.store.ShareByToken(ctx, token)
	if app.ErrorCode(err) == app.ENotFound {
		return sharedItem{}, linkGone()
	}
	if err != nil {
		return sharedItem{}, err
	}
	return lk.linkShare(ctx, sh)
}

// linkShare resolves the link share sh as link does.
func (lk *Links) linkShare(ctx context.Context, sh Share) (sharedItem, error) {
	if sh.Token == "" {
		return sharedItem{}, linkGone()
	}
	if sh.ExpiresAt != nil && !lk.core.clock.Now().Before(*sh.ExpiresAt) {
		return sharedItem{}, linkGone()
	}
	f, err := lk.core.store.File(ctx, sh.FileID)
	if app.ErrorCode(err) == app.ENotFound {
		return sharedItem{}, linkGone()
	}
	if err != nil {
		return sharedItem{}, err
	}
	if f.Status == StatusPending || f.TrashedAt != nil {
		return sharedItem{}, linkGone()
	}
	plan, err := lk.core.store.LinkPlan(ctx, sh.OrgID, sh.CreatedBy)
	if app.ErrorCode(err) == app.ENotFound {
		return sharedItem{}, linkGone()
	}
	if err != nil {
		return sharedItem{}, err
	}
	scopes := []string{app.ScopeDriveRead}
	if sh.Permission == PermEdit {
		scopes = append(scopes, app.ScopeDriveWrite)
	}
	p := &app.Principal{Credential: "share_link", CredentialID: sh.ID, OrgID: sh.OrgID, UserID: sh.CreatedBy,
		Scopes: app.NewScopes(scopes...), Features: plan.Features, QuotaBytes: plan.QuotaBytes}
	if !p.HasFeature("drive") {
		return sharedItem{}, linkGone()
	}
	f.Permission = sh.Permission
	return sharedItem{share: sh, root: f, p: p}, nil
}

// within returns item id of a link: the shared item itself ("" or its id), or
// a live item below the shared folder; anything else is not_found.
func (lk *Links) within(ctx context.Context, l sharedItem, id string) (File, error) {
	if id == "" || id == l.root.ID {
		return l.root, nil
	}
	if !l.root.IsFolder || len(id) > 200 {
		return File{}, notFound()
	}
	f, err := lk.core.store.File(ctx, id)
	if app.ErrorCode(err) == app.ENotFound {
		return File{}, notFound()
	}
	if err != nil {
		return File{}, err
	}
	if f.OrgID != l.root.OrgID || f.OwnerID != l.root.OwnerID || f.Status == StatusPending || f.TrashedAt != nil {
		return File{}, notFound()
	}
	anc, err := lk.core.store.Ancestors(ctx, f.ID)
	if err != nil {
		return File{}, err
	}
	for _, a := range anc {
		if a.ID == l.root.ID {
			f.Permission = l.share.Permission
			return f, nil
		}
	}
	return File{}, notFound()
}

// LinkInfo describes what a link shares; for a folder it lists the items of
// the shared folder or of a folder inside it (q.FolderID). Errors: not_found
// (an unknown, expired or revoked link, a folder outside the shared one),
// validation_failed (a folder_id that is a file).
func (lk *Links) LinkInfo(ctx context.Context, token string, q LinkQuery) (SharedLink, error) {
	l, err := lk.link(ctx, token)
	if err != nil {
		return SharedLink{}, err
	}
	r := l.root
	out := SharedLink{ID: r.ID, Name: r.Name, IsFolder: r.IsFolder, MimeType: r.MimeType, SizeBytes: r.SizeBytes,
		Permission: l.share.Permission, ExpiresAt: l.share.ExpiresAt, UpdatedAt: r.UpdatedAt}
	if !r.IsFolder {
		if q.FolderID != "" && q.FolderID != r.ID {
			return SharedLink{}, notFound()
		}
		return out, nil
	}
	dir, err := lk.within(ctx, l, q.FolderID)
	if err != nil {
		return SharedLink{}, err
	}
	if !dir.IsFolder {
		return SharedLink{}, app.Invalid("query.folder_id", "This is a file, not a folder.", q.FolderID)
	}
	out.Breadcrumbs = []Breadcrumb{{ID: r.ID, Name: r.Name}}
	if dir.ID != r.ID {
		anc, err := lk.core.store.Ancestors(ctx, dir.ID)
		if err != nil {
			return SharedLink{}, err
		}
		below := false
		for _, a := range anc {
			if below {
				out.Breadcrumbs = append(out.Breadcrumbs, Breadcrumb{ID: a.ID, Name: a.Name})
			}
			below = below || a.ID == r.ID
		}
		out.Breadcrumbs = append(out.Breadcrumbs, Breadcrumb{ID: dir.ID, Name: dir.Name})
	}
	per := q.PerPage
	if per <= 0 {
		per = DefaultPerPage
	}
	per = min(per, MaxPerPage)
	page := max(q.Page, 1)
	lq := Query{Kind: ListFolder, OrgID: r.OrgID, OwnerID: r.OwnerID, ParentID: dir.ID, Now: lk.core.clock.Now(), SortBy: "name",
		Limit: per, Offset: (page - 1) * per}
	items, total, err := lk.core.store.List(ctx, lq)
	if err != nil {
		return SharedLink{}, err
	}
	fi := linkItem(dir)
	out.Folder = &fi
	out.Items = make([]LinkItem, 0, len(items))
	for _, it := range items {
		out.Items = append(out.Items, linkItem(it))
	}
	out.Page, out.PerPage, out.Total, out.TotalPages = page, per, total, (total+per-1)/per
	return out, nil
}

// LinkDownload returns a presigned download URL of the shared file, or of a
// file inside the shared folder (fileID). Errors: not_found (an unknown,
// expired or revoked link, a file outside the shared folder), conflict (a
// folder, an archived file).
func (lk *Links) LinkDownload(ctx context.Context, token, fileID string) (PresignedURL, error) {
	l, err := lk.link(ctx, token)
	if err != nil {
		return PresignedURL{}, err
	}
	f, err := lk.within(ctx, l, fileID)
	if err != nil {
		return PresignedURL{}, err
	}
	return lk.core.presignedDownload(ctx, f, false)
}

// LinkPreview returns a presigned URL that shows the file in the browser;
// only types safe to show inline (images but SVG, audio, video, PDF, plain
// text) have one, others answer conflict. Errors: not_found (an unknown,
// expired or revoked link, a file outside the shared folder), conflict (a type
// not safe to show inline, a folder, an archived file).
func (lk *Links) LinkPreview(ctx context.Context, token, fileID string) (PresignedURL, error) {
	l, err := lk.link(ctx, token)
	if err != nil {
		return PresignedURL{}, err
	}
	f, err := lk.within(ctx, l, fileID)
	if err != nil {
		return PresignedURL{}, err
	}
	if !f.IsFolder && !InlineSafe(f.MimeType) {
		return PresignedURL{}, app.Errorf(app.EConflict, "%q (%s) has no preview; download it instead.", f.Name, f.MimeType)
	}
	return lk.core.presignedDownload(ctx, f, true)
}

// textFile checks f can be read or written as a string through a link.
func textFile(f File) error {
	if f.IsFolder {
		return app.Errorf(app.EConflict, "%q is a folder; it has no content.", f.Name)
	}
	if !IsText(f.MimeType) {
		return app.Errorf(app.EConflict, "%q is %s, not a text file; download it instead.", f.Name, f.MimeType)
	}
	return nil
}

// LinkContent returns the text of a shared text file (at most MaxLinkText bytes of UTF-8).
// Errors: not_found (an unknown, expired or revoked link), conflict (a folder,
// not a text file, not UTF-8, an archived file), payload_too_large (over
// MaxLinkText).
func (lk *Links) LinkContent(ctx context.Context, token string) (string, error) {
	l, err := lk.link(ctx, token)
	if err != nil {
		return "", err
	}
	if err := textFile(l.root); err != nil {
		return "", err
	}
	if l.root.SizeBytes > MaxLinkText {
		return "", app.Errorf(app.EPayloadTooLarge, "The file is %d bytes; text is read through a link up to %d bytes. Download it instead.", l.root.SizeBytes, MaxLinkText)
	}
	_, rc, err := lk.core.openFile(ctx, l.root)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxLinkText+1))
	if err != nil {
		return "", fmt.Errorf("read shared file %s: %w", l.root.ID, err)
	}
	if len(b) > MaxLinkText {
		return "", app.Errorf(app.EPayloadTooLarge, "The file is larger than %d bytes; download it instead.", MaxLinkText)
	}
	if !utf8.Valid(b) {
		return "", app.Errorf(app.EConflict, "%q is not UTF-8 text; download it instead.", l.root.Name)
	}
	return string(b), nil
}

// LinkWriteContent replaces the text of a file shared by an edit link: a new
// version by the link's creator, within the organisation's quota, through the
// same path as every other door (drive.file.updated). Errors: not_found (an
// unknown, expired or revoked link), forbidden (a view link), conflict (a
// folder, not a text file, a file in the trash or archived), payload_too_large
// (over MaxLinkText), locked (a lock the caller does not hold), quota_exceeded.
func (lk *Links) LinkWriteContent(ctx context.Context, token, text string) (File, error) {
	l, err := lk.link(ctx, token)
	if err != nil {
		return File{}, err
	}
	if l.share.Permission != PermEdit {
		return File{}, app.Errorf(app.EForbidden, "This link is for viewing only.")
	}
	if err := textFile(l.root); err != nil {
		return File{}, err
	}
	if len(text) > MaxLinkText {
		return File{}, app.Errorf(app.EPayloadTooLarge, "Text written through a link is at most %d bytes.", MaxLinkText)
	}
	// The link writes as its creator but holds none of their locks.
	f, _, err := lk.core.Put(withoutUserLocks(ctx), l.p, PutRequest{FileID: l.root.ID, Size: int64(len(text)), Body: strings.NewReader(text), MaxBytes: MaxLinkText})
	if err != nil {
		return File{}, err
	}
	f.Permission = l.share.Permission
	return f, nil
}

// Links is the part of the drive that shared links' visitors go through,
// without an account: what a link shares (a file, or a folder to browse),
// its downloads, previews and ZIP, and the text of a file shared for editing.
// Links are made, listed and revoked by the core (CreateShare); it holds the
// core (Service), whose rules every read and write here goes through, as the
// link's creator.
type Links struct {
	core *Service
}

// Links returns the drive's shared links part. Errors: none of its own.
func (s *Service) Links() *Links { return s.links }
