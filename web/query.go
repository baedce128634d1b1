package web

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// knownQuery answers 422 validation_failed, naming each parameter, when a
// request carries query parameters its operation does not take (say `from`
// and `to` where the operation takes `start` and `end`): a typo silently
// ignored would give the caller a different answer than the one asked for.
func (s *Server) knownQuery(ctx huma.Context, next func(huma.Context)) {
	u := ctx.URL()
	if u.RawQuery == "" {
		next(ctx)
		return
	}
	op := ctx.Operation()
	known := s.queryNames(op)
	var errs []error
	for name, vals := range u.Query() {
		if _, ok := known[name]; ok {
			continue
		}
		msg := "is not a parameter of this operation"
		if len(known) == 0 {
			msg += ", which takes none"
		} else {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			slices.Sort(names)
			msg += "; it takes " + strings.Join(names, ", ")
		}
		errs = append(errs, &huma.ErrorDetail{Location: "query." + name, Message: msg, Value: vals[0]})
	}
	if len(errs) == 0 {
		next(ctx)
		return
	}
	slices.SortFunc(errs, func(a, b error) int {
		return strings.Compare(a.(*huma.ErrorDetail).Location, b.(*huma.ErrorDetail).Location)
	})
	_ = huma.WriteErr(s.api, ctx, http.StatusUnprocessableEntity, "validation failed", errs...)
}

// queryNames are the query parameters an operation declares, computed once.
func (s *Server) queryNames(op *huma.Operation) map[string]struct{} {
	if v, ok := s.queryParams.Load(op); ok {
		return v.(map[string]struct{})
	}
	names := map[string]struct{}{}
	for _, p := range op.Parameters {
		if p.In == "query" {
			names[p.Name] = struct{}{}
		}
	}
	s.queryParams.Store(op, names)
	return names
}

// friendlier rewrites huma's parse errors, written in Go's terms, into what a
// caller can act on.
func friendlier(msg string) string {
	switch {
	case strings.HasPrefix(msg, "invalid date/time for format "):
		if strings.TrimPrefix(msg, "invalid date/time for format ") == http.TimeFormat {
			return "must be an HTTP date, for example " + time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC).Format(http.TimeFormat)
		}
		return "must be a date and time in RFC 3339 form with a time zone, for example 2026-11-24T09:00:00Z or 2026-11-24T10:00:00+01:00"
	case msg == "invalid integer":
		return "must be a whole number"
	case msg == "invalid float":
		return "must be a number"
	case msg == "invalid boolean":
		return "must be true or false"
	}
	return msg
}
