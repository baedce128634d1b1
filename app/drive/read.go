package drive

// Reading content: Open (the bytes of a file, restoring an archived one
// first) and the access-time bookkeeping of the archive tier.

import (
	"context"
	"fmt"
	"io"
	"time"

	"atrium/app"
)

// Open returns the content of a file the caller may read, for doors that stream
// it themselves (WebDAV GET). An archived file starts its restore and answers
// unavailable with the seconds to wait: the client's retry reads it. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), unavailable (an
// archived file, being restored: Retry-After), conflict (a folder, a file not
// active).
func (s *Service) Open(ctx context.Context, p *app.Principal, id string) (File, io.ReadSeekCloser, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return File{}, nil, err
	}
	f, err := s.access(ctx, p, id, PermView)
	if err != nil {
		return File{}, nil, err
	}
	if !f.IsFolder && isCold(f) {
		if f, err = s.restoreForRead(ctx, f); err != nil {
			return File{}, nil, err
		}
	}
	return s.openFile(ctx, f)
}

// restoreForRead starts the restore of an archived file read by a door that
// cannot follow a restore: unavailable with a Retry-After while it runs, the
// file once it is active again.
func (s *Service) restoreForRead(ctx context.Context, f File) (File, error) {
	info, err := s.archiving.startRestore(ctx, f)
	if err != nil {
		return File{}, err
	}
	if info != nil {
		return File{}, &app.Error{Code: app.EUnavailable, RetryAfter: info.RetryAfterSeconds,
			Message: fmt.Sprintf("%q is being restored from the archive; try again in %d s.", f.Name, info.RetryAfterSeconds)}
	}
	return s.store.File(ctx, f.ID)
}

// openFile opens the content of f and records the access (the archive tier
// moves files nobody reads).
func (s *Service) openFile(ctx context.Context, f File) (File, io.ReadSeekCloser, error) {
	if f.IsFolder {
		return File{}, nil, app.Errorf(app.EConflict, "%q is a folder; it has no content.", f.Name)
	}
	if isCold(f) {
		return File{}, nil, archivedConflict(f)
	}
	if f.Status != StatusActive {
		return File{}, nil, app.Errorf(app.EConflict, "The file is %s; its content is not available now.", f.Status)
	}
	rc, err := s.blobs.Open(ctx, f.Hash())
	if err != nil {
		return File{}, nil, fmt.Errorf("open blob of %s: %w", f.ID, err)
	}
	s.accessed(ctx, f)
	return f, rc, nil
}

// accessResolution is how precisely a file's last access is kept: a read
// within it of the last recorded one writes nothing (the archive tier counts
// in days; most reads then cost no write transaction).
const accessResolution = time.Hour

// accessed records a read of f's content. A failure is logged: the read
// itself went well.
func (s *Service) accessed(ctx context.Context, f File) {
	now := s.clock.Now()
	if f.IsFolder || (f.LastAccessAt != nil && now.Sub(*f.LastAccessAt) < accessResolution && !now.Before(*f.LastAccessAt)) {
		return
	}
	if err := s.store.TouchFile(ctx, f.ID, now); err != nil && ctx.Err() == nil {
		s.log.Warn("could not record the access of a file", "file_id", f.ID, "err", err)
	}
}
