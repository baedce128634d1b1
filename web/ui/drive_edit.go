package ui

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

// The editor page (/drive/edit/{id}): a file of the drive opened in the
// online editor (WOPI: Collabora Online, ONLYOFFICE Docs). The page asks the
// drive service for an edit session (EditURL, as GET
// /api/v1/drive/{id}/edit-url) and embeds the editor the WOPI way: a form
// POSTs the access token to the editor's URL into a frame (assets/
// drive_edit.js submits it), so that the token never lands in a URL, a
// history entry or storage. This page alone lets a frame and a form reach the
// editor's origin (editorCSP); every other page keeps the site-wide policy.

// editorProbe bounds how long a drive page waits for the editor's discovery
// to mark the files the editor opens; past it the menus simply lack "Open in
// editor".
const editorProbe = 2 * time.Second

// driveEditData is the editor page.
type driveEditData struct {
	Name string
	// BackURL is the folder of the file (its owner's view), or the shared view.
	BackURL        string
	EditURL        string
	AccessToken    string
	AccessTokenTTL int64
	// ReadOnly: the person may only view the file; the editor opens it so.
	ReadOnly bool
}

func parseDriveEditPage(pages map[string]*template.Template) {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	pages["drive_edit"] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, "templates/drive_edit.html"))
}

// driveItemGet serves GET /drive/{id}/{what}: a file's download or a
// folder's ZIP. (One pattern for both, so that /drive/edit/{id} is the more
// specific route and does not conflict with them.)
func (u *UI) driveItemGet(w http.ResponseWriter, r *http.Request, v *viewer) {
	switch r.PathValue("what") {
	case "download":
		u.driveDownload(w, r, v)
	case "download.zip":
		u.driveZip(w, r, v)
	default:
		u.fail(w, r, v, app.Errorf(app.ENotFound, "No such page."))
	}
}

// editorOpens returns which files the online editor opens (by name and mime
// type), or nil when no editor is configured or it does not answer now.
func (u *UI) editorOpens(r *http.Request) func(name, mimeType string) bool {
	if !u.cfg.Drive.Editing().EditorConfigured() {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), editorProbe)
	defer cancel()
	opens, err := u.cfg.Drive.Editing().EditorOpens(ctx)
	if err != nil {
		// Debug: every drive page would repeat it while the editor is down;
		// the editor's own door (edit-url) reports it to whoever opens a file.
		u.log.Debug("web app: the online editor's discovery", "err", err)
		return nil
	}
	return opens
}

// markEditable marks the files of a list the editor opens.
func (u *UI) markEditable(r *http.Request, items []driveItem) {
	if len(items) == 0 {
		return
	}
	opens := u.editorOpens(r)
	if opens == nil {
		return
	}
	for i := range items {
		items[i].Editable = !items[i].IsFolder && items[i].TrashedAt == nil && opens(items[i].Name, items[i].MimeType)
	}
}

// driveEdit opens a file in the online editor. A file the editor cannot open
// answers 409, and without an editor the page does not exist (404): the menus
// offer it only where it works.
func (u *UI) driveEdit(w http.ResponseWriter, r *http.Request, v *viewer) {
	id := r.PathValue("id")
	if !u.cfg.Drive.Editing().EditorConfigured() {
		u.fail(w, r, v, app.Errorf(app.ENotFound, "No online editor is configured on this server."))
		return
	}
	f, err := u.cfg.Drive.Detail(r.Context(), v.P, id)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	es, err := u.cfg.Drive.Editing().EditURL(r.Context(), v.P, id, drive.EditRequest{})
	if err != nil {
		switch app.ErrorCode(err) {
		case app.EEditorUnavailable:
			u.render(w, r, http.StatusConflict, "message", page{Title: "The editor cannot open this file", V: v, Error: message(err)})
		case app.EUnavailable:
			u.render(w, r, http.StatusServiceUnavailable, "message", page{Title: "The editor does not answer", V: v, Error: message(err)})
		default:
			u.fail(w, r, v, err)
		}
		return
	}
	origin, ok := webOrigin(es.EditURL)
	if !ok {
		u.fail(w, r, v, app.Errorf(app.EInternal, "The online editor's URL %q is not an http(s) URL.", es.EditURL))
		return
	}
	d := driveEditData{Name: f.Name, BackURL: "/drive/shared", EditURL: es.EditURL, AccessToken: es.AccessToken,
		AccessTokenTTL: es.AccessTokenTTL, ReadOnly: es.Action == "view"}
	if f.Permission == drive.PermOwner {
		d.BackURL = "/drive"
		if f.ParentID != nil && *f.ParentID != "" {
			d.BackURL = "/drive/" + url.PathEscape(*f.ParentID)
		}
	}
	w.Header().Set("Content-Security-Policy", editorCSP(u.csp, origin))
	u.render(w, r, http.StatusOK, "drive_edit", page{Title: f.Name, V: v, Data: d})
}

// editorCSP is the site-wide policy site with the editor's origin, and
// nothing wider, allowed as the target of the page's form and as its frame.
func editorCSP(site, origin string) string {
	csp := strings.Replace(site, "form-action 'self'", "form-action 'self' "+origin, 1)
	return strings.Replace(csp, "object-src 'none';", "object-src 'none'; frame-src "+origin+";", 1)
}

// webOrigin returns scheme://host[:port] of an http(s) URL.
func webOrigin(raw string) (string, bool) {
	p, err := url.Parse(raw)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || strings.ContainsAny(p.Host, " ;,'\"") {
		return "", false
	}
	return p.Scheme + "://" + p.Host, true
}
