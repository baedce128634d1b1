package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
)

// previewOutput is the redirect of a preview token to the presigned preview.
type previewOutput struct {
	Status   int
	Location string `header:"Location" doc:"Presigned URL of the WebP preview, valid 15 minutes."`
}

func registerDrivePreviews(api huma.API, d Deps) {
	const tag = "Drive"
	read := app.ScopeDriveRead
	s := d.Drive
	const nf, conflict, invalid = http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity
	const formats = " Thumbnails and previews are made of JPEG, PNG, GIF, WebP, TIFF and BMP images; other types (PDF and HEIC included) and folders → 404 `no_preview`. An image over the pixel limit (50 megapixels by default) is refused before it is decoded → 422. An archived file → 409."

	th := status(op(http.MethodGet, "/drive/{file_id}/thumbnail", "getThumbnail", "Get a thumbnail URL", tag, read), http.StatusOK)
	th.Description = "ThumbnailUrl `{url, size, expires_at}`: a presigned URL (15 minutes, no bearer needed) of a WebP thumbnail fitting a `size`×`size` square (aspect ratio kept, never enlarged). Made on first request and cached by content hash; the cache is bounded (`[drive] preview_cache_bytes`, least recently used evicted)." + formats
	huma.Register(api, errs(th, nf, conflict, invalid), func(ctx context.Context, in *struct {
		FilePath
		Size int `query:"size" minimum:"64" maximum:"512" default:"256" doc:"Bounding square in pixels, 64–512."`
	}) (*body[drive.Thumbnail], error) {
		t, err := s.DerivedData().Thumbnail(ctx, principal(ctx), in.FileID, in.Size)
		return out(t), err
	})

	tok := status(op(http.MethodPost, "/drive/{file_id}/preview-token", "createPreviewToken", "Get a preview token", tag, read), http.StatusOK)
	tok.Description = "`{token, expires_at, preview_url}`: a single-use token, valid 5 minutes, that opens the image's WebP preview at `preview_url` (`GET /drive/{file_id}/preview?token=…`) without a bearer, for an `<img>` or a new tab." + formats
	huma.Register(api, errs(tok, nf, conflict), func(ctx context.Context, in *FilePath) (*body[drive.PreviewTicket], error) {
		t, err := s.DerivedData().CreatePreviewToken(ctx, principal(ctx), in.FileID)
		return out(t), err
	})

	pv := status(publicOp(http.MethodGet, "/drive/{file_id}/preview", "getPreview", "Open a preview", tag), http.StatusFound)
	pv.Description = "Redirects (302) to a presigned URL of a WebP preview of the image (at most 1280 px on its longer side). No authentication: the token from `POST /drive/{file_id}/preview-token` is the credential, and it works once. An unknown, already used or expired token → 404 `not_found`, as is a file its user can no longer see." + formats
	huma.Register(api, errs(pv, conflict), func(ctx context.Context, in *struct {
		FilePath
		Token string `query:"token" maxLength:"200" doc:"The preview token."`
	}) (*previewOutput, error) {
		l, err := s.DerivedData().Preview(ctx, in.FileID, in.Token)
		if err != nil {
			return nil, err
		}
		return &previewOutput{Status: http.StatusFound, Location: l.URL}, nil
	})
}
