package rest

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
	"atrium/web/presign"
)

// registerDriveZip registers the ZIP downloads of folders (Atrium extensions,
// docs/api-extensions.md): a folder of the caller's drive or shared with them,
// and a folder shared by a link.
func registerDriveZip(api huma.API, d Deps) {
	const tag = "Drive"
	s := d.Drive
	nf, conflict := http.StatusNotFound, http.StatusConflict
	const rule = "The archive is `{folder name}.zip`, streamed as the folder is walked (no temporary file): every entry under the folder's name, " +
		"folders as directory entries, UTF-8 names (flagged so), modification times, already compressed types (JPEG, PNG, ZIP, MP4, PDF, office documents…) stored " +
		"and the others deflated; zip64 past 4 GiB. Items in the trash and unconfirmed uploads are left out. Archived (cold-tier) files are left out too, " +
		"listed in a `ARCHIVED FILES NOT INCLUDED.txt` at the top of the folder: download each through `GET /drive/{file_id}/download` to restore it. " +
		"More than 50,000 files and folders → 422 before anything is sent; a file → 409 (download it). A failure once the archive is under way cuts the " +
		"response short: the archive then lacks its central directory and unzip tools refuse it."

	zo := status(op(http.MethodGet, "/drive/{file_id}/download.zip", "downloadFolderZip", "Download a folder as a ZIP archive", tag, app.ScopeDriveRead), http.StatusOK)
	zo.Description = "Streams a folder the caller may read (owner, or shared with them, directly or through a folder above) as `application/zip`. " + rule
	zo.Responses = zipResponses()
	// An Atrium extension outside the stable v1 contract: routed, not published (spec §1, §9).
	zo.Hidden = true
	longStream(&zo)
	huma.Register(api, errs(zo, nf, conflict), func(ctx context.Context, in *FilePath) (*huma.StreamResponse, error) {
		z, err := s.DerivedData().DownloadFolderZip(ctx, principal(ctx), in.FileID)
		if err != nil {
			return nil, err
		}
		return streamZip(z), nil
	})

	lz := status(publicOp(http.MethodGet, "/drive/shared-link/{token}/download.zip", "downloadSharedLinkZip", "Download a shared folder as a ZIP archive", tag), http.StatusOK)
	lz.Description = "Streams the folder a link shares, or `folder_id` inside it, as `application/zip`. " + rule + linkGoneDoc
	lz.Responses = zipResponses()
	lz.Hidden = true
	longStream(&lz)
	huma.Register(api, errs(lz, conflict), func(ctx context.Context, in *struct {
		LinkPath
		FolderID string `query:"folder_id" maxLength:"200" doc:"A folder inside the shared folder. The shared folder itself when absent."`
	}) (*huma.StreamResponse, error) {
		z, err := s.Links().LinkFolderZip(ctx, in.Token, in.FolderID)
		if err != nil {
			return nil, err
		}
		return streamZip(z), nil
	})
}

// longStream exempts an operation whose answer is a long stream from the
// request timeout, as the server exempts operations taking large bodies
// (web/limits.go deadline): a big archive takes longer than a minute to send,
// and a client that stops reading is cut off by the I/O idle timeout instead.
// The operation takes no body; the limit only marks it.
func longStream(o *huma.Operation) { o.MaxBodyBytes = 2 << 20 }

func zipResponses() map[string]*huma.Response {
	return map[string]*huma.Response{"200": {Description: "The folder as a ZIP archive.",
		Content: map[string]*huma.MediaType{"application/zip": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}}
}

// streamZip answers the archive; the status is sent before the first entry,
// so a later failure can only cut the body short.
func streamZip(z *drive.FolderZip) *huma.StreamResponse {
	return &huma.StreamResponse{Body: func(hc huma.Context) {
		hc.SetHeader("Content-Type", "application/zip")
		hc.SetHeader("Content-Disposition", presign.ContentDisposition(z.Name, false))
		hc.SetHeader("Cache-Control", "no-store")
		hc.SetHeader("X-Content-Type-Options", "nosniff")
		hc.SetStatus(http.StatusOK)
		ctx := hc.Context()
		if err := z.WriteTo(ctx, hc.BodyWriter()); err != nil {
			if ctx.Err() == nil {
				slog.ErrorContext(ctx, "folder zip cut short", "archive", z.Name, "err", err)
			}
			// Abort the connection: the client must not take a truncated
			// archive for a whole one.
			panic(http.ErrAbortHandler)
		}
	}}
}
