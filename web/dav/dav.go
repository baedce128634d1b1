// Package dav is Atrium's CardDAV (RFC 6352) and CalDAV (RFC 4791) doors. It is
// mounted at /dav/ on the one server; the gin middleware has already
// authenticated the request (HTTP Basic with e-mail and app password, or a
// bearer token), and every request without a principal is answered 401 with a
// Basic challenge.
//
// Layout:
//
//	/dav/                                 root: current-user-principal
//	/dav/principals/<user_id>/            the caller's principal
//	/dav/addressbooks/<user_id>/          address book home (CardDAV door)
//	/dav/addressbooks/<user_id>/<book>/   an address book
//	/dav/addressbooks/<user_id>/<book>/<name>.vcf   a contact
//	/dav/calendars/<user_id>/             calendar home (CalDAV door)
//	/dav/calendars/<user_id>/<cal>/       a calendar
//	/dav/calendars/<user_id>/<cal>/<name>.ics       an event
//
// Handler serves the root and the principal and hands every other path to the
// Door whose Prefix it starts with. A Door reports the properties it adds to the
// principal (CardDAV: addressbook-home-set; CalDAV: calendar-home-set and
// calendar-user-address-set) and its DAV capability (the DAV header's
// "addressbook", "calendar-access"). /.well-known/carddav and
// /.well-known/caldav redirect to /dav/ (RFC 6764).
//
// A door is carddav.go or caldav.go over its app service; what they share is in
// xml.go: the XML of PROPFIND, PROPPATCH, MKCOL and REPORT bodies and of
// multistatus answers, the path layout, the properties of homes, collections
// and members, and the sync-token scheme (a per-collection change sequence and
// tombstones, urn:atrium:sync:<collection>:<seq>).
package dav

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"atrium/app"
	"atrium/web/problem"
)

// Root is the mount point of the DAV doors.
const Root = "/dav/"

// PrincipalsPrefix is the collection of principals.
const PrincipalsPrefix = "/dav/principals/"

// Door is one kind of DAV collection home (CardDAV address books, CalDAV calendars).
type Door interface {
	http.Handler
	// Prefix is the path under which the door's collections live, e.g. "/dav/addressbooks/".
	Prefix() string
	// Capability is the door's DAV compliance class for the DAV header, e.g. "addressbook".
	Capability() string
	// PrincipalProps are the properties the door adds to the caller's principal
	// resource (e.g. addressbook-home-set).
	PrincipalProps(p *app.Principal) Props
}

// Handler serves /dav/.
type Handler struct {
	reporter
	doors []Door
}

// New returns the DAV handler for doors; publicURL names the problem type URIs.
func New(publicURL string, log *slog.Logger, doors ...Door) *Handler {
	return &Handler{reporter: newReporter(publicURL, log), doors: doors}
}

// reporter writes error responses.
type reporter struct {
	log      *slog.Logger
	problems string
}

func newReporter(publicURL string, log *slog.Logger) reporter {
	if log == nil {
		log = slog.Default()
	}
	return reporter{log: log, problems: strings.TrimRight(publicURL, "/") + "/problems"}
}

// PrincipalPath is the principal URL of a user.
func PrincipalPath(userID string) string { return PrincipalsPrefix + userID + "/" }

// Methods are the HTTP methods the DAV doors answer (for route registration).
var Methods = []string{http.MethodOptions, http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete,
	http.MethodPost, "PROPFIND", "PROPPATCH", "MKCOL", "MKCALENDAR", "REPORT", "COPY", "MOVE", "LOCK", "UNLOCK"}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := app.PrincipalFrom(r.Context())
	if p == nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="atrium", charset="UTF-8"`)
		h.problem(w, r, app.Errorf(app.EUnauthorized, "Authentication is required: HTTP Basic with your e-mail address and an app password, or a bearer token."))
		return
	}
	if err := p.RequireUser(); err != nil {
		h.problem(w, r, err)
		return
	}
	path := r.URL.Path
	if path == "/dav" {
		path = Root
	}
	if path == Root {
		h.serveRoot(w, r, p)
		return
	}
	if strings.HasPrefix(path, PrincipalsPrefix) || path+"/" == PrincipalsPrefix {
		h.servePrincipal(w, r, p, path)
		return
	}
	for _, d := range h.doors {
		if strings.HasPrefix(path, d.Prefix()) || path+"/" == d.Prefix() {
			d.ServeHTTP(w, r)
			return
		}
	}
	h.problem(w, r, app.Errorf(app.ENotFound, "No DAV resource at %s.", r.URL.Path))
}

func (h *Handler) davHeader() string {
	caps := []string{"1", "3", "extended-mkcol"}
	for _, d := range h.doors {
		caps = append(caps, d.Capability())
	}
	return strings.Join(caps, ", ")
}

func (h *Handler) options(w http.ResponseWriter) {
	w.Header().Set("DAV", h.davHeader())
	w.Header().Set("Allow", "OPTIONS, PROPFIND")
	w.WriteHeader(http.StatusOK)
}

// collectionProps are the properties of the root and the principal.
func (h *Handler) collectionProps(p *app.Principal) Props {
	ps := Props{}
	principal := Href(PrincipalPath(p.UserID))
	ps.Static(Name(NSDAV, "current-user-principal"), principal)
	ps.Static(Name(NSDAV, "principal-collection-set"), Href(PrincipalsPrefix))
	ps.Static(Name(NSDAV, "resourcetype"), Elem(Name(NSDAV, "collection"), ""))
	ps.Static(Name(NSDAV, "current-user-privilege-set"), Elem(Name(NSDAV, "privilege"), Elem(Name(NSDAV, "read"), "")))
	for _, d := range h.doors {
		for n, f := range d.PrincipalProps(p) {
			ps[n] = f
		}
	}
	return ps
}

func (h *Handler) serveRoot(w http.ResponseWriter, r *http.Request, p *app.Principal) {
	switch r.Method {
	case http.MethodOptions:
		h.options(w)
	case "PROPFIND":
		req, err := parsePropfind(r)
		if err != nil {
			h.problem(w, r, app.Errorf(app.EBadRequest, "%s", err.Error()))
			return
		}
		WriteMultistatus(w, []Response{Resolve(Root, req, h.collectionProps(p))}, "")
	default:
		h.methodNotAllowed(w, r, "OPTIONS, PROPFIND")
	}
}

func (h *Handler) servePrincipal(w http.ResponseWriter, r *http.Request, p *app.Principal, path string) {
	rest := strings.Trim(strings.TrimPrefix(path, strings.TrimSuffix(PrincipalsPrefix, "/")), "/")
	if rest != "" && rest != p.UserID {
		h.problem(w, r, app.Errorf(app.ENotFound, "No principal at %s.", r.URL.Path))
		return
	}
	switch r.Method {
	case http.MethodOptions:
		h.options(w)
	case "PROPFIND":
		req, err := parsePropfind(r)
		if err != nil {
			h.problem(w, r, app.Errorf(app.EBadRequest, "%s", err.Error()))
			return
		}
		self := h.collectionProps(p)
		self.Static(Name(NSDAV, "resourcetype"), Elem(Name(NSDAV, "collection"), "")+Elem(Name(NSDAV, "principal"), ""))
		self.Static(Name(NSDAV, "principal-URL"), Href(PrincipalPath(p.UserID)))
		self.Static(Name(NSDAV, "displayname"), Text(p.Email))
		var rs []Response
		if rest == "" {
			rs = append(rs, Resolve(PrincipalsPrefix, req, h.collectionProps(p)))
			if r.Header.Get("Depth") != "0" {
				rs = append(rs, Resolve(PrincipalPath(p.UserID), req, self))
			}
		} else {
			rs = append(rs, Resolve(PrincipalPath(p.UserID), req, self))
		}
		WriteMultistatus(w, rs, "")
	default:
		h.methodNotAllowed(w, r, "OPTIONS, PROPFIND")
	}
}

func (h reporter) methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	h.writeProblem(w, r, http.StatusMethodNotAllowed, app.EMethodNotAllowed, "The method "+r.Method+" is not allowed here.")
}

// statuses are the DAV doors' own statuses (the rest is package problem's
// table): a DAV client knows 400 for a request it got wrong, not 422.
var statuses = map[string]int{app.EValidation: http.StatusBadRequest}

// statusOf returns the HTTP status of an error.
func statusOf(err error) int {
	st, _ := problem.Status(app.ErrorCode(err), statuses)
	return st
}

// problem answers an error as application/problem+json.
func (h reporter) problem(w http.ResponseWriter, r *http.Request, err error) {
	st := statusOf(err)
	code := app.ErrorCode(err)
	if st == http.StatusInternalServerError {
		h.log.Error("dav", "method", r.Method, "path", r.URL.Path, "err", err)
		code = app.EInternal
	}
	if code == app.EUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="atrium", charset="UTF-8"`)
	}
	var retry int
	var ae *app.Error
	if errors.As(err, &ae) {
		retry = ae.RetryAfter
	}
	problem.Write(w, problem.Body{Type: h.problems + "/" + code, Status: st, Detail: app.ErrorMessage(err), Code: code, RetryAfter: retry})
}

func (h reporter) writeProblem(w http.ResponseWriter, _ *http.Request, status int, code, detail string) {
	problem.Write(w, problem.Body{Type: h.problems + "/" + code, Status: status, Detail: detail, Code: code})
}
