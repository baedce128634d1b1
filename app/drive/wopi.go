package drive

// What the WOPI editor may do with a file (the rules; the protocol is in
// web/wopi): file info, open, the editor's locks and PutFile/PutRelative
// through the content-write path.

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"atrium/app"
)

// The WOPI host operations an editor calls (CheckFileInfo, GetFile, PutFile,
// the lock operations, PutRelativeFile), on an EditorSession. A WOPI lock is
// the drive lock of kind editor on the file whose OwnerInfo is the editor's
// lock id: the file mount and the REST API refuse writes by anyone else while
// it lives (423), and the editor proves it holds the lock by its id.

// LockMismatch is a WOPI lock conflict (409 with X-WOPI-Lock): Current is the
// file's editor lock id, empty when the file is unlocked or locked by another
// client (a WebDAV lock); Held is set when a lock stands in the way (another
// editor session's or another client's), not when the file is unlocked.
type LockMismatch struct {
	Current string
	Reason  string
	Held    bool
}

func (e *LockMismatch) Error() string { return "lock mismatch: " + e.Reason }

// Unwrap makes a mismatch locked for app.ErrorCode when a lock is held by
// another (as at every other door), else a conflict.
func (e *LockMismatch) Unwrap() error {
	if e.Held {
		return &app.Error{Code: app.ELocked, Message: e.Reason}
	}
	return &app.Error{Code: app.EConflict, Message: e.Reason}
}

// DocumentChanged is the answer to a PutFile whose editor loaded an older
// state of the file than the current one (Collabora's X-COOL-WOPI-Timestamp).
type DocumentChanged struct{ Modified time.Time }

func (e *DocumentChanged) Error() string {
	return "the document was changed since the editor loaded it"
}

// Unwrap makes a change a conflict for app.ErrorCode.
func (e *DocumentChanged) Unwrap() error { return &app.Error{Code: app.EConflict, Message: e.Error()} }

// RelativeTargetTaken answers PutRelativeFile with an exact name that is taken
// (409 with X-WOPI-ValidRelativeTarget: Valid, a free name).
type RelativeTargetTaken struct{ Valid string }

func (e *RelativeTargetTaken) Error() string {
	return fmt.Sprintf("the name is taken; %q is free", e.Valid)
}

// Unwrap makes a taken name a conflict for app.ErrorCode.
func (e *RelativeTargetTaken) Unwrap() error {
	return &app.Error{Code: app.EConflict, Message: e.Error()}
}

// WOPITime formats t as WOPI's LastModifiedTime (ISO 8601, UTC, milliseconds).
func WOPITime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// WOPIFileInfo is the CheckFileInfo answer.
type WOPIFileInfo struct {
	BaseFileName            string `json:"BaseFileName"`
	OwnerID                 string `json:"OwnerId"`
	Size                    int64  `json:"Size"`
	UserID                  string `json:"UserId"`
	UserFriendlyName        string `json:"UserFriendlyName"`
	Version                 string `json:"Version"`
	SHA256                  string `json:"SHA256,omitempty"`
	LastModifiedTime        string `json:"LastModifiedTime"`
	FileExtension           string `json:"FileExtension,omitempty"`
	UserCanWrite            bool   `json:"UserCanWrite"`
	ReadOnly                bool   `json:"ReadOnly"`
	UserCanNotWriteRelative bool   `json:"UserCanNotWriteRelative"`
	UserCanRename           bool   `json:"UserCanRename"`
	SupportsLocks           bool   `json:"SupportsLocks"`
	SupportsGetLock         bool   `json:"SupportsGetLock"`
	SupportsExtendedLock    bool   `json:"SupportsExtendedLockLength"`
	SupportsUpdate          bool   `json:"SupportsUpdate"`
	SupportsRename          bool   `json:"SupportsRename"`
	SupportsDeleteFile      bool   `json:"SupportsDeleteFile"`
	IsAnonymousUser         bool   `json:"IsAnonymousUser"`
	PostMessageOrigin       string `json:"PostMessageOrigin,omitempty"`
}

// sessionFile loads the session's file, as the session's principal sees it.
func (e *Editing) sessionFile(ctx context.Context, es *EditorSession, write bool) (File, error) {
	if write && !es.CanWrite() {
		return File{}, app.Errorf(app.EForbidden, "This editor session may only view the file.")
	}
	if es.Guest {
		f, err := e.core.store.File(ctx, es.FileID)
		if app.ErrorCode(err) == app.ENotFound {
			return File{}, notFound()
		}
		if err != nil {
			return File{}, err
		}
		f.Permission = es.perm
		return f, editable(f)
	}
	need := PermView
	if write {
		need = PermEdit
	}
	f, err := e.core.access(ctx, es.p, es.FileID, need)
	if err != nil {
		return File{}, err
	}
	return f, editable(f)
}

// WOPICheckFileInfo describes the session's file to the editor. Errors:
// not_found (the file is gone or the user can no longer see it), conflict (a
// folder, an item in the trash, a pending upload, an archived file).
func (e *Editing) WOPICheckFileInfo(ctx context.Context, es *EditorSession) (WOPIFileInfo, error) {
	f, err := e.sessionFile(ctx, es, false)
	if err != nil {
		return WOPIFileInfo{}, err
	}
	e.see(ctx, es)
	info := WOPIFileInfo{BaseFileName: f.Name, OwnerID: f.OwnerID, Size: f.SizeBytes, UserID: es.p.UserID,
		Version: fmt.Sprint(f.Version), LastModifiedTime: WOPITime(f.UpdatedAt), UserCanWrite: es.CanWrite(), ReadOnly: !es.CanWrite(),
		UserCanNotWriteRelative: es.Guest || !es.CanWrite(), SupportsLocks: true, SupportsGetLock: true, SupportsExtendedLock: true,
		SupportsUpdate: true, IsAnonymousUser: es.Guest, PostMessageOrigin: origin(e.core.opts.PublicURL)}
	if ext := fileExt(f.Name); ext != "" {
		info.FileExtension = "." + ext
	}
	if raw, err := hex.DecodeString(f.Hash()); err == nil && len(raw) == 32 {
		info.SHA256 = base64.StdEncoding.EncodeToString(raw)
	}
	info.UserFriendlyName = "Guest"
	if es.Guest {
		info.UserID = es.user
	} else if pr, err := e.core.store.Editors(ctx, es.FileID, time.Time{}); err == nil {
		for _, u := range pr {
			if u.UserID == es.p.UserID && u.Name != "" {
				info.UserFriendlyName = u.Name
			}
		}
	}
	return info, nil
}

func origin(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// WOPIOpen returns the content of the session's file (GetFile). Errors:
// not_found (the file is gone or the user can no longer see it), conflict (a
// folder, an item in the trash, a pending upload, an archived file, a file not
// active).
func (e *Editing) WOPIOpen(ctx context.Context, es *EditorSession) (File, io.ReadSeekCloser, error) {
	f, err := e.sessionFile(ctx, es, false)
	if err != nil {
		return File{}, nil, err
	}
	e.see(ctx, es)
	return e.core.openFile(ctx, f)
}

// editorLocks returns the editor lock on fileID itself (nil when none) and
// the other live locks covering it (WebDAV locks, deep locks above it).
func (e *Editing) editorLocks(ctx context.Context, fileID string) (*Lock, []Lock, error) {
	ls, err := e.core.store.LocksOn(ctx, fileID, false, e.core.clock.Now())
	if err != nil {
		return nil, nil, err
	}
	var ed *Lock
	var others []Lock
	for i, l := range ls {
		if l.Kind == LockKindEditor && l.FileID == fileID && ed == nil {
			ed = &ls[i]
			continue
		}
		others = append(others, l)
	}
	return ed, others, nil
}

func mismatch(ed *Lock, others []Lock) error {
	if ed != nil {
		return &LockMismatch{Current: ed.OwnerInfo, Reason: "The file is locked by another editor session.", Held: true}
	}
	if len(others) > 0 {
		return &LockMismatch{Reason: "The file is locked by another client (a WebDAV lock).", Held: true}
	}
	return &LockMismatch{Reason: "The file is not locked."}
}

func checkWOPILock(lock string) error {
	if lock == "" || len(lock) > maxWOPILock {
		return app.Errorf(app.EBadRequest, "X-WOPI-Lock must hold a lock id of 1 to %d bytes.", maxWOPILock)
	}
	return nil
}

// WOPIGetLock returns the file's editor lock id, "" when it is unlocked; a
// file locked by another client → LockMismatch with an empty id. Errors:
// not_found (the file is gone or the user can no longer see it), conflict (a
// folder, an item in the trash, a pending upload, an archived file), locked
// (another client's lock).
func (e *Editing) WOPIGetLock(ctx context.Context, es *EditorSession) (string, error) {
	if _, err := e.sessionFile(ctx, es, false); err != nil {
		return "", err
	}
	ed, others, err := e.editorLocks(ctx, es.FileID)
	if err != nil {
		return "", err
	}
	if ed != nil {
		return ed.OwnerInfo, nil
	}
	if len(others) > 0 {
		return "", mismatch(nil, others)
	}
	return "", nil
}

// WOPILock locks the file for the editor with lock id lock (WOPI Lock): an
// unlocked file is locked for 30 minutes; the same id refreshes the lock;
// another id, or another client's lock → LockMismatch. With oldLock it is
// UnlockAndRelock: the lock oldLock is replaced by lock, else LockMismatch.
// Errors: bad_request (a lock id empty or over 1024 bytes), forbidden (a
// view-only session or share), not_found (the file is gone or the user can no
// longer see it), conflict (a folder, an item in the trash, a pending upload,
// an archived file, oldLock on an unlocked file), locked (another editor
// session's or client's lock).
func (e *Editing) WOPILock(ctx context.Context, es *EditorSession, lock, oldLock string) error {
	if err := checkWOPILock(lock); err != nil {
		return err
	}
	if _, err := e.sessionFile(ctx, es, true); err != nil {
		return err
	}
	e.see(ctx, es)
	now := e.core.clock.Now()
	return e.core.store.InTx(ctx, func(ctx context.Context) error {
		ed, others, err := e.editorLocks(ctx, es.FileID)
		if err != nil {
			return err
		}
		switch {
		case oldLock != "":
			if ed == nil || ed.OwnerInfo != oldLock {
				return mismatch(ed, others)
			}
			if err := e.core.store.DeleteLock(ctx, ed.Token); err != nil {
				return err
			}
			l := *ed
			l.OwnerInfo, l.ExpiresAt = lock, now.Add(DefaultLockTTL)
			return e.core.store.AddLock(ctx, l)
		case ed != nil && ed.OwnerInfo == lock:
			return e.core.store.SetLockExpiry(ctx, ed.Token, now.Add(DefaultLockTTL))
		case ed != nil || len(others) > 0:
			return mismatch(ed, others)
		}
		l := Lock{FileID: es.FileID, Token: LockTokenPrefix + app.NewID(), OwnerID: es.p.UserID, Kind: LockKindEditor,
			OwnerInfo: lock, ExpiresAt: now.Add(DefaultLockTTL), CreatedAt: now}
		return e.core.store.AddLock(ctx, l)
	})
}

// WOPIRefreshLock extends the editor lock lock by 30 minutes; another or no
// lock → LockMismatch. Errors: bad_request (a lock id empty or over 1024
// bytes), forbidden (a view-only session or share), not_found (the file is gone
// or the user can no longer see it), conflict (a folder, an item in the trash,
// a pending upload, an archived file, an unlocked file), locked (another editor
// session's or client's lock).
func (e *Editing) WOPIRefreshLock(ctx context.Context, es *EditorSession, lock string) error {
	if err := checkWOPILock(lock); err != nil {
		return err
	}
	if _, err := e.sessionFile(ctx, es, true); err != nil {
		return err
	}
	e.see(ctx, es)
	return e.core.store.InTx(ctx, func(ctx context.Context) error {
		ed, others, err := e.editorLocks(ctx, es.FileID)
		if err != nil {
			return err
		}
		if ed == nil || ed.OwnerInfo != lock {
			return mismatch(ed, others)
		}
		return e.core.store.SetLockExpiry(ctx, ed.Token, e.core.clock.Now().Add(DefaultLockTTL))
	})
}

// WOPIUnlock releases the editor lock lock, ending the edit session; another
// or no lock → LockMismatch. Errors: bad_request (a lock id empty or over 1024
// bytes), forbidden (a view-only session or share), not_found (the file is gone
// or the user can no longer see it), conflict (a folder, an item in the trash,
// a pending upload, an archived file, an unlocked file), locked (another editor
// session's or client's lock).
func (e *Editing) WOPIUnlock(ctx context.Context, es *EditorSession, lock string) error {
	if err := checkWOPILock(lock); err != nil {
		return err
	}
	if _, err := e.sessionFile(ctx, es, true); err != nil {
		return err
	}
	err := e.core.store.InTx(ctx, func(ctx context.Context) error {
		ed, others, err := e.editorLocks(ctx, es.FileID)
		if err != nil {
			return err
		}
		if ed == nil || ed.OwnerInfo != lock {
			return mismatch(ed, others)
		}
		return e.core.store.DeleteLock(ctx, ed.Token)
	})
	if err == nil {
		err = e.core.store.DropEditors(ctx, es.FileID)
	}
	return err
}

// WOPIPut is the content of a PutFile.
type WOPIPut struct {
	// Lock is X-WOPI-Lock.
	Lock string
	Body io.Reader
	// Size is the body's length, -1 when unknown.
	Size int64
	// LoadedAt, when not zero, is the LastModifiedTime the editor loaded
	// (X-COOL-WOPI-Timestamp): a file changed since → DocumentChanged.
	LoadedAt time.Time
}

// WOPIPutFile stores a new version of the session's file through Put (quota,
// versions, events, sync feed; a version records its author, the audit log
// does not). The file must be locked with w.Lock
// (LockMismatch otherwise), or be unlocked and empty (a new document). Errors:
// forbidden (a view-only session or share), not_found (the file is gone or the
// user can no longer see it), conflict (a folder, an item in the trash, a
// pending upload, an archived file, an unlocked file that is not empty, a file
// changed since LoadedAt), locked (another editor session's or client's lock),
// quota_exceeded, payload_too_large (over the upload cap), bad_request (an
// incomplete body).
func (e *Editing) WOPIPutFile(ctx context.Context, es *EditorSession, w WOPIPut) (File, error) {
	f, err := e.sessionFile(ctx, es, true)
	if err != nil {
		return File{}, err
	}
	e.see(ctx, es)
	ed, others, err := e.editorLocks(ctx, es.FileID)
	if err != nil {
		return File{}, err
	}
	// The editor holds a lock by its WOPI lock id only, never by its user.
	ctx = withoutUserLocks(ctx)
	switch {
	case ed != nil && ed.OwnerInfo == w.Lock:
		ctx = withHeldLock(ctx, ed.Token)
	case ed != nil || len(others) > 0 || f.SizeBytes != 0:
		return File{}, mismatch(ed, others)
	}
	if !w.LoadedAt.IsZero() && !w.LoadedAt.Truncate(time.Millisecond).Equal(f.UpdatedAt.Truncate(time.Millisecond)) {
		return File{}, &DocumentChanged{Modified: f.UpdatedAt}
	}
	out, _, err := e.core.Put(ctx, es.p, PutRequest{FileID: f.ID, Size: w.Size, Body: w.Body})
	return out, err
}

// WOPIRelative is a PutRelativeFile: a new file beside the session's file.
type WOPIRelative struct {
	// Name is the target (decoded X-WOPI-SuggestedTarget or
	// X-WOPI-RelativeTarget); a suggestion starting with "." is an extension.
	Name string
	// Exact is X-WOPI-RelativeTarget: the name must be used as is.
	Exact bool
	// Overwrite is X-WOPI-OverwriteRelativeTarget.
	Overwrite bool
	Body      io.Reader
	Size      int64
}

// WOPIPutRelativeFile stores a new file beside the session's file (in the
// caller's root when they may not add to that folder) and returns it with an
// access token for it. A suggested name is made free ("name (1).ext"); an
// exact name that is taken → RelativeTargetTaken unless Overwrite, and a
// locked one → LockMismatch. Not through shared links (forbidden). Errors:
// forbidden (a shared-link or view-only session), not_found (the file is gone
// or the user can no longer see it), conflict (a folder, an item in the trash,
// a pending upload, an archived file, an exact name that is taken without
// Overwrite, no free name), validation_failed (the name), locked (a lock on the
// target), quota_exceeded, payload_too_large (over the upload cap), bad_request
// (an incomplete body).
func (e *Editing) WOPIPutRelativeFile(ctx context.Context, es *EditorSession, r WOPIRelative) (File, string, error) {
	if es.Guest {
		return File{}, "", app.Errorf(app.EForbidden, "A shared-link session cannot save other files.")
	}
	if !es.CanWrite() {
		return File{}, "", app.Errorf(app.EForbidden, "This editor session may only view the file.")
	}
	src, err := e.sessionFile(ctx, es, false)
	if err != nil {
		return File{}, "", err
	}
	name := r.Name
	if !r.Exact && strings.HasPrefix(name, ".") {
		base := src.Name
		if ext := fileExt(base); ext != "" {
			base = strings.TrimSuffix(base, "."+ext)
		}
		name = base + name
	}
	name, err = CleanName("header.X-WOPI-RelativeTarget", name)
	if err != nil {
		return File{}, "", err
	}
	parentID := e.besideFolder(ctx, es.p, src)
	var parent *File
	if parentID != "" {
		if parent, err = e.core.parentFolder(ctx, es.p, parentID, "parent_id"); err != nil {
			return File{}, "", err
		}
	}
	owner := e.core.owner(es.p, parent)
	existing, err := e.core.store.LiveChild(ctx, owner, parentID, NameKey(name))
	switch {
	case err == nil && (!r.Exact || existing.IsFolder):
		if name, err = e.core.freeName(ctx, owner, parentID, name); err != nil {
			return File{}, "", err
		}
	case err == nil && !r.Overwrite:
		free, err := e.core.freeName(ctx, owner, parentID, name)
		if err != nil {
			return File{}, "", err
		}
		return File{}, "", &RelativeTargetTaken{Valid: free}
	case err == nil:
		ed, others, err := e.editorLocks(ctx, existing.ID)
		if err != nil {
			return File{}, "", err
		}
		if ed != nil || len(others) > 0 {
			return File{}, "", mismatch(ed, others)
		}
	case app.ErrorCode(err) != app.ENotFound:
		return File{}, "", err
	}
	f, _, err := e.core.Put(withoutUserLocks(ctx), es.p, PutRequest{ParentID: parentID, Name: name, Size: r.Size, Body: r.Body})
	if err != nil {
		return File{}, "", err
	}
	tok, _, err := e.issueEditorToken(editorClaims{FileID: f.ID, UserID: es.p.UserID, OrgID: es.p.OrgID, Perm: PermEdit})
	if err != nil {
		return File{}, "", err
	}
	return f, tok, nil
}

// besideFolder returns where a file derived from f goes: f's folder when the
// caller owns f or may add to that folder, else the caller's root ("").
func (e *Editing) besideFolder(ctx context.Context, p *app.Principal, f File) string {
	if f.OwnerID == p.UserID || f.Parent() == "" {
		if f.OwnerID == p.UserID {
			return f.Parent()
		}
		return ""
	}
	if _, err := e.core.parentFolder(ctx, p, f.Parent(), "parent_id"); err != nil {
		return ""
	}
	return f.Parent()
}
