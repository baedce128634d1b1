package rest

// Locks over REST: a write holds a lock only by presenting its token, as over
// WebDAV. A drive operation that changes something reads the lock tokens of
// an If header in the WebDAV form, If: (<opaquelocktoken:…>), and the drive
// checks locks strictly: a locked item → 423 locked, for the lock's owner
// too, unless the request presents the lock's token.

import (
	"net/http"
	"slices"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app/drive"
	"atrium/web/ifheader"
)

const driveTag = "Drive"

// ifDoc documents the If header of a write that a lock can refuse.
const ifDoc = "Lock tokens, in the WebDAV form (RFC 4918 §10.4): `(<opaquelocktoken:…>)`, several lists allowed. " +
	"A write to a locked item (or into a locked folder) → 423 `locked` unless the request presents the lock's token — " +
	"also for the user who took the lock. A malformed header → 400."

// lockable documents that a lock refuses the operation without its token.
func lockable(o huma.Operation) huma.Operation {
	o.Parameters = append(o.Parameters, &huma.Param{Name: "If", In: "header", Description: ifDoc, Schema: &huma.Schema{Type: "string"}})
	o.Errors = append(o.Errors, http.StatusBadRequest, http.StatusLocked)
	o.Description += "\n\nA lock on the item (WebDAV LOCK, or the online editor's) refuses this with 423 `locked` unless the request " +
		"presents the lock's token in an `If: (<opaquelocktoken:…>)` header; the lock's owner needs it too. A malformed `If` header → 400 `bad_request`."
	return o
}

// driveLockTokens puts the If header's lock tokens of a drive write into the
// context and makes the drive check locks strictly.
func driveLockTokens(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if op == nil || !slices.Contains(op.Tags, driveTag) || ctx.Method() == http.MethodGet || ctx.Method() == http.MethodHead {
			next(ctx)
			return
		}
		c := drive.WithStrictLocks(ctx.Context())
		if h := ctx.Header("If"); h != "" {
			lists, err := ifheader.Parse(h)
			if err != nil {
				_ = huma.WriteErr(api, ctx, http.StatusBadRequest, err.Error(),
					&huma.ErrorDetail{Location: "header.If", Message: "expected lists of lock tokens: (<opaquelocktoken:…>)", Value: h})
				return
			}
			c = drive.WithLockTokens(c, ifheader.Tokens(lists)...)
		}
		next(huma.WithContext(ctx, c))
	}
}
