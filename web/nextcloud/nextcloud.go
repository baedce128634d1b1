// Package nextcloud is the door of the Nextcloud and ownCloud sync clients
// (the desktop and mobile apps, nextcloudcmd, owncloudcmd) besides the file
// mount they sync with, which is package webdav's at remote.php/dav/files/
// <user>/ and remote.php/webdav/. What they call first, at the server's
// public URL:
//
//   - GET /status.php: that a server of this kind is here (no credential
//     needed; one sent is not checked here).
//
//   - OCS (/ocs/v1.php/..., /ocs/v2.php/...): cloud/capabilities, what the
//     server offers (the WebDAV root, checksums), and cloud/user, who the
//     credential is (the id the clients put in remote.php/dav/files/<id>/,
//     the display name, the quota). JSON with ?format=json or an Accept of
//     JSON, else XML; v1 answers HTTP 200 with its own status code in the
//     body, v2 the HTTP status itself.
//
//   - Login Flow v2 (/index.php/login/v2 and its poll): the client starts a
//     sign-in, opens the browser at the web app's /connect/<token>, where the
//     person signs in and approves the device, and receives an app password
//     named after it (identity.StartLoginFlow and the rest).
//
// The clients sign in with HTTP Basic (e-mail address and an app password),
// which the gin middleware checks at these paths as at the mount's.
package nextcloud

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"atrium/app"
	"atrium/app/drive"
	"atrium/app/identity"
)

// The paths of the door.
const (
	StatusPath    = "/status.php"
	OCSv1         = "/ocs/v1.php"
	OCSv2         = "/ocs/v2.php"
	LoginFlowPath = "/index.php/login/v2"
	LoginPollPath = "/index.php/login/v2/poll"
	// ConnectPath, followed by the flow's login token, is the web app's
	// page where the person approves a device.
	ConnectPath = "/connect/"
)

// The server version announced. The clients gate features on it (the
// newer DAV root, capabilities); they use what the capabilities offer.
const (
	version       = "25.0.0.0"
	versionString = "25.0.0"
	versionMajor  = 25
)

// Config is what the door needs.
type Config struct {
	Identity *identity.Service
	Drive    *drive.Service
	// PublicURL is the server's address as the clients reach it.
	PublicURL string
	// Product is the name shown as the server's.
	Product string
	// Chunking: the mount takes chunked uploads (webdav.WithChunks).
	Chunking bool
	Log      *slog.Logger
}

// Handler serves status.php, OCS and the login flow.
type Handler struct {
	identity  *identity.Service
	drive     *drive.Service
	publicURL string
	product   string
	chunking  bool
	log       *slog.Logger
}

// New returns the door.
func New(cfg Config) *Handler {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Handler{identity: cfg.Identity, drive: cfg.Drive, publicURL: strings.TrimRight(cfg.PublicURL, "/"), product: cfg.Product,
		chunking: cfg.Chunking, log: cfg.Log}
}

// Status serves GET /status.php.
func (h *Handler) Status(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"installed": true, "maintenance": false, "needsDbUpgrade": false,
		"version": version, "versionstring": versionString, "edition": "", "productname": h.product, "extendedSupport": false})
}

// ServeHTTP serves OCS.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v2 := strings.HasPrefix(r.URL.Path, OCSv2+"/")
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, OCSv2), OCSv1)
	o := &ocsReply{w: w, r: r, v2: v2}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		o.fail(http.StatusMethodNotAllowed, "The method is not allowed here.")
		return
	}
	p := app.PrincipalFrom(r.Context())
	switch strings.TrimSuffix(rest, "/") {
	case "/cloud/capabilities":
		o.ok(map[string]any{
			"version": map[string]any{"major": versionMajor, "minor": 0, "micro": 0, "string": versionString,
				"edition": "", "extendedSupport": false},
			"capabilities": capabilities(h.chunking),
		})
	case "/cloud/user":
		if p == nil || p.UserID == "" {
			o.unauthorized()
			return
		}
		data, err := h.user(r, p)
		if err != nil {
			h.fail(o, err)
			return
		}
		o.ok(data)
	default:
		o.fail(http.StatusNotFound, "No such OCS endpoint.")
	}
}

// capabilities is what the server offers the clients: dav.chunking 1.0
// (Nextcloud) and files.bigfilechunking (ownCloud) make them upload large
// files in chunks (webdav.UploadsPrefix).
func capabilities(chunking bool) map[string]any {
	c := map[string]any{
		"core": map[string]any{"pollinterval": 60, "webdav-root": "remote.php/webdav"},
		"files": map[string]any{"bigfilechunking": chunking, "undelete": false, "versioning": false,
			"blacklisted_files": []any{}},
		// The mount verifies OC-Checksum on a PUT and answers oc:checksums.
		"checksums": map[string]any{"supportedTypes": []any{"SHA1", "MD5"}, "preferredUploadType": "SHA1"},
	}
	if chunking {
		c["dav"] = map[string]any{"chunking": "1.0"}
	}
	return c
}

// user is cloud/user: the id is the user's, which the clients put in the
// DAV path remote.php/dav/files/<id>/.
func (h *Handler) user(r *http.Request, p *app.Principal) (map[string]any, error) {
	ctx := r.Context()
	_, u, err := h.identity.Profile(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if u == nil {
		return nil, app.Errorf(app.ENotFound, "The credential has no user.")
	}
	data := map[string]any{"enabled": true, "id": u.ID, "display-name": u.DisplayName(), "displayname": u.DisplayName(),
		"email": u.Email}
	if h.drive != nil && p.HasFeature("drive") && p.Scopes.Has(app.ScopeDriveRead) {
		us, err := h.drive.Storage(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		q := map[string]any{"used": us.UserUsedBytes, "free": us.AvailableBytes, "total": us.QuotaBytes, "relative": 0, "quota": us.QuotaBytes}
		if us.QuotaBytes <= 0 {
			q["free"], q["total"], q["quota"] = -3, -3, -3 // unlimited, as ownCloud says it
		} else {
			q["relative"] = float64(us.UsedBytes*10000/us.QuotaBytes) / 100
		}
		data["quota"] = q
	}
	return data, nil
}

func (h *Handler) fail(o *ocsReply, err error) {
	switch app.ErrorCode(err) {
	case app.EUnauthorized:
		o.unauthorized()
	case app.ENotFound:
		o.fail(http.StatusNotFound, app.ErrorMessage(err))
	case app.EForbidden, app.EInsufficientScope, app.EFeatureNotInPlan:
		o.fail(http.StatusForbidden, app.ErrorMessage(err))
	default:
		h.log.Error("ocs", "path", o.r.URL.Path, "err", err)
		o.fail(http.StatusInternalServerError, "Internal error.")
	}
}

// ocsReply writes one OCS answer in the format and version asked for.
type ocsReply struct {
	w  http.ResponseWriter
	r  *http.Request
	v2 bool
}

func (o *ocsReply) ok(data any) { o.write(http.StatusOK, "ok", "OK", data) }

func (o *ocsReply) unauthorized() {
	o.w.Header().Set("WWW-Authenticate", `Basic realm="atrium", charset="UTF-8"`)
	o.fail(http.StatusUnauthorized, "Authentication is required: HTTP Basic with your e-mail address and an app password.")
}

func (o *ocsReply) fail(status int, message string) { o.write(status, "failure", message, []any{}) }

// write answers: v1 with HTTP 200 (401 stays 401: clients prompt on it) and
// its code in the body (100 for success), v2 with the status in both.
func (o *ocsReply) write(status int, state, message string, data any) {
	code, httpStatus := status, status
	if !o.v2 {
		switch status {
		case http.StatusOK:
			code = 100
		case http.StatusNotFound:
			code = 998
		case http.StatusUnauthorized:
			code = 997
		}
		if status != http.StatusUnauthorized {
			httpStatus = http.StatusOK
		}
	}
	meta := map[string]any{"status": state, "statuscode": code, "message": message, "totalitems": "", "itemsperpage": ""}
	h := o.w.Header()
	h.Set("Cache-Control", "no-store")
	if wantsJSON(o.r) {
		h.Set("Content-Type", "application/json; charset=utf-8")
		o.w.WriteHeader(httpStatus)
		_ = json.NewEncoder(o.w).Encode(map[string]any{"ocs": map[string]any{"meta": meta, "data": data}})
		return
	}
	var b bytes.Buffer
	b.WriteString(xml.Header + "<ocs>")
	writeXML(&b, "meta", meta)
	writeXML(&b, "data", data)
	b.WriteString("</ocs>\n")
	h.Set("Content-Type", "text/xml; charset=UTF-8")
	o.w.WriteHeader(httpStatus)
	_, _ = o.w.Write(b.Bytes())
}

// wantsJSON: ?format=json, or an Accept header naming JSON.
func wantsJSON(r *http.Request) bool {
	if f := r.URL.Query().Get("format"); f != "" {
		return strings.EqualFold(f, "json")
	}
	return strings.Contains(strings.ToLower(r.Header.Get("Accept")), "application/json")
}

// writeXML writes v as OCS XML: a map's keys as elements (sorted), a list's
// items as <element>.
func writeXML(b *bytes.Buffer, name string, v any) {
	b.WriteString("<" + name + ">")
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			writeXML(b, k, x[k])
		}
	case []any:
		for _, e := range x {
			writeXML(b, "element", e)
		}
	case bool:
		if x {
			b.WriteString("1")
		}
	case nil:
	default:
		_ = xml.EscapeText(b, []byte(fmt.Sprint(x)))
	}
	b.WriteString("</" + name + ">")
}

// StartLogin serves POST /index.php/login/v2: a new flow for the device the
// client's User-Agent names.
func (h *Handler) StartLogin(w http.ResponseWriter, r *http.Request) {
	fl, err := h.identity.StartLoginFlow(r.Context(), DeviceName(r.UserAgent()))
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"poll":  map[string]any{"token": fl.PollToken, "endpoint": h.publicURL + LoginPollPath},
		"login": h.publicURL + ConnectPath + fl.LoginToken,
	})
}

// PollLogin serves POST /index.php/login/v2/poll (form field token): 404
// until the person approved, then the server, the login name and the app
// password, once.
func (h *Handler) PollLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	name, secret, err := h.identity.PollLoginFlow(r.Context(), r.PostFormValue("token"))
	if err != nil {
		h.jsonError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"server": h.publicURL, "loginName": name, "appPassword": secret})
}

func (h *Handler) jsonError(w http.ResponseWriter, r *http.Request, err error) {
	switch app.ErrorCode(err) {
	case app.ENotFound:
		writeJSON(w, http.StatusNotFound, []any{})
	case app.EUnavailable:
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"message": app.ErrorMessage(err)})
	default:
		h.log.Error("login flow", "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": "Internal error."})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// DeviceName names a client by its User-Agent, as a person would: the
// Nextcloud desktop client (mirall) and mobile apps by name and system,
// anything else by its User-Agent.
func DeviceName(ua string) string {
	system := ""
	for _, s := range []string{"Linux", "Windows", "Macintosh", "macOS"} {
		if strings.Contains(ua, "("+s) {
			system = " (" + strings.Replace(s, "Macintosh", "macOS", 1) + ")"
			break
		}
	}
	switch {
	case strings.Contains(ua, "mirall/"):
		return "Nextcloud desktop" + system
	case strings.Contains(strings.ToLower(ua), "nextcloud-android"):
		return "Nextcloud Android"
	case strings.Contains(strings.ToLower(ua), "nextcloud-ios"):
		return "Nextcloud iOS"
	}
	return ua
}
