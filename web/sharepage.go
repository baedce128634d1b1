package web

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"atrium/app"
	"atrium/app/drive"
)

// The shared-link page: what a person sees at share_link ({public_url}/s/{token}).
// Server-rendered, no script, no external asset: the file with its name, size
// and type, an inline preview for images and a download button; for a folder a
// table of its items with links into subfolders and a "Download as ZIP" link
// to the folder shown (the REST API's shared-link download.zip). Downloads and previews go
// through /s/{token}/download and /s/{token}/preview, which redirect to a fresh
// presigned URL, so a page left open keeps working.

const sharePageCSS = `body{font:16px/1.5 system-ui,sans-serif;max-width:56rem;margin:2.5rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem;margin:.2rem 0;word-break:break-word}.meta{color:#555;margin:.2rem 0 1rem}
.btn{display:inline-block;padding:.55rem 1.1rem;background:#0b5cad;color:#fff;border-radius:4px;text-decoration:none}
.btn:hover{background:#094a8b}img.preview{display:block;max-width:100%;max-height:70vh;margin:1rem 0;border:1px solid #ddd}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #e5e5e5}
td.num,th.num{text-align:right;white-space:nowrap}a{color:#0b5cad}.crumbs{margin:.5rem 0}.crumbs span{color:#777}
.pager a{margin-right:1rem}footer{margin-top:2rem;color:#777;font-size:.85rem}`

var sharePageStyleHash = func() string {
	h := sha256.Sum256([]byte(sharePageCSS))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}()

var sharePageTmpl = template.Must(template.New("share").Funcs(template.FuncMap{"size": humanSize}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">
<title>{{.Title}} — Atrium</title><style>` + sharePageCSS + `</style></head><body>
{{if .Error}}<h1>{{.Title}}</h1><p>{{.Error}}</p>
{{else if .Link.IsFolder}}<p class="meta">Shared folder{{if eq .Link.Permission "edit"}} · editable{{end}}{{with .Link.ExpiresAt}} · available until {{.Format "2 Jan 2006 15:04 MST"}}{{end}}</p>
<h1>{{.Link.Name}}</h1>
{{if gt (len .Link.Breadcrumbs) 1}}<nav class="crumbs" aria-label="Path">{{range $i, $b := .Link.Breadcrumbs}}{{if $i}} <span>/</span> {{end}}<a href="{{$.FolderURL $b.ID}}">{{$b.Name}}</a>{{end}}</nav>{{end}}
<p><a class="btn" id="download-zip" href="{{.ZipURL}}" download>Download as ZIP</a></p>
{{if .Link.Items}}<table><thead><tr><th>Name</th><th>Type</th><th class="num">Size</th><th>Modified</th><th></th></tr></thead><tbody>
{{range .Link.Items}}<tr>{{if .IsFolder}}<td><a href="{{$.FolderURL .ID}}">{{.Name}}/</a></td><td>Folder</td><td class="num"></td><td>{{.UpdatedAt.Format "2006-01-02 15:04"}}</td><td></td>
{{else}}<td><a href="{{$.DownloadURL .ID}}" download="{{.Name}}">{{.Name}}</a></td><td>{{.MimeType}}</td><td class="num">{{size .SizeBytes}}</td><td>{{.UpdatedAt.Format "2006-01-02 15:04"}}</td><td><a class="dl" href="{{$.DownloadURL .ID}}" download="{{.Name}}">Download</a></td>{{end}}</tr>
{{end}}</tbody></table>
{{if gt .Link.TotalPages 1}}<p class="pager">{{if .PrevURL}}<a href="{{.PrevURL}}">← Previous</a>{{end}}Page {{.Link.Page}} of {{.Link.TotalPages}}{{if .NextURL}} <a href="{{.NextURL}}">Next →</a>{{end}}</p>{{end}}
{{else}}<p>This folder is empty.</p>{{end}}
{{else}}<p class="meta">Shared file{{if eq .Link.Permission "edit"}} · editable{{end}}{{with .Link.ExpiresAt}} · available until {{.Format "2 Jan 2006 15:04 MST"}}{{end}}</p>
<h1>{{.Link.Name}}</h1>
<p class="meta">{{size .Link.SizeBytes}} · {{.Link.MimeType}} · modified {{.Link.UpdatedAt.Format "2006-01-02 15:04"}}</p>
<p><a class="btn" id="download" href="{{.DownloadURL ""}}" download="{{.Link.Name}}">Download</a></p>
{{if .Preview}}<img class="preview" src="{{.PreviewURL}}" alt="{{.Link.Name}}">{{end}}
{{end}}<footer>Shared through Atrium.</footer></body></html>`))

type sharePageDoc struct {
	Title   string
	Error   string
	Token   string
	Link    drive.SharedLink
	Preview bool
	PrevURL string
	NextURL string
}

func (d sharePageDoc) base() string { return "/s/" + url.PathEscape(d.Token) }

// FolderURL is the page of a folder of the link.
func (d sharePageDoc) FolderURL(id string) string {
	if id == d.Link.ID {
		return d.base()
	}
	return d.base() + "/f/" + url.PathEscape(id)
}

// DownloadURL downloads the shared file ("") or a file inside the shared folder.
func (d sharePageDoc) DownloadURL(id string) string {
	if id == "" {
		return d.base() + "/download"
	}
	return d.base() + "/download?file_id=" + url.QueryEscape(id)
}

// ZipURL downloads the folder shown as a ZIP archive: the shared folder, or
// the subfolder of it being browsed.
func (d sharePageDoc) ZipURL() string {
	u := "/api/v1/drive/shared-link/" + url.PathEscape(d.Token) + "/download.zip"
	if d.Link.Folder != nil && d.Link.Folder.ID != d.Link.ID {
		u += "?folder_id=" + url.QueryEscape(d.Link.Folder.ID)
	}
	return u
}

// PreviewURL shows the shared file inline.
func (d sharePageDoc) PreviewURL() string { return d.base() + "/preview" }

func (d sharePageDoc) pageURL(n int) string {
	u := d.base()
	if d.Link.Folder != nil && d.Link.Folder.ID != d.Link.ID {
		u = d.FolderURL(d.Link.Folder.ID)
	}
	return u + "?page=" + strconv.Itoa(n)
}

// humanSize formats a byte count for people.
func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	f, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if f < 1024 {
			break
		}
		f, unit = f/1024, u
	}
	return fmt.Sprintf("%.1f %s", f, unit)
}

// shareRoutes registers the shared-link page.
func (s *Server) shareRoutes(e *gin.Engine) {
	if s.cfg.Drive == nil {
		return
	}
	e.GET("/s/:token", s.sharePage)
	e.GET("/s/:token/f/:folder_id", s.sharePage)
	e.GET("/s/:token/download", s.shareRedirect(false))
	e.GET("/s/:token/preview", s.shareRedirect(true))
}

// sharePageHeaders keeps the page out of caches, search engines, frames and
// Referer headers, and allows nothing but its own style and images.
func (s *Server) sharePageHeaders(c *gin.Context) {
	img := "'self'"
	if u, err := url.Parse(s.cfg.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		img += " " + u.Scheme + "://" + u.Host
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src "+img+"; style-src "+sharePageStyleHash+
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
}

func (s *Server) sharePage(c *gin.Context) {
	s.sharePageHeaders(c)
	d := sharePageDoc{Token: c.Param("token")}
	page, _ := strconv.Atoi(c.Query("page"))
	l, err := s.cfg.Drive.LinkInfo(c.Request.Context(), d.Token, drive.LinkQuery{FolderID: c.Param("folder_id"), Page: page, PerPage: 100})
	if err != nil {
		if app.ErrorCode(err) == app.EValidation {
			err = app.Errorf(app.ENotFound, "No such folder in this link.")
		}
		s.sharePageError(c, err)
		return
	}
	d.Link, d.Title = l, l.Name
	d.Preview = !l.IsFolder && strings.HasPrefix(l.MimeType, "image/") && drive.InlineSafe(l.MimeType)
	if l.IsFolder {
		if l.Folder != nil && l.Folder.ID != l.ID {
			d.Title = l.Folder.Name + " — " + l.Name
		}
		if l.Page > 1 {
			d.PrevURL = d.pageURL(l.Page - 1)
		}
		if l.Page < l.TotalPages {
			d.NextURL = d.pageURL(l.Page + 1)
		}
	}
	s.renderSharePage(c, http.StatusOK, d)
}

// shareRedirect sends the browser to a fresh presigned URL of the shared file
// or of file_id inside the shared folder; inline shows it (preview).
func (s *Server) shareRedirect(inline bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		s.sharePageHeaders(c)
		var l drive.PresignedURL
		var err error
		if inline {
			l, err = s.cfg.Drive.LinkPreview(c.Request.Context(), c.Param("token"), c.Query("file_id"))
		} else {
			l, err = s.cfg.Drive.LinkDownload(c.Request.Context(), c.Param("token"), c.Query("file_id"))
		}
		if err != nil {
			s.sharePageError(c, err)
			return
		}
		c.Redirect(http.StatusFound, l.URL)
	}
}

// sharePageError renders a problem as a page: 404 for anything a link cannot
// reach (unknown, expired, revoked, outside the shared folder).
func (s *Server) sharePageError(c *gin.Context, err error) {
	p := s.problems.fromError(err)
	d := sharePageDoc{Title: "Link not available", Error: "This shared link does not exist, has expired or was revoked. Ask the person who shared it for a new link."}
	switch {
	case p.Status == http.StatusNotFound:
	case p.Status >= 500:
		s.log.Error("shared link page", "err", err, "request_id", requestIDFrom(c.Request.Context()))
		d = sharePageDoc{Title: "Something went wrong", Error: "The shared item cannot be shown right now. Try again later (request " + requestIDFrom(c.Request.Context()) + ")."}
	default:
		d = sharePageDoc{Title: http.StatusText(p.Status), Error: p.Detail}
	}
	s.renderSharePage(c, p.Status, d)
}

func (s *Server) renderSharePage(c *gin.Context, status int, d sharePageDoc) {
	var b strings.Builder
	if err := sharePageTmpl.Execute(&b, d); err != nil {
		s.log.Error("render shared link page", "err", err)
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString("<!doctype html><title>Error</title><p>The page cannot be shown.</p>")
	}
	c.Data(status, "text/html; charset=utf-8", []byte(b.String()))
}
