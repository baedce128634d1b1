package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
)

// EditQuery are the optional editor settings of an edit session.
type EditQuery struct {
	Lang  string `query:"lang" maxLength:"35" doc:"User interface language of the editor, a BCP 47 tag such as en or de-CH."`
	Theme string `query:"theme" maxLength:"32" doc:"Editor theme: light or dark (passed to the editor as its THEME_ID placeholder or a theme parameter)."`
}

func (q EditQuery) request() drive.EditRequest {
	return drive.EditRequest{Lang: q.Lang, Theme: q.Theme}
}

// CreateDocumentRequest is the body of create-document.
type CreateDocumentRequest struct {
	Name     string `json:"name,omitempty" maxLength:"255" doc:"File name. Its extension gives the type when type is absent; the type's extension is added when the name has none. Default: New document.odt (New spreadsheet.ods, …). A taken name gets a number: name (1).odt."`
	Type     string `json:"type,omitempty" enum:"odt,ods,odp,docx" doc:"Document type; derived from the name's extension when absent, odt when neither says."`
	ParentID string `json:"parent_id,omitempty" maxLength:"200" doc:"Folder to create the document in; the root when absent."`
	Lang     string `json:"lang,omitempty" maxLength:"35" doc:"User interface language of the editor (BCP 47)."`
	Theme    string `json:"theme,omitempty" maxLength:"32" doc:"Editor theme: light or dark."`
}

const editSessionDoc = " EditSessionResponse: `edit_url` (the editor's URL for the file: the discovery's `urlsrc` with its placeholders filled or dropped, `WOPISrc={public_url}/wopi/files/{file_id}` and `lang`/`theme` appended), `access_token` and `access_token_ttl` (as WOPI defines it: the token's expiry in milliseconds since the Unix epoch; `expires_at` is the same instant), `editor` (`collabora`, `onlyoffice` or `wopi`), `action` (`edit` or `view`), `file_id` and `wopi_src`. To open the editor, POST a form with the fields `access_token` and `access_token_ttl` to `edit_url`, targeting an iframe. The token is bound to the file, the user and the permission, lasts `[editor] access_token_ttl` (10 hours by default), and every WOPI call checks the user's permissions again. While the editor holds the document it takes an editor lock (30 minutes, refreshed by the editor): WebDAV and REST writes → 423 `locked`, those of the user who opened the editor included. No editor configured (`[editor] url`), or one that cannot open this file type → 501 `editor_unavailable`; an editor that does not answer its discovery → 503 `unavailable`."

func registerDriveEditor(api huma.API, d Deps) {
	const tag = "Drive"
	read, write := app.ScopeDriveRead, app.ScopeDriveWrite
	s := d.Drive.Editing()
	const nf, conflict, unimpl, unavail = http.StatusNotFound, http.StatusConflict, http.StatusNotImplemented, http.StatusServiceUnavailable

	eu := status(op(http.MethodGet, "/drive/{file_id}/edit-url", "getEditUrl", "Open a file in the online editor", tag, write), http.StatusOK)
	eu.Description = "Starts an online editing session (Collabora Online or ONLYOFFICE through WOPI) of a file you own or that is shared with you: the editor's `edit` action when you may change the file, its `view` action (or `edit`, read-only) when it is shared with you for viewing. A folder, a file in the trash or an archived file → 409." + editSessionDoc
	huma.Register(api, errs(eu, nf, conflict, unimpl, unavail), func(ctx context.Context, in *struct {
		FilePath
		EditQuery
	}) (*body[drive.EditSession], error) {
		es, err := s.EditURL(ctx, principal(ctx), in.FileID, in.request())
		return out(es), err
	})

	ed := status(op(http.MethodGet, "/drive/{file_id}/editors", "listEditors", "Who is editing a file", tag, read), http.StatusOK)
	ed.Description = "The users in the file's online editing session, while the editor's lock on the file lives (an empty array otherwise): `user_id`, `display_name`, `email`, `guest` (true for someone editing through a shared link, who has no `user_id`), `since` (when their editor opened the file) and `expires_at` (when the editor lock ends unless the editor refreshes it)."
	huma.Register(api, errs(ed, nf), func(ctx context.Context, in *FilePath) (*body[[]drive.EditorUser], error) {
		l, err := s.Editors(ctx, principal(ctx), in.FileID)
		return out(l), err
	})

	cd := op(http.MethodPost, "/drive/create-document", "createDocument", "Create an empty document and open it in the editor", tag, write)
	cd.Description = "Creates an empty office document — `odt` (text), `ods` (spreadsheet), `odp` (presentation) or `docx` — in `parent_id` (default the root), as a new file through the normal upload path (quota, versions, `drive.file.created`), and opens an editing session of it (201 EditSessionResponse, with the created FileItem in `file`). Without an editor configured, or one that cannot edit the type, nothing is created → 501 `editor_unavailable`. A name whose extension contradicts `type` → 422." + editSessionDoc
	huma.Register(api, errs(cd, nf, conflict, http.StatusLocked, unimpl, unavail, http.StatusInsufficientStorage), func(ctx context.Context, in *struct {
		Body CreateDocumentRequest
	}) (*body[drive.EditSession], error) {
		b := in.Body
		es, err := s.CreateDocument(ctx, principal(ctx), drive.CreateDocumentRequest{Name: b.Name, Type: b.Type, ParentID: b.ParentID,
			EditRequest: drive.EditRequest{Lang: b.Lang, Theme: b.Theme}})
		return out(es), err
	})

	odf := op(http.MethodPost, "/drive/{file_id}/save-as-odf", "saveAsOdf", "Save a copy as an open document", tag, write)
	odf.Description = "Converts a Word, Excel or PowerPoint document (docx, doc, xlsx, xls, pptx, ppt and their macro/template variants, rtf) to its open-document equivalent (odt, ods, odp) with LibreOffice (`soffice --headless`, at most 2 minutes by default) and stores the result as a new file beside the original — in your root when the original is shared with you and you may not add to its folder — named like the original with the new extension (`report.odt`, or `report (1).odt` when taken); returns it (201 FileItem). The original is unchanged. Already an open document, a folder or another type → 422; a document LibreOffice cannot read → 422; LibreOffice not installed on the server → 501 `editor_unavailable`; a conversion that runs out of time → 503."
	huma.Register(api, errs(odf, nf, conflict, http.StatusLocked, unimpl, unavail, http.StatusInsufficientStorage), func(ctx context.Context, in *FilePath) (*body[drive.File], error) {
		f, err := s.SaveAsODF(ctx, principal(ctx), in.FileID)
		return out(f), err
	})

	lk := status(publicOp(http.MethodGet, "/drive/shared-link/{token}/edit-url", "getSharedLinkEditUrl", "Open a shared file in the online editor", tag), http.StatusOK)
	lk.Description = "Starts an online editing session of a file shared by an `edit` link; the guest edits on behalf of the link's creator (new versions are theirs, within their organisation's quota), and the session's access token stops working when the link is revoked or expires. A `view` link → 403; a folder link → 409." + linkGoneDoc + editSessionDoc
	lk.Errors = append(lk.Errors, http.StatusForbidden)
	huma.Register(api, errs(lk, conflict, unimpl, unavail), func(ctx context.Context, in *struct {
		LinkPath
		EditQuery
	}) (*body[drive.EditSession], error) {
		es, err := s.LinkEditURL(ctx, in.Token, in.request())
		return out(es), err
	})
}
