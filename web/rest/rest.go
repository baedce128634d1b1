// Package rest holds Atrium's REST operations, one file per module. Handlers are
// thin: read the input, call one service method, shape the output. Authentication,
// scopes, idempotency and problem bodies are applied around them by package web.
package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/calendar"
	"atrium/app/contacts"
	"atrium/app/drive"
	"atrium/app/identity"
	"atrium/app/partner"
	"atrium/app/webhooks"
)

// Metadata keys an operation carries for the middleware of package web.
const (
	// MetaPublic marks an operation that needs no credential.
	MetaPublic = "atrium.public"
	// MetaScopes lists the scopes of which the caller needs at least one.
	MetaScopes = "atrium.scopes"
	// MetaIdempotent marks an operation that honours Idempotency-Key.
	MetaIdempotent = "atrium.idempotent"
	// MetaLinkToken marks a public operation whose path carries an e-mailed
	// link's token (invitation, password reset): an unknown one counts as a
	// failed sign-in of the client address.
	MetaLinkToken = "atrium.link_token"
)

// Deps are the services the operations call.
type Deps struct {
	Identity *identity.Service
	Audit    app.Auditor
	Cursors  *app.Cursors
	Calendar *calendar.Service
	Partner  *partner.Service
	Contacts *contacts.Service
	Drive    *drive.Service
	Webhooks *webhooks.Service
	// PublicURL is the server's public address (for the addresses of the DAV doors).
	PublicURL string
}

// Register adds every REST operation to api.
func Register(api huma.API, d Deps) {
	registerIdentity(api, d)
	registerMe(api, d, d.PublicURL)
	registerDeveloper(api, d)
	if d.Calendar != nil {
		registerCalendar(api, d)
		registerTasks(api, d)
	}
	registerPartner(api, d)
	registerAdmin(api, d)
	registerContacts(api, d)
	registerWebhooks(api, d)
	if d.Drive != nil {
		api.UseMiddleware(driveLockTokens(api))
		registerDrive(api, d)
		registerDriveTus(api, d)
		registerDriveSync(api, d)
		registerDriveShares(api, d)
		registerDriveArchive(api, d)
		registerDriveZip(api, d)
		registerDrivePreviews(api, d)
		registerDriveEditor(api, d)
		registerDriveSearch(api, d)
	}
	declareNulls(api)
	declareStatuses(api)
}

// op describes an operation: its method, path (under /api/v1), id, summary, tag
// and the scopes of which the caller needs one (none: any authenticated caller).
func op(method, path, id, summary, tag string, scopes ...string) huma.Operation {
	o := huma.Operation{
		Method: method, Path: "/api/v1" + path, OperationID: id, Summary: summary, Tags: []string{tag},
		Metadata: map[string]any{MetaScopes: scopes},
		// 503 `timeout`: an operation that runs longer than the server allows.
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
	}
	sec := map[string][]string{"bearer": scopes}
	if len(scopes) == 0 {
		sec["bearer"] = []string{}
	}
	o.Security = []map[string][]string{sec}
	if len(scopes) > 1 {
		o.Security = nil
		for _, sc := range scopes {
			o.Security = append(o.Security, map[string][]string{"bearer": {sc}})
		}
	}
	switch method {
	case http.MethodPost:
		o.DefaultStatus = http.StatusCreated
	case http.MethodDelete:
		o.DefaultStatus = http.StatusNoContent
	}
	return o
}

// status sets an operation's success status.
func status(o huma.Operation, code int) huma.Operation {
	o.DefaultStatus = code
	return o
}

// idempotent marks an operation as honouring Idempotency-Key.
func idempotent(o huma.Operation) huma.Operation {
	o.Metadata[MetaIdempotent] = true
	o.Errors = append(o.Errors, http.StatusConflict, http.StatusServiceUnavailable)
	o.Description += "\n\nSupports `Idempotency-Key`: a retry with the same key and body within 24 hours by the same caller (the same user, or the same service principal) replays the stored response with `X-Idempotency-Replayed: true`; the same key with another body, or from another caller of the organisation, → 409 `idempotency_key_reused` (a key's stored response is only ever replayed to the caller that sent it); while the first request is in flight → 503 `idempotency_in_flight` with `Retry-After`."
	return o
}

// errs adds documented error statuses.
func errs(o huma.Operation, codes ...int) huma.Operation {
	o.Errors = append(o.Errors, codes...)
	return o
}

// principal returns the caller; the web middleware guarantees one on
// authenticated operations.
func principal(ctx context.Context) *app.Principal { return app.PrincipalFrom(ctx) }

// CursorQuery is the query of cursor-paginated lists.
type CursorQuery struct {
	Cursor string `query:"cursor" doc:"Opaque cursor from next_cursor of the previous page; valid 24 hours."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size."`
}

// page runs a cursor list: decode the cursor, fetch limit+1 items, encode the next.
func page[T any](c *app.Cursors, list string, q CursorQuery, fetch func(app.PageRequest) ([]T, error), key func(T) string) (app.Page[T], error) {
	pr, err := c.Request(list, q.Cursor, q.Limit)
	if err != nil {
		return app.Page[T]{}, err
	}
	items, err := fetch(pr)
	if err != nil {
		return app.Page[T]{}, err
	}
	return app.MakePage(c, list, items, pr.Limit, key), nil
}

// body wraps an output body.
type body[T any] struct {
	Body T
}

func out[T any](v T) *body[T] { return &body[T]{Body: v} }
