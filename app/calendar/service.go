package calendar

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"atrium/app"
)

// Service applies the calendar rules. Every method takes the caller and checks
// scope, plan feature and ownership: a calendar of another user is not_found.
type Service struct {
	store  Store
	audit  app.Auditor
	outbox app.Outbox
	clock  app.Clock
}

// NewService returns the calendar service.
func NewService(store Store, audit app.Auditor, outbox app.Outbox, clock app.Clock) *Service {
	return &Service{store: store, audit: audit, outbox: outbox, clock: clock}
}

// check refuses callers without the scope, the plan feature or an acting user.
func check(p *app.Principal, scope string) error {
	if err := p.Require(scope); err != nil {
		return err
	}
	if err := p.RequireUser(); err != nil {
		return err
	}
	if !p.HasFeature(Feature) {
		return app.Errorf(app.EFeatureNotInPlan, "The organisation's plan does not include the calendar.")
	}
	return nil
}

// defaultCalendar ensures the user's default calendar.
func (s *Service) defaultCalendar(ctx context.Context, p *app.Principal) (Calendar, error) {
	now := s.clock.Now()
	return s.store.EnsureDefaultCalendar(ctx, Calendar{ID: app.NewID(), OrgID: p.OrgID, UserID: p.UserID, Name: "Calendar",
		Timezone: "UTC", IsDefault: true, CreatedAt: now, UpdatedAt: now})
}

// calendar returns one of the caller's calendars with its time zone.
func (s *Service) calendar(ctx context.Context, p *app.Principal, scope, id string) (Calendar, *time.Location, error) {
	if err := check(p, scope); err != nil {
		return Calendar{}, nil, err
	}
	if _, err := s.defaultCalendar(ctx, p); err != nil {
		return Calendar{}, nil, err
	}
	c, err := s.store.Calendar(ctx, p.OrgID, p.UserID, id)
	if app.ErrorCode(err) == app.ENotFound {
		return c, nil, app.Errorf(app.ENotFound, "No calendar %s.", id)
	}
	if err != nil {
		return c, nil, err
	}
	loc, ok := resolveTZ(c.Timezone)
	if !ok {
		loc = time.UTC
	}
	return c, loc, nil
}

// Calendars lists the caller's calendars, making the default one on first use.
// Errors: insufficient_scope (no calendar:read), no_bound_user,
// feature_not_in_plan.
func (s *Service) Calendars(ctx context.Context, p *app.Principal) ([]Calendar, error) {
	if err := check(p, app.ScopeCalendarRead); err != nil {
		return nil, err
	}
	if _, err := s.defaultCalendar(ctx, p); err != nil {
		return nil, err
	}
	return s.store.Calendars(ctx, p.OrgID, p.UserID)
}

// Calendar returns one of the caller's calendars. Errors: insufficient_scope
// (no calendar:read), no_bound_user, feature_not_in_plan, not_found (no such
// calendar of the caller).
func (s *Service) Calendar(ctx context.Context, p *app.Principal, id string) (Calendar, error) {
	c, _, err := s.calendar(ctx, p, app.ScopeCalendarRead, id)
	return c, err
}

// CreateCalendar adds a calendar for the caller. Errors: insufficient_scope (no
// calendar:write), no_bound_user, feature_not_in_plan, validation_failed (the
// name, time zone or colour).
func (s *Service) CreateCalendar(ctx context.Context, p *app.Principal, in CalendarInput) (Calendar, error) {
	return s.createCalendar(ctx, p, app.NewID(), in)
}

// createCalendar adds a calendar with the given id (CalDAV MKCALENDAR names it).
func (s *Service) createCalendar(ctx context.Context, p *app.Principal, id string, in CalendarInput, components ...string) (Calendar, error) {
	if err := check(p, app.ScopeCalendarWrite); err != nil {
		return Calendar{}, err
	}
	var v app.Validator
	in.Name = strings.TrimSpace(in.Name)
	v.Check(in.Name != "" && len(in.Name) <= 200, "body.name", "must be 1 to 200 characters", in.Name)
	if in.Timezone == "" {
		in.Timezone = "UTC"
	}
	if _, err := loadLocation(in.Timezone); err != nil {
		v.Add("body.timezone", "must be an IANA time zone such as Europe/Paris", in.Timezone)
	}
	v.Check(in.Color == "" || validColor(in.Color), "body.color", "must be a colour like #3366ff", in.Color)
	if err := v.Err(); err != nil {
		return Calendar{}, err
	}
	if _, err := s.defaultCalendar(ctx, p); err != nil {
		return Calendar{}, err
	}
	now := s.clock.Now()
	if len(components) == 0 {
		components = AllComponents
	}
	c := Calendar{ID: id, OrgID: p.OrgID, UserID: p.UserID, Name: in.Name, Description: in.Description,
		Color: in.Color, Timezone: in.Timezone, CreatedAt: now, UpdatedAt: now, Components: components}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.CreateCalendar(ctx, c); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "calendar", Action: "calendar.created", ActorID: p.UserID,
			TargetType: "calendar", TargetID: c.ID, OrgID: p.OrgID, CreatedAt: now})
	})
	return c, err
}

// UpdateCalendar renames a calendar or changes its description, colour or time
// zone (CalDAV PROPPATCH). Errors: insufficient_scope (no calendar:write),
// no_bound_user, feature_not_in_plan, not_found (no such calendar of the
// caller), validation_failed (the name, time zone or colour).
func (s *Service) UpdateCalendar(ctx context.Context, p *app.Principal, id string, in CalendarInput) (Calendar, error) {
	c, _, err := s.calendar(ctx, p, app.ScopeCalendarWrite, id)
	if err != nil {
		return c, err
	}
	var v app.Validator
	if name := strings.TrimSpace(in.Name); name != "" {
		v.Check(len(name) <= 200, "body.name", "must be 1 to 200 characters", in.Name)
		c.Name = name
	}
	if in.Description != "" {
		c.Description = in.Description
	}
	if in.Color != "" {
		v.Check(validColor(in.Color), "body.color", "must be a colour like #3366ff", in.Color)
		c.Color = in.Color
	}
	if in.Timezone != "" {
		if _, err := loadLocation(in.Timezone); err != nil {
			v.Add("body.timezone", "must be an IANA time zone such as Europe/Paris", in.Timezone)
		}
		c.Timezone = in.Timezone
	}
	if err := v.Err(); err != nil {
		return Calendar{}, err
	}
	c.UpdatedAt = s.clock.Now()
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.UpdateCalendar(ctx, c); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "calendar", Action: "calendar.updated", ActorID: p.UserID,
			TargetType: "calendar", TargetID: c.ID, OrgID: p.OrgID, CreatedAt: c.UpdatedAt})
	})
	return c, err
}

// DeleteCalendar removes one of the caller's calendars with its events; the
// default calendar stays (conflict). Errors: insufficient_scope (no
// calendar:write), no_bound_user, feature_not_in_plan, not_found (no such
// calendar of the caller), conflict (the default calendar).
func (s *Service) DeleteCalendar(ctx context.Context, p *app.Principal, id string) error {
	c, _, err := s.calendar(ctx, p, app.ScopeCalendarWrite, id)
	if err != nil {
		return err
	}
	if c.IsDefault {
		return app.Errorf(app.EConflict, "The default calendar cannot be deleted.")
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteCalendar(ctx, p.OrgID, p.UserID, c.ID); err != nil {
			return err
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "calendar", Action: "calendar.deleted", ActorID: p.UserID,
			TargetType: "calendar", TargetID: c.ID, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
}

func validColor(c string) bool {
	if len(c) != 7 && len(c) != 9 || c[0] != '#' {
		return false
	}
	for _, r := range c[1:] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// checkRange validates an expansion range.
func checkRange(start, end time.Time) error {
	var v app.Validator
	v.Check(!start.IsZero(), "query.start", "is required", nil)
	v.Check(!end.IsZero(), "query.end", "is required", nil)
	if !start.IsZero() && !end.IsZero() {
		v.Check(end.After(start), "query.end", "must be after start", end.Format(time.RFC3339))
		v.Check(end.Sub(start) <= MaxRange, "query.end", "the range may span at most 366 days", end.Format(time.RFC3339))
	}
	return v.Err()
}

// Events lists the events and expanded occurrences of the caller's calendars
// (all, or those named) that overlap [start, end), sorted by start. Errors:
// insufficient_scope (no calendar:read), no_bound_user, feature_not_in_plan,
// validation_failed (no start or end, an end not after the start, a range over
// 366 days or holding over MaxOccurrences occurrences), not_found (no such
// calendar of the caller among calendarIDs).
func (s *Service) Events(ctx context.Context, p *app.Principal, calendarIDs []string, start, end time.Time) ([]EventSummary, error) {
	if err := check(p, app.ScopeCalendarRead); err != nil {
		return nil, err
	}
	if err := checkRange(start, end); err != nil {
		return nil, err
	}
	var cals []Calendar
	if len(calendarIDs) == 0 {
		var err error
		if cals, err = s.Calendars(ctx, p); err != nil {
			return nil, err
		}
	} else {
		for _, id := range calendarIDs {
			c, _, err := s.calendar(ctx, p, app.ScopeCalendarRead, id)
			if err != nil {
				return nil, err
			}
			cals = append(cals, c)
		}
	}
	ids := make([]string, len(cals))
	for i, c := range cals {
		ids[i] = c.ID
	}
	comps, err := s.store.Window(ctx, ids, start.Add(-floatingSlack), end.Add(floatingSlack))
	if err != nil {
		return nil, err
	}
	b := newBudget(ctx)
	b.value = end.Format(time.RFC3339)
	return expand(b, comps, start, end, zones(cals), false)
}

// floatingSlack widens a window query: all-day events are stored as UTC dates
// and read in their calendar's zone, at most 14 hours away.
const floatingSlack = 14 * time.Hour

// localize puts a stored component's times into its time zone; all-day dates
// become midnights in the calendar's zone (floating dates, RFC 5545 §3.3.4).
func localize(c *Component, calZone *time.Location) {
	if c.AllDay {
		if calZone == nil {
			calZone = time.UTC
		}
		day := func(t time.Time) time.Time {
			u := t.UTC()
			return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, calZone)
		}
		c.Start, c.End = day(c.Start), day(c.End)
		if c.RecurrenceID != nil {
			t := day(*c.RecurrenceID)
			c.RecurrenceID = &t
		}
		for i := range c.RDates {
			c.RDates[i] = day(c.RDates[i])
		}
		for i := range c.ExDates {
			c.ExDates[i] = day(c.ExDates[i])
		}
		return
	}
	loc := time.UTC
	if c.Timezone != "" {
		if l, ok := resolveTZ(c.Timezone); ok {
			loc = l
		}
	}
	c.Start, c.End = c.Start.In(loc), c.End.In(loc)
	if c.RecurrenceID != nil {
		t := c.RecurrenceID.In(loc)
		c.RecurrenceID = &t
	}
}

// zones maps calendar ids to their time zones.
func zones(cals []Calendar) map[string]*time.Location {
	out := make(map[string]*time.Location, len(cals))
	for _, c := range cals {
		if l, ok := resolveTZ(c.Timezone); ok {
			out[c.ID] = l
		}
	}
	return out
}

// expand turns window components into summaries: occurrences of masters
// (skipping those overridden) and overrides that overlap [start, end), charged
// to b. With first, a master gives at most its first occurrence in the range.
func expand(b *budget, comps []Component, start, end time.Time, calZones map[string]*time.Location, first bool) ([]EventSummary, error) {
	overrides := map[string][]time.Time{}
	recurring := map[string]bool{}
	for i := range comps {
		c := &comps[i]
		localize(c, calZones[c.CalendarID])
		if c.RecurrenceID != nil {
			overrides[c.ObjectID] = append(overrides[c.ObjectID], *c.RecurrenceID)
		} else if c.RRule != "" || len(c.RDates) > 0 {
			recurring[c.ObjectID] = true
		}
	}
	out := make([]EventSummary, 0, len(comps)) // at least one summary a component, usually
	for i := range comps {
		c := &comps[i]
		if c.Cancelled {
			continue
		}
		sum := EventSummary{UID: c.UID, CalendarID: c.CalendarID, Title: c.Title, AllDay: c.AllDay, Location: c.Location,
			Timezone: c.Timezone, IsRecurring: recurring[c.ObjectID]}
		if c.RecurrenceID != nil {
			if !overlaps(c.Start, c.End, start, end) {
				continue
			}
			if err := b.emit(c.UID, 1, first); err != nil {
				return nil, err
			}
			sum.Start, sum.End, sum.OccurrenceDate, sum.IsRecurring = c.Start, c.End, occurrenceDate(*c.RecurrenceID), true
			out = append(out, sum)
			continue
		}
		starts, err := c.occurrences(b, start, end, overrides[c.ObjectID], first)
		if err != nil {
			return nil, fmt.Errorf("expand %s: %w", c.UID, err)
		}
		for _, t := range starts {
			e := sum
			e.Start, e.End = t, c.occurrenceEnd(t)
			if e.IsRecurring {
				e.OccurrenceDate = occurrenceDate(t)
			}
			out = append(out, e)
		}
	}
	// Sort small keys, then place the summaries once.
	type key struct {
		at  int64
		uid string
		i   int
	}
	keys := make([]key, len(out))
	for i := range out {
		keys[i] = key{out[i].Start.UnixNano(), out[i].UID, i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return strings.Compare(a.uid, b.uid)
	})
	sorted := make([]EventSummary, len(out))
	for i, k := range keys {
		sorted[i] = out[k.i]
	}
	return sorted, nil
}

// object loads an event of one of the caller's calendars.
func (s *Service) object(ctx context.Context, p *app.Principal, scope, calID, uid string) (Calendar, *time.Location, Object, error) {
	cal, loc, err := s.calendar(ctx, p, scope, calID)
	if err != nil {
		return cal, nil, Object{}, err
	}
	o, err := s.store.Object(ctx, cal.ID, uid)
	if app.ErrorCode(err) == app.ENotFound || err == nil && o.IsTask() {
		return cal, nil, o, app.Errorf(app.ENotFound, "No event %s in this calendar.", uid)
	}
	return cal, loc, o, err
}

func load(o Object, loc *time.Location) (*parsed, error) {
	vc, err := decode(o.ICS)
	if err != nil {
		return nil, err
	}
	return parseObject(vc, loc)
}

// Event returns an event with its overrides. Errors: insufficient_scope (no
// calendar:read), no_bound_user, feature_not_in_plan, not_found (no such
// calendar of the caller, no such event in it).
func (s *Service) Event(ctx context.Context, p *app.Principal, calID, uid string) (EventDetail, error) {
	_, loc, o, err := s.object(ctx, p, app.ScopeCalendarRead, calID, uid)
	if err != nil {
		return EventDetail{}, err
	}
	ps, err := load(o, loc)
	if err != nil {
		return EventDetail{}, err
	}
	return ps.detail(o), nil
}

// CreateEvent adds an event to one of the caller's calendars. Errors:
// insufficient_scope (no calendar:write), no_bound_user, feature_not_in_plan,
// not_found (no such calendar of the caller), validation_failed (a field, a
// calendar of tasks only).
func (s *Service) CreateEvent(ctx context.Context, p *app.Principal, calID string, in EventInput) (EventDetail, error) {
	cal, loc, err := s.calendar(ctx, p, app.ScopeCalendarWrite, calID)
	if err != nil {
		return EventDetail{}, err
	}
	f, err := resolve(in, nil, loc)
	if err != nil {
		return EventDetail{}, err
	}
	now := s.clock.Now()
	uid := app.NewID()
	comp := newEvent(uid, now)
	f.apply(comp, now, p.Email, true)
	vc := newVCalendar()
	vc.Children = append(vc.Children, comp)
	o, ps, err := s.save(ctx, p, cal, loc, nil, uid+".ics", vc, change{})
	if err != nil {
		return EventDetail{}, err
	}
	return ps.detail(o), nil
}

// UpdateEvent changes the master of an event (the whole series). ifMatch, when
// set, must be the current ETag. Errors: insufficient_scope (no
// calendar:write), no_bound_user, feature_not_in_plan, not_found (no such
// calendar of the caller, no such event in it), precondition_failed (ifMatch),
// conflict (an event of single occurrences only, without a master),
// validation_failed (a field).
func (s *Service) UpdateEvent(ctx context.Context, p *app.Principal, calID, uid string, in EventInput, ifMatch string) (EventDetail, error) {
	cal, loc, o, err := s.object(ctx, p, app.ScopeCalendarWrite, calID, uid)
	if err != nil {
		return EventDetail{}, err
	}
	if err := matches(o, ifMatch); err != nil {
		return EventDetail{}, err
	}
	ps, err := load(o, loc)
	if err != nil {
		return EventDetail{}, err
	}
	if ps.master == nil {
		return EventDetail{}, app.Errorf(app.EConflict, "Event %s holds only single occurrences; edit them on their occurrence path.", uid)
	}
	f, err := resolve(in, ps.master, loc)
	if err != nil {
		return EventDetail{}, err
	}
	now := s.clock.Now()
	moveSeries(ps, &f, in)
	f.apply(ps.master.comp, now, p.Email, true)
	o, ps, err = s.save(ctx, p, cal, loc, &o, o.Name, ps.cal, change{})
	if err != nil {
		return EventDetail{}, err
	}
	return ps.detail(o), nil
}

// matches checks an If-Match value against an object's ETag.
func matches(o Object, ifMatch string) error {
	return app.CheckIfMatch(ifMatch, o.ETag)
}

// DeleteEvent removes an event with all its occurrences. Errors:
// insufficient_scope (no calendar:write), no_bound_user, feature_not_in_plan,
// not_found (no such calendar of the caller, no such event in it),
// precondition_failed (ifMatch).
func (s *Service) DeleteEvent(ctx context.Context, p *app.Principal, calID, uid, ifMatch string) error {
	_, _, o, err := s.object(ctx, p, app.ScopeCalendarWrite, calID, uid)
	if err != nil {
		return err
	}
	if err := matches(o, ifMatch); err != nil {
		return err
	}
	return s.remove(ctx, p, o)
}

func (s *Service) remove(ctx context.Context, p *app.Principal, o Object) error {
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.store.DeleteObject(ctx, o); err != nil {
			return err
		}
		target := "event"
		if o.IsTask() {
			target = "task"
		}
		return s.audit.Record(ctx, app.AuditEntry{Module: "calendar", Action: target + ".deleted", ActorID: p.UserID,
			TargetType: target, TargetID: o.UID, OrgID: p.OrgID, CreatedAt: s.clock.Now()})
	})
}

// change says which event a save emits.
type change struct {
	// occurrence is the VEVENT an occurrence edit wrote (its data goes in the
	// event, with occurrence_date).
	occurrence *ical.Component
	// occurrenceDate is set for an occurrence edit.
	occurrenceDate string
	// quiet suppresses the event (a split's first half is reported by the second).
	quiet bool
	// imported skips the per-event audit entry: an import records one for the file.
	imported bool
}

// save validates and writes a resource, records audit and emits the event in
// one transaction.
func (s *Service) save(ctx context.Context, p *app.Principal, cal Calendar, loc *time.Location, existing *Object, name string, vc *ical.Calendar, ch change) (Object, *parsed, error) {
	ps, o, err := s.prepare(cal, loc, existing, name, vc)
	if err != nil {
		return Object{}, nil, err
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		return s.commit(ctx, p, &o, ps, existing == nil, ch)
	})
	return o, ps, err
}

// prepare turns a resource into an object to store.
func (s *Service) prepare(cal Calendar, loc *time.Location, existing *Object, name string, vc *ical.Calendar) (*parsed, Object, error) {
	now := s.clock.Now()
	ensureTimezones(vc, now.Year())
	if vc.Props.Get(ical.PropProductID) == nil {
		vc.Props.SetText(ical.PropProductID, ProdID)
	}
	if vc.Props.Get(ical.PropVersion) == nil {
		vc.Props.SetText(ical.PropVersion, "2.0")
	}
	ps, err := parseObject(vc, loc)
	if err != nil {
		return nil, Object{}, app.Errorf(app.EValidation, "Invalid event or task: %s.", err)
	}
	switch {
	case ps.isTask() && !cal.Supports(ical.CompToDo):
		return nil, Object{}, componentRefused("This calendar holds events only, not tasks (VTODO)")
	case !ps.isTask() && !cal.Supports(ical.CompEvent):
		return nil, Object{}, componentRefused("This calendar holds tasks only, not events (VEVENT)")
	}
	if err := ps.checkRules(); err != nil {
		return nil, Object{}, err
	}
	comps, err := ps.index()
	if err != nil {
		return nil, Object{}, app.Errorf(app.EValidation, "Invalid event: %s.", err)
	}
	ics, err := encodeString(vc)
	if err != nil {
		return nil, Object{}, app.Errorf(app.EValidation, "Invalid event: %s.", strings.TrimPrefix(err.Error(), "ical: "))
	}
	o := Object{ID: app.NewID(), CalendarID: cal.ID, OrgID: cal.OrgID, UserID: cal.UserID, UID: ps.uid, Name: name,
		ICS: ics, ETag: etagOf(ics), TZIDs: tzidsOf(vc), CreatedAt: now, UpdatedAt: now, Components: comps}
	if existing != nil {
		o.ID, o.CreatedAt = existing.ID, existing.CreatedAt
	} else {
		o.New = true
	}
	return ps, o, nil
}

// checkRules refuses an object with a rule checkRule refuses: a
// validation_failed error with the field rrule (RuleRefused).
func (ps *parsed) checkRules() error {
	evs := ps.overrides
	if ps.master != nil {
		evs = append([]vevent{*ps.master}, evs...)
	}
	for _, ev := range evs {
		if ev.rrule == "" {
			continue
		}
		if err := checkRule(ev.rrule); err != nil {
			return &app.Error{Code: app.EValidation, Message: "Invalid event: RRULE " + err.Error() + ".",
				Fields: []app.FieldError{{Location: "rrule", Message: err.Error(), Value: ev.rrule}}}
		}
	}
	return nil
}

// commit writes a prepared object, its audit entry and its event; it runs in
// the caller's transaction.
func (s *Service) commit(ctx context.Context, p *app.Principal, o *Object, ps *parsed, created bool, ch change) error {
	if err := s.store.PutObject(ctx, o); err != nil {
		if app.ErrorCode(err) == app.EConflict {
			return app.Errorf(app.EConflict, "An event with UID %s already exists in this calendar.", o.UID)
		}
		return err
	}
	target, action, typ := "event", "event.updated", EventUpdated
	if created {
		action, typ = "event.created", EventCreated
	}
	if ps.isTask() {
		// A task has no webhook event of its own (the API's calendar events
		// are VEVENTs); the audit log and the DAV sync feed have it.
		target, action = "task", strings.Replace(action, "event.", "task.", 1)
		ch.quiet = true
	}
	if !ch.imported {
		if err := s.audit.Record(ctx, app.AuditEntry{Module: "calendar", Action: action, ActorID: p.UserID,
			TargetType: target, TargetID: o.UID, OrgID: p.OrgID, CreatedAt: o.UpdatedAt}); err != nil {
			return err
		}
	}
	if ch.quiet {
		return nil
	}
	return s.outbox.Emit(ctx, app.Event{Type: typ, OrgID: p.OrgID, CreatedAt: o.UpdatedAt, Data: eventData(o, ps, ch)})
}

// eventData is the payload of calendar.event.* (spec §6).
func eventData(o *Object, ps *parsed, ch change) map[string]any {
	head := ps.master
	if head == nil && len(ps.overrides) > 0 {
		head = &ps.overrides[0]
	}
	data := map[string]any{"event_id": o.UID, "calendar_id": o.CalendarID}
	if ch.occurrence != nil {
		for i := range ps.overrides {
			if ps.overrides[i].comp == ch.occurrence {
				head = &ps.overrides[i]
			}
		}
	}
	if ch.occurrenceDate != "" {
		data["occurrence_date"] = ch.occurrenceDate
	}
	if head != nil {
		data["title"] = head.title
		data["start"] = head.start.Format(time.RFC3339)
		data["end"] = head.end.Format(time.RFC3339)
	}
	return data
}

// ExportEvent returns an event as an iCalendar file (with its VTIMEZONEs).
// Errors: insufficient_scope (no calendar:read), no_bound_user,
// feature_not_in_plan, not_found (no such calendar of the caller, no such event
// in it).
func (s *Service) ExportEvent(ctx context.Context, p *app.Principal, calID, uid string) ([]byte, error) {
	_, _, o, err := s.object(ctx, p, app.ScopeCalendarRead, calID, uid)
	if err != nil {
		return nil, err
	}
	return []byte(o.ICS), nil
}

// ExportFileName is the file name of a calendar's export: its name, .ics.
func ExportFileName(c Calendar) string {
	name := c.Name
	if strings.TrimSpace(name) == "" {
		name = "calendar"
	}
	return name + ".ics"
}

// ExportCalendar checks access and returns the calendar and a function writing
// it as one iCalendar file: a VTIMEZONE per zone in use, then every VEVENT.
// Errors: insufficient_scope (no calendar:read), no_bound_user,
// feature_not_in_plan, not_found (no such calendar of the caller).
func (s *Service) ExportCalendar(ctx context.Context, p *app.Principal, calID string) (Calendar, func(w io.Writer) error, error) {
	cal, _, err := s.calendar(ctx, p, app.ScopeCalendarRead, calID)
	if err != nil {
		return cal, nil, err
	}
	return cal, func(w io.Writer) error { return s.writeCalendar(ctx, cal, w) }, nil
}

func (s *Service) writeCalendar(ctx context.Context, cal Calendar, w io.Writer) error {
	tzids, err := s.store.CalendarTZIDs(ctx, cal.ID)
	if err != nil {
		return err
	}
	head := newVCalendar()
	head.Props.SetText("X-WR-CALNAME", cal.Name)
	head.Props.SetText("X-WR-TIMEZONE", cal.Timezone)
	fw := &folder{w: w}
	if _, err := io.WriteString(w, "BEGIN:VCALENDAR\r\n"); err != nil {
		return err
	}
	for _, name := range []string{ical.PropProductID, ical.PropVersion, "X-WR-CALNAME", "X-WR-TIMEZONE"} {
		if err := writeProp(fw, head.Props.Get(name)); err != nil {
			return err
		}
	}
	year := s.clock.Now().Year()
	for _, id := range tzids {
		if loc, ok := resolveTZ(id); ok {
			if err := writeComponent(fw, vtimezone(id, loc, year)); err != nil {
				return err
			}
		}
	}
	err = s.store.Objects(ctx, cal.ID, func(o Object) error {
		vc, err := decode(o.ICS)
		if err != nil {
			return err
		}
		for _, c := range events(vc) {
			if err := writeComponent(fw, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "END:VCALENDAR\r\n")
	return err
}

// writeComponent writes one component through go-ical's encoder.
func writeComponent(w io.Writer, c *ical.Component) error {
	var b strings.Builder
	cal := &ical.Calendar{Component: &ical.Component{Name: ical.CompCalendar, Props: ical.Props{}, Children: []*ical.Component{c}}}
	cal.Props.SetText(ical.PropProductID, ProdID)
	cal.Props.SetText(ical.PropVersion, "2.0")
	if err := ical.NewEncoder(&b).Encode(cal); err != nil {
		return err
	}
	body := b.String()
	start := strings.Index(body, "BEGIN:"+c.Name+"\r\n")
	end := strings.LastIndex(body, "END:VCALENDAR\r\n")
	for _, line := range strings.SplitAfter(body[start:end], "\r\n") {
		if line == "" {
			continue
		}
		if _, err := w.Write([]byte(line)); err != nil {
			return err
		}
	}
	return nil
}

func writeProp(w io.Writer, p *ical.Prop) error {
	if p == nil {
		return nil
	}
	_, err := io.WriteString(w, p.Name+":"+p.Value+"\r\n")
	return err
}
