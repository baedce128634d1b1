package calendar

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"atrium/app"
)

// The methods below serve a CalDAV door: objects addressed by resource name,
// their iCalendar text kept verbatim, ETags, and a change feed with tombstones
// for sync-collection.

// Conditions are the preconditions of a write (If-Match / If-None-Match).
type Conditions struct {
	IfMatch     string
	IfNoneMatch string
}

// GetObject returns an object of one of the caller's calendars by name. Errors:
// insufficient_scope (no calendar:read), no_bound_user, feature_not_in_plan,
// not_found (no such calendar of the caller, no object of this name in it).
func (s *Service) GetObject(ctx context.Context, p *app.Principal, calID, name string) (Object, error) {
	cal, _, err := s.calendar(ctx, p, app.ScopeCalendarRead, calID)
	if err != nil {
		return Object{}, err
	}
	o, err := s.store.ObjectByName(ctx, cal.ID, name)
	if app.ErrorCode(err) == app.ENotFound {
		return o, app.Errorf(app.ENotFound, "No object %s in this calendar.", name)
	}
	return o, err
}

// ObjectsByName returns the objects of a calendar with these resource names
// (calendar-multiget, sync-collection); names without an object are left out.
// Errors: insufficient_scope (no calendar:read), no_bound_user,
// feature_not_in_plan, not_found (no such calendar of the caller).
func (s *Service) ObjectsByName(ctx context.Context, p *app.Principal, calID string, names []string) ([]Object, error) {
	cal, _, err := s.calendar(ctx, p, app.ScopeCalendarRead, calID)
	if err != nil {
		return nil, err
	}
	out := make([]Object, 0, len(names))
	for _, n := range names {
		o, err := s.store.ObjectByName(ctx, cal.ID, n)
		if app.ErrorCode(err) == app.ENotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// collectionNameRE is what a client may name a calendar it makes (MKCALENDAR).
var collectionNameRE = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,200}$`)

// CreateCalendarAt adds a calendar with the id a client chose (MKCALENDAR at
// /dav/calendars/<user>/<id>/) holding the components asked for (VEVENT,
// VTODO; none: both; another is ComponentRefused); an id in use is a
// conflict. Errors: insufficient_scope (no calendar:write), no_bound_user,
// feature_not_in_plan, validation_failed (the id, a component kind, the name,
// time zone or colour), conflict (the id is in use).
func (s *Service) CreateCalendarAt(ctx context.Context, p *app.Principal, id string, in CalendarInput, components []string) (Calendar, error) {
	if !collectionNameRE.MatchString(id) || id == "." || id == ".." {
		return Calendar{}, app.Invalid("path.cal_id", "must be 1 to 200 letters, digits, '-', '_', '.' or '@'", id)
	}
	var comps []string
	for _, k := range components {
		k = strings.ToUpper(strings.TrimSpace(k))
		if !slices.Contains(AllComponents, k) {
			return Calendar{}, componentRefused(k + " is not a kind of object Atrium keeps; a calendar holds VEVENT (events), VTODO (tasks) or both")
		}
		if !slices.Contains(comps, k) {
			comps = append(comps, k)
		}
	}
	c, err := s.createCalendar(ctx, p, id, in, comps...)
	if app.ErrorCode(err) == app.EConflict {
		return c, app.Errorf(app.EConflict, "A calendar named %s exists.", id)
	}
	return c, err
}

// ObjectsInRange returns the objects of a calendar with an occurrence in
// [start, end) (calendar-query with a time-range); zero times mean every
// object. A range with both ends may span at most MaxRange, as a REST list
// (RangeRefused); one with an open end is answered, since each event is only
// expanded to its first occurrence in the range, starting at the range. Errors:
// insufficient_scope (no calendar:read), no_bound_user, feature_not_in_plan,
// not_found (no such calendar of the caller), validation_failed (a range over
// MaxRange, a rule too dense for the range).
func (s *Service) ObjectsInRange(ctx context.Context, p *app.Principal, calID string, start, end time.Time) ([]Object, error) {
	cal, _, err := s.calendar(ctx, p, app.ScopeCalendarRead, calID)
	if err != nil {
		return nil, err
	}
	if !start.IsZero() && !end.IsZero() && end.Sub(start) > MaxRange {
		msg := "may span at most 366 days"
		return nil, &app.Error{Code: app.EValidation, Message: "The time-range " + msg + "; ask for shorter ranges, or leave its end open.",
			Fields: []app.FieldError{{Location: "time-range", Message: msg, Value: start.UTC().Format(icalUTC) + "/" + end.UTC().Format(icalUTC)}}}
	}
	var out []Object
	if start.IsZero() && end.IsZero() {
		err = s.store.Objects(ctx, cal.ID, func(o Object) error { out = append(out, o); return nil })
		return out, err
	}
	if end.IsZero() {
		end = start.Add(100 * 365 * 24 * time.Hour)
	}
	if start.IsZero() {
		start = time.Unix(0, 0)
	}
	comps, err := s.store.Window(ctx, []string{cal.ID}, start.Add(-floatingSlack), end.Add(floatingSlack))
	if err != nil {
		return nil, err
	}
	sums, err := expand(newBudget(ctx), comps, start, end, zones([]Calendar{cal}), true)
	if err != nil {
		return nil, fmt.Errorf("expand calendar %s: %w", cal.ID, err)
	}
	// The matches' objects in one read, in the order of their first
	// occurrence; one deleted since the window was read is left out.
	var uids []string
	first := map[string]int{}
	for _, sum := range sums {
		if _, ok := first[sum.UID]; !ok {
			first[sum.UID] = len(uids)
			uids = append(uids, sum.UID)
		}
	}
	if len(uids) == 0 {
		return out, nil
	}
	objs, err := s.store.ObjectsByUID(ctx, cal.ID, uids)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(objs, func(a, b Object) int { return first[a.UID] - first[b.UID] })
	return objs, nil
}

// PutObject creates or replaces an object from iCalendar text a client wrote,
// keeping it verbatim (alarms, X- properties and parameters survive). It
// returns the stored object and whether it was created. Errors:
// insufficient_scope (no calendar:write), no_bound_user, feature_not_in_plan,
// not_found (no such calendar of the caller), validation_failed (the name, not
// iCalendar, an invalid event or task, a kind the calendar does not hold, a
// refused RRULE), payload_too_large (over MaxImportBytes), precondition_failed
// (IfMatch or IfNoneMatch), conflict (a changed UID, a UID another object of
// the calendar has).
func (s *Service) PutObject(ctx context.Context, p *app.Principal, calID, name string, r io.Reader, cond Conditions) (Object, bool, error) {
	cal, loc, err := s.calendar(ctx, p, app.ScopeCalendarWrite, calID)
	if err != nil {
		return Object{}, false, err
	}
	if !strings.HasSuffix(name, ".ics") || strings.ContainsAny(name, "/\\") || len(name) > 255 {
		return Object{}, false, app.Invalid("name", "must be a resource name ending in .ics", name)
	}
	body, err := io.ReadAll(io.LimitReader(r, MaxImportBytes+1))
	if err != nil {
		return Object{}, false, err
	}
	if len(body) > MaxImportBytes {
		return Object{}, false, app.Errorf(app.EPayloadTooLarge, "An event may be at most 10 MiB.")
	}
	vc, err := decode(string(body))
	if err != nil {
		return Object{}, false, app.Errorf(app.EValidation, "Invalid iCalendar data: %s.", strings.TrimPrefix(err.Error(), "parse iCalendar: "))
	}
	existing, err := s.store.ObjectByName(ctx, cal.ID, name)
	var ex *Object
	switch {
	case err == nil:
		ex = &existing
		if cond.IfNoneMatch == "*" {
			return Object{}, false, app.Errorf(app.EPreconditionFailed, "An object named %s exists.", name)
		}
		if err := matches(existing, cond.IfMatch); err != nil {
			return Object{}, false, err
		}
	case app.ErrorCode(err) == app.ENotFound:
		if cond.IfMatch != "" {
			return Object{}, false, app.Errorf(app.EPreconditionFailed, "No object named %s.", name)
		}
	default:
		return Object{}, false, err
	}
	ps, o, err := s.prepare(cal, loc, ex, name, vc)
	if err != nil {
		return Object{}, false, err
	}
	if ex != nil && ps.uid != ex.UID {
		return Object{}, false, app.Errorf(app.EConflict, "The UID of %s cannot change.", name)
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error { return s.commit(ctx, p, &o, ps, ex == nil, change{}) })
	return o, ex == nil, err
}

// DeleteObject removes an object by name. Errors: insufficient_scope (no
// calendar:write), no_bound_user, feature_not_in_plan, not_found (no such
// calendar of the caller, no object of this name in it), precondition_failed
// (ifMatch).
func (s *Service) DeleteObject(ctx context.Context, p *app.Principal, calID, name, ifMatch string) error {
	cal, _, err := s.calendar(ctx, p, app.ScopeCalendarWrite, calID)
	if err != nil {
		return err
	}
	o, err := s.store.ObjectByName(ctx, cal.ID, name)
	if app.ErrorCode(err) == app.ENotFound {
		return app.Errorf(app.ENotFound, "No object %s in this calendar.", name)
	}
	if err != nil {
		return err
	}
	if err := matches(o, ifMatch); err != nil {
		return err
	}
	return s.remove(ctx, p, o)
}

// Changes returns what changed in a calendar after sync sequence since (0: every
// object) and the sequence to ask from next time. Errors: insufficient_scope
// (no calendar:read), no_bound_user, feature_not_in_plan, not_found (no such
// calendar of the caller), validation_failed (a sequence older than the
// deletions the calendar remembers).
func (s *Service) Changes(ctx context.Context, p *app.Principal, calID string, since int64) ([]Change, int64, error) {
	cal, _, err := s.calendar(ctx, p, app.ScopeCalendarRead, calID)
	if err != nil {
		return nil, 0, err
	}
	chs, cur, pruned, err := s.store.Changes(ctx, cal.ID, since)
	if err == nil && since > 0 && since < pruned {
		return nil, 0, app.Errorf(app.EValidation, "The sync token is older than the deletions this calendar remembers: sync again from the start.")
	}
	return chs, cur, err
}

// PruneTombstones forgets deletions older than maxAge, so that the change feed
// of a collection with steady churn does not grow without bound. A client whose
// sync token predates them is refused (DAV:valid-sync-token) and syncs again
// from the start, as RFC 6578 provides. Errors: none of its own.
func (s *Service) PruneTombstones(ctx context.Context, maxAge time.Duration) (int, error) {
	n, err := s.store.PruneTombstones(ctx, s.clock.Now().Add(-maxAge))
	if err != nil {
		return n, fmt.Errorf("prune calendar tombstones: %w", err)
	}
	return n, nil
}
