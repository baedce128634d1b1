package drive

// Online editing (WOPI): editor configuration, edit sessions and their
// signed access tokens, who is editing a document (presence).

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"time"

	"atrium/app"
)

// Online editing: Atrium is the WOPI host of a Collabora Online or ONLYOFFICE
// Docs server. A user asks for an edit session (EditURL, CreateDocument,
// LinkEditURL) and gets the editor's URL for the file and a short-lived access
// token bound to the file, the user, the organisation and edit or view; the
// editor then calls the WOPI endpoints (/wopi/files/{id}) with that token, and
// those calls go through this service like every other door: permissions are
// checked again on each call, content is written by Put (quota, versions,
// events, sync feed; not audited, see the package doc), and WOPI locks are the drive's locks of kind
// editor, so the file mount and the REST API see them.

// EditorOptions configure online editing.
type EditorOptions struct {
	// URL is the base URL of the editor (Collabora Online, ONLYOFFICE Docs);
	// empty: no online editor.
	URL string
	// WOPIURL is the base URL the editor reaches this server at (WOPISrc is
	// {WOPIURL}/wopi/files/{id}); empty: the public URL.
	WOPIURL string
	// DiscoveryTimeout bounds one fetch of the editor's discovery (default 10 s).
	DiscoveryTimeout time.Duration
	// DiscoveryMaxAge is how long a fetched discovery is used (default 1 h).
	DiscoveryMaxAge time.Duration
	// TokenTTL is the lifetime of access tokens (default 10 h).
	TokenTTL time.Duration
	// TokenKey signs access tokens (HMAC-SHA256); required with URL.
	TokenKey []byte
	// Discovery fetches the editor's discovery (web/wopi.DiscoveryClient);
	// required with URL.
	Discovery DiscoveryFetcher
	// SkipProof turns off the check of WOPI proof keys (wopiproof.go).
	SkipProof bool
}

// Default editor settings.
const (
	DefaultEditorTokenTTL   = 10 * time.Hour
	defaultDiscoveryTimeout = 10 * time.Second
	defaultDiscoveryMaxAge  = time.Hour
	discoveryRetry          = 30 * time.Second
	// maxWOPILock is the longest WOPI lock id accepted (SupportsExtendedLockLength).
	maxWOPILock = 1024
)

// WithEditor returns o with online editing configured.
func (o Options) WithEditor(e EditorOptions) Options {
	o.Editor = e
	return o
}

// Editing is the part of the drive that online editors go through (WOPI:
// Collabora Online, ONLYOFFICE): edit sessions and their tokens, the WOPI
// host's reads, locks and writes, new documents and saving as ODF. It holds
// the drive's core (Service), whose rules — access, locks, quota, the one
// write transaction, events — every write here goes through; the web app's
// editor page, the REST editor operations and the WOPI door use this part.
type Editing struct {
	core *Service
	disc *discoveryCache // nil: no editor configured
}

// Editing returns the drive's online-editing part. Errors: none of its own.
func (s *Service) Editing() *Editing { return s.editing }

// newEditing completes the editor's options with their defaults and returns
// the part.
func newEditing(s *Service) *Editing {
	e := &s.opts.Editor
	if e.DiscoveryTimeout <= 0 {
		e.DiscoveryTimeout = defaultDiscoveryTimeout
	}
	if e.DiscoveryMaxAge <= 0 {
		e.DiscoveryMaxAge = defaultDiscoveryMaxAge
	}
	if e.TokenTTL <= 0 {
		e.TokenTTL = DefaultEditorTokenTTL
	}
	e.URL = strings.TrimRight(e.URL, "/")
	e.WOPIURL = strings.TrimRight(e.WOPIURL, "/")
	ed := &Editing{core: s}
	if e.URL != "" {
		ed.disc = &discoveryCache{url: e.URL, fetcher: e.Discovery, maxAge: e.DiscoveryMaxAge, retryIn: discoveryRetry}
	}
	return ed
}

// EditorConfigured reports whether an online editor is configured. Errors: none
// of its own.
func (e *Editing) EditorConfigured() bool { return e.disc != nil }

// EditorOpens returns whether the online editor can open a file of a name and
// mime type: its discovery has an edit or view action for the file's
// extension or mime type (what EditURL opens). Without an editor, or when its
// discovery cannot be had, the error says why and no file opens. Errors:
// editor_unavailable (no editor or no access-token key), unavailable (the
// editor's discovery cannot be had).
func (e *Editing) EditorOpens(ctx context.Context) (func(name, mimeType string) bool, error) {
	disc, err := e.discovery(ctx)
	if err != nil {
		return nil, err
	}
	return func(name, mimeType string) bool {
		return disc.Action("edit", name, mimeType) != "" || disc.Action("view", name, mimeType) != ""
	}, nil
}

func noEditor() error {
	return app.Errorf(app.EEditorUnavailable, "No online editor (Collabora Online or ONLYOFFICE) is configured on this server: set [editor] url.")
}

// discovery returns the editor's discovery: editor_unavailable when none is
// configured, unavailable when it cannot be fetched.
func (e *Editing) discovery(ctx context.Context) (Discovery, error) {
	if e.disc == nil {
		return Discovery{}, noEditor()
	}
	if len(e.core.opts.Editor.TokenKey) == 0 {
		return Discovery{}, app.Errorf(app.EEditorUnavailable, "The online editor has no access-token key configured.")
	}
	ctx, cancel := context.WithTimeout(ctx, e.core.opts.Editor.DiscoveryTimeout)
	defer cancel()
	return e.disc.get(ctx, e.core.clock.Now())
}

// WOPISrc returns the WOPI URL of file id. Errors: none of its own.
func (e *Editing) WOPISrc(id string) string {
	return e.WOPIBase() + "/wopi/files/" + url.PathEscape(id)
}

// WOPIBase returns the base URL the editor reaches the WOPI endpoints at.
// Errors: none of its own.
func (e *Editing) WOPIBase() string {
	if base := e.core.opts.Editor.WOPIURL; base != "" {
		return base
	}
	return strings.TrimRight(e.core.opts.PublicURL, "/")
}

// EditRequest carries the optional editor settings of an edit session.
type EditRequest struct {
	// Lang is the user interface language (BCP 47, e.g. en-US).
	Lang string
	// Theme is the editor theme (light, dark, or a name the editor knows).
	Theme string
}

var (
	langRe  = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$`)
	themeRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)
)

func (r EditRequest) validate() error {
	var v app.Validator
	v.Check(r.Lang == "" || langRe.MatchString(r.Lang), "query.lang", "A language tag such as en or en-US.", r.Lang)
	v.Check(r.Theme == "" || themeRe.MatchString(r.Theme), "query.theme", "A theme name such as light or dark.", r.Theme)
	return v.Err()
}

// EditSession is what a client needs to open the editor (EditSessionResponse):
// it loads EditURL in a frame by POSTing a form with access_token and
// access_token_ttl to it.
type EditSession struct {
	EditURL     string `json:"edit_url"`
	AccessToken string `json:"access_token"`
	// AccessTokenTTL is, as WOPI defines it, the token's expiry in
	// milliseconds since the Unix epoch.
	AccessTokenTTL int64     `json:"access_token_ttl"`
	ExpiresAt      time.Time `json:"expires_at"`
	// Editor is the product: collabora, onlyoffice or wopi.
	Editor string `json:"editor"`
	// Action is edit, or view when the caller may only read the file.
	Action  string `json:"action"`
	FileID  string `json:"file_id"`
	WOPISrc string `json:"wopi_src"`
	// File is the created file (create-document only).
	File *File `json:"file,omitempty"`
}

// EditorUser is someone in an edit session of a file.
type EditorUser struct {
	UserID      string `json:"user_id,omitempty"`
	DisplayName string `json:"display_name"`
	Email       string `json:"email,omitempty"`
	// Guest is someone editing through a shared link.
	Guest     bool      `json:"guest"`
	Since     time.Time `json:"since"`
	ExpiresAt time.Time `json:"expires_at"`
}

// EditURL opens an edit session of a file the caller may see: the editor's
// edit action when the caller may change the file, else its view action.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, validation_failed (the language or theme), not_found (no
// such item, or not shared with the caller), editor_unavailable (no editor, no
// access-token key, an editor that cannot open the file), unavailable (the
// editor's discovery cannot be had), conflict (a folder, an item in the trash,
// a pending upload, an archived file).
func (e *Editing) EditURL(ctx context.Context, p *app.Principal, fileID string, r EditRequest) (EditSession, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return EditSession{}, err
	}
	if err := r.validate(); err != nil {
		return EditSession{}, err
	}
	// Access first: a caller who cannot see the file learns nothing about the
	// editor (501, 503) and does not make the server ask it for its discovery.
	f, err := e.core.access(ctx, p, fileID, PermView)
	if err != nil {
		return EditSession{}, err
	}
	disc, err := e.discovery(ctx)
	if err != nil {
		return EditSession{}, err
	}
	if err := editable(f); err != nil {
		return EditSession{}, err
	}
	perm := PermEdit
	if f.Permission == PermView {
		perm = PermView
	}
	return e.session(disc, f, editorClaims{UserID: p.UserID, OrgID: p.OrgID, Perm: perm}, r)
}

// LinkEditURL opens an edit session of a file shared by an edit link: the
// guest edits as the link's creator would, and the session ends when the link
// is revoked or expires. A view link → forbidden. Errors: validation_failed
// (the language or theme), editor_unavailable (no editor, no access-token key,
// an editor that cannot open the file), not_found (an unknown, expired or
// revoked link), forbidden (a view link), conflict (a folder, an item in the
// trash, a pending upload, an archived file), unavailable (the editor's
// discovery cannot be had).
func (e *Editing) LinkEditURL(ctx context.Context, token string, r EditRequest) (EditSession, error) {
	if err := r.validate(); err != nil {
		return EditSession{}, err
	}
	if e.disc == nil {
		return EditSession{}, noEditor()
	}
	l, err := e.core.links.link(ctx, token)
	if err != nil {
		return EditSession{}, err
	}
	if l.share.Permission != PermEdit {
		return EditSession{}, app.Errorf(app.EForbidden, "This link is for viewing only; it cannot open the editor.")
	}
	if err := editable(l.root); err != nil {
		return EditSession{}, err
	}
	disc, err := e.discovery(ctx)
	if err != nil {
		return EditSession{}, err
	}
	return e.session(disc, l.root, editorClaims{UserID: l.p.UserID, OrgID: l.p.OrgID, Perm: PermEdit, ShareID: l.share.ID}, r)
}

// editable checks f is a file whose content an editor can load.
func editable(f File) error {
	switch {
	case f.IsFolder:
		return app.Errorf(app.EConflict, "%q is a folder; only files open in the editor.", f.Name)
	case f.TrashedAt != nil:
		return app.Errorf(app.EConflict, "%q is in the trash; restore it to edit it.", f.Name)
	case f.Status == StatusPending:
		return app.Errorf(app.EConflict, "The upload of %q is not confirmed yet.", f.Name)
	case isCold(f):
		return archivedConflict(f)
	}
	return nil
}

// session issues an access token for f and builds the editor URL.
func (e *Editing) session(disc Discovery, f File, c editorClaims, r EditRequest) (EditSession, error) {
	action := ""
	if c.Perm == PermView {
		action = "view"
		if disc.Action("view", f.Name, f.MimeType) == "" {
			action = "edit" // the editor opens it read-only: UserCanWrite is false
		}
	} else {
		action = "edit"
		if disc.Action("edit", f.Name, f.MimeType) == "" && disc.Action("view", f.Name, f.MimeType) != "" {
			action, c.Perm = "view", PermView
		}
	}
	src := disc.Action(action, f.Name, f.MimeType)
	if src == "" {
		return EditSession{}, app.Errorf(app.EEditorUnavailable, "The online editor (%s) cannot open %q (%s).", disc.Product, f.Name, f.MimeType)
	}
	c.FileID = f.ID
	tok, exp, err := e.issueEditorToken(c)
	if err != nil {
		return EditSession{}, err
	}
	wopiSrc := e.WOPISrc(f.ID)
	return EditSession{EditURL: EditorURL(src, wopiSrc, r.Lang, r.Theme), AccessToken: tok, AccessTokenTTL: exp.UnixMilli(),
		ExpiresAt: exp, Editor: disc.Product, Action: action, FileID: f.ID, WOPISrc: wopiSrc}, nil
}

// Editors lists who is in an edit session of a file the caller may see: the
// holder of the file's editor lock and everyone whose editor opened the file
// since (as long as the lock lives; empty without one). Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller).
func (e *Editing) Editors(ctx context.Context, p *app.Principal, fileID string) ([]EditorUser, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	if _, err := e.core.access(ctx, p, fileID, PermView); err != nil {
		return nil, err
	}
	lock, _, err := e.editorLocks(ctx, fileID)
	if err != nil {
		return nil, err
	}
	out := []EditorUser{}
	if lock == nil {
		return out, e.core.store.DropEditors(ctx, fileID)
	}
	seen, err := e.core.store.Editors(ctx, fileID, lock.CreatedAt.Add(-presenceSlack))
	if err != nil {
		return nil, err
	}
	for _, pr := range seen {
		out = append(out, EditorUser{UserID: pr.UserID, DisplayName: pr.Name, Email: pr.Email, Guest: pr.Guest, Since: pr.Since,
			ExpiresAt: lock.ExpiresAt})
	}
	// Nobody seen (the server restarted since): the lock's holder.
	if len(out) == 0 {
		u, err := e.core.store.OrgUser(ctx, p.OrgID, lock.OwnerID, "")
		if err != nil && app.ErrorCode(err) != app.ENotFound {
			return nil, err
		}
		name := u.DisplayName
		if name == "" {
			name = u.Email
		}
		out = append(out, EditorUser{UserID: lock.OwnerID, DisplayName: name, Email: u.Email, Since: lock.CreatedAt, ExpiresAt: lock.ExpiresAt})
	}
	return out, nil
}

// editorClaims is what an access token binds.
type editorClaims struct {
	FileID  string `json:"f"`
	UserID  string `json:"u"`
	OrgID   string `json:"o"`
	Perm    string `json:"p"`
	ShareID string `json:"s,omitempty"`
	Exp     int64  `json:"e"`
	Nonce   string `json:"n"`
}

const editorMACBytes = 32

func (e *Editing) editorMAC(payload []byte) []byte {
	m := hmac.New(sha256.New, e.core.opts.Editor.TokenKey)
	m.Write([]byte("drive-wopi\x00"))
	m.Write(payload)
	return m.Sum(nil)[:editorMACBytes]
}

// issueEditorToken signs c with a fresh expiry and nonce: base64url(claims)
// "." base64url(HMAC-SHA256).
func (e *Editing) issueEditorToken(c editorClaims) (string, time.Time, error) {
	if len(e.core.opts.Editor.TokenKey) == 0 {
		return "", time.Time{}, app.Errorf(app.EEditorUnavailable, "The online editor has no access-token key configured.")
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return "", time.Time{}, err
	}
	exp := e.core.clock.Now().Add(e.core.opts.Editor.TokenTTL).Truncate(time.Millisecond)
	c.Exp, c.Nonce = exp.UnixMilli(), base64.RawURLEncoding.EncodeToString(nonce)
	payload, err := json.Marshal(c)
	if err != nil {
		return "", time.Time{}, err
	}
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(e.editorMAC(payload)), exp, nil
}

func badToken(why string) error {
	return app.Errorf(app.EUnauthorized, "The access token %s; open the document again to get a new one.", why)
}

// parseEditorToken verifies a token's signature and expiry.
func (e *Editing) parseEditorToken(tok string) (editorClaims, error) {
	var c editorClaims
	if len(e.core.opts.Editor.TokenKey) == 0 || tok == "" || len(tok) > 2048 {
		return c, badToken("is missing or invalid")
	}
	p64, m64, ok := strings.Cut(tok, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	mac, err2 := base64.RawURLEncoding.DecodeString(m64)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, e.editorMAC(payload)) {
		return c, badToken("is invalid")
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.FileID == "" || c.UserID == "" || (c.Perm != PermEdit && c.Perm != PermView) {
		return c, badToken("is invalid")
	}
	if !e.core.clock.Now().Before(time.UnixMilli(c.Exp)) {
		return c, badToken("has expired")
	}
	return c, nil
}

// EditorSession is a verified WOPI access token: the file it is for, the
// principal the editor acts as and whether it may write.
type EditorSession struct {
	FileID    string
	ExpiresAt time.Time
	// Guest is a session opened through a shared link (ShareID).
	Guest   bool
	ShareID string
	perm    string
	p       *app.Principal
	user    string // the presence key
}

// CanWrite reports whether the session may change the file.
func (e *EditorSession) CanWrite() bool { return e.perm == PermEdit }

// OpenEditorSession verifies an access token for file fileID: an invalid,
// expired or foreign token, a token for another file, or one whose user,
// organisation or link is no longer active → unauthorized. Permissions are
// checked again: a file the user can no longer see → not_found, and a share
// reduced to view makes the session read-only. Errors: unauthorized (an
// invalid, expired or foreign token, one for another file, of a revoked or
// expired link, of a user or organisation no longer active or a plan without
// the drive), not_found (a file the user can no longer see).
func (e *Editing) OpenEditorSession(ctx context.Context, token, fileID string) (*EditorSession, error) {
	c, err := e.parseEditorToken(token)
	if err != nil {
		return nil, err
	}
	if c.FileID != fileID {
		return nil, badToken("is for another file")
	}
	es := &EditorSession{FileID: fileID, ExpiresAt: time.UnixMilli(c.Exp), perm: c.Perm, ShareID: c.ShareID, user: c.UserID}
	if c.ShareID != "" {
		sh, err := e.core.store.Share(ctx, c.ShareID)
		if app.ErrorCode(err) == app.ENotFound {
			return nil, badToken("belongs to a link that was revoked")
		}
		if err != nil {
			return nil, err
		}
		l, err := e.core.links.linkShare(ctx, sh)
		if app.ErrorCode(err) == app.ENotFound || (err == nil && l.root.ID != fileID) {
			return nil, badToken("belongs to a link that expired or was revoked")
		}
		if err != nil {
			return nil, err
		}
		if l.share.Permission != PermEdit {
			es.perm = PermView
		}
		es.p, es.Guest, es.user = l.p, true, "link:"+sh.ID
		if es.perm != PermEdit {
			es.p = &app.Principal{Credential: l.p.Credential, CredentialID: l.p.CredentialID, OrgID: l.p.OrgID, UserID: l.p.UserID,
				Scopes: app.NewScopes(app.ScopeDriveRead), Features: l.p.Features, QuotaBytes: l.p.QuotaBytes}
		}
		return es, nil
	}
	plan, err := e.core.store.LinkPlan(ctx, c.OrgID, c.UserID)
	if app.ErrorCode(err) == app.ENotFound {
		return nil, badToken("belongs to a user or organisation that is no longer active")
	}
	if err != nil {
		return nil, err
	}
	scopes := []string{app.ScopeDriveRead}
	if c.Perm == PermEdit {
		scopes = append(scopes, app.ScopeDriveWrite)
	}
	es.p = &app.Principal{Credential: "wopi", OrgID: c.OrgID, UserID: c.UserID, Scopes: app.NewScopes(scopes...),
		Features: plan.Features, QuotaBytes: plan.QuotaBytes}
	if !es.p.HasFeature("drive") {
		return nil, badToken("belongs to an organisation whose plan no longer includes the drive")
	}
	f, err := e.core.access(ctx, es.p, fileID, PermView)
	if err != nil {
		return nil, err
	}
	if f.Permission == PermView && es.perm == PermEdit {
		es.perm = PermView
		es.p.Scopes = app.NewScopes(app.ScopeDriveRead)
	}
	return es, nil
}

// presenceSlack lets a user whose editor opened the file just before the
// editor lock was taken count as in the session.
const presenceSlack = 5 * time.Minute

// EditorPresence is someone who has a file open in the online editor: a user
// or a guest of an edit link.
type EditorPresence struct {
	UserID, Name, Email string
	Guest               bool
	Since, Seen         time.Time
}

// PresenceStore keeps who has which file open in the editor, where every
// node sees it.
type PresenceStore interface {
	// SeenEditor reports whether session key has fileID open, and then
	// refreshes its Seen to now when it is older than stale.
	SeenEditor(ctx context.Context, fileID, key string, now, stale time.Time) (bool, error)
	// AddEditor records that session key opened fileID; a record of it
	// already there keeps its Since.
	AddEditor(ctx context.Context, fileID, key string, pr EditorPresence) error
	// Editors returns who was seen on fileID since since, the earliest first.
	Editors(ctx context.Context, fileID string, since time.Time) ([]EditorPresence, error)
	DropEditors(ctx context.Context, fileID string) error
	// PruneEditors forgets those last seen before before.
	PruneEditors(ctx context.Context, before time.Time) (int, error)
}

// presenceRefresh is how stale a presence's Seen may grow before a request
// of its session writes it again: presence only needs to be known within
// presenceSlack.
const presenceRefresh = time.Minute

// see records that the session's user has the file open. Presence is a
// courtesy of the editors list: a failure to record it is logged, not the
// request's.
func (e *Editing) see(ctx context.Context, es *EditorSession) {
	now := e.core.clock.Now()
	if ok, err := e.core.store.SeenEditor(ctx, es.FileID, es.user, now, now.Add(-presenceRefresh)); err != nil || ok {
		if err != nil {
			e.core.log.WarnContext(ctx, "editor presence", "file", es.FileID, "err", err)
		}
		return
	}
	pr := EditorPresence{Guest: es.Guest, Since: now, Seen: now, Name: "Guest"}
	if !es.Guest {
		pr.UserID = es.p.UserID
		if u, err := e.core.store.OrgUser(ctx, es.p.OrgID, es.p.UserID, ""); err == nil {
			pr.Name, pr.Email = u.DisplayName, u.Email
			if pr.Name == "" {
				pr.Name = u.Email
			}
		}
	}
	if err := e.core.store.AddEditor(ctx, es.FileID, es.user, pr); err != nil {
		e.core.log.WarnContext(ctx, "editor presence", "file", es.FileID, "err", err)
	}
}

// pruneEditors forgets the presences of editor sessions whose tokens have
// all expired (maintenance).
func (s *Service) pruneEditors(ctx context.Context, now time.Time) (int, error) {
	return s.store.PruneEditors(ctx, now.Add(-s.opts.Editor.TokenTTL-presenceSlack))
}
