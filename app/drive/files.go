package drive

// Files and folders: create a folder, details, rename, move, copy (also
// onto an existing item: MoveOver, CopyOver), favourites, metadata. Each
// change runs in writeTx (write.go) with its lock checks inside.

import (
	"context"
	"fmt"
	"strings"

	"atrium/app"
)

// CreateFolder creates a folder in parentID ("" is the root). Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// validation_failed (the name, a parent that is a file), not_found (no such
// parent folder, or it is in the trash), forbidden (a parent shared for
// viewing), locked (a lock on the parent the caller does not hold), conflict
// (an item of that name exists).
func (s *Service) CreateFolder(ctx context.Context, p *app.Principal, name, parentID string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	name, err := CleanName("body.name", name)
	if err != nil {
		return File{}, err
	}
	parent, err := s.parentFolder(ctx, p, parentID, "body.parent_id")
	if err != nil {
		return File{}, err
	}
	if err := s.checkFolderLock(ctx, p, parentID); err != nil {
		return File{}, err
	}
	now := s.clock.Now()
	f := File{ID: app.NewID(), OrgID: p.OrgID, OwnerID: s.owner(p, parent), ParentID: strPtr(parentID), Name: name, IsFolder: true,
		MimeType: FolderMime, MimeGroup: "other", Status: StatusActive, Metadata: Metadata{Tags: []string{}, Custom: map[string]string{}},
		CreatedAt: now, UpdatedAt: now}
	err = s.writeTx(ctx, func(ctx context.Context) error {
		if err := s.checkFolderLock(ctx, p, parentID); err != nil {
			return err
		}
		if err := s.change(ctx, &f); err != nil {
			return err
		}
		if err := s.store.CreateFile(ctx, f); err != nil {
			if app.ErrorCode(err) == app.EConflict {
				return nameConflict(name)
			}
			return err
		}
		return s.emit(ctx, EventFileCreated, f, map[string]any{"parent_id": f.ParentID, "is_folder": true})
	})
	if err != nil {
		return File{}, err
	}
	return s.reload(ctx, p, f.ID)
}

func (s *Service) reload(ctx context.Context, p *app.Principal, id string) (File, error) {
	return s.access(ctx, p, id, PermView)
}

// Detail returns an item the caller may see. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan, not_found (no such item, or
// not shared with the caller).
func (s *Service) Detail(ctx context.Context, p *app.Principal, id string) (File, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return File{}, err
	}
	return s.access(ctx, p, id, PermView)
}

// update loads id with need, applies fn inside a transaction, stamps the change
// and emits drive.file.updated with change.
func (s *Service) update(ctx context.Context, p *app.Principal, id, need, change string, fn func(ctx context.Context, f *File) error) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	if _, err := s.access(ctx, p, id, need); err != nil {
		return File{}, err
	}
	err := s.writeTx(ctx, func(ctx context.Context) error {
		f, err := s.store.File(ctx, id)
		if err != nil {
			return err
		}
		if f.Status == StatusPending {
			return app.Errorf(app.EConflict, "The upload of %q is not confirmed yet.", f.Name)
		}
		from := f.Parent()
		if err := fn(ctx, &f); err != nil {
			return err
		}
		f.UpdatedAt = s.clock.Now()
		if err := s.change(ctx, &f); err != nil {
			return err
		}
		if err := s.leave(ctx, f, from); err != nil {
			return err
		}
		if err := s.store.UpdateFile(ctx, f); err != nil {
			if app.ErrorCode(err) == app.EConflict {
				return nameConflict(f.Name)
			}
			return err
		}
		return s.emit(ctx, EventFileUpdated, f, map[string]any{"change": change, "parent_id": f.ParentID})
	})
	if err != nil {
		return File{}, err
	}
	return s.reload(ctx, p, id)
}

// Rename renames an item; a live sibling of the same name (any case) → conflict.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, validation_failed (the name), not_found (no such item,
// or not shared with the caller), forbidden (an item shared for viewing),
// conflict (a pending upload, an item in the trash, a sibling of that name),
// locked (a lock the caller does not hold).
func (s *Service) Rename(ctx context.Context, p *app.Principal, id, name string) (File, error) {
	name, err := CleanName("body.name", name)
	if err != nil {
		return File{}, err
	}
	return s.update(ctx, p, id, PermEdit, "renamed", func(ctx context.Context, f *File) error {
		if f.TrashedAt != nil {
			return app.Errorf(app.EConflict, "%q is in the trash; restore it first.", f.Name)
		}
		if err := s.checkLock(ctx, p, f.ID); err != nil {
			return err
		}
		if NameKey(name) != NameKey(f.Name) {
			if _, err := s.store.LiveChild(ctx, f.OwnerID, f.Parent(), NameKey(name)); err == nil {
				return nameConflict(name)
			}
		}
		f.Name = name
		if !f.IsFolder && f.MimeType == "application/octet-stream" {
			f.MimeType = DetectMime(name, "")
		}
		return nil
	})
}

// Move moves an item into targetID ("" is the root); never into itself or below.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, not_found (no such item or target folder, or not shared
// with the caller), forbidden (an item the caller does not own, a target shared
// for viewing), validation_failed (a target that is a file, in another owner's
// drive, or the item itself or below it), conflict (a pending upload, an item
// in the trash, a sibling of that name in the target), locked (a lock on the
// item or the target the caller does not hold).
func (s *Service) Move(ctx context.Context, p *app.Principal, id, targetID string) (File, error) {
	return s.move(ctx, p, id, targetID, "", "body.target_folder_id")
}

// move moves an item into targetID, renamed to name unless name is empty;
// location names the target in errors.
func (s *Service) move(ctx context.Context, p *app.Principal, id, targetID, name, location string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	target, err := s.parentFolder(ctx, p, targetID, location)
	if err != nil {
		return File{}, err
	}
	return s.update(ctx, p, id, PermOwner, "moved", func(ctx context.Context, f *File) error {
		if f.TrashedAt != nil {
			return app.Errorf(app.EConflict, "%q is in the trash; restore it first.", f.Name)
		}
		if err := s.checkLock(ctx, p, f.ID); err != nil {
			return err
		}
		if err := s.checkFolderLock(ctx, p, targetID); err != nil {
			return err
		}
		if target != nil {
			if target.OwnerID != f.OwnerID {
				return app.Invalid(location, "Items move within their owner's drive only; copy them instead.", targetID)
			}
			anc, err := s.store.Ancestors(ctx, target.ID)
			if err != nil {
				return err
			}
			for _, a := range append(anc, *target) {
				if a.ID == f.ID {
					return app.Invalid(location, "A folder cannot be moved into itself or one of its own subfolders.", targetID)
				}
			}
		}
		if name == "" {
			name = f.Name
		}
		if f.Parent() == targetID && name == f.Name {
			return nil
		}
		if other, err := s.store.LiveChild(ctx, f.OwnerID, targetID, NameKey(name)); err == nil && other.ID != f.ID {
			return nameConflict(name)
		}
		f.ParentID, f.Name = strPtr(targetID), name
		if !f.IsFolder && f.MimeType == "application/octet-stream" {
			f.MimeType = DetectMime(name, "")
		}
		return nil
	})
}

// ToggleFavorite flips the favorite mark. Errors: insufficient_scope (no
// drive:write), no_bound_user, feature_not_in_plan, not_found (no such item, or
// not shared with the caller), forbidden (an item the caller does not own),
// conflict (a pending upload).
func (s *Service) ToggleFavorite(ctx context.Context, p *app.Principal, id string) (File, error) {
	return s.update(ctx, p, id, PermOwner, "favorite", func(_ context.Context, f *File) error {
		f.IsFavorite = !f.IsFavorite
		return nil
	})
}

// MetadataUpdate changes what is given (FileMetadataUpdate).
type MetadataUpdate struct {
	Description *string
	Tags        *[]string
	Custom      *map[string]string
	IsFavorite  *bool
}

// UpdateMetadata changes an item's description, tags, custom fields or favorite mark.
// Errors: validation_failed (the description, a tag, a custom field),
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), forbidden (an item
// shared for viewing), conflict (a pending upload), locked (a lock the caller
// does not hold).
func (s *Service) UpdateMetadata(ctx context.Context, p *app.Principal, id string, m MetadataUpdate) (File, error) {
	var v app.Validator
	if m.Description != nil {
		v.Check(len(*m.Description) <= 10000, "body.description", "The description is at most 10,000 bytes.", nil)
	}
	if m.Tags != nil {
		v.Check(len(*m.Tags) <= 100, "body.tags", "At most 100 tags.", len(*m.Tags))
		for i, t := range *m.Tags {
			v.Check(strings.TrimSpace(t) != "" && len(t) <= 100, fmt.Sprintf("body.tags[%d]", i), "A tag is 1 to 100 bytes.", t)
		}
	}
	if m.Custom != nil {
		v.Check(len(*m.Custom) <= 100, "body.custom", "At most 100 custom fields.", len(*m.Custom))
		for k, val := range *m.Custom {
			v.Check(k != "" && len(k) <= 100 && len(val) <= 1000, "body.custom."+k, "A custom key is 1 to 100 bytes, its value at most 1,000.", nil)
		}
	}
	if err := v.Err(); err != nil {
		return File{}, err
	}
	return s.update(ctx, p, id, PermEdit, "metadata", func(ctx context.Context, f *File) error {
		if err := s.checkLock(ctx, p, f.ID); err != nil {
			return err
		}
		if m.Description != nil {
			f.Metadata.Description = *m.Description
		}
		if m.Tags != nil {
			tags := []string{}
			seen := map[string]bool{}
			for _, t := range *m.Tags {
				t = strings.TrimSpace(t)
				if !seen[t] {
					seen[t] = true
					tags = append(tags, t)
				}
			}
			f.Metadata.Tags = tags
		}
		if m.Custom != nil {
			f.Metadata.Custom = *m.Custom
		}
		if m.IsFavorite != nil {
			f.IsFavorite = *m.IsFavorite
		}
		return nil
	})
}

// CommentsChannel returns the file's comments channel id, creating it on first call.
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan, not_found (no such item, or not shared with the caller).
func (s *Service) CommentsChannel(ctx context.Context, p *app.Principal, id string) (map[string]string, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return nil, err
	}
	if f.CommentsChannel == "" {
		err = s.store.InTx(ctx, func(ctx context.Context) error {
			cur, err := s.store.File(ctx, id)
			if err != nil {
				return err
			}
			if cur.CommentsChannel == "" {
				cur.CommentsChannel = app.NewID()
				if err := s.store.UpdateFile(ctx, cur); err != nil {
					return err
				}
			}
			f.CommentsChannel = cur.CommentsChannel
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return map[string]string{"file_id": f.ID, "channel_id": f.CommentsChannel}, nil
}

// Copy copies an item (a folder with everything live in it) into targetID, or
// beside the original when targetID is empty; a taken name gets a number.
// Content is shared: the copy refers to the same blobs. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// not_found (no such item or target folder, or not shared with the caller),
// forbidden (a target shared for viewing), validation_failed (a target that is
// a file, a folder copied into itself), conflict (a pending upload or an item
// in the trash, no free name), locked (a lock on the target the caller does not
// hold), quota_exceeded.
func (s *Service) Copy(ctx context.Context, p *app.Principal, id, targetID string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	src, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return File{}, err
	}
	if src.Status == StatusPending || src.TrashedAt != nil {
		return File{}, app.Errorf(app.EConflict, "Only live, confirmed items can be copied.")
	}
	var target *File
	if targetID == "" && src.OwnerID == p.UserID {
		targetID = src.Parent()
	}
	if target, err = s.parentFolder(ctx, p, targetID, "query.target_folder_id"); err != nil {
		return File{}, err
	}
	if err := s.checkFolderLock(ctx, p, targetID); err != nil {
		return File{}, err
	}
	owner := s.owner(p, target)
	var newID string
	err = s.writeTx(ctx, func(ctx context.Context) error {
		if err := s.checkFolderLock(ctx, p, targetID); err != nil {
			return err
		}
		items := []File{src}
		if src.IsFolder {
			if target != nil {
				anc, err := s.store.Ancestors(ctx, target.ID)
				if err != nil {
					return err
				}
				for _, a := range append(anc, *target) {
					if a.ID == src.ID {
						return app.Invalid("query.target_folder_id", "A folder cannot be copied into itself.", targetID)
					}
				}
			}
			sub, err := s.store.Subtree(ctx, src.ID, true)
			if err != nil {
				return err
			}
			items = append(items, sub...)
		}
		var total int64
		for _, it := range items {
			if !it.IsFolder {
				total += it.SizeBytes
			}
		}
		if err := s.quota(ctx, p, total); err != nil {
			return err
		}
		name, err := s.freeName(ctx, owner, targetID, src.Name)
		if err != nil {
			return err
		}
		ids := map[string]string{}
		now := s.clock.Now()
		for i, it := range items {
			if it.Status == StatusPending {
				continue
			}
			c := it
			c.ID = app.NewID()
			ids[it.ID] = c.ID
			c.OwnerID, c.OrgID = owner, p.OrgID
			c.IsFavorite, c.CommentsChannel, c.TrashedAt, c.TrashRoot, c.TrashParentID = false, "", nil, "", ""
			c.CreatedAt, c.UpdatedAt = now, now
			if i == 0 {
				c.Name, c.ParentID = name, strPtr(targetID)
			} else {
				np, ok := ids[it.Parent()]
				if !ok {
					continue // under a pending or skipped item
				}
				c.ParentID = &np
			}
			if !c.IsFolder {
				c.Version, c.StoredBytes = 1, c.SizeBytes
			}
			if err := s.change(ctx, &c); err != nil {
				return err
			}
			if err := s.store.CreateFile(ctx, c); err != nil {
				return err
			}
			if !c.IsFolder {
				if err := s.store.AddVersion(ctx, Version{ID: app.NewID(), FileID: c.ID, Version: 1, SizeBytes: c.SizeBytes,
					ContentHash: c.ContentHash, MimeType: c.MimeType, CreatedBy: p.UserID, CreatedAt: now}); err != nil {
					return err
				}
				if err := s.store.AddUsage(ctx, c.OrgID, c.OwnerID, c.MimeGroup, c.SizeBytes, 1); err != nil {
					return err
				}
			}
			if err := s.emit(ctx, EventFileCreated, c, map[string]any{"parent_id": c.ParentID, "copied_from": it.ID, "is_folder": c.IsFolder}); err != nil {
				return err
			}
		}
		newID = ids[src.ID]
		return nil
	})
	if err != nil {
		return File{}, err
	}
	return s.reload(ctx, p, newID)
}

// Browse lists a folder ("" is the caller's root) with its breadcrumbs. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// validation_failed (a list parameter, a folderID that is a file), not_found
// (no such folder, or not shared with the caller, or in the trash).
func (s *Service) Browse(ctx context.Context, p *app.Principal, folderID string, lp ListParams) (FolderContents, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return FolderContents{}, err
	}
	q, err := lp.query(ListFolder)
	if err != nil {
		return FolderContents{}, err
	}
	q.OrgID, q.OwnerID, q.Now = p.OrgID, p.UserID, s.clock.Now()
	out := FolderContents{Breadcrumbs: []Breadcrumb{}}
	perm := PermOwner
	if folderID != "" {
		f, err := s.access(ctx, p, folderID, PermView)
		if err != nil {
			return FolderContents{}, err
		}
		if !f.IsFolder {
			return FolderContents{}, app.Invalid("path.folder_id", "This is a file, not a folder.", folderID)
		}
		if f.TrashedAt != nil {
			return FolderContents{}, app.Errorf(app.ENotFound, "The folder is in the trash.")
		}
		anc, err := s.store.Ancestors(ctx, f.ID)
		if err != nil {
			return FolderContents{}, err
		}
		for _, a := range anc {
			out.Breadcrumbs = append(out.Breadcrumbs, Breadcrumb{ID: a.ID, Name: a.Name})
		}
		out.Breadcrumbs = append(out.Breadcrumbs, Breadcrumb{ID: f.ID, Name: f.Name})
		out.Folder = &f
		q.OwnerID, q.ParentID, perm = f.OwnerID, f.ID, f.Permission
	}
	items, total, err := s.store.List(ctx, q)
	if err != nil {
		return FolderContents{}, err
	}
	for i := range items {
		items[i].Permission = perm
	}
	out.Listing = makeListing(items, total, q)
	return out, nil
}

// TrashList lists the caller's trash (the items they trashed, not their contents).
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan, validation_failed (a list parameter).
func (s *Service) TrashList(ctx context.Context, p *app.Principal, lp ListParams) (Listing, error) {
	return s.list(ctx, p, ListTrash, lp, PermOwner)
}

// SharedWithMe lists the items shared with the caller by others. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// validation_failed (a list parameter).
func (s *Service) SharedWithMe(ctx context.Context, p *app.Principal, lp ListParams) (Listing, error) {
	return s.list(ctx, p, ListShared, lp, "")
}

// Favorites lists the caller's items marked favourite (ToggleFavorite), from
// anywhere in their drive: not trashed, uploads confirmed; folders first.
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan, validation_failed (a list parameter).
func (s *Service) Favorites(ctx context.Context, p *app.Principal, lp ListParams) (Listing, error) {
	return s.list(ctx, p, ListFavorites, lp, PermOwner)
}

func (s *Service) list(ctx context.Context, p *app.Principal, kind string, lp ListParams, perm string) (Listing, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return Listing{}, err
	}
	q, err := lp.query(kind)
	if err != nil {
		return Listing{}, err
	}
	q.OrgID, q.OwnerID, q.UserID, q.Now = p.OrgID, p.UserID, p.UserID, s.clock.Now()
	items, total, err := s.store.List(ctx, q)
	if err != nil {
		return Listing{}, err
	}
	if perm != "" {
		for i := range items {
			items[i].Permission = perm
		}
	}
	return makeListing(items, total, q), nil
}

// MoveOver is MoveTo that first puts item replaceID (the item the move
// replaces; "" for none) in the trash, all in one transaction: when the move
// is refused the replaced item stays where it was (WebDAV MOVE with
// Overwrite: T). Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, validation_failed (the name, the target), not_found (no
// such item, replaced item or target folder, or not shared with the caller),
// forbidden (a replaced item or a moved one the caller does not own, an item or
// target shared for viewing), conflict (a pending upload, an item in the trash,
// a sibling of that name), locked (a lock the caller does not hold).
func (s *Service) MoveOver(ctx context.Context, p *app.Principal, id, targetID, name, replaceID string) (File, error) {
	return s.replacing(ctx, p, replaceID, func(ctx context.Context) (File, error) {
		return s.MoveTo(ctx, p, id, targetID, name)
	})
}

// CopyOver is CopyTo that first puts item replaceID ("" for none) in the
// trash, in one transaction (WebDAV COPY with Overwrite: T). Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// validation_failed (the name, the target), not_found (no such item, replaced
// item or target folder, or not shared with the caller), forbidden (a replaced
// item the caller does not own, a target shared for viewing), conflict (a
// pending upload or an item in the trash, a sibling of that name, no free
// name), locked (a lock the caller does not hold), quota_exceeded.
func (s *Service) CopyOver(ctx context.Context, p *app.Principal, id, targetID, name string, shallow bool, replaceID string) (File, error) {
	return s.replacing(ctx, p, replaceID, func(ctx context.Context) (File, error) {
		return s.CopyTo(ctx, p, id, targetID, name, shallow)
	})
}

// replacing puts item replaceID ("" for none) in the trash and runs place, in
// one transaction.
func (s *Service) replacing(ctx context.Context, p *app.Principal, replaceID string, place func(context.Context) (File, error)) (File, error) {
	var out File
	err := s.writeTx(ctx, func(ctx context.Context) error {
		if replaceID != "" {
			if err := s.Trash(ctx, p, replaceID); err != nil {
				return err
			}
		}
		var err error
		out, err = place(ctx)
		return err
	})
	return out, err
}

// MoveTo moves an item into targetID ("" is the root) under a new name in one
// step (WebDAV MOVE): a rename when the folder stays, a move when the name does.
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, validation_failed (the name, the target), not_found (no
// such item or target folder, or not shared with the caller), forbidden (a
// moved item the caller does not own, an item or target shared for viewing),
// conflict (a pending upload, an item in the trash, a sibling of that name),
// locked (a lock the caller does not hold).
func (s *Service) MoveTo(ctx context.Context, p *app.Principal, id, targetID, name string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	name, err := CleanName("name", name)
	if err != nil {
		return File{}, err
	}
	cur, err := s.access(ctx, p, id, PermEdit)
	if err != nil {
		return File{}, err
	}
	if cur.Parent() == targetID {
		if name == cur.Name {
			return cur, nil
		}
		return s.Rename(ctx, p, id, name)
	}
	if name == cur.Name {
		return s.Move(ctx, p, id, targetID)
	}
	return s.move(ctx, p, id, targetID, name, "header.Destination")
}

// CopyTo copies an item into targetID ("" is the root) as name (WebDAV COPY);
// shallow copies a folder without its contents. Dead properties go with the
// copied item. Errors: validation_failed (the name, the target),
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// not_found (no such item or target folder, or not shared with the caller),
// forbidden (a target shared for viewing), conflict (a pending upload or an
// item in the trash, a sibling of that name, no free name), locked (a lock on
// the target the caller does not hold), quota_exceeded.
func (s *Service) CopyTo(ctx context.Context, p *app.Principal, id, targetID, name string, shallow bool) (File, error) {
	name, err := CleanName("name", name)
	if err != nil {
		return File{}, err
	}
	src, err := s.Detail(ctx, p, id)
	if err != nil {
		return File{}, err
	}
	// One transaction: a copy whose rename is refused leaves nothing behind.
	var c File
	err = s.writeTx(ctx, func(ctx context.Context) error {
		var err error
		if shallow && src.IsFolder {
			c, err = s.CreateFolder(ctx, p, name, targetID)
		} else {
			// Copy puts an owner's copy beside the original when targetID is
			// the root; it then moves to the root under its name.
			beside := targetID == "" && src.OwnerID == p.UserID && src.Parent() != ""
			if c, err = s.Copy(ctx, p, id, targetID); err == nil && (beside || c.Name != name) {
				c, err = s.MoveTo(ctx, p, c.ID, targetID, name)
			}
		}
		if err != nil {
			return err
		}
		if err := s.store.CopyDeadProps(ctx, src.ID, c.ID); err != nil {
			return fmt.Errorf("copy properties: %w", err)
		}
		return nil
	})
	if err != nil {
		return File{}, err
	}
	return c, nil
}
