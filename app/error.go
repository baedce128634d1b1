// Package app holds Atrium's vocabulary: the types every module shares, the error
// codes the doors translate into problem responses, the event type of the outbox,
// and the interfaces the services need. It imports only the standard library.
package app

import (
	"errors"
	"fmt"
)

// Error codes. The web layer maps each to an HTTP status and a problem `code` in one
// table; the codes are part of the public contract (CONTRACT §2).
const (
	EUnauthorized      = "unauthorized"
	EForbidden         = "forbidden"
	EInsufficientScope = "insufficient_scope"
	EFeatureNotInPlan  = "feature_not_in_plan"
	ENoBoundUser       = "no_bound_user"
	EOrgSuspended      = "org_suspended"
	// EReauthRequired: a web session whose sign-in is not recent asks for
	// the account password again before a sensitive change.
	EReauthRequired      = "reauthentication_required"
	EReadOnly            = "read_only"
	ENotFound            = "not_found"
	EConflict            = "conflict"
	EIdempotencyReused   = "idempotency_key_reused"
	ESeatFloor           = "seat_floor"
	EPreconditionFailed  = "precondition_failed"
	EPayloadTooLarge     = "payload_too_large"
	EValidation          = "validation_failed"
	ELocked              = "locked"
	ECursorExpired       = "cursor_expired"
	EInvalidCursor       = "invalid_cursor"
	EIdempotencyInFlight = "idempotency_in_flight"
	EQuotaExceeded       = "quota_exceeded"
	EEditorUnavailable   = "editor_unavailable"
	ENoPreview           = "no_preview"
	EIndexRebuilding     = "index_rebuilding"
	EBadRequest          = "bad_request"
	// EUnsupportedMediaType: the request body's Content-Type is not one the
	// operation takes.
	EUnsupportedMediaType = "unsupported_media_type"
	EUnavailable          = "unavailable"
	EInternal             = "internal"

	// Codes of the protocol layer (the doors raise them; the services don't).

	// EMethodNotAllowed: the HTTP method is not served on the path.
	EMethodNotAllowed = "method_not_allowed"
	// ENotAcceptable: no representation the Accept header allows.
	ENotAcceptable = "not_acceptable"
	// ERateLimited: too many requests, sign-ins or connections.
	ERateLimited = "rate_limited"
	// ETimeout: the request ran past [limits] request_timeout.
	ETimeout = "timeout"
	// ENotImplemented: an operation of the protocol this server does not serve.
	ENotImplemented = "not_implemented"
	// EBadGateway: a WebDAV Destination on another server or outside the mount.
	EBadGateway = "bad_gateway"
)

// FieldError names one invalid input: where it is (`body.email`, `query.limit`),
// what is wrong, and the value that was given.
type FieldError struct {
	Location string `json:"location"`
	Message  string `json:"message"`
	Value    any    `json:"value,omitempty"`
}

// Error is a domain error: a code from the list above and a message safe to show
// to the caller.
type Error struct {
	Code    string
	Message string
	// Fields lists the invalid inputs of a validation_failed error.
	Fields []FieldError
	// RetryAfter, when positive, is the number of seconds a client should wait.
	RetryAfter int
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation_failed error for one field.
func Invalid(location, message string, value any) *Error {
	return &Error{Code: EValidation, Message: location + ": " + message,
		Fields: []FieldError{{Location: location, Message: message, Value: value}}}
}

// ErrorCode returns the code of the first *Error in err's chain, EInternal for any
// other error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the caller-safe message of err: the message of an *Error, a
// generic text for anything else (internal details are logged, never shown).
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "An internal error occurred."
}

// Validator collects field errors; Err returns nil when there are none.
type Validator struct{ fields []FieldError }

// Add records an invalid field.
func (v *Validator) Add(location, message string, value any) {
	v.fields = append(v.fields, FieldError{Location: location, Message: message, Value: value})
}

// Check records an invalid field when ok is false.
func (v *Validator) Check(ok bool, location, message string, value any) {
	if !ok {
		v.Add(location, message, value)
	}
}

// Err returns a validation_failed *Error holding every recorded field, or nil.
func (v *Validator) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	msg := v.fields[0].Location + ": " + v.fields[0].Message
	if len(v.fields) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(v.fields)-1)
	}
	return &Error{Code: EValidation, Message: msg, Fields: v.fields}
}
