package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
)

// SyncCommit is the body of sync/commit.
type SyncCommit struct {
	DeviceID string `json:"device_id" minLength:"1" maxLength:"64" doc:"The device's stable id."`
	Cursor   string `json:"cursor" minLength:"1" maxLength:"200" doc:"The cursor of the last delta page the device applied."`
}

// DeviceQuery names a sync device.
type DeviceQuery struct {
	DeviceID string `query:"device_id" required:"true" minLength:"1" maxLength:"64" doc:"Client-generated stable device id (a UUID is recommended), at most 64 characters."`
}

func registerDriveSync(api huma.API, d Deps) {
	const tag = "Drive sync"
	read := app.ScopeDriveRead
	s := d.Drive
	const bad, nf = http.StatusBadRequest, http.StatusNotFound

	delta := status(op(http.MethodGet, "/drive/sync/delta", "syncDelta", "Changes of my drive since a cursor", tag, read), http.StatusOK)
	delta.Description = "Without `cursor`, starts a full snapshot of the caller's own drive; while `has_more` is true, call again with the returned `cursor`. " +
		"With the cursor of a finished walk, returns only what changed since: items as they are now, and items removed from the live tree " +
		"(trashed — with everything in a trashed folder — or deleted permanently) with `deleted: true`. Items come in change order, " +
		"so a child may arrive before its parent: apply by id. Pending uploads never appear; shared items belong to their owner's feed. " +
		"Cursors do not age, but a cursor older than the kept log of deletions → 400 `cursor_expired` (restart with a snapshot); " +
		"a tampered or foreign cursor → 400 `invalid_cursor`."
	huma.Register(api, errs(delta, bad), func(ctx context.Context, in *struct {
		DeviceQuery
		Cursor string `query:"cursor" maxLength:"200" doc:"Cursor of the previous page or the last finished walk; absent: start a snapshot."`
		Limit  int    `query:"limit" minimum:"1" maximum:"1000" default:"500" doc:"Items per page."`
	}) (*body[drive.DeltaPage], error) {
		pg, err := s.Delta(ctx, principal(ctx), in.DeviceID, in.Cursor, in.Limit)
		return out(pg), err
	})
	commit := status(op(http.MethodPost, "/drive/sync/commit", "syncCommit", "Record a device's sync progress", tag, read), http.StatusOK)
	commit.Description = "Stores `cursor` as the device's committed position and returns the device status."
	huma.Register(api, errs(commit, bad), func(ctx context.Context, in *struct{ Body SyncCommit }) (*body[drive.DeviceStatus], error) {
		st, err := s.SyncCommit(ctx, principal(ctx), in.Body.DeviceID, in.Body.Cursor)
		return out(st), err
	})
	st := status(op(http.MethodGet, "/drive/sync/status", "syncStatus", "A device's committed cursor and pending changes", tag, read), http.StatusOK)
	st.Description = "`pending_changes` counts the changes after the committed cursor (every live item when nothing was committed). A device that never called sync/delta → 404."
	huma.Register(api, errs(st, nf), func(ctx context.Context, in *DeviceQuery) (*body[drive.DeviceStatus], error) {
		res, err := s.SyncStatus(ctx, principal(ctx), in.DeviceID)
		return out(res), err
	})
	huma.Register(api, status(op(http.MethodGet, "/drive/sync/devices", "syncDevices", "My sync devices", tag, read), http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*body[[]drive.Device], error) {
			ds, err := s.Devices(ctx, principal(ctx))
			return out(ds), err
		})
	huma.Register(api, errs(status(op(http.MethodGet, "/drive/sync/files/{file_id}", "syncFile", "One of my items in delta-item shape", tag, read), http.StatusOK), nf),
		func(ctx context.Context, in *FilePath) (*body[drive.DeltaItem], error) {
			it, err := s.SyncFile(ctx, principal(ctx), in.FileID)
			return out(it), err
		})
}
