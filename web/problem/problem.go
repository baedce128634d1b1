// Package problem holds the one table that turns an app error code into an
// HTTP status, shared by every door: REST, the WebDAV mount, CardDAV/CalDAV,
// tus and WOPI (CONTRACT §2). A door whose protocol demands another status
// for a code passes its overrides; nothing else differs between the doors.
package problem

import (
	"maps"
	"net/http"

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
