package partner

import (
	"context"

	"atrium/app"
)

// OrgStorage is what an organisation's drive holds, by user and by kind of
// file: the figures behind the admin's plan and usage page.
type OrgStorage struct {
	QuotaBytes int64         `json:"quota_bytes" doc:"The plan's storage quota of the whole organisation."`
	UsedBytes  int64         `json:"used_bytes" doc:"Bytes the organisation's drive holds (current versions, older versions and trash)."`
	Users      []UserStorage `json:"users" doc:"The users holding the most bytes, most first (at most limit of them)."`
	// OtherUsers and OtherBytes are the owners past the limit, together.
	OtherUsers int           `json:"other_users" doc:"How many more users hold bytes than are listed."`
	OtherBytes int64         `json:"other_bytes" doc:"The bytes those other users hold together."`
	Types      []TypeStorage `json:"types" doc:"Bytes and files by kind of file (mime group: image, video, audio, document, spreadsheet, presentation, pdf, archive, text, other), most bytes first; kinds holding nothing are left out."`
}

// UserStorage is what one user holds in the drive. A user deleted since holds
// nothing (their drive goes with them).
type UserStorage struct {
	UserID    string `json:"user_id"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Bytes     int64  `json:"bytes"`
	Files     int64  `json:"files" doc:"Files and versions counted."`
}

// TypeStorage is what one kind of file takes in the drive.
type TypeStorage struct {
	MimeGroup string `json:"mime_group"`
	Bytes     int64  `json:"bytes"`
	Files     int64  `json:"files"`
}

// Storage returns what the caller's organisation's drive holds: the limit
// users holding the most (1 to 100), the others together, and the bytes by
// kind of file. Read only; admin:access. Errors: insufficient_scope (no
// admin:access), validation_failed (a limit outside 1–100).
func (a *Admin) Storage(ctx context.Context, p *app.Principal, limit int) (OrgStorage, error) {
	o, err := a.own(ctx, p)
	if err != nil {
		return OrgStorage{}, err
	}
	if limit < 1 || limit > 100 {
		return OrgStorage{}, app.Invalid("query.limit", "must be 1 to 100", limit)
	}
	sub, err := a.s.subscription(ctx, o.ID)
	if err != nil {
		return OrgStorage{}, err
	}
	users, err := a.s.store.StorageByOwner(ctx, o.ID)
	if err != nil {
		return OrgStorage{}, err
	}
	types, err := a.s.store.StorageByType(ctx, o.ID)
	if err != nil {
		return OrgStorage{}, err
	}
	out := OrgStorage{QuotaBytes: sub.QuotaBytes, UsedBytes: sub.StorageUsedBytes, Users: users, Types: types}
	if out.Users == nil {
		out.Users = []UserStorage{}
	}
	if out.Types == nil {
		out.Types = []TypeStorage{}
	}
	if len(out.Users) > limit {
		for _, u := range out.Users[limit:] {
			out.OtherBytes += u.Bytes
		}
		out.OtherUsers = len(out.Users) - limit
		out.Users = out.Users[:limit]
	}
	return out, nil
}
