package rest

import (
	"context"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
)

// FilePath names a drive item.
type FilePath struct {
	FileID string `path:"file_id" maxLength:"200" doc:"File or folder id."`
}

// ListQuery are the list parameters of browse, trash and shared (spec §4.3, CONTRACT §4).
type ListQuery struct {
	Q         string   `query:"q" maxLength:"255" doc:"Only items whose name contains this text (case-insensitive)."`
	SortBy    string   `query:"sort_by" enum:"name,size_bytes,created_at,updated_at,mime_type" doc:"Sort key; folders always come before files. Default name (A→Z)."`
	SortOrder string   `query:"sort_order" enum:"asc,desc" doc:"SortOrder; default desc when sort_by is given."`
	Page      int      `query:"page" minimum:"1" default:"1" doc:"Page number, from 1."`
	PerPage   int      `query:"per_page" minimum:"1" maximum:"500" default:"50" doc:"Items per page."`
	Limit     int      `query:"limit" minimum:"0" maximum:"500" doc:"Alternative to per_page (offset pagination)."`
	Offset    int      `query:"offset" minimum:"0" doc:"Alternative to page: items to skip."`
	Filter    []string `query:"filter,explode" doc:"Filter expressions field:op:value, ANDed. Fields name, mime_type, size_bytes, created_at, updated_at, is_favorite, owner_id; ops eq ne gt gte lt lte contains prefix. Example: size_bytes:gt:1048576."`
	OrFilter  []string `query:"or_filter,explode" doc:"Filter expressions of which at least one must hold."`
	MimeTypes []string `query:"mime_types,explode" doc:"Only these mime types."`
	MimeGroup string   `query:"mime_group" enum:"image,video,audio,document,spreadsheet,presentation,pdf,archive,text,other" doc:"Only this category."`
	IsFolder  string   `query:"is_folder" enum:"true,false" doc:"Only folders (true) or only files (false)."`
}

func (q ListQuery) params() drive.ListParams {
	lp := drive.ListParams{Q: q.Q, SortBy: q.SortBy, SortOrder: q.SortOrder, Page: q.Page, PerPage: q.PerPage, Limit: q.Limit,
		Offset: q.Offset, Filter: q.Filter, OrFilter: q.OrFilter, MimeTypes: q.MimeTypes, MimeGroup: q.MimeGroup}
	if q.IsFolder != "" {
		b := q.IsFolder == "true"
		lp.IsFolder = &b
	}
	return lp
}

// FolderCreate is the body of folder creation.
type FolderCreate struct {
	Name     string `json:"name" minLength:"1" maxLength:"255" doc:"Folder name: no '/', NUL, control characters, bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: 422 naming the character), '.' or '..'; at most 255 bytes. Names are kept in Unicode NFC and compared case-insensitively: a decomposed (NFD) name is the same name as its composed form."`
	ParentID string `json:"parent_id,omitempty" maxLength:"200" doc:"Parent folder; the root when absent."`
}

// UploadRequest announces a three-step upload.
type UploadRequest struct {
	Name     string `json:"name" minLength:"1" maxLength:"255" doc:"File name: no '/', NUL, control characters, bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: 422 naming the character), '.' or '..'; at most 255 bytes. Names are kept in Unicode NFC and compared case-insensitively: a decomposed (NFD) name is the same name as its composed form."`
	MimeType string `json:"mime_type,omitempty" maxLength:"255" doc:"Content type the PUT will send; guessed from the name when absent."`
	Size     int64  `json:"size" minimum:"0" doc:"Exact size in bytes."`
	ParentID string `json:"parent_id,omitempty" maxLength:"200" doc:"Target folder; the root when absent."`
}

// FileRename is the body of rename.
type FileRename struct {
	Name string `json:"name" minLength:"1" maxLength:"255" doc:"New name: no '/', NUL, control characters, bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: 422 naming the character), '.' or '..'; at most 255 bytes. Names are kept in Unicode NFC and compared case-insensitively: a decomposed (NFD) name is the same name as its composed form."`
}

// FileMove is the body of move.
type FileMove struct {
	TargetFolderID string `json:"target_folder_id" maxLength:"200" doc:"Target folder; empty string moves to the root."`
}

// FileMetadataUpdate changes what it carries.
type FileMetadataUpdate struct {
	Description *string            `json:"description,omitempty" maxLength:"10000" doc:"Free text."`
	Tags        *[]string          `json:"tags,omitempty" maxItems:"100" doc:"Replaces the tags."`
	Custom      *map[string]string `json:"custom,omitempty" doc:"Replaces the custom key/value fields."`
	IsFavorite  *bool              `json:"is_favorite,omitempty" doc:"Sets the favorite mark."`
}

// VersionPath names a version of a file.
type VersionPath struct {
	FileID    string `path:"file_id" maxLength:"200" doc:"File id."`
	VersionID string `path:"version_id" maxLength:"200" doc:"Version id (or its number)."`
}

func registerDrive(api huma.API, d Deps) {
	const tag = "Drive"
	read, write := app.ScopeDriveRead, app.ScopeDriveWrite
	s := d.Drive
	const nf = http.StatusNotFound

	browse := status(op(http.MethodGet, "/drive/browse", "browseRoot", "Browse a folder (the root by default)", tag, read), http.StatusOK)
	browse.Description = "Lists a folder's live items, folders first, with offset pagination (`page`/`per_page`, or `limit`/`offset`), `filter`/`or_filter` expressions, `mime_types`, `mime_group`, `is_folder` and `q`. A malformed filter → 422 naming it."
	huma.Register(api, errs(browse, nf), func(ctx context.Context, in *struct {
		FolderID string `query:"folder_id" maxLength:"200" doc:"Folder to list; the root when absent."`
		ListQuery
	}) (*body[drive.FolderContents], error) {
		fc, err := s.Browse(ctx, principal(ctx), in.FolderID, in.params())
		return out(fc), err
	})
	huma.Register(api, errs(status(op(http.MethodGet, "/drive/browse/{folder_id}", "browseFolder", "Browse a folder", tag, read), http.StatusOK), nf),
		func(ctx context.Context, in *struct {
			FolderID string `path:"folder_id" maxLength:"200" doc:"Folder id."`
			ListQuery
		}) (*body[drive.FolderContents], error) {
			fc, err := s.Browse(ctx, principal(ctx), in.FolderID, in.params())
			return out(fc), err
		})
	huma.Register(api, status(op(http.MethodGet, "/drive/trash", "listTrash", "List my trash", tag, read), http.StatusOK),
		func(ctx context.Context, in *struct{ ListQuery }) (*body[drive.Listing], error) {
			l, err := s.TrashList(ctx, principal(ctx), in.params())
			return out(l), err
		})
	huma.Register(api, status(op(http.MethodGet, "/drive/shared", "listSharedWithMe", "List what others share with me", tag, read), http.StatusOK),
		func(ctx context.Context, in *struct{ ListQuery }) (*body[drive.Listing], error) {
			l, err := s.SharedWithMe(ctx, principal(ctx), in.params())
			return out(l), err
		})
	huma.Register(api, status(op(http.MethodGet, "/drive/storage", "getStorageUsage", "Storage used against the quota", tag, read), http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*body[drive.Usage], error) {
			u, err := s.Storage(ctx, principal(ctx))
			return out(u), err
		})
	huma.Register(api, status(op(http.MethodGet, "/drive/storage/breakdown", "getStorageBreakdown", "My storage by category and my largest files", tag, read), http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*body[drive.Breakdown], error) {
			b, err := s.StorageBreakdown(ctx, principal(ctx))
			return out(b), err
		})

	huma.Register(api, errs(lockable(op(http.MethodPost, "/drive/folders", "createFolder", "Create a folder", tag, write)), nf, http.StatusConflict),
		func(ctx context.Context, in *struct{ Body FolderCreate }) (*body[drive.File], error) {
			f, err := s.CreateFolder(ctx, principal(ctx), in.Body.Name, in.Body.ParentID)
			return out(f), err
		})
	up := idempotent(op(http.MethodPost, "/drive/upload", "requestUpload", "Announce an upload (step 1 of 3)", tag, write))
	up.Description = "Returns a presigned `upload_url` and the file the bytes will become: a `pending` new file, or the existing file of that name in the folder (it gains a version on confirmation). Step 2: `PUT` the exact bytes to `upload_url` with the declared `Content-Type`, no bearer token. Step 3: `POST /drive/{file_id}/confirm`. The quota is checked here, at the PUT and at confirmation (507 `quota_exceeded`). Unconfirmed uploads are dropped after 24 hours. When the server's object store is reachable by clients, `upload_url` is a presigned URL of the store itself, and the size and quota are checked at confirmation instead of at the PUT.\n\n" + up.Description
	up = lockable(up)
	huma.Register(api, errs(up, nf, http.StatusInsufficientStorage), func(ctx context.Context, in *struct{ Body UploadRequest }) (*body[drive.UploadTicket], error) {
		t, err := s.Uploads().RequestUpload(ctx, principal(ctx), drive.UploadRequest(in.Body))
		return out(t), err
	})
	confirm := status(op(http.MethodPost, "/drive/{file_id}/confirm", "confirmUpload", "Confirm an upload (step 3 of 3)", tag, write), http.StatusOK)
	confirm.Description = "Checks the bytes arrived, and makes the file `active` (or its new version the head), visible and indexed. 409 when nothing was uploaded yet. " +
		"Bytes sent to the object store (an `upload_url` of the store) are checked first: another size than announced → 422 `validation_failed` (PUT the right bytes to the same URL and confirm again), and they are read back for their SHA-256."
	confirm = lockable(confirm)
	huma.Register(api, errs(confirm, nf, http.StatusConflict, http.StatusInsufficientStorage), func(ctx context.Context, in *FilePath) (*body[drive.File], error) {
		f, err := s.Uploads().Confirm(ctx, principal(ctx), in.FileID)
		return out(f), err
	})
	huma.Register(api, errs(status(op(http.MethodGet, "/drive/{file_id}/detail", "getFile", "Get a file or folder", tag, read), http.StatusOK), nf),
		func(ctx context.Context, in *FilePath) (*body[drive.File], error) {
			f, err := s.Detail(ctx, principal(ctx), in.FileID)
			return out(f), err
		})
	dl := status(op(http.MethodGet, "/drive/{file_id}/download", "downloadFile", "Get a download URL", tag, read), http.StatusOK)
	dl.Description = "Returns `{url, expires_at}`: a presigned URL (no bearer needed) serving the content with `Range` support, valid 15 minutes; when the server's object store is reachable by clients, a URL of the store itself. " +
		"An archived file answers 202 `{status: \"restoring\", file_id, restore_status_url, retry_after_seconds}` and is restored in the background; " +
		"follow `restore-status` and download again once it is ready. A folder → 409 (Atrium streams a folder as a ZIP archive at `GET /drive/{file_id}/download.zip`, an extension: docs/api-extensions.md)."
	dl.Responses = downloadResponses(api)
	huma.Register(api, errs(dl, nf, http.StatusConflict), func(ctx context.Context, in *FilePath) (*downloadOutput, error) {
		l, info, err := s.Archiving().DownloadOrRestore(ctx, principal(ctx), in.FileID)
		if err != nil {
			return nil, err
		}
		if info != nil {
			return &downloadOutput{Status: http.StatusAccepted, Body: info}, nil
		}
		return &downloadOutput{Status: http.StatusOK, Body: l}, nil
	})
	huma.Register(api, errs(lockable(status(op(http.MethodPatch, "/drive/{file_id}/rename", "renameFile", "Rename a file or folder", tag, write), http.StatusOK)), nf, http.StatusConflict),
		func(ctx context.Context, in *struct {
			FilePath
			Body FileRename
		}) (*body[drive.File], error) {
			f, err := s.Rename(ctx, principal(ctx), in.FileID, in.Body.Name)
			return out(f), err
		})
	mv := status(op(http.MethodPatch, "/drive/{file_id}/move", "moveFile", "Move a file or folder", tag, write), http.StatusOK)
	mv.Description = "Moves into `target_folder_id` (empty: the root). Into itself or one of its descendants → 422; a live item of the same name there → 409."
	mv = lockable(mv)
	huma.Register(api, errs(mv, nf, http.StatusConflict), func(ctx context.Context, in *struct {
		FilePath
		Body FileMove
	}) (*body[drive.File], error) {
		f, err := s.Move(ctx, principal(ctx), in.FileID, in.Body.TargetFolderID)
		return out(f), err
	})
	cp := op(http.MethodPost, "/drive/{file_id}/copy", "copyFile", "Copy a file or folder", tag, write)
	cp.Description = "Copies a file, or a folder with everything in it, into `target_folder_id` (default: beside the original). A taken name gets a number: `name (1).ext`. Content is shared, not duplicated, but counts towards the quota."
	cp = lockable(cp)
	huma.Register(api, errs(cp, nf, http.StatusConflict, http.StatusInsufficientStorage), func(ctx context.Context, in *struct {
		FilePath
		TargetFolderID string `query:"target_folder_id" maxLength:"200" doc:"Target folder."`
	}) (*body[drive.File], error) {
		f, err := s.Copy(ctx, principal(ctx), in.FileID, in.TargetFolderID)
		return out(f), err
	})
	huma.Register(api, errs(status(op(http.MethodPost, "/drive/{file_id}/favorite", "toggleFavorite", "Toggle the favorite mark", tag, write), http.StatusOK), nf),
		func(ctx context.Context, in *FilePath) (*body[drive.File], error) {
			f, err := s.ToggleFavorite(ctx, principal(ctx), in.FileID)
			return out(f), err
		})
	huma.Register(api, errs(lockable(status(op(http.MethodPatch, "/drive/{file_id}/metadata", "updateFileMetadata", "Update description, tags and custom fields", tag, write), http.StatusOK)), nf, http.StatusConflict),
		func(ctx context.Context, in *struct {
			FilePath
			Body FileMetadataUpdate
		}) (*body[drive.File], error) {
			f, err := s.UpdateMetadata(ctx, principal(ctx), in.FileID, drive.MetadataUpdate(in.Body))
			return out(f), err
		})
	huma.Register(api, errs(lockable(status(op(http.MethodPost, "/drive/{file_id}/trash", "trashFile", "Move to the trash", tag, write), http.StatusNoContent)), nf),
		func(ctx context.Context, in *FilePath) (*struct{}, error) {
			return nil, s.Trash(ctx, principal(ctx), in.FileID)
		})
	rs := status(op(http.MethodPost, "/drive/{file_id}/restore", "restoreFile", "Restore from the trash", tag, write), http.StatusOK)
	rs.Description = "Restores into the original folder, or the root when that folder is gone or in the trash; a taken name gets a number."
	rs = lockable(rs)
	huma.Register(api, errs(rs, nf, http.StatusConflict), func(ctx context.Context, in *FilePath) (*body[drive.File], error) {
		f, err := s.Restore(ctx, principal(ctx), in.FileID)
		return out(f), err
	})
	huma.Register(api, op(http.MethodDelete, "/drive/trash", "emptyTrash", "Empty my trash", tag, write),
		func(ctx context.Context, _ *struct{}) (*struct{}, error) {
			return nil, s.EmptyTrash(ctx, principal(ctx))
		})
	del := op(http.MethodDelete, "/drive/{file_id}", "deleteFile", "Delete permanently", tag, write)
	del.Description = "Deletes the item (and, for a folder, everything in it) for good, whether or not it is in the trash."
	del = lockable(del)
	huma.Register(api, errs(del, nf), func(ctx context.Context, in *FilePath) (*struct{}, error) {
		return nil, s.Delete(ctx, principal(ctx), in.FileID)
	})
	huma.Register(api, errs(status(op(http.MethodGet, "/drive/{file_id}/comments", "getCommentsChannel", "Get or create the file's comments channel", tag, read), http.StatusOK), nf),
		func(ctx context.Context, in *FilePath) (*body[map[string]string], error) {
			m, err := s.CommentsChannel(ctx, principal(ctx), in.FileID)
			return out(m), err
		})
	huma.Register(api, errs(status(op(http.MethodGet, "/drive/{file_id}/versions", "listFileVersions", "List a file's versions", tag, read), http.StatusOK), nf),
		func(ctx context.Context, in *FilePath) (*body[[]drive.Version], error) {
			vs, err := s.Versions(ctx, principal(ctx), in.FileID)
			return out(vs), err
		})
	huma.Register(api, errs(lockable(status(op(http.MethodPost, "/drive/{file_id}/versions/{version_id}/restore", "restoreFileVersion", "Restore a version as the new head", tag, write), http.StatusOK)), nf, http.StatusConflict, http.StatusInsufficientStorage),
		func(ctx context.Context, in *VersionPath) (*body[drive.File], error) {
			f, err := s.RestoreVersion(ctx, principal(ctx), in.FileID, in.VersionID)
			return out(f), err
		})
	huma.Register(api, errs(status(op(http.MethodGet, "/drive/{file_id}/versions/{version_id}/download", "downloadFileVersion", "Get a download URL of a version", tag, read), http.StatusOK), nf, http.StatusConflict),
		func(ctx context.Context, in *VersionPath) (*body[drive.PresignedURL], error) {
			l, err := s.DownloadVersion(ctx, principal(ctx), in.FileID, in.VersionID)
			return out(l), err
		})
}

// downloadOutput is a download URL (200) or, for an archived file, the restore
// started (202).
type downloadOutput struct {
	Status int
	Body   any
}

func downloadResponses(api huma.API) map[string]*huma.Response {
	reg := api.OpenAPI().Components.Schemas
	resp := func(desc string, t reflect.Type) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{
			"application/json": {Schema: reg.Schema(t, true, "")}}}
	}
	return map[string]*huma.Response{
		"200": resp("The download URL.", reflect.TypeFor[drive.PresignedURL]()),
		"202": resp("The file is archived: its restore started.", reflect.TypeFor[drive.RestoreInfo]()),
	}
}

// registerDriveArchive registers the archive tier: restore progress and the
// admins' archive operation.
func registerDriveArchive(api huma.API, d Deps) {
	s := d.Drive
	tag := "Drive"
	nf := http.StatusNotFound
	rs := status(op(http.MethodGet, "/drive/{file_id}/restore-status", "getRestoreStatus", "Get the restore progress of an archived file", tag, app.ScopeDriveRead), http.StatusOK)
	rs.Description = "`status` is archived (no restore running: download the file to start one), restoring (with `progress` 0..1 and the expected `ready_at`) or active (downloadable)."
	huma.Register(api, errs(rs, nf, http.StatusConflict), func(ctx context.Context, in *FilePath) (*body[drive.RestoreStatus], error) {
		st, err := s.Archiving().RestoreStatus(ctx, principal(ctx), in.FileID)
		return out(st), err
	})
	ar := status(op(http.MethodPost, "/drive/{file_id}/archive", "archiveFile", "Archive a file", tag, app.ScopeAdmin), http.StatusOK)
	ar.Description = "Moves the file's current content to the compressed archive tier (admins). Downloading it later restores it."
	// An Atrium extension outside the stable v1 contract: routed, not published (spec §1, §9).
	ar.Hidden = true
	huma.Register(api, errs(ar, nf, http.StatusConflict), func(ctx context.Context, in *FilePath) (*body[drive.File], error) {
		f, err := s.Archiving().Archive(ctx, principal(ctx), in.FileID)
		return out(f), err
	})
}
