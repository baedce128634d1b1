package rest

import (
	"context"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
)

// registerDriveTus adds the resolve operation of resumable uploads and
// describes the tus protocol endpoints, which the tus door (package web/tus)
// serves outside huma (spec §4.5).
func registerDriveTus(api huma.API, d Deps) {
	const tag = "Drive"
	s := d.Drive
	res := status(op(http.MethodPost, "/drive/tus/{upload_id}/resolve", "resolveTusUpload", "Settle the name conflict of a completed resumable upload", tag, app.ScopeDriveWrite), http.StatusOK)
	res.Description = "A completed resumable upload whose name is taken by a live item of the folder waits (`Atrium-Upload-Status: conflict` on its last PATCH and on HEAD) until it is resolved: `skip` discards it and returns the existing item, `rename` stores it as `name (1).ext`, `overwrite` makes it a new version of the existing file (507 when the quota cannot hold it; 423 `locked` while the file is locked: an upload holds no lock, not even its user's). When the item is gone meanwhile, the upload becomes a file of its own name. An upload not in conflict → 409; another user's → 404. Unresolved uploads expire 24 hours after completion."
	huma.Register(api, errs(res, http.StatusNotFound, http.StatusConflict, http.StatusLocked, http.StatusInsufficientStorage), func(ctx context.Context, in *struct {
		UploadID string `path:"upload_id" maxLength:"200" doc:"Upload id (the last segment of the upload's Location)."`
		Strategy string `query:"strategy" required:"true" enum:"skip,rename,overwrite" doc:"How to settle the conflict."`
	}) (*body[drive.TusResolution], error) {
		r, err := s.Uploads().ResolveTusUpload(ctx, principal(ctx), in.UploadID, in.Strategy)
		return out(r), err
	})
	describeTus(api, api.OpenAPI().Paths["/api/v1/drive/tus/{upload_id}/resolve"].Post)
}

// describeTus adds documentation-only operations for the tus protocol; their
// error responses are problem+json, as resolve's.
func describeTus(api huma.API, resolve *huma.Operation) {
	const tag = "Drive"
	str := &huma.Schema{Type: huma.TypeString}
	num := &huma.Schema{Type: huma.TypeInteger, Format: "int64", Minimum: new(float64)}
	hdr := func(name, doc string, schema *huma.Schema, required bool) *huma.Param {
		return &huma.Param{Name: name, In: "header", Description: doc, Required: required, Schema: schema}
	}
	tusResumable := hdr("Tus-Resumable", "Protocol version: `1.0.0` (required except on HEAD).", str, false)
	uploadID := &huma.Param{Name: "upload_id", In: "path", Required: true, Description: "Upload id.", Schema: str}
	header := func(doc string, schema *huma.Schema) *huma.Param {
		return &huma.Param{Description: doc, Schema: schema}
	}
	expires := header("When the upload is dropped unless more bytes arrive (RFC 9110 date): 24 hours after its last activity.", str)
	offset := header("Bytes received so far.", num)
	state := header("`done` or `conflict` once the upload is complete.", str)
	fileID := header("The file the upload became, once done.", str)
	problem := resolve.Responses["404"].Content
	errors := func(codes ...string) map[string]*huma.Response {
		m := map[string]*huma.Response{}
		for _, c := range codes {
			n, _ := strconv.Atoi(c)
			m[c] = &huma.Response{Description: http.StatusText(n), Content: problem}
		}
		return m
	}
	add := func(method, path, id, summary, desc string, scope string, params []*huma.Param, ok string, okResp *huma.Response, errs ...string) {
		o := &huma.Operation{Method: method, Path: "/api/v1" + path, OperationID: id, Summary: summary, Description: desc,
			Tags: []string{tag}, Parameters: params, Responses: errors(errs...)}
		o.Responses[ok] = okResp
		if scope != "" {
			o.Security = []map[string][]string{{"bearer": {scope}}}
			for k, v := range errors("401", "403") {
				o.Responses[k] = v
			}
		}
		api.OpenAPI().AddOperation(o)
	}

	add(http.MethodOptions, "/drive/tus/", "discoverTus", "Discover the resumable upload protocol",
		"tus 1.0.0 discovery; no credential needed.", "", nil, "204",
		&huma.Response{Description: "The protocol's capabilities.", Headers: map[string]*huma.Param{
			"Tus-Resumable": header("`1.0.0`.", str),
			"Tus-Version":   header("`1.0.0`.", str),
			"Tus-Extension": header("`creation,creation-with-upload,termination,creation-defer-length,expiration`.", str),
			"Tus-Max-Size":  header("The largest upload in bytes.", num),
		}})
	add(http.MethodPost, "/drive/tus/", "createTusUpload", "Create a resumable upload",
		"Creates an upload (tus creation). `Upload-Metadata` carries base64 values: `filename` (required; `name` is accepted as Uppy sends it), `filetype` (guessed from the name when absent) and `parent_id` (a folder of yours or shared with you for editing; the root when absent). Give `Upload-Length` (a plain decimal number: `5`; `+5`, `05` or spaces → 400), or `Upload-Defer-Length: 1` and the length on a later PATCH. The quota is checked here when the length is known (507 `quota_exceeded`) and again as bytes arrive. A body with `Content-Type: application/offset+octet-stream` is the first chunk (creation-with-upload). The upload belongs to its creator: other users get 404. Abandoned uploads expire 24 hours after their last activity (`Upload-Expires`).",
		app.ScopeDriveWrite, []*huma.Param{tusResumable,
			hdr("Upload-Length", "Total size in bytes.", num, false),
			hdr("Upload-Defer-Length", "`1` when the size is not known yet.", num, false),
			hdr("Upload-Metadata", "Comma-separated `key base64(value)` pairs: `filename`, `filetype`, `parent_id`.", str, false)},
		"201", &huma.Response{Description: "Created; `Location` is the upload's URL.", Headers: map[string]*huma.Param{
			"Location": header("The upload's URL: `…/api/v1/drive/tus/{upload_id}`.", str), "Upload-Expires": expires, "Upload-Offset": offset}},
		"400", "404", "409", "412", "413", "422", "507")
	add(http.MethodHead, "/drive/tus/{upload_id}", "getTusUploadOffset", "Get a resumable upload's offset",
		"Where to resume: `Upload-Offset` bytes have been stored. A complete upload carries `Atrium-Upload-Status` (`done` with `Atrium-File-Id`, or `conflict`: see resolve).",
		app.ScopeDriveRead, []*huma.Param{uploadID, tusResumable},
		"200", &huma.Response{Description: "The upload's state.", Headers: map[string]*huma.Param{
			"Upload-Offset": offset, "Upload-Length": header("Total size, unless deferred.", num),
			"Upload-Defer-Length": header("`1` while the size is deferred.", num), "Upload-Metadata": header("The metadata.", str),
			"Upload-Expires": expires, "Atrium-Upload-Status": state, "Atrium-File-Id": fileID, "Cache-Control": header("`no-store`.", str)}},
		"404")
	add(http.MethodPatch, "/drive/tus/{upload_id}", "patchTusUpload", "Append bytes to a resumable upload",
		"Appends the body (`Content-Type: application/offset+octet-stream`, exactly; any other type → 415 `unsupported_media_type`) at `Upload-Offset`, which must equal the stored offset (else 409). `Upload-Offset` and `Upload-Length` are plain decimal numbers (`5`; `+5`, `05` or spaces → 400). `Upload-Length` declares a deferred length. Bytes are durable before the response; a broken-off body keeps what arrived. Beyond the quota → 507. With the last byte the upload becomes a drive file (SHA-256 computed while streaming; event `drive.file.created`), or waits in the `conflict` state when the folder holds an item of its name.",
		app.ScopeDriveWrite, []*huma.Param{uploadID, tusResumable,
			hdr("Upload-Offset", "Where the body starts.", num, true),
			hdr("Upload-Length", "Total size, for an upload created with a deferred length.", num, false)},
		"204", &huma.Response{Description: "Stored.", Headers: map[string]*huma.Param{
			"Upload-Offset": offset, "Upload-Expires": expires, "Atrium-Upload-Status": state, "Atrium-File-Id": fileID}},
		"400", "404", "409", "412", "413", "415", "423", "507")
	patch := api.OpenAPI().Paths["/api/v1/drive/tus/{upload_id}"].Patch
	patch.RequestBody = &huma.RequestBody{Description: "The bytes; may be empty (a PATCH that only declares a deferred `Upload-Length`, or an upload of no bytes).",
		Content: map[string]*huma.MediaType{"application/offset+octet-stream": {Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}}}}
	add(http.MethodDelete, "/drive/tus/{upload_id}", "terminateTusUpload", "Terminate a resumable upload",
		"Drops the upload and its stored bytes (tus termination); an upload in conflict is discarded. A file the upload already became stays.",
		app.ScopeDriveWrite, []*huma.Param{uploadID, tusResumable},
		"204", &huma.Response{Description: "Terminated."}, "404", "412")
}
