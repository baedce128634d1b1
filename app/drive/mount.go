package drive

// The file mount's rules that are not protocol (WebDAV is in web/webdav):
// path resolution, folder listings by page, dead properties, set
// modification times.

import (
	"cmp"
	"context"
	"time"

	"atrium/app"
)

// DeadProp is a property a WebDAV client stored on an item: its XML namespace,
// local name and value (the property element's content as self-contained XML).
type DeadProp struct {
	Space string
	Name  string
	Value string
}

// MountStore is what the file mount needs beyond the drive's own queries.
type MountStore interface {
	// ResolvePath walks nameKeys (NameKey of each segment) from folder
	// parentID ("" is the root) of ownerID through live items and returns the
	// items found, in path order: fewer than len(nameKeys) when one is missing.
	ResolvePath(ctx context.Context, ownerID, parentID string, nameKeys []string) ([]File, error)
	// DeadProps returns the dead properties of fileIDs by file id.
	DeadProps(ctx context.Context, fileIDs []string) (map[string][]DeadProp, error)
	// PatchDeadProps stores set and removes remove (by Space and Name).
	PatchDeadProps(ctx context.Context, fileID string, set, remove []DeadProp) error
	// CopyDeadProps copies the dead properties of one item to another.
	CopyDeadProps(ctx context.Context, fromID, toID string) error
	// FolderSizes returns, for each of folderIDs, the bytes of the live
	// files below it at any depth.
	FolderSizes(ctx context.Context, folderIDs []string) (map[string]int64, error)
	// ShareKinds returns, for those of fileIDs that ownerID owns, the kinds
	// of their shares that have not expired at now, each kind once.
	ShareKinds(ctx context.Context, ownerID string, fileIDs []string, now time.Time) (map[string][]ShareKind, error)
	// Children returns up to limit live folders (folders) or files of folder
	// parentID ("" is the root) of ownerID after the key after, by name key
	// then id, with the columns a listing of the mount shows (no owner name,
	// no metadata, no organisation or version), and the key of the last one.
	// They are appended to buf[:0], whose array a listing reuses page after
	// page.
	Children(ctx context.Context, ownerID, parentID string, folders bool, after ChildKey, limit int, buf []File) ([]File, ChildKey, error)
	// SharedSince returns when the newest unexpired share with userID of a
	// live item was made, else when the user was created.
	SharedSince(ctx context.Context, orgID, userID string, now time.Time) (time.Time, error)
}

// ResolvePath returns the live items along names below folder parentID (""
// is the caller's own root), in path order: fewer than len(names) when one is
// missing (the last one returned is then the deepest existing folder). Every
// item carries the caller's permission. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan, not_found (no such folder
// parentID, or not shared with the caller, or a file, pending or in the trash).
func (s *Service) ResolvePath(ctx context.Context, p *app.Principal, parentID string, names []string) ([]File, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	owner, perm := p.UserID, PermOwner
	if parentID != "" {
		f, err := s.access(ctx, p, parentID, PermView)
		if err != nil {
			return nil, err
		}
		if !f.IsFolder || f.TrashedAt != nil || f.Status == StatusPending {
			return nil, notFound()
		}
		owner, perm = f.OwnerID, f.Permission
	}
	if len(names) == 0 {
		return []File{}, nil
	}
	items, err := s.store.ResolvePath(ctx, owner, parentID, nameKeys(names))
	if err != nil {
		return nil, err
	}
	for i := range items {
		if items[i].OrgID != p.OrgID {
			return nil, notFound()
		}
		items[i].Permission = perm
	}
	return items, nil
}

// nameKeys is NameKey of each of names.
func nameKeys(names []string) []string {
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = NameKey(n)
	}
	return keys
}

// folderAt returns the live folder at names below the caller's own root (nil:
// the root itself), for a new item called name (PutRequest.Folder): a name
// missing on the way or naming a file is a conflict.
func (s *Service) folderAt(ctx context.Context, p *app.Principal, names []string, name string) (*File, error) {
	if len(names) == 0 {
		return nil, nil
	}
	f, err := s.store.LiveItemAt(ctx, p.UserID, nameKeys(names))
	if err == nil && f.OrgID != p.OrgID {
		return nil, notFound()
	}
	if app.ErrorCode(err) == app.ENotFound || (err == nil && !f.IsFolder) {
		return nil, app.Errorf(app.EConflict, "The folder to put %q in does not exist.", name)
	}
	if err != nil {
		return nil, err
	}
	f.Permission = PermOwner
	return &f, nil
}

// ChildKey is where a listing of a folder's children stopped: the name key
// and id of the last item (zero: from the start).
type ChildKey struct{ NameKey, ID string }

// Children calls fn with the live items of folder folderID ("" is the
// caller's root) in batches, folders first, then by name; each item carries
// the caller's permission. It is Browse for the mount: no counts,
// breadcrumbs, owner names or metadata, and no page limit, so that a folder
// of 10,000 items lists in a few queries, each walking an index from where
// the last stopped. The batches share one array: fn must not keep its slice
// (or pointers into it) past its return. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan, not_found (no such folder,
// or not shared with the caller, or pending or in the trash), conflict (a
// file).
func (s *Service) Children(ctx context.Context, p *app.Principal, folderID string, fn func([]File) error) error {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return err
	}
	owner, perm := p.UserID, PermOwner
	if folderID != "" {
		f, err := s.access(ctx, p, folderID, PermView)
		if err != nil {
			return err
		}
		if !f.IsFolder {
			return app.Errorf(app.EConflict, "%q is a file, not a folder.", f.Name)
		}
		if f.TrashedAt != nil || f.Status == StatusPending {
			return notFound()
		}
		owner, perm = f.OwnerID, f.Permission
	}
	batch := cmp.Or(s.childBatch, 2000)
	var buf []File // one array for every page: a listing of 10,000 items allocates a page's worth
	for _, folders := range []bool{true, false} {
		var after ChildKey
		for {
			items, last, err := s.store.Children(ctx, owner, folderID, folders, after, batch, buf)
			if err != nil {
				return err
			}
			buf = items
			for i := range items {
				items[i].Permission = perm
			}
			if len(items) > 0 {
				if err := fn(items); err != nil {
					return err
				}
			}
			if len(items) < batch {
				break
			}
			after = last
		}
	}
	return nil
}

// DeadProps returns the dead properties of items the caller has listed. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan.
func (s *Service) DeadProps(ctx context.Context, p *app.Principal, fileIDs []string) (map[string][]DeadProp, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	return s.store.DeadProps(ctx, fileIDs)
}

// FolderSizes returns, for each of folders (items of a listing the caller
// was given), the bytes of the live files below it at any depth (the sync
// clients' oc:size of a folder). A folder's count is kept with its TreeSeq,
// which every change below it raises: one whose tree did not change since
// it was counted is not counted again, and a change deep down counts again
// only the folders above it. Errors: insufficient_scope (no drive:read),
// no_bound_user, feature_not_in_plan.
func (s *Service) FolderSizes(ctx context.Context, p *app.Principal, folders []File) (map[string]int64, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(folders))
	var todo []string
	seqs := make(map[string]int64, len(folders))
	for _, f := range folders {
		if !f.IsFolder {
			continue
		}
		if c, ok := s.folderSizes.Load(f.ID); ok && c.(folderSize).seq == f.TreeSeq {
			out[f.ID] = c.(folderSize).bytes
			continue
		}
		todo = append(todo, f.ID)
		seqs[f.ID] = f.TreeSeq
	}
	if len(todo) == 0 {
		return out, nil
	}
	counted, err := s.store.FolderSizes(ctx, todo)
	if err != nil {
		return nil, err
	}
	if s.folderSizeCount.Add(int64(len(todo))) > maxFolderSizes {
		s.folderSizes.Clear() // a bound, not a policy: most listings count again few folders
		s.folderSizeCount.Store(int64(len(todo)))
	}
	for _, id := range todo {
		out[id] = counted[id]
		s.folderSizes.Store(id, folderSize{seq: seqs[id], bytes: counted[id]})
	}
	return out, nil
}

// folderSize is a folder's counted bytes at its TreeSeq seq.
type folderSize struct{ seq, bytes int64 }

// maxFolderSizes bounds the folders whose counts a node keeps.
const maxFolderSizes = 200_000

// ShareKind is a kind of share, numbered as the sync clients' oc:share-types
// number them.
type ShareKind int

// The kinds of share.
const (
	ShareKindUser ShareKind = 0 // with one user
	ShareKindTeam ShareKind = 1 // with a team or the whole organisation (the clients' group)
	ShareKindLink ShareKind = 3 // by link
)

// ShareKinds returns, for those of fileIDs that the caller owns, the kinds of
// share they made of each that have not expired (what the sync clients show
// as a shared item). Items shared with the caller have none here. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan.
func (s *Service) ShareKinds(ctx context.Context, p *app.Principal, fileIDs []string) (map[string][]ShareKind, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	return s.store.ShareKinds(ctx, p.UserID, fileIDs, s.clock.Now())
}

// PropPatch stores and removes dead properties of an item the caller may edit.
// A property name is at most 255 bytes, a value at most 64 KiB, and an item
// carries at most 100 properties. Errors: insufficient_scope (no drive:write),
// no_bound_user, feature_not_in_plan, not_found (no such item, or not shared
// with the caller), forbidden (an item shared for viewing), payload_too_large
// (a name over 255 bytes, a value over 64 KiB, over 100 properties), locked (a
// lock the caller does not hold).
func (s *Service) PropPatch(ctx context.Context, p *app.Principal, fileID string, set, remove []DeadProp) error {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return err
	}
	if _, err := s.access(ctx, p, fileID, PermEdit); err != nil {
		return err
	}
	for _, d := range set {
		if len(d.Name) > 255 || len(d.Space) > 1024 || len(d.Value) > 64<<10 {
			return app.Errorf(app.EPayloadTooLarge, "A property name is at most 255 bytes and its value at most 64 KiB.")
		}
	}
	return s.writeTx(ctx, func(ctx context.Context) error {
		if err := s.checkLock(ctx, p, fileID); err != nil {
			return err
		}
		if err := s.store.PatchDeadProps(ctx, fileID, set, remove); err != nil {
			return err
		}
		all, err := s.store.DeadProps(ctx, []string{fileID})
		if err != nil {
			return err
		}
		if len(all[fileID]) > 100 {
			return app.Errorf(app.EPayloadTooLarge, "An item carries at most 100 properties.")
		}
		return nil
	})
}

// SetModified sets the modification time of an item the caller may edit
// (clients keep a file's time when they copy it in): its ModifiedAt, which
// the mount serves as getlastmodified; UpdatedAt becomes now, like any change.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, validation_failed (a time out of range), not_found (no
// such item, or not shared with the caller), forbidden (an item shared for
// viewing), locked (a lock the caller does not hold).
func (s *Service) SetModified(ctx context.Context, p *app.Principal, fileID string, t time.Time) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	if err := CheckModifiedTime("modified", t); err != nil {
		return File{}, err
	}
	if _, err := s.access(ctx, p, fileID, PermEdit); err != nil {
		return File{}, err
	}
	err := s.writeTx(ctx, func(ctx context.Context) error {
		f, err := s.store.File(ctx, fileID)
		if err != nil {
			return err
		}
		if err := s.checkLock(ctx, p, f.ID); err != nil {
			return err
		}
		f.ModifiedAt, f.UpdatedAt = t.UTC().Truncate(time.Millisecond), s.clock.Now()
		if err := s.change(ctx, &f); err != nil {
			return err
		}
		if err := s.store.UpdateFile(ctx, f); err != nil {
			return err
		}
		return s.emit(ctx, EventFileUpdated, f, map[string]any{"change": "modified", "parent_id": f.ParentID})
	})
	if err != nil {
		return File{}, err
	}
	return s.reload(ctx, p, fileID)
}

// LastChange returns the number of the last change in the caller's own
// drive (0: none yet): it changes whenever anything in it does, so the
// mount makes its root's entity tag of it. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan.
func (s *Service) LastChange(ctx context.Context, p *app.Principal) (int64, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return 0, err
	}
	seq, _, err := s.store.SyncSeq(ctx, p.UserID)
	return seq, err
}
