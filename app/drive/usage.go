package drive

// Storage used: the quota check, the caller's usage and its breakdown by
// type.

import (
	"context"
	"fmt"

	"atrium/app"
)

// Storage returns the organisation's usage against its quota, and the caller's.
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan.
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
// Errors: insufficient_scope (no drive:read), no_bound_user,
// feature_not_in_plan.
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

// quota returns quota_exceeded unless the organisation can store add more bytes.
func (s *Service) quota(ctx context.Context, p *app.Principal, add int64) error {
	if add <= 0 || p.QuotaBytes <= 0 {
		return nil
	}
	used, _, err := s.store.OrgUsage(ctx, p.OrgID)
	if err != nil {
		return err
	}
	if used+add > p.QuotaBytes {
		return &app.Error{Code: app.EQuotaExceeded, Message: fmt.Sprintf(
			"Storing %d more bytes would exceed the quota: %d of %d bytes are used.", add, used, p.QuotaBytes)}
	}
	return nil
}
