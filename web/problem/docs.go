package problem

// docs explains each problem code to a person who follows a problem's type
// URI (the problem type pages of the web app).
var docs = map[string]string{
	"unauthorized":              "No valid credential was sent. Send Authorization: Bearer with a personal access token, service principal token or JWT (or, on the file mount and DAV endpoints, HTTP Basic with your e-mail address and an app password).",
	"forbidden":                 "The credential is valid but may not do this.",
	"insufficient_scope":        "The token lacks the scope the operation needs. Create a token with that scope.",
	"feature_not_in_plan":       "The organisation's plan does not include this feature (for example drive). Change the plan.",
	"no_bound_user":             "The endpoint acts for a user, and the token has none. Use a PAT or a service principal bound to a user.",
	"org_suspended":             "The organisation is suspended: its users and tokens are refused until a reseller activates it. Its data is kept.",
	"read_only":                 "The target is read-only for you (for example the Shared with me folder of the file mount).",
	"reauthentication_required": "The web session signed in more than 10 minutes ago: making an app password or a token, or turning two-factor sign-in on, asks for the account password again (Settings shows a field for it).",
	"not_found":                 "No such resource, or it is not visible to you.",
	"conflict":                  "The request conflicts with the current state (for example a name already taken).",
	"idempotency_key_reused":    "The Idempotency-Key was used within 24 hours with a different request body. Use a new key.",
	"seat_floor":                "The seat count asked for is below the active users plus pending invitations.",
	"precondition_failed":       "If-Match does not match the current ETag. Fetch the resource again, merge, and retry with the new ETag.",
	"payload_too_large":         "The request body is too large.",
	"validation_failed":         "The request is not valid; the errors array names each invalid input with its location.",
	"locked":                    "The resource is locked (by a WebDAV client or the online editor).",
	"cursor_expired":            "The pagination cursor is older than 24 hours (or than the kept change log). Restart from the first page.",
	"invalid_cursor":            "The pagination cursor was not issued by this server for this list. Restart from the first page.",
	"idempotency_in_flight":     "A request with the same Idempotency-Key is still being processed. Wait for Retry-After seconds and retry.",
	"quota_exceeded":            "The storage quota would be exceeded.",
	"editor_unavailable":        "The online editor is not available for this: no editor (Collabora Online or ONLYOFFICE) is configured on this server ([editor] url), the editor cannot open this file type, or, for save-as-odf, LibreOffice (soffice) is not installed.",
	"no_preview":                "The server cannot make a thumbnail or preview of this file type (images only: JPEG, PNG, GIF, WebP, TIFF, BMP). Download the file instead.",
	"index_rebuilding":          "The search index is being rebuilt (after an upgrade, a restore, or when it was missing or damaged). Search is back when it is done: retry after Retry-After seconds. Browsing and downloads work meanwhile.",
	"bad_request":               "The request could not be understood (for example malformed JSON).",
	"unavailable":               "The service is temporarily unavailable. Retry later.",
	"internal":                  "An unexpected error occurred on the server. The instance field holds the request id to give to support.",
	"method_not_allowed":        "The HTTP method is not allowed on this path.",
	"not_acceptable":            "The server cannot produce a response in a format the Accept header allows.",
	"unsupported_media_type":    "The request body's content type is not supported.",
	"rate_limited":              "Too many requests, failed sign-ins or connections from this credential or address ([limits] in the configuration). Wait for Retry-After seconds.",
	"timeout":                   "The request took longer than the server allows ([limits] request_timeout). Retry later, or narrow the request (a smaller page, a narrower range).",
	"not_implemented":           "Not implemented on this server.",
	"bad_gateway":               "The WebDAV Destination of a COPY or MOVE is on another server or outside the file mount.",
	"url_expired":               "The presigned URL has expired. Ask the API for a new one.",
}

// Doc is what the problem type page of code says of it; "" for a code
// without a page.
func Doc(code string) string { return docs[code] }

// Types lists every problem code a response may carry with its status: the
// codes of the table and those of the statuses raised outside the app.
func Types() map[string]int {
	out := Codes()
	for s, c := range codes {
		if _, ok := out[c]; !ok {
			out[c] = s
		}
	}
	return out
}
