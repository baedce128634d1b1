package drive

// Modification times clients may set, and the time of the mount's
// virtual folder of shared items.

import (
	"context"
	"time"

	"atrium/app"
)

// Bounds of a modification time a client may set: from the epoch of Windows
// file times to the last year an HTTP date can carry.
var (
	minModified = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxModified = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// CheckModifiedTime validates a modification time a client sets; field names
// the value in the error.
func CheckModifiedTime(field string, t time.Time) error {
	if t.Before(minModified) || t.After(maxModified) {
		return app.Invalid(field, "A modification time is between 1601-01-01 and 9999-12-31.", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// SharedFolderTime is the modification time of the mount's virtual folder of
// items shared with the caller: when the newest share with them was made,
// else when their account was created. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan.
func (s *Service) SharedFolderTime(ctx context.Context, p *app.Principal) (time.Time, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return time.Time{}, err
	}
	return s.store.SharedSince(ctx, p.OrgID, p.UserID, s.clock.Now())
}
