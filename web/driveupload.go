package web

import (
	"context"
	"net/http"
	"net/url"

	"atrium/app/drive"
	"atrium/web/presign"
)

// DriveUpload is the blob handler's PutFunc for the presigned PUT of the
// drive's three-step upload: it hands the body to the drive service, which
// checks the declared size and content type and streams the bytes to the store.
func DriveUpload(svc *drive.Service) presign.PutFunc {
	return func(ctx context.Context, ref string, _ url.Values, r *http.Request) error {
		hash, err := svc.Uploads().ReceiveUpload(ctx, ref, r.Header.Get("Content-Type"), r.ContentLength, r.Body)
		if err != nil {
			return err // an *app.Error is answered by its code (web/problem)
		}
		presign.ResponseHeader(ctx).Set("ETag", `"`+hash+`"`)
		return nil
	}
}
