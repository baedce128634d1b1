// Package problem holds the one table that turns an app error code into an
// HTTP status, shared by every door: REST, the WebDAV mount, CardDAV/CalDAV,
// tus and WOPI (CONTRACT §2). A door whose protocol demands another status
// for a code passes its overrides; nothing else differs between the doors.
package problem

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"

	"atrium/app"
)

var statuses = map[string]int{
	app.EBadRequest:           http.StatusBadRequest,
	app.ECursorExpired:        http.StatusBadRequest,
	app.EInvalidCursor:        http.StatusBadRequest,
	app.EUnauthorized:         http.StatusUnauthorized,
	app.EForbidden:            http.StatusForbidden,
	app.EInsufficientScope:    http.StatusForbidden,
	app.EFeatureNotInPlan:     http.StatusForbidden,
	app.ENoBoundUser:          http.StatusForbidden,
	app.EOrgSuspended:         http.StatusForbidden,
	app.EReadOnly:             http.StatusForbidden,
	app.EReauthRequired:       http.StatusForbidden,
	app.ENotFound:             http.StatusNotFound,
	app.ENoPreview:            http.StatusNotFound,
	app.EMethodNotAllowed:     http.StatusMethodNotAllowed,
	app.ENotAcceptable:        http.StatusNotAcceptable,
	app.EConflict:             http.StatusConflict,
	app.EIdempotencyReused:    http.StatusConflict,
	app.ESeatFloor:            http.StatusConflict,
	app.EPreconditionFailed:   http.StatusPreconditionFailed,
	app.EPayloadTooLarge:      http.StatusRequestEntityTooLarge,
	app.EUnsupportedMediaType: http.StatusUnsupportedMediaType,
	app.EValidation:           http.StatusUnprocessableEntity,
	app.ELocked:               http.StatusLocked,
	app.ERateLimited:          http.StatusTooManyRequests,
	app.EInternal:             http.StatusInternalServerError,
	app.EEditorUnavailable:    http.StatusNotImplemented,
	app.ENotImplemented:       http.StatusNotImplemented,
	app.EBadGateway:           http.StatusBadGateway,
	app.EIndexRebuilding:      http.StatusServiceUnavailable,
	app.EIdempotencyInFlight:  http.StatusServiceUnavailable,
	app.EUnavailable:          http.StatusServiceUnavailable,
	app.ETimeout:              http.StatusServiceUnavailable, // the request timeout of [limits]
	app.EQuotaExceeded:        http.StatusInsufficientStorage,
}

// Status returns the HTTP status of an app error code, as overrides (a
// protocol's own statuses, nil for none) or else the shared table say; an
// unknown code is 500 and not ok.
func Status(code string, overrides map[string]int) (status int, ok bool) {
	if st, ok := overrides[code]; ok {
		return st, true
	}
	if st, ok := statuses[code]; ok {
		return st, true
	}
	return http.StatusInternalServerError, false
}

// Codes returns every code of the table with its status.
func Codes() map[string]int { return maps.Clone(statuses) }

// codes is the reverse of the table: the problem code of a status, for an
// error raised outside the app (routing, body parsing, a protocol's own).
var codes = map[int]string{
	http.StatusBadRequest:            app.EBadRequest,
	http.StatusUnauthorized:          app.EUnauthorized,
	http.StatusForbidden:             app.EForbidden,
	http.StatusNotFound:              app.ENotFound,
	http.StatusMethodNotAllowed:      app.EMethodNotAllowed,
	http.StatusNotAcceptable:         app.ENotAcceptable,
	http.StatusConflict:              app.EConflict,
	http.StatusPreconditionFailed:    app.EPreconditionFailed,
	http.StatusRequestEntityTooLarge: app.EPayloadTooLarge,
	http.StatusUnsupportedMediaType:  app.EUnsupportedMediaType,
	http.StatusUnprocessableEntity:   app.EValidation,
	http.StatusLocked:                app.ELocked,
	http.StatusTooManyRequests:       app.ERateLimited,
	http.StatusInternalServerError:   app.EInternal,
	http.StatusNotImplemented:        app.ENotImplemented,
	http.StatusBadGateway:            app.EBadGateway,
	http.StatusServiceUnavailable:    app.EUnavailable,
	http.StatusInsufficientStorage:   app.EQuotaExceeded,
}

// CodeOf returns the problem code of a status ("error" for a status no code
// names).
func CodeOf(status int) string {
	if c, ok := codes[status]; ok {
		return c
	}
	return "error"
}

// Body is an RFC 9457 problem body, as every error response of Atrium is.
type Body struct {
	Type     string           `json:"type"`
	Title    string           `json:"title"`
	Status   int              `json:"status"`
	Detail   string           `json:"detail"`
	Code     string           `json:"code"`
	Instance string           `json:"instance,omitempty"`
	Errors   []app.FieldError `json:"errors,omitempty"`
	// RetryAfter, when positive, is sent as Retry-After (seconds).
	RetryAfter int `json:"-"`
}

// Instance is a problem's instance for a request id ("" for none).
func Instance(requestID string) string {
	if requestID == "" {
		return ""
	}
	return "urn:request:" + requestID
}

// Write sends a problem response: application/problem+json, nosniff, a
// Retry-After when the body has one, and the title of its status when it has
// none. Every door writes its problems through it.
func Write(w http.ResponseWriter, b Body) {
	h := w.Header()
	if b.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(b.RetryAfter))
	}
	if b.Title == "" {
		b.Title = http.StatusText(b.Status)
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(b.Status)
	_ = json.NewEncoder(w).Encode(b)
}
