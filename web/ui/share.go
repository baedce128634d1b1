package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"atrium/app"
	"atrium/app/drive"
	"atrium/web/problem"
)

// The shared-link page: what a person sees at share_link ({public_url}/s/{token}),
// with or without an account. Server-rendered, no script: the file with its
// name, size and type, an inline preview for images and a download button;
// for a folder a table of its items with links into subfolders and a
// "Download as ZIP" link to the folder shown (the REST API's shared-link
// download.zip). Downloads and previews go through /s/{token}/download and
// /s/{token}/preview, which redirect to a fresh presigned URL, so a page left
// open keeps working. The link's token is the credential: the page is kept out
// of caches, search engines, frames and Referer headers.

// shareData is the page of a shared link, or why it cannot be shown (Error).
type shareData struct {
	Error   string
	Token   string
	Link    drive.SharedLink
	Preview bool
	PrevURL string
	NextURL string
}

func (d shareData) base() string { return "/s/" + url.PathEscape(d.Token) }

// FolderURL is the page of a folder of the link.
func (d shareData) FolderURL(id string) string {
	if id == d.Link.ID {
		return d.base()
	}
	return d.base() + "/f/" + url.PathEscape(id)
}

// DownloadURL downloads the shared file ("") or a file inside the shared folder.
func (d shareData) DownloadURL(id string) string {
	if id == "" {
		return d.base() + "/download"
	}
	return d.base() + "/download?file_id=" + url.QueryEscape(id)
}

// ZipURL downloads the folder shown as a ZIP archive: the shared folder, or
// the subfolder of it being browsed.
func (d shareData) ZipURL() string {
	u := "/api/v1/drive/shared-link/" + url.PathEscape(d.Token) + "/download.zip"
	if d.Link.Folder != nil && d.Link.Folder.ID != d.Link.ID {
		u += "?folder_id=" + url.QueryEscape(d.Link.Folder.ID)
	}
	return u
}

// PreviewURL shows the shared file inline.
func (d shareData) PreviewURL() string { return d.base() + "/preview" }

func (d shareData) pageURL(n int) string {
	u := d.base()
	if d.Link.Folder != nil && d.Link.Folder.ID != d.Link.ID {
		u = d.FolderURL(d.Link.Folder.ID)
	}
	return u + "?page=" + strconv.Itoa(n)
}

// shareCSP is the page's policy: its style and images (the presigned
// previews are of the public URL, or of the object store's origin store
// when downloads point at it), nothing else; no script, form or frame.
func shareCSP(publicURL, store string) string {
	img := "'self'"
	if p, err := url.Parse(publicURL); err == nil && p.Scheme != "" && p.Host != "" {
		img += " " + p.Scheme + "://" + p.Host
	}
	if store != "" {
		img += " " + store
	}
	return "default-src 'none'; img-src " + img + "; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// shareHeaders keeps the page and its redirects out of caches, search
// engines, frames and Referer headers.
func (u *UI) shareHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", shareCSP(u.cfg.PublicURL, u.store))
}

// sharePage shows the shared item, or a folder inside the shared folder.
func (u *UI) sharePage(w http.ResponseWriter, r *http.Request) {
	u.shareHeaders(w)
	d := shareData{Token: r.PathValue("token")}
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	l, err := u.cfg.Drive.Links().LinkInfo(r.Context(), d.Token, drive.LinkQuery{FolderID: r.PathValue("folder_id"), Page: n, PerPage: 100})
	if err != nil {
		if app.ErrorCode(err) == app.EValidation {
			err = app.Errorf(app.ENotFound, "No such folder in this link.")
		}
		u.shareFail(w, r, err)
		return
	}
	d.Link = l
	title := l.Name
	d.Preview = !l.IsFolder && strings.HasPrefix(l.MimeType, "image/") && drive.InlineSafe(l.MimeType)
	if l.IsFolder {
		if l.Folder != nil && l.Folder.ID != l.ID {
			title = l.Folder.Name + " — " + l.Name
		}
		if l.Page > 1 {
			d.PrevURL = d.pageURL(l.Page - 1)
		}
		if l.Page < l.TotalPages {
			d.NextURL = d.pageURL(l.Page + 1)
		}
	}
	u.renderShare(w, r, http.StatusOK, title, d)
}

// shareRedirect sends the browser to a fresh presigned URL of the shared file
// or of file_id inside the shared folder; inline shows it (preview).
func (u *UI) shareRedirect(inline bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u.shareHeaders(w)
		token, fileID := r.PathValue("token"), r.URL.Query().Get("file_id")
		var l drive.PresignedURL
		var err error
		if inline {
			l, err = u.cfg.Drive.Links().LinkPreview(r.Context(), token, fileID)
		} else {
			l, err = u.cfg.Drive.Links().LinkDownload(r.Context(), token, fileID)
		}
		if err != nil {
			u.shareFail(w, r, err)
			return
		}
		http.Redirect(w, r, l.URL, http.StatusFound)
	}
}

// shareFail shows a problem as the page: 404 for anything a link cannot
// reach (unknown, expired, revoked, outside the shared folder).
func (u *UI) shareFail(w http.ResponseWriter, r *http.Request, err error) {
	code, _ := problem.Status(app.ErrorCode(err), nil)
	title, d := "Link not available", shareData{Error: "This shared link does not exist, has expired or was revoked. Ask the person who shared it for a new link."}
	switch {
	case code == http.StatusNotFound:
	case code >= 500:
		id := u.requestID(r)
		u.log.Error("shared link page", "err", err, "request_id", id)
		title, d.Error = "Something went wrong", "The shared item cannot be shown right now. Try again later (request "+id+")."
	default:
		retryAfter(w, err)
		title, d.Error = http.StatusText(code), message(err)
	}
	u.renderShare(w, r, code, title, d)
}

func (u *UI) renderShare(w http.ResponseWriter, r *http.Request, code int, title string, d shareData) {
	u.render(w, r, code, "share", page{Title: title, Outside: true, NoScript: true, Data: d})
}

// requestID is the id of the request, as the logs and problems name it.
func (u *UI) requestID(r *http.Request) string {
	if u.cfg.RequestID == nil {
		return ""
	}
	return u.cfg.RequestID(r)
}
