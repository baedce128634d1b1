package drive

// Versions: listing, downloading and restoring a version (through the
// content-write path), and pruning old versions.

import (
	"context"
	"fmt"
	"time"

	"atrium/app"
)

// pruneVersions drops the oldest non-head versions of f beyond keep, and those
// created before cutoff (when not zero); it adjusts f.StoredBytes and the
// counters and returns how many went.
func (s *Service) pruneVersions(ctx context.Context, f *File, keep int, cutoff time.Time) (int, error) {
	vs, err := s.store.Versions(ctx, f.ID) // newest first
	if err != nil {
		return 0, err
	}
	var drop []string
	var freed int64
	for i, v := range vs {
		if v.Version == f.Version {
			continue
		}
		if i >= keep || (!cutoff.IsZero() && v.CreatedAt.Before(cutoff)) {
			drop = append(drop, v.ID)
			freed += v.SizeBytes
			if err := s.orphan(ctx, v.ContentHash); err != nil {
				return 0, err
			}
		}
	}
	if len(drop) == 0 {
		return 0, nil
	}
	if err := s.store.DeleteVersions(ctx, drop); err != nil {
		return 0, err
	}
	f.StoredBytes -= freed
	return len(drop), s.store.AddUsage(ctx, f.OrgID, f.OwnerID, f.MimeGroup, -freed, 0)
}

// Versions lists a file's versions, the newest first. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller).
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

// RestoreVersion makes an old version's content the new head version. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller, no such version),
// forbidden (a file shared for viewing), conflict (a pending upload, a file in
// the trash or archived), locked (a lock the caller does not hold),
// quota_exceeded.
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

// DownloadVersion returns a presigned URL of one version's content. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller, no such version),
// conflict (a folder, a pending upload, an archived file).
func (s *Service) DownloadVersion(ctx context.Context, p *app.Principal, id, versionID string) (PresignedURL, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return PresignedURL{}, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return PresignedURL{}, err
	}
	v, err := s.version(ctx, f, versionID)
	if err != nil {
		return PresignedURL{}, err
	}
	f.ContentHash, f.MimeType, f.SizeBytes = v.ContentHash, v.MimeType, v.SizeBytes
	return s.presignedDownload(ctx, f, false)
}
