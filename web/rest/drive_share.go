package rest

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
)

// ShareCreate is the body of share creation: a link (create_link), or a share
// with a user of the organisation (user_id or email), with one of its teams
// (team_id) or with all of it (organization).
type ShareCreate struct {
	CreateLink   bool       `json:"create_link,omitempty" doc:"Create a public link; the response carries share_link."`
	UserID       string     `json:"user_id,omitempty" maxLength:"200" doc:"Share with this user of your organisation."`
	Email        string     `json:"email,omitempty" maxLength:"320" doc:"Share with the user of your organisation who has this e-mail address."`
	TeamID       string     `json:"team_id,omitempty" maxLength:"200" doc:"Share with every member of this team of your organisation, as its membership is at each request."`
	Organization bool       `json:"organization,omitempty" doc:"Share with every user of your organisation, as it is at each request."`
	Permission   string     `json:"permission,omitempty" enum:"view,edit" default:"view" doc:"view (read and download) or edit (also change content, rename, upload into a shared folder)."`
	ExpiresAt    *time.Time `json:"expires_at,omitempty" doc:"When the share stops working; must be in the future. Never when absent."`
}

// SharePath names a share of a drive item.
type SharePath struct {
	FileID  string `path:"file_id" maxLength:"200" doc:"File or folder id."`
	ShareID string `path:"share_id" maxLength:"200" doc:"Share id."`
}

// LinkPath names a shared link.
type LinkPath struct {
	Token string `path:"token" maxLength:"200" doc:"The link token: the last path segment of share_link."`
}

// LinkFileQuery picks a file inside a shared folder.
type LinkFileQuery struct {
	FileID string `query:"file_id" maxLength:"200" doc:"For a folder link: a file inside the shared folder. The shared item itself when absent."`
}

// publicOp is an operation that needs no credential: the link token is the credential.
func publicOp(method, path, id, summary, tag string) huma.Operation {
	o := op(method, path, id, summary, tag)
	o.Security = nil
	o.Metadata[MetaPublic] = true
	o.Errors = []int{http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusServiceUnavailable}
	return o
}

const linkGoneDoc = " No authentication: the token is the credential. An unknown, expired or revoked link → 404."

func registerDriveShares(api huma.API, d Deps) {
	const tag = "Drive"
	read, write := app.ScopeDriveRead, app.ScopeDriveWrite
	s := d.Drive
	const nf, conflict = http.StatusNotFound, http.StatusConflict

	create := op(http.MethodPost, "/drive/{file_id}/shares", "createShare", "Share a file or folder", tag, write)
	create.Description = "Owner only. With `create_link: true` creates a public link: `share_link` is `{public_url}/s/{token}`, a page where a person sees the item, downloads it or browses the shared folder; `{token}` is what the `/drive/shared-link/{token}` endpoints take (at least 128 random bits). With `user_id` or `email` shares with an active user of your organisation, who then finds the item in `GET /drive/shared`; with `team_id` with every member of one of your organisation's teams, and with `organization: true` with every user of your organisation — membership is read at each request, so someone who joins sees the item at once and someone who leaves loses it at once. Sharing again with the same user, team or organisation changes the permission and expiry of that share instead of adding one; one person reached by several shares gets the broadest permission. One recipient per request (else 422). `permission`: `view` (default) or `edit`. `expires_at` must be in the future (else 422). Emits `drive.share.created` (`file_id`, `share_id`, `link`: the link URL, null for other shares; `user_id`, `team_id` or `organization: true` for the recipient) and records `share.created` in the audit log. A user outside your organisation → 422; a team of another organisation → 404; an item you do not own → 403 (shared with you) or 404."
	huma.Register(api, errs(create, nf, conflict), func(ctx context.Context, in *struct {
		FilePath
		Body ShareCreate
	}) (*body[drive.ShareInfo], error) {
		sh, err := s.CreateShare(ctx, principal(ctx), in.FileID, drive.ShareRequest(in.Body))
		return out(sh), err
	})
	list := status(op(http.MethodGet, "/drive/{file_id}/shares", "listShares", "List the shares of a file or folder", tag, read), http.StatusOK)
	list.Description = "The item's user shares (`shared_with`: `user_id`, `email`, `display_name`), team shares (`shared_with_team`: `id`, `name`), organisation shares (`shared_with_organization: true`) and links (`share_link`), expired ones included (see `expires_at`). The owner and users the item is shared with for editing may list them; view-only → 403."
	huma.Register(api, errs(list, nf), func(ctx context.Context, in *FilePath) (*body[[]drive.ShareInfo], error) {
		l, err := s.ListShares(ctx, principal(ctx), in.FileID)
		return out(l), err
	})
	revoke := op(http.MethodDelete, "/drive/{file_id}/shares/{share_id}", "revokeShare", "Revoke a share", tag, write)
	revoke.Description = "Owner only. The user, the team's members or the organisation lose access at once; a revoked link answers 404 everywhere, its page included. Records `share.revoked` in the audit log."
	huma.Register(api, errs(revoke, nf), func(ctx context.Context, in *SharePath) (*struct{}, error) {
		return nil, s.RevokeShare(ctx, principal(ctx), in.FileID, in.ShareID)
	})

	// Atrium extensions outside the stable v1 contract: routed, not published
	// (docs/api-extensions.md).
	teams := status(op(http.MethodGet, "/drive/share-teams", "listShareTeams", "The teams an item can be shared with", tag, read), http.StatusOK)
	teams.Hidden = true
	teams.Description = "The teams of your organisation, by name (`id`, `name`): what `team_id` of a share takes."
	huma.Register(api, teams, func(ctx context.Context, in *struct{}) (*body[[]drive.ShareTeam], error) {
		l, err := s.ShareTeams(ctx, principal(ctx))
		return out(l), err
	})
	teamShares := errs(status(adminOp(http.MethodGet, "/teams/{team_id}/shares", "listAdminTeamShares", "What is shared with a team",
		"The items shared with the team, the newest share first: `id` (the share), `file_id`, `file_name`, `is_folder`, `owner_id`, `owner_name`, `permission`, `expires_at`, `created_at`. Items in the trash are left out."), http.StatusOK), nf)
	teamShares.Hidden = true
	huma.Register(api, teamShares, func(ctx context.Context, in *AdminTeamPath) (*body[[]drive.TeamShare], error) {
		l, err := s.TeamShares(ctx, principal(ctx), in.TeamID)
		return out(l), err
	})

	info := status(publicOp(http.MethodGet, "/drive/shared-link/{token}", "getSharedLink", "What a shared link shares", tag), http.StatusOK)
	info.Description = "SharedLinkResponse: `name`, `is_folder`, `mime_type`, `size_bytes`, `permission`, `expires_at` of the shared item; for a folder also `items` (folders first, paginated with `page`/`per_page`) of the shared folder or of a folder inside it (`folder_id`), with `folder` and `breadcrumbs` from the shared folder down. Nothing outside the shared folder is reachable (404), nor anything in the trash." + linkGoneDoc
	huma.Register(api, info, func(ctx context.Context, in *struct {
		LinkPath
		FolderID string `query:"folder_id" maxLength:"200" doc:"For a folder link: a folder inside the shared folder to list."`
		Page     int    `query:"page" minimum:"1" default:"1" doc:"Page of items, from 1."`
		PerPage  int    `query:"per_page" minimum:"1" maximum:"500" default:"50" doc:"Items per page."`
	}) (*body[drive.SharedLink], error) {
		l, err := s.Links().LinkInfo(ctx, in.Token, drive.LinkQuery{FolderID: in.FolderID, Page: in.Page, PerPage: in.PerPage})
		return out(l), err
	})
	dl := status(publicOp(http.MethodGet, "/drive/shared-link/{token}/download", "downloadSharedLink", "Download through a shared link", tag), http.StatusOK)
	dl.Description = "`{url, expires_at}`: a presigned URL (15 minutes) of the shared file, or of `file_id` inside a shared folder. A folder → 409 (Atrium streams a shared folder as a ZIP archive at `/drive/shared-link/{token}/download.zip`, an extension: docs/api-extensions.md)." + linkGoneDoc
	huma.Register(api, errs(dl, conflict), func(ctx context.Context, in *struct {
		LinkPath
		LinkFileQuery
	}) (*body[drive.PresignedURL], error) {
		l, err := s.Links().LinkDownload(ctx, in.Token, in.FileID)
		return out(l), err
	})
	pv := status(publicOp(http.MethodGet, "/drive/shared-link/{token}/preview", "previewSharedLink", "Preview through a shared link", tag), http.StatusOK)
	pv.Description = "`{url, expires_at}`: a presigned URL that shows the file in the browser (`Content-Disposition: inline`), for types safe to show inline: images (not SVG), audio, video, PDF and plain text. Other types → 409: download them instead." + linkGoneDoc
	huma.Register(api, errs(pv, conflict), func(ctx context.Context, in *struct {
		LinkPath
		LinkFileQuery
	}) (*body[map[string]string], error) {
		l, err := s.Links().LinkPreview(ctx, in.Token, in.FileID)
		if err != nil {
			return nil, err
		}
		return out(map[string]string{"url": l.URL, "expires_at": l.ExpiresAt.UTC().Format(time.RFC3339)}), nil
	})
	get := status(publicOp(http.MethodGet, "/drive/shared-link/{token}/content", "getSharedLinkContent", "Read a shared text file", tag), http.StatusOK)
	get.Description = "The content of a shared text file as a JSON string (UTF-8, at most 1 MiB; larger → 413). Not a text file, or a folder → 409." + linkGoneDoc
	huma.Register(api, errs(get, conflict, http.StatusRequestEntityTooLarge), func(ctx context.Context, in *LinkPath) (*body[string], error) {
		text, err := s.Links().LinkContent(ctx, in.Token)
		return out(text), err
	})
	put := status(publicOp(http.MethodPut, "/drive/shared-link/{token}/content", "putSharedLinkContent", "Write a shared text file", tag), http.StatusOK)
	put.Description = "Replaces the content of a text file shared by an `edit` link with the JSON string of the body (at most 1 MiB; larger → 413): a new version, created by the link's creator, within the organisation's quota (507), emitting `drive.file.updated`. A link holds no lock, not even its creator's: a file locked over WebDAV or open in the editor → 423 `locked`, until the lock is released or expires. A `view` link → 403. Returns the FileItem." + linkGoneDoc
	put.MaxBodyBytes = 8 << 20
	put.Errors = append(put.Errors, http.StatusForbidden)
	huma.Register(api, errs(put, conflict, http.StatusRequestEntityTooLarge, http.StatusLocked, http.StatusInsufficientStorage), func(ctx context.Context, in *struct {
		LinkPath
		Body string
	}) (*body[drive.File], error) {
		f, err := s.Links().LinkWriteContent(ctx, in.Token, in.Body)
		return out(f), err
	})
}
