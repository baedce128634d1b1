// Package docs serves a self-contained, human readable reference for the
// Atrium HTTP API.
//
// The page is rendered in the browser from the OpenAPI document by a small
// dependency-free script. Every asset the page loads (one HTML page, one
// script, one stylesheet) is embedded in the binary, so the documentation
// works fully offline: there are no CDNs, web fonts or third-party scripts.
//
// Mounting: the handler expects its mount prefix to be stripped and answers
// both the bare mount path and the mount path with a trailing slash:
//
//	h := http.StripPrefix("/api/v1/docs", docs.Handler("/api/v1/openapi.json", "Atrium API"))
//	mux.Handle("GET /api/v1/docs", h)
//	mux.Handle("GET /api/v1/docs/", h)
//
// The page refers to its assets with URLs relative to the address the browser
// used ("docs/docs.js" for /api/v1/docs, "docs.js" for /api/v1/docs/), so no
// mount path has to be configured and the page keeps working behind a reverse
// proxy that adds a path prefix.
package docs

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// ContentSecurityPolicy is sent with every response of the handler. It only
// allows same-origin scripts, styles and fetches (plus data: images).
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'"

// Asset file names, relative to the mount path.
const (
	scriptName = "docs.js"
	styleName  = "docs.css"
)

//go:embed assets/docs.js assets/docs.css
var assetFS embed.FS

type asset struct {
	body        []byte
	contentType string
	etag        string
}

var assets = map[string]*asset{
	scriptName: loadAsset(scriptName, "text/javascript; charset=utf-8"),
	styleName:  loadAsset(styleName, "text/css; charset=utf-8"),
}

func loadAsset(name, contentType string) *asset {
	b, err := assetFS.ReadFile("assets/" + name)
	if err != nil {
		panic("docs: missing embedded asset " + name + ": " + err.Error())
	}
	sum := sha256.Sum256(b)
	return &asset{body: b, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{{.StyleURL}}">
<script src="{{.ScriptURL}}" defer></script>
</head>
<body>
<a class="skip-link" href="#docs-main">Skip to content</a>
<div id="docs-app" data-spec-url="{{.SpecURL}}">
<header class="topbar">
<span class="brand">{{.Title}}</span>
<a class="download" href="{{.SpecURL}}" download>Download OpenAPI JSON</a>
</header>
<div class="layout">
<nav id="docs-sidebar" class="sidebar" aria-label="API operations">
<div class="search">
<label for="docs-search" class="visually-hidden">Filter operations</label>
<input id="docs-search" type="search" placeholder="Filter operations  ( / )" autocomplete="off" spellcheck="false" disabled>
</div>
<div id="docs-nav"></div>
</nav>
<main id="docs-main" class="content" tabindex="-1">
<p id="docs-status" class="load-status" role="status">Loading the API description&hellip;</p>
<noscript><p class="load-status">This page needs JavaScript to render the API reference. The raw OpenAPI document is available from the download link above.</p></noscript>
</main>
</div>
</div>
</body>
</html>
`))

type pageData struct {
	Title     string
	SpecURL   string
	ScriptURL string
	StyleURL  string
}

// Handler returns an http.Handler serving the API reference page and its
// assets. specURL is the address of the OpenAPI JSON document; it should be
// an absolute path on the same origin (for example "/api/v1/openapi.json"),
// because the Content-Security-Policy only permits same-origin fetches and a
// relative URL would resolve differently with and without a trailing slash.
// title is used for the HTML title and the page header; it is HTML-escaped.
//
// Routes, relative to the mount path (see the package documentation):
//
//	"" and "/"     the HTML page
//	"/docs.js"     the embedded script
//	"/docs.css"    the embedded stylesheet
//
// Anything else is 404; methods other than GET and HEAD get 405.
func Handler(specURL, title string) http.Handler {
	return &handler{specURL: specURL, title: title}
}

type handler struct {
	specURL string
	title   string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")

	// http.StripPrefix("/x") leaves "/docs.js"; http.StripPrefix("/x/")
	// leaves "docs.js". Accept both.
	name := strings.TrimPrefix(r.URL.Path, "/")
	a, isAsset := assets[name]
	if name != "" && !isAsset {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	if isAsset {
		hdr.Set("Content-Type", a.contentType)
		hdr.Set("ETag", a.etag)
		// Asset URLs are not versioned: let browsers cache but revalidate,
		// which is a cheap 304 thanks to the ETag.
		hdr.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
		return
	}
	h.servePage(w, r)
}

func (h *handler) servePage(w http.ResponseWriter, r *http.Request) {
	prefix := assetPrefix(r)
	var buf bytes.Buffer
	err := page.Execute(&buf, pageData{
		Title:     h.title,
		SpecURL:   h.specURL,
		ScriptURL: prefix + scriptName,
		StyleURL:  prefix + styleName,
	})
	if err != nil {
		http.Error(w, "docs: rendering page failed", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-cache")
	_, _ = w.Write(buf.Bytes())
}

// assetPrefix returns the prefix that turns an asset name into a URL relative
// to the page address the browser requested.
//
// For ".../docs/" the assets are siblings ("docs.js"). For ".../docs" (the
// mount path without trailing slash, which StripPrefix turns into "") the
// browser resolves relative URLs against the parent directory, so the last
// segment of the original request path has to be repeated ("docs/docs.js").
func assetPrefix(r *http.Request) string {
	if r.URL.Path != "" {
		return ""
	}
	orig := r.URL.EscapedPath()
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && r.RequestURI != "" {
		orig = u.EscapedPath()
	}
	seg := path.Base(orig)
	if seg == "" || seg == "." || seg == "/" || strings.HasSuffix(orig, "/") {
		return ""
	}
	// Keep the segment from being read as a scheme ("a:b/docs.js").
	return "./" + seg + "/"
}
