package drive

// The trash: trash, restore, delete for good, empty the trash, delete a
// user's data, and purge (what freeing an item releases).

import (
	"context"
	"fmt"
	"sort"

	"atrium/app"
)

// Trash moves an item (and what is in it) to the trash. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), forbidden (an item
// the caller does not own), locked (a lock the caller does not hold).
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
// folder is gone or trashed; a taken name gets a number. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), forbidden (an item
// the caller does not own), conflict (an item not in the trash or trashed with
// its folder, no free name).
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
	err = s.writeTx(ctx, func(ctx context.Context) error {
		// Read again in the transaction: deleted for good (not_found) or
		// restored since the checks above.
		f, err := s.store.File(ctx, f.ID)
		if err != nil {
			return err
		}
		if f.TrashedAt == nil || f.TrashRoot != f.ID {
			return app.Errorf(app.EConflict, "%q is not in the trash.", f.Name)
		}
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
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, not_found (no such item, or not shared with the caller),
// forbidden (an item the caller does not own), locked (a lock the caller does
// not hold).
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
		// Read again in the transaction: another request may have deleted
		// it (not_found) or changed it since.
		f, err := s.store.File(ctx, f.ID)
		if err != nil {
			return err
		}
		if err := s.checkLock(ctx, p, f.ID); err != nil {
			return err
		}
		if err := s.purge(ctx, f); err != nil {
			return err
		}
		return s.record(ctx, p, "file.deleted", kind(f), f.ID)
	})
}

// EmptyTrash deletes everything in the caller's trash for good. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan.
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
		purged := 0
		err = s.writeTx(ctx, func(ctx context.Context) error {
			purged = 0
			for _, it := range items {
				// Read again in the transaction: an item restored or deleted
				// since the list was read is no longer the trash's.
				cur, err := s.store.File(ctx, it.ID)
				if app.ErrorCode(err) == app.ENotFound {
					continue
				}
				if err != nil {
					return err
				}
				if cur.TrashedAt == nil || cur.TrashRoot != cur.ID || cur.OwnerID != p.UserID {
					continue
				}
				if err := s.purge(ctx, cur); err != nil {
					return err
				}
				purged++
			}
			return s.record(ctx, p, "trash.emptied", "trash", p.UserID)
		})
		if err != nil {
			return err
		}
		if purged == 0 {
			return nil // what was listed went elsewhere meanwhile
		}
	}
}

// DeleteUserData forgets the drive of a user being deleted, inside the
// caller's transaction: their items and versions, unfinished uploads, usage
// (the organisation's quota gets it back), sync feed and locks. Their blobs
// are freed by the collector after its grace period, their unfinished TUS
// bytes at the next upload sweep, and search forgets them when it reads the
// organization.user.deleted event. No drive.file.deleted event is emitted per
// item: organization.user.deleted says it for all of them. Errors: none of its
// own.
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
