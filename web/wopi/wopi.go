// Package wopi is the WOPI host door of the drive: the endpoints an online
// editor (Collabora Online, ONLYOFFICE Docs) calls under /wopi/files/{id} with
// the access token of an edit session (query access_token, or Authorization:
// Bearer). It is a thin adapter: every rule — the token, permissions, locks,
// versions, quota — is the drive service's (app/drive/editor.go, wopi.go).
//
//	GET  /wopi/files/{id}            CheckFileInfo
//	GET  /wopi/files/{id}/contents   GetFile
//	POST /wopi/files/{id}/contents   PutFile (X-WOPI-Override: PUT)
//	POST /wopi/files/{id}            X-WOPI-Override LOCK (with X-WOPI-OldLock:
//	                                 UnlockAndRelock), UNLOCK, REFRESH_LOCK,
//	                                 GET_LOCK, PUT_RELATIVE; others → 501
//
// Errors follow WOPI: 401 for a bad token, 404 for a file the user cannot see,
// 409 with X-WOPI-Lock on a lock mismatch, 413 when too large or over quota.
// When the editor's discovery has a proof key, every request must carry a
// valid X-WOPI-Proof (401 otherwise, as for a bad token): see app/drive/wopiproof.go.
package wopi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/web/problem"
)

// Prefix is where the WOPI endpoints are mounted.
const Prefix = "/wopi/files/"

// Handler serves the WOPI endpoints.
type Handler struct {
	drive *drive.Editing
	log   *slog.Logger
}

// New returns the WOPI door over the drive's online-editing part.
func New(svc *drive.Editing, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{drive: svc, log: log}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok || rest == "" {
		h.fail(w, r, app.Errorf(app.ENotFound, "No WOPI resource at %s.", r.URL.Path))
		return
	}
	id, sub, _ := strings.Cut(rest, "/")
	if id == "" || len(id) > 200 || (sub != "" && sub != "contents") {
		h.fail(w, r, app.Errorf(app.ENotFound, "No WOPI resource at %s.", r.URL.Path))
		return
	}
	tok := r.URL.Query().Get("access_token")
	if tok == "" {
		if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			tok = strings.TrimSpace(a[7:])
		}
	}
	ctx := r.Context()
	es, err := h.drive.OpenEditorSession(ctx, tok, id)
	if err == nil {
		err = h.drive.VerifyWOPIProof(ctx, drive.WOPIProof{AccessToken: tok, URLs: h.requestURLs(r),
			Timestamp: r.Header.Get("X-WOPI-TimeStamp"), Proof: r.Header.Get("X-WOPI-Proof"), ProofOld: r.Header.Get("X-WOPI-ProofOld")})
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	override := strings.ToUpper(r.Header.Get("X-WOPI-Override"))
	switch {
	case sub == "" && r.Method == http.MethodGet:
		err = h.checkFileInfo(ctx, w, es)
	case sub == "contents" && r.Method == http.MethodGet:
		err = h.getFile(ctx, w, r, es)
	case sub == "contents" && r.Method == http.MethodPost && (override == "PUT" || override == ""):
		err = h.putFile(ctx, w, r, es)
	case sub == "" && r.Method == http.MethodPost:
		err = h.fileOp(ctx, w, r, es, override)
	default:
		w.Header().Set("Allow", "GET, POST")
		err = app.Errorf(app.EMethodNotAllowed, "%s is not a WOPI operation here.", r.Method)
	}
	if err != nil {
		h.fail(w, r, err)
	}
}

// requestURLs returns the URLs the editor may have signed for r: the WOPI
// base URL it was given (a proxy may have taken a path prefix off), then the
// Host it sent, by either scheme.
func (h *Handler) requestURLs(r *http.Request) []string {
	target := r.RequestURI
	if !strings.HasPrefix(target, "/") { // absolute-form: the URL itself
		return []string{target}
	}
	return []string{h.drive.WOPIBase() + target, "https://" + r.Host + target, "http://" + r.Host + target}
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(v)
}

func (h *Handler) checkFileInfo(ctx context.Context, w http.ResponseWriter, es *drive.EditorSession) error {
	info, err := h.drive.WOPICheckFileInfo(ctx, es)
	if err != nil {
		return err
	}
	return writeJSON(w, info)
}

func (h *Handler) getFile(ctx context.Context, w http.ResponseWriter, r *http.Request, es *drive.EditorSession) error {
	f, rc, err := h.drive.WOPIOpen(ctx, es)
	if err != nil {
		return err
	}
	defer rc.Close()
	if m := r.Header.Get("X-WOPI-MaxExpectedSize"); m != "" {
		if n, err := strconv.ParseInt(m, 10, 64); err == nil && f.SizeBytes > n {
			w.WriteHeader(http.StatusPreconditionFailed)
			return nil
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(f.SizeBytes, 10))
	w.Header().Set("X-WOPI-ItemVersion", strconv.Itoa(f.Version))
	w.Header().Set("Cache-Control", "no-store")
	if _, err := io.Copy(w, rc); err != nil {
		h.log.Info("wopi GetFile interrupted", "file", f.ID, "err", err)
	}
	return nil
}

func (h *Handler) putFile(ctx context.Context, w http.ResponseWriter, r *http.Request, es *drive.EditorSession) error {
	put := drive.WOPIPut{Lock: r.Header.Get("X-WOPI-Lock"), Body: r.Body, Size: r.ContentLength}
	for _, name := range []string{"X-COOL-WOPI-Timestamp", "X-LOOL-WOPI-Timestamp"} {
		if v := r.Header.Get(name); v != "" {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				put.LoadedAt = t
			}
			break
		}
	}
	f, err := h.drive.WOPIPutFile(ctx, es, put)
	if err != nil {
		return err
	}
	w.Header().Set("X-WOPI-ItemVersion", strconv.Itoa(f.Version))
	return writeJSON(w, map[string]string{"LastModifiedTime": drive.WOPITime(f.UpdatedAt)})
}

func (h *Handler) fileOp(ctx context.Context, w http.ResponseWriter, r *http.Request, es *drive.EditorSession, override string) error {
	lock := r.Header.Get("X-WOPI-Lock")
	switch override {
	case "LOCK":
		return h.drive.WOPILock(ctx, es, lock, r.Header.Get("X-WOPI-OldLock"))
	case "REFRESH_LOCK":
		return h.drive.WOPIRefreshLock(ctx, es, lock)
	case "UNLOCK":
		return h.drive.WOPIUnlock(ctx, es, lock)
	case "GET_LOCK":
		cur, err := h.drive.WOPIGetLock(ctx, es)
		if err != nil {
			return err
		}
		w.Header().Set("X-WOPI-Lock", cur)
		return nil
	case "PUT_RELATIVE":
		return h.putRelative(ctx, w, r, es)
	}
	return app.Errorf(app.ENotImplemented, "The WOPI operation %q is not supported.", override)
}

func (h *Handler) putRelative(ctx context.Context, w http.ResponseWriter, r *http.Request, es *drive.EditorSession) error {
	suggested, relative := r.Header.Get("X-WOPI-SuggestedTarget"), r.Header.Get("X-WOPI-RelativeTarget")
	if (suggested == "") == (relative == "") {
		return app.Errorf(app.ENotImplemented, "PutRelativeFile takes exactly one of X-WOPI-SuggestedTarget and X-WOPI-RelativeTarget.")
	}
	req := drive.WOPIRelative{Name: suggested, Body: r.Body, Size: r.ContentLength,
		Overwrite: strings.EqualFold(r.Header.Get("X-WOPI-OverwriteRelativeTarget"), "true")}
	if relative != "" {
		req.Name, req.Exact = relative, true
	}
	name, err := DecodeUTF7(req.Name)
	if err != nil {
		return app.Errorf(app.EBadRequest, "The target name is not valid UTF-7.")
	}
	req.Name = name
	if v := r.Header.Get("X-WOPI-Size"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			req.Size = n
		}
	}
	f, tok, err := h.drive.WOPIPutRelativeFile(ctx, es, req)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]string{"Name": f.Name, "Url": h.drive.WOPISrc(f.ID) + "?access_token=" + tok})
}

// statuses are WOPI's own answers (the rest is package problem's table): an
// editor knows 401 for any refusal of the token's user, 409 for a lock
// (with X-WOPI-Lock), 413 for content it may not store, 400 for a bad request.
var statuses = map[string]int{
	app.EForbidden:         http.StatusUnauthorized,
	app.EInsufficientScope: http.StatusUnauthorized,
	app.EFeatureNotInPlan:  http.StatusUnauthorized,
	app.ENoBoundUser:       http.StatusUnauthorized,
	app.EOrgSuspended:      http.StatusUnauthorized,
	app.EReadOnly:          http.StatusUnauthorized,
	app.ELocked:            http.StatusConflict,
	app.EValidation:        http.StatusBadRequest,
	app.EQuotaExceeded:     http.StatusRequestEntityTooLarge,
}

// fail answers an error the WOPI way: the status, X-WOPI-Lock on a lock
// mismatch, and a short text body for people reading logs.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var lm *drive.LockMismatch
	var dc *drive.DocumentChanged
	var taken *drive.RelativeTargetTaken
	switch {
	case errors.As(err, &lm):
		w.Header().Set("X-WOPI-Lock", lm.Current)
		w.Header().Set("X-WOPI-LockFailureReason", lm.Reason)
		w.WriteHeader(http.StatusConflict)
		return
	case errors.As(err, &dc):
		// Collabora's answer for "the document changed on the host".
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"COOLStatusCode":1010,"LOOLStatusCode":1010}`)
		return
	case errors.As(err, &taken):
		w.Header().Set("X-WOPI-ValidRelativeTarget", EncodeUTF7(taken.Valid))
		w.WriteHeader(http.StatusConflict)
		return
	}
	code := app.ErrorCode(err)
	st, ok := problem.Status(code, statuses)
	if !ok || st == http.StatusInternalServerError {
		st = http.StatusInternalServerError
		if errors.Is(err, context.Canceled) || errors.Is(r.Context().Err(), context.Canceled) {
			h.log.Info("wopi request abandoned", "method", r.Method, "path", r.URL.Path, "err", err)
		} else {
			h.log.Error("wopi", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	if code == app.ELocked {
		w.Header().Set("X-WOPI-Lock", "")
	}
	if code == app.EUnavailable {
		w.Header().Set("Retry-After", "30")
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(st)
	_, _ = io.WriteString(w, app.ErrorMessage(err)+"\n")
}
