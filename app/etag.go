package app

import "strings"

// CheckIfMatch applies an If-Match precondition (RFC 9110 §13.1.1) against the
// current strong ETag of a resource: empty ifMatch passes; "*" passes for an
// existing resource; otherwise one of the listed tags must equal etag, or the
// write is refused with precondition_failed.
func CheckIfMatch(ifMatch, etag string) error {
	ifMatch = strings.TrimSpace(ifMatch)
	if ifMatch == "" || ifMatch == "*" {
		return nil
	}
	for _, tag := range strings.Split(ifMatch, ",") {
		tag = strings.TrimSpace(tag)
		if strings.HasPrefix(tag, "W/") {
			continue // weak tags never match for a write
		}
		// Unquoted tags are accepted from sloppy clients.
		if strings.Trim(tag, `"`) == strings.Trim(etag, `"`) {
			return nil
		}
	}
	return Errorf(EPreconditionFailed, "If-Match %s does not match the current ETag %s; fetch the resource again, merge and retry with the new ETag.", ifMatch, etag)
}
