package drive

import (
	"errors"
	"testing"

	"atrium/app"
)

// FuzzParseFilter checks that a `field:op:value` expression yields either a
// filter with a known field and operator or an app validation error.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		"size_bytes:gt:1024", "name:contains:report", "mime_type:prefix:image/", "created_at:gte:2026-01-01",
		"updated_at:lt:2026-11-23T10:00:00.5+01:00", "is_favorite:eq:true", "owner_id:eq:u_01JD", "name:eq:a:b:c",
		"", "::", "size_bytes:gt:", "size_bytes:contains:1", "is_favorite:gt:true", "size_bytes:gt:99999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := ParseFilter("query.filter", expr)
		if err != nil {
			var e *app.Error
			if !errors.As(err, &e) || e.Code != app.EValidation {
				t.Fatalf("ParseFilter(%q): not a validation error: %v", expr, err)
			}
			return
		}
		if _, ok := filterFields[flt.Field]; !ok || !filterOps[flt.Op] || flt.Value == nil {
			t.Fatalf("ParseFilter(%q) = %+v", expr, flt)
		}
	})
}
