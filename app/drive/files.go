package drive

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"atrium/app"
)

// CreateFolder creates a folder in parentID ("" is the root).
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

// Detail returns an item the caller may see.
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
		if err := fn(ctx, &f); err != nil {
			return err
		}
		f.UpdatedAt = s.clock.Now()
		if err := s.change(ctx, &f); err != nil {
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

// ToggleFavorite flips the favorite mark.
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
// Content is shared: the copy refers to the same blobs.
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

// Trash moves an item (and what is in it) to the trash.
func (s *Service) Trash(ctx context.Context, p *app.Principal, id string) error {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return err
	}
	f, err := s.access(ctx, p, id, PermOwner)
	if err != nil {
		return err
	}
	if f.TrashedAt != nil {
		return nil // already there
	}
	if err := s.checkLock(ctx, p, f.ID); err != nil {
		return err
	}
	return s.writeTx(ctx, func(ctx context.Context) error {
		f, err := s.store.File(ctx, id)
		if err != nil {
			return err
		}
		if f.TrashedAt != nil {
			return nil
		}
		if err := s.checkLock(ctx, p, f.ID); err != nil {
			return err
		}
		items := []File{f}
		if f.IsFolder {
			sub, err := s.store.Subtree(ctx, f.ID, true)
			if err != nil {
				return err
			}
			items = append(items, sub...)
		}
		now := s.clock.Now()
		for i, it := range items {
			it.TrashedAt, it.TrashRoot = &now, f.ID
			if i == 0 {
				it.TrashParentID = it.Parent()
			}
			if err := s.change(ctx, &it); err != nil {
				return err
			}
			if err := s.store.UpdateFile(ctx, it); err != nil {
				return err
			}
		}
		if err := s.emit(ctx, EventFileUpdated, f, map[string]any{"change": "trashed", "parent_id": f.ParentID}); err != nil {
			return err
		}
		return s.record(ctx, p, "file.trashed", kind(f), f.ID)
	})
}

func kind(f File) string {
	if f.IsFolder {
		return "folder"
	}
	return "file"
}

// Restore brings a trashed item back into its folder, or the root when that
// folder is gone or trashed; a taken name gets a number.
func (s *Service) Restore(ctx context.Context, p *app.Principal, id string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	f, err := s.access(ctx, p, id, PermOwner)
	if err != nil {
		return File{}, err
	}
	if f.TrashedAt == nil {
		return File{}, app.Errorf(app.EConflict, "%q is not in the trash.", f.Name)
	}
	if f.TrashRoot != f.ID {
		return File{}, app.Errorf(app.EConflict, "%q went to the trash with its folder; restore that folder.", f.Name)
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		items, err := s.store.TrashedWith(ctx, f.OwnerID, f.ID)
		if err != nil {
			return err
		}
		parent := f.TrashParentID
		if parent != "" {
			pf, err := s.store.File(ctx, parent)
			if err != nil || pf.TrashedAt != nil || pf.OwnerID != f.OwnerID {
				parent = ""
			}
		}
		name, err := s.freeName(ctx, f.OwnerID, parent, f.Name)
		if err != nil {
			return err
		}
		// Parents first, so that the unique index sees a consistent tree.
		sort.SliceStable(items, func(i, j int) bool { return items[i].ID == f.ID && items[j].ID != f.ID })
		for _, it := range items {
			it.TrashedAt, it.TrashRoot, it.TrashParentID = nil, "", ""
			if it.ID == f.ID {
				it.Name, it.ParentID = name, strPtr(parent)
				it.UpdatedAt = s.clock.Now()
			}
			if err := s.change(ctx, &it); err != nil {
				return err
			}
			if err := s.store.UpdateFile(ctx, it); err != nil {
				return err
			}
		}
		return s.emit(ctx, EventFileUpdated, File{ID: f.ID, OrgID: f.OrgID, Name: name}, map[string]any{"change": "restored", "parent_id": strPtr(parent)})
	})
	if err != nil {
		return File{}, err
	}
	return s.reload(ctx, p, id)
}

// Delete removes an item and everything in it for good, in the trash or not.
func (s *Service) Delete(ctx context.Context, p *app.Principal, id string) error {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return err
	}
	f, err := s.access(ctx, p, id, PermOwner)
	if err != nil {
		return err
	}
	if err := s.checkLock(ctx, p, f.ID); err != nil {
		return err
	}
	return s.writeTx(ctx, func(ctx context.Context) error {
		if err := s.checkLock(ctx, p, f.ID); err != nil {
			return err
		}
		if err := s.purge(ctx, f); err != nil {
			return err
		}
		return s.record(ctx, p, "file.deleted", kind(f), f.ID)
	})
}

// EmptyTrash deletes everything in the caller's trash for good.
func (s *Service) EmptyTrash(ctx context.Context, p *app.Principal) error {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return err
	}
	for {
		items, _, err := s.store.List(ctx, Query{Kind: ListTrash, OrgID: p.OrgID, OwnerID: p.UserID, SortBy: "name", Limit: 200})
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		err = s.store.InTx(ctx, func(ctx context.Context) error {
			for _, it := range items {
				if err := s.purge(ctx, it); err != nil {
					return err
				}
			}
			return s.record(ctx, p, "trash.emptied", "trash", p.UserID)
		})
		if err != nil {
			return err
		}
	}
}

// DeleteUserData forgets the drive of a user being deleted, inside the
// caller's transaction: their items and versions, unfinished uploads, usage
// (the organisation's quota gets it back), sync feed and locks. Their blobs
// are freed by the collector after its grace period, their unfinished TUS
// bytes at the next upload sweep, and search forgets them when it reads the
// organization.user.deleted event. No drive.file.deleted event is emitted per
// item: organization.user.deleted says it for all of them.
func (s *Service) DeleteUserData(ctx context.Context, orgID, userID string) error {
	// The orphans are marked now: the collector judges them only after the
	// grace period, long after this transaction commits (as for purge).
	if err := s.store.DeleteOwner(ctx, userID, s.clock.Now()); err != nil {
		return fmt.Errorf("delete the drive of user %s: %w", userID, err)
	}
	return nil
}

// purge deletes f and its subtree inside the caller's transaction: counters,
// tombstones for delta sync, orphaned blobs and one drive.file.deleted per item.
func (s *Service) purge(ctx context.Context, f File) error {
	items := []File{f}
	if f.IsFolder {
		sub, err := s.store.Subtree(ctx, f.ID, false)
		if err != nil {
			return err
		}
		// Items trashed on their own before stay in the trash, detached from
		// the folder that goes (they restore into the root).
		group := f.TrashRoot
		kept := map[string]bool{}
		for _, it := range sub {
			switch {
			case kept[it.Parent()]:
				kept[it.ID] = true
			case it.TrashedAt != nil && it.TrashRoot != group && it.TrashRoot == it.ID:
				kept[it.ID] = true
				it.ParentID = nil
				if err := s.store.UpdateFile(ctx, it); err != nil {
					return err
				}
			default:
				items = append(items, it)
			}
		}
	}
	now := s.clock.Now()
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, it.ID)
		if !it.IsFolder && it.Status != StatusPending {
			vs, err := s.store.Versions(ctx, it.ID)
			if err != nil {
				return err
			}
			for _, v := range vs {
				if err := s.orphan(ctx, v.ContentHash); err != nil {
					return err
				}
			}
			if err := s.store.AddUsage(ctx, it.OrgID, it.OwnerID, it.MimeGroup, -it.StoredBytes, -1); err != nil {
				return err
			}
		}
		if it.Status == StatusPending {
			continue
		}
		seq, err := s.store.NextSeq(ctx, it.OwnerID)
		if err != nil {
			return err
		}
		if err := s.store.AddTombstone(ctx, it.OwnerID, Tombstone{FileID: it.ID, Name: it.Name, ParentID: it.Parent(), Seq: seq, DeletedAt: now}); err != nil {
			return err
		}
		if err := s.emit(ctx, EventFileDeleted, it, nil); err != nil {
			return err
		}
	}
	return s.store.DeleteFiles(ctx, ids)
}

// Versions lists a file's versions, the newest first.
func (s *Service) Versions(ctx context.Context, p *app.Principal, id string) ([]Version, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return nil, err
	}
	if f.IsFolder {
		return []Version{}, nil
	}
	vs, err := s.store.Versions(ctx, f.ID)
	for i := range vs {
		vs[i].IsHead = vs[i].Version == f.Version
	}
	return vs, err
}

func (s *Service) version(ctx context.Context, f File, versionID string) (Version, error) {
	vs, err := s.store.Versions(ctx, f.ID)
	if err != nil {
		return Version{}, err
	}
	for _, v := range vs {
		if v.ID == versionID || fmt.Sprint(v.Version) == versionID {
			return v, nil
		}
	}
	return Version{}, app.Errorf(app.ENotFound, "The file has no version %s.", versionID)
}

// RestoreVersion makes an old version's content the new head version.
func (s *Service) RestoreVersion(ctx context.Context, p *app.Principal, id, versionID string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	f, err := s.access(ctx, p, id, PermEdit)
	if err != nil {
		return File{}, err
	}
	if err := s.checkLock(ctx, p, f.ID); err != nil {
		return File{}, err
	}
	v, err := s.version(ctx, f, versionID)
	if err != nil {
		return File{}, err
	}
	var out File
	err = s.writeTx(ctx, func(ctx context.Context) error {
		cur, err := s.store.File(ctx, id)
		if err != nil {
			return err
		}
		if cur.Status == StatusPending {
			return app.Errorf(app.EConflict, "The upload of %q is not confirmed yet.", cur.Name)
		}
		out, err = s.commitContent(ctx, p, cur, cur.Name, v.MimeType, v.ContentHash, v.SizeBytes)
		return err
	})
	if err != nil {
		return File{}, err
	}
	out.Permission = f.Permission
	return out, nil
}

// DownloadVersion returns a presigned URL of one version's content.
func (s *Service) DownloadVersion(ctx context.Context, p *app.Principal, id, versionID string) (Link, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return Link{}, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return Link{}, err
	}
	v, err := s.version(ctx, f, versionID)
	if err != nil {
		return Link{}, err
	}
	f.ContentHash, f.MimeType = v.ContentHash, v.MimeType
	return s.downloadLink(f, false)
}

// Storage returns the organisation's usage against its quota, and the caller's.
func (s *Service) Storage(ctx context.Context, p *app.Principal) (Usage, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return Usage{}, err
	}
	used, count, err := s.store.OrgUsage(ctx, p.OrgID)
	if err != nil {
		return Usage{}, err
	}
	mine, err := s.store.OwnerUsage(ctx, p.OrgID, p.UserID)
	if err != nil {
		return Usage{}, err
	}
	u := Usage{UsedBytes: used, QuotaBytes: p.QuotaBytes, FileCount: count, AvailableBytes: max(p.QuotaBytes-used, 0)}
	for _, g := range mine {
		u.UserUsedBytes += g.Bytes
		u.UserFileCount += g.Count
	}
	return u, nil
}

// StorageBreakdown returns the caller's storage by mime group and their largest files.
func (s *Service) StorageBreakdown(ctx context.Context, p *app.Principal) (Breakdown, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return Breakdown{}, err
	}
	mine, err := s.store.OwnerUsage(ctx, p.OrgID, p.UserID)
	if err != nil {
		return Breakdown{}, err
	}
	by := map[string]GroupUsage{}
	for _, g := range mine {
		by[g.MimeGroup] = g
	}
	b := Breakdown{Categories: []GroupUsage{}}
	for _, g := range MimeGroups {
		u := by[g]
		u.MimeGroup = g
		b.Categories = append(b.Categories, u)
	}
	if b.LargestFiles, err = s.store.LargestFiles(ctx, p.OrgID, p.UserID, 10); err != nil {
		return Breakdown{}, err
	}
	for i := range b.LargestFiles {
		b.LargestFiles[i].Permission = PermOwner
	}
	return b, nil
}

// Browse lists a folder ("" is the caller's root) with its breadcrumbs.
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
func (s *Service) TrashList(ctx context.Context, p *app.Principal, lp ListParams) (Listing, error) {
	return s.list(ctx, p, ListTrash, lp, PermOwner)
}

// SharedWithMe lists the items shared with the caller by others.
func (s *Service) SharedWithMe(ctx context.Context, p *app.Principal, lp ListParams) (Listing, error) {
	return s.list(ctx, p, ListShared, lp, "")
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

// sweepTime is the time budget of one maintenance step.
const sweepTime = 10 * time.Second
