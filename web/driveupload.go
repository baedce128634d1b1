package web

import (
	"context"
	"net/http"
	"net/url"

	"atrium/app"
	"atrium/app/drive"
	"atrium/storage/blob"
)

// DriveUpload is the blob handler's PutFunc for the presigned PUT of the
// drive's three-step upload: it hands the body to the drive service, which
// checks the declared size and content type and streams the bytes to the store.
func DriveUpload(svc *drive.Service) blob.PutFunc {
	return func(ctx context.Context, ref string, _ url.Values, r *http.Request) error {
		hash, err := svc.ReceiveUpload(ctx, ref, r.Header.Get("Content-Type"), r.ContentLength, r.Body)
		if err != nil {
			if code := app.ErrorCode(err); code != "" {
				st, _ := problemStatus(code)
				return statusError{status: st, code: code, msg: app.ErrorMessage(err)}
			}
			return err
		}
		blob.ResponseHeader(ctx).Set("ETag", `"`+hash+`"`)
		return nil
	}
}

// statusError carries an app error's status, code and message to the blob handler.
type statusError struct {
	status int
	code   string
	msg    string
}

func (e statusError) Error() string       { return e.msg }
func (e statusError) HTTPStatus() int     { return e.status }
func (e statusError) ProblemCode() string { return e.code }
