package drive

// The drive's one lock manager: WebDAV LOCK/UNLOCK and editor (WOPI) locks
// (editor.go). A lock belongs to the user who took it; it is exclusive, or shared
// with other shared locks, and on a folder it may cover everything below it
// (Deep). While a lock lives, writes to the item (content, name, place,
// metadata, trash, delete) and, for a folder, additions to it are refused with
// locked (423) unless the caller holds the lock. A writer holds a lock only by
// presenting its token: the doors that write as a user (WebDAV, REST) ask for
// strict checking (WithStrictLocks) and put the tokens of the request's If
// header in the context with WithLockTokens; without strict checking (a
// caller inside the server) the lock's owner passes; a door that
// holds no lock by its user (a shared link, a resumable upload, the editor)
// holds only what it proved to hold (the editor: its WOPI lock id).

import (
	"context"
	"slices"
	"strings"
	"time"

	"atrium/app"
)

// Lock kinds.
const (
	LockKindWebDAV = "webdav"
	LockKindEditor = "editor"
)

// DefaultLockTTL is the lifetime of a lock, and the longest one may ask for.
const DefaultLockTTL = 30 * time.Minute

// LockTokenPrefix starts every lock token (RFC 4918 §6.5 URI scheme).
const LockTokenPrefix = "opaquelocktoken:"

// LockStore keeps locks. Queries ignore locks expired at now.
type LockStore interface {
	// AddLock inserts a lock, first removing expired locks of the same file.
	AddLock(ctx context.Context, l Lock) error
	// LockByToken returns a lock, expired or not; not_found when absent.
	LockByToken(ctx context.Context, token string) (Lock, error)
	SetLockExpiry(ctx context.Context, token string, at time.Time) error
	DeleteLock(ctx context.Context, token string) error
	// DeleteExpiredLocks removes locks that expired before t.
	DeleteExpiredLocks(ctx context.Context, t time.Time) (int, error)
	// LocksOn returns the live locks on fileID, the deep ones on the folders
	// above it and, with below, every lock on the items below it.
	LocksOn(ctx context.Context, fileID string, below bool, now time.Time) ([]Lock, error)
	// LocksOnFiles returns the live locks held directly on fileIDs.
	LocksOnFiles(ctx context.Context, fileIDs []string, now time.Time) ([]Lock, error)
}

type lockTokensKey struct{}

type submittedTokens struct {
	tokens []string
	strict bool
	// anonymous: the caller's user does not hold the user's locks (a shared
	// link writes as its creator, an upload may finish long after it began):
	// only held locks are held.
	anonymous bool
	// held are editor locks the caller proved to hold by their WOPI lock id:
	// an editor session is shared by everyone editing the document, so such a
	// lock is held whoever took it.
	held []string
}

// withHeldLock returns ctx in which the lock token is held by the caller
// whoever owns it (an editor lock whose WOPI lock id the editor presented).
func withHeldLock(ctx context.Context, token string) context.Context {
	st, _ := ctx.Value(lockTokensKey{}).(submittedTokens)
	st.held = append(slices.Clone(st.held), token)
	return context.WithValue(ctx, lockTokensKey{}, st)
}

// WithLockTokens returns ctx carrying the lock tokens a client submitted; the
// service accepts a write to a locked item when the caller owns the lock and
// submitted its token.
func WithLockTokens(ctx context.Context, tokens ...string) context.Context {
	st, _ := ctx.Value(lockTokensKey{}).(submittedTokens)
	st.tokens = append(slices.Clone(st.tokens), tokens...)
	return context.WithValue(ctx, lockTokensKey{}, st)
}

// WithStrictLocks returns ctx in which a lock's owner, too, must submit the
// lock's token to write (WebDAV, RFC 4918 §7).
func WithStrictLocks(ctx context.Context) context.Context {
	st, _ := ctx.Value(lockTokensKey{}).(submittedTokens)
	st.strict = true
	return context.WithValue(ctx, lockTokensKey{}, st)
}

// withoutUserLocks returns ctx in which the caller holds no lock by being its
// owner: writes through a shared link, resumable uploads and the editor.
func withoutUserLocks(ctx context.Context) context.Context {
	st, _ := ctx.Value(lockTokensKey{}).(submittedTokens)
	st.anonymous = true
	return context.WithValue(ctx, lockTokensKey{}, st)
}

func lockTokens(ctx context.Context) submittedTokens {
	st, _ := ctx.Value(lockTokensKey{}).(submittedTokens)
	return st
}

// LockRequest describes a lock to take.
type LockRequest struct {
	Kind      string
	OwnerInfo string
	Shared    bool
	// Deep, on a folder, covers everything below it (depth infinity).
	Deep bool
	// TTL is the lock's lifetime (0 or more than DefaultLockTTL: DefaultLockTTL).
	TTL time.Duration
}

func lockTTL(ttl time.Duration) time.Duration {
	if ttl <= 0 || ttl > DefaultLockTTL {
		return DefaultLockTTL
	}
	return ttl
}

func lockedError(f File, l Lock) error {
	return app.Errorf(app.ELocked, "%q is locked until %s; the lock's token is needed to change it.",
		f.Name, l.ExpiresAt.UTC().Format(time.RFC3339))
}

// Lock takes an exclusive lock of kind on an item the caller may edit (on a
// folder it covers everything below it). Any live lock on the item, above it
// or, for a folder, below it → locked. Errors: insufficient_scope (no
// drive:write), no_bound_user, feature_not_in_plan, not_found (no such item, or
// not shared with the caller), forbidden (an item shared for viewing), conflict
// (a pending upload, an item in the trash), locked (a live lock on the item,
// above it or below it).
func (s *Service) Lock(ctx context.Context, p *app.Principal, fileID, kind, ownerInfo string, ttl time.Duration) (Lock, error) {
	return s.LockWith(ctx, p, fileID, LockRequest{Kind: kind, OwnerInfo: ownerInfo, Deep: true, TTL: ttl})
}

// LockWith takes a lock as r describes. A shared lock coexists with other
// shared locks only. Errors: insufficient_scope (no drive:write),
// no_bound_user, feature_not_in_plan, not_found (no such item, or not shared
// with the caller), forbidden (an item shared for viewing), conflict (a pending
// upload, an item in the trash), locked (a live lock on the item, above it or
// below it that r cannot share).
func (s *Service) LockWith(ctx context.Context, p *app.Principal, fileID string, r LockRequest) (Lock, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return Lock{}, err
	}
	f, err := s.access(ctx, p, fileID, PermEdit)
	if err != nil {
		return Lock{}, err
	}
	if f.Status == StatusPending || f.TrashedAt != nil {
		return Lock{}, app.Errorf(app.EConflict, "Only live, confirmed items can be locked.")
	}
	var l Lock
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		l, err = s.addLock(ctx, p, f, r)
		return err
	})
	if err != nil {
		return Lock{}, err
	}
	return l, nil
}

// addLock takes lock r on f for p inside a transaction: any live lock on f,
// above it or, for a deep lock, below it that r cannot share with → locked.
func (s *Service) addLock(ctx context.Context, p *app.Principal, f File, r LockRequest) (Lock, error) {
	if r.Kind == "" {
		r.Kind = LockKindWebDAV
	}
	now := s.clock.Now()
	l := Lock{FileID: f.ID, Token: LockTokenPrefix + app.NewID(), OwnerID: p.UserID, Kind: r.Kind, OwnerInfo: r.OwnerInfo,
		Shared: r.Shared, Deep: r.Deep && f.IsFolder, ExpiresAt: now.Add(lockTTL(r.TTL)), CreatedAt: now}
	held, err := s.store.LocksOn(ctx, f.ID, l.Deep, now)
	if err != nil {
		return Lock{}, err
	}
	for _, h := range held {
		if !h.Shared || !l.Shared {
			return Lock{}, lockedError(f, h)
		}
	}
	return l, s.store.AddLock(ctx, l)
}

// RefreshLock extends a live lock of the caller's by ttl (see LockRequest.TTL);
// an unknown, expired or foreign token → precondition_failed. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// precondition_failed (an unknown, expired or foreign token).
func (s *Service) RefreshLock(ctx context.Context, p *app.Principal, token string, ttl time.Duration) (Lock, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return Lock{}, err
	}
	now := s.clock.Now()
	l, err := s.store.LockByToken(ctx, token)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && (!l.ExpiresAt.After(now) || l.OwnerID != p.UserID)) {
		return Lock{}, app.Errorf(app.EPreconditionFailed, "No lock of yours has the token %s (it may have expired).", token)
	}
	if err != nil {
		return Lock{}, err
	}
	l.ExpiresAt = now.Add(lockTTL(ttl))
	if err := s.store.SetLockExpiry(ctx, l.Token, l.ExpiresAt); err != nil {
		return Lock{}, err
	}
	return l, nil
}

// Unlock releases the lock token on fileID (or on a folder above it that the
// lock covers; "" skips that check). The lock's owner or the item's owner may
// release it; an unknown or expired token, or one on another item → conflict.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, conflict (an unknown or expired token, a lock on another
// item), not_found (the locked item is not the caller's to see), forbidden
// (another user's lock on an item the caller does not own).
func (s *Service) Unlock(ctx context.Context, p *app.Principal, fileID, token string) error {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return err
	}
	l, err := s.store.LockByToken(ctx, token)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && !l.ExpiresAt.After(s.clock.Now())) {
		return app.Errorf(app.EConflict, "There is no lock with the token %s (it may have expired).", token)
	}
	if err != nil {
		return err
	}
	if fileID != "" && fileID != l.FileID {
		covered := false
		if l.Deep {
			anc, err := s.store.Ancestors(ctx, fileID)
			if err != nil {
				return err
			}
			covered = slices.ContainsFunc(anc, func(a File) bool { return a.ID == l.FileID })
		}
		if !covered {
			return app.Errorf(app.EConflict, "The lock %s is not on this item.", token)
		}
	}
	if l.OwnerID != p.UserID {
		f, err := s.access(ctx, p, l.FileID, PermView)
		if err != nil {
			return err
		}
		if f.Permission != PermOwner {
			return app.Errorf(app.EForbidden, "The lock belongs to another user; they or the item's owner may release it.")
		}
	}
	return s.store.DeleteLock(ctx, token)
}

// LockOf returns the lock that covers an item the caller may see (one on the
// item first, else a deep one on a folder above it); not_found when none.
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan, not_found (no such item, or not shared with the caller;
// no lock covers it).
func (s *Service) LockOf(ctx context.Context, p *app.Principal, fileID string) (Lock, error) {
	ls, err := s.Locks(ctx, p, fileID)
	if err != nil {
		return Lock{}, err
	}
	if len(ls) == 0 {
		return Lock{}, app.Errorf(app.ENotFound, "The item is not locked.")
	}
	return ls[0], nil
}

// Locks returns the live locks covering an item the caller may see: those on
// the item first, then deep ones on the folders above it. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller).
func (s *Service) Locks(ctx context.Context, p *app.Principal, fileID string) ([]Lock, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	if _, err := s.access(ctx, p, fileID, PermView); err != nil {
		return nil, err
	}
	ls, err := s.store.LocksOn(ctx, fileID, false, s.clock.Now())
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(ls, func(a, b Lock) int {
		switch {
		case a.FileID == fileID && b.FileID != fileID:
			return -1
		case b.FileID == fileID && a.FileID != fileID:
			return 1
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	})
	return ls, nil
}

// LocksOnItems returns the live locks held directly on items by item id, for
// listings (the caller has listed the items, so may see them). Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan.
func (s *Service) LocksOnItems(ctx context.Context, p *app.Principal, fileIDs []string) (map[string][]Lock, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	ls, err := s.store.LocksOnFiles(ctx, fileIDs, s.clock.Now())
	if err != nil {
		return nil, err
	}
	out := map[string][]Lock{}
	for _, l := range ls {
		out[l.FileID] = append(out[l.FileID], l)
	}
	return out, nil
}

// checkLock refuses a change of item fileID (its content, name, place,
// metadata or existence) unless the caller holds every lock that covers it:
// locks on it, deep locks above it and locks below it.
func (s *Service) checkLock(ctx context.Context, p *app.Principal, fileID string) error {
	return s.lockHeld(ctx, p, fileID, true)
}

// checkFolderLock refuses adding an item to folderID ("" is a root: never
// locked) unless the caller holds the locks on the folder and deep ones above it.
func (s *Service) checkFolderLock(ctx context.Context, p *app.Principal, folderID string) error {
	if folderID == "" {
		return nil
	}
	return s.lockHeld(ctx, p, folderID, false)
}

// checkPutLock checks the locks for Put: those of the file written
// (existing), or of folder parentID for a new file.
func (s *Service) checkPutLock(ctx context.Context, p *app.Principal, existing *File, parentID string) error {
	if existing != nil {
		return s.checkLock(ctx, p, existing.ID)
	}
	return s.checkFolderLock(ctx, p, parentID)
}

// checkWriteLock checks the locks for writing f's content: a pending file is
// new in its folder.
func (s *Service) checkWriteLock(ctx context.Context, p *app.Principal, f File) error {
	if f.Status == StatusPending {
		return s.checkFolderLock(ctx, p, f.Parent())
	}
	return s.checkLock(ctx, p, f.ID)
}

func (s *Service) lockHeld(ctx context.Context, p *app.Principal, fileID string, below bool) error {
	locks, err := s.store.LocksOn(ctx, fileID, below, s.clock.Now())
	if err != nil || len(locks) == 0 {
		return err
	}
	st := lockTokens(ctx)
	// Locks on the same item are alternatives (shared locks): holding one is
	// enough; every locked item must be held.
	held := map[string]bool{}
	for _, l := range locks {
		if slices.Contains(st.held, l.Token) ||
			(!st.anonymous && l.OwnerID == p.UserID && (!st.strict || slices.Contains(st.tokens, l.Token))) {
			held[l.FileID] = true
		}
	}
	for _, l := range locks {
		if !held[l.FileID] {
			f, err := s.store.File(ctx, l.FileID)
			if err != nil {
				return err
			}
			return lockedError(f, l)
		}
	}
	return nil
}

// IsLockToken reports whether s looks like a token this manager issues.
func IsLockToken(s string) bool { return strings.HasPrefix(s, LockTokenPrefix) }
