package ui

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"atrium/app"
)

// page is what every template gets.
type page struct {
	Title string
	// Path is the request's path (the current navigation item).
	Path string
	// V is the signed-in person; nil on the pages before sign-in.
	V    *viewer
	Nav  []navLink
	CSRF string
	// Flash is a confirmation, Error a problem to show at the top of the page.
	Flash string
	Error string
	// Data is the page's own.
	Data any
	// Outside marks a page opened from a link by someone who may have no
	// account (a shared item, an invitation or password reset e-mail): no
	// header, not indexed, and no Referer sent from it (its URL holds the
	// link's token).
	Outside bool
	// NoScript leaves the app's script out, for a page without any.
	NoScript bool
}

var funcs = template.FuncMap{
	// bytes is a size as people read it (1.5 KB, 12 MB).
	"bytes": humanBytes,
	// when formats a time (or *time.Time; nil is "never") for people.
	"when": func(v any) string {
		switch t := v.(type) {
		case time.Time:
			return t.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if t == nil {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
		return ""
	},
	// iso formats a time for a <time datetime> attribute.
	"iso": func(v any) string {
		switch t := v.(type) {
		case time.Time:
			return t.UTC().Format(time.RFC3339)
		case *time.Time:
			if t != nil {
				return t.UTC().Format(time.RFC3339)
			}
		}
		return ""
	},
}

// parsePages parses every page with the layout.
func parsePages() map[string]*template.Template {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/adminnav.html", "templates/hookdialogs.html"))
	out := map[string]*template.Template{}
	for _, name := range []string{"signin", "signin_code", "forgot", "settings", "message", "drive", "contacts", "calendar",
		"admin_users", "admin_teams", "admin_usage", "admin_audit", "webhooks", "webhook", "principals", "problems", "account", "share", "connect"} {
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html"))
	}
	return out
}

// render writes a page with its status. The page is rendered to a buffer
// first, so that a template error is a clean 500.
func (u *UI) render(w http.ResponseWriter, r *http.Request, code int, name string, p page) {
	p.Path = r.URL.Path
	if p.V != nil {
		p.Nav = nav(p.V, r.URL.Path)
		if p.CSRF == "" {
			p.CSRF = p.V.CSRF
		}
	}
	var buf bytes.Buffer
	if err := u.pages[name].ExecuteTemplate(&buf, "layout.html", p); err != nil {
		u.log.Error("render page", "page", name, "err", err)
		http.Error(w, "Internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// fail shows an app error as a page.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	code := status(err)
	retryAfter(w, err)
	if code >= 500 {
		u.log.Error("web app", "path", r.URL.Path, "err", err)
	}
	u.render(w, r, code, "message", page{Title: "Something went wrong", V: v, Error: message(err)})
}

// forbidden refuses a request that is not this origin's or lacks its
// anti-forgery token.
func (u *UI) forbidden(w http.ResponseWriter, r *http.Request, v *viewer, msg string) {
	u.render(w, r, http.StatusForbidden, "message", page{Title: "Request refused", V: v, Error: msg})
}

// retryAfter sends the Retry-After of an error that has one (a rate limit,
// a busy service).
func retryAfter(w http.ResponseWriter, err error) {
	var e *app.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
}
