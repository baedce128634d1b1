package calendar

import (
	"context"
	"time"

	"github.com/emersion/go-ical"

	"atrium/app"
)

// occurrence is one occurrence of a series found by its date.
type occurrence struct {
	orig     time.Time // original start
	override *vevent   // its override, when it has one
	first    bool      // the series' first occurrence
	single   bool      // the event does not recur
}

// findOccurrence finds the occurrence whose original start falls on date (in
// the event's time zone).
func (ps *parsed) findOccurrence(date string) (occurrence, error) {
	day, err := time.Parse(DateFormat, date)
	if err != nil {
		return occurrence{}, app.Invalid("path.occurrence_date", "must be a date YYYY-MM-DD", date)
	}
	loc := time.UTC
	if ps.master != nil {
		loc = ps.master.start.Location()
	} else if len(ps.overrides) > 0 {
		loc = ps.overrides[0].recurrenceID.Location()
	}
	for i := range ps.overrides {
		if occurrenceDate(ps.overrides[i].recurrenceID.In(loc)) == date {
			o := occurrence{orig: *ps.overrides[i].recurrenceID, override: &ps.overrides[i]}
			o.first = ps.master != nil && o.orig.Equal(ps.master.start)
			return o, nil
		}
	}
	notFound := app.Errorf(app.ENotFound, "The event has no occurrence on %s.", date)
	if ps.master == nil {
		return occurrence{}, notFound
	}
	m := ps.master
	if !m.recurring() {
		if occurrenceDate(m.start) != date {
			return occurrence{}, notFound
		}
		return occurrence{orig: m.start, first: true, single: true}, nil
	}
	c := m.component()
	from := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
	to := from.AddDate(0, 0, 1)
	starts, err := c.Occurrences(from, to, nil)
	if err != nil {
		return occurrence{}, err
	}
	for _, t := range starts {
		if occurrenceDate(t.In(loc)) == date {
			return occurrence{orig: t, first: t.Equal(m.start)}, nil
		}
	}
	return occurrence{}, notFound
}

// occurrenceObject loads an event for an occurrence operation.
func (s *Service) occurrenceObject(ctx context.Context, p *app.Principal, calID, uid, date, scope string) (Calendar, *time.Location, Object, *parsed, occurrence, error) {
	switch scope {
	case "":
		scope = ScopeThis
	case ScopeThis, ScopeThisAndFollowing, ScopeAll:
	default:
		return Calendar{}, nil, Object{}, nil, occurrence{}, app.Invalid("scope", "must be this, this_and_following or all", scope)
	}
	cal, loc, o, err := s.object(ctx, p, app.ScopeCalendarWrite, calID, uid)
	if err != nil {
		return cal, nil, o, nil, occurrence{}, err
	}
	ps, err := load(o, loc)
	if err != nil {
		return cal, nil, o, nil, occurrence{}, err
	}
	occ, err := ps.findOccurrence(date)
	return cal, loc, o, ps, occ, err
}

// UpdateOccurrence edits one occurrence of a series: scope this writes an
// override (RECURRENCE-ID), this_and_following splits the series (UNTIL on the
// old one, a new series from this occurrence), all edits the master, moving it
// by as much as this occurrence moves. Errors: insufficient_scope (no
// calendar:write), no_bound_user, feature_not_in_plan, validation_failed (the
// scope, the date, a field), not_found (no such calendar of the caller, no such
// event in it, no occurrence on date).
func (s *Service) UpdateOccurrence(ctx context.Context, p *app.Principal, calID, uid, date, scope string, in EventInput) (EventSummary, error) {
	if scope == "" {
		scope = ScopeThis
	}
	cal, loc, o, ps, occ, err := s.occurrenceObject(ctx, p, calID, uid, date, scope)
	if err != nil {
		return EventSummary{}, err
	}
	now := s.clock.Now()
	m := ps.master
	switch {
	case occ.override != nil && scope == ScopeThis, occ.override != nil && m == nil:
		f, err := resolve(in, occ.override, loc)
		if err != nil {
			return EventSummary{}, err
		}
		f.apply(occ.override.comp, now, p.Email, false)
		return s.saveSummary(ctx, p, cal, loc, &o, ps.cal, change{occurrence: occ.override.comp, occurrenceDate: date}, occ.override.comp)
	case scope == ScopeThis && !occ.single:
		ov := newOverride(m, occ.orig)
		cur, err := parseVEvent(ov, loc, ps.learned)
		if err != nil {
			return EventSummary{}, err
		}
		f, err := resolve(in, &cur, loc)
		if err != nil {
			return EventSummary{}, err
		}
		f.apply(ov, now, p.Email, false)
		ps.cal.Children = append(ps.cal.Children, ov)
		return s.saveSummary(ctx, p, cal, loc, &o, ps.cal, change{occurrence: ov, occurrenceDate: date}, ov)
	case scope == ScopeAll || occ.first || occ.single:
		sin := shifted(in, m, occ.orig, loc)
		f, err := resolve(sin, m, loc)
		if err != nil {
			return EventSummary{}, err
		}
		moveSeries(ps, &f, sin)
		f.apply(m.comp, now, p.Email, true)
		return s.saveSummary(ctx, p, cal, loc, &o, ps.cal, change{occurrenceDate: date}, m.comp)
	}
	return s.split(ctx, p, cal, loc, o, ps, occ, in, date)
}

// shifted turns an occurrence's new start and end into the master's: the series
// moves by as much as the occurrence.
func shifted(in EventInput, m *vevent, orig time.Time, loc *time.Location) EventInput {
	if in.Start == nil && in.End == nil {
		return in
	}
	allDay := m.allDay
	if in.AllDay != nil {
		allDay = *in.AllDay
	}
	iloc := m.loc
	if in.Timezone != nil && *in.Timezone != "" {
		if l, err := loadLocation(*in.Timezone); err == nil {
			iloc = l
		}
	}
	if allDay {
		iloc = loc
	}
	out := in
	if in.Start == nil { // a new end: the series keeps its start, takes the new length
		ne, ok := parseInputTime(*in.End, iloc, allDay)
		if !ok || allDay != m.allDay {
			return in // resolve reports it
		}
		es := formatInput(m.start.Add(ne.Sub(orig)), allDay)
		out.End = &es
		return out
	}
	ns, ok := parseInputTime(*in.Start, iloc, allDay)
	if !ok {
		return in // resolve reports it
	}
	var start time.Time
	if allDay == m.allDay {
		if allDay {
			start = m.start.AddDate(0, 0, int(ns.Sub(orig.In(time.UTC)).Hours()/24))
		} else {
			start = m.start.Add(ns.Sub(orig))
		}
	} else {
		start = time.Date(m.start.Year(), m.start.Month(), m.start.Day(), ns.Hour(), ns.Minute(), ns.Second(), 0, ns.Location())
	}
	ss := formatInput(start, allDay)
	out.Start = &ss
	if in.End != nil {
		if ne, ok := parseInputTime(*in.End, iloc, allDay); ok {
			es := formatInput(start.Add(ne.Sub(ns)), allDay)
			out.End = &es
		}
	}
	return out
}

func formatInput(t time.Time, allDay bool) string {
	if allDay {
		return t.Format(DateFormat)
	}
	return t.Format(time.RFC3339)
}

// newOverride makes the override of the occurrence starting at orig: a copy of
// the master without recurrence properties, with RECURRENCE-ID.
func newOverride(m *vevent, orig time.Time) *ical.Component {
	ov := copyComponent(m.comp)
	for _, name := range []string{ical.PropRecurrenceRule, ical.PropRecurrenceDates, ical.PropExceptionDates} {
		ov.Props.Del(name)
	}
	setTime(ov, ical.PropRecurrenceID, orig, m.allDay, m.tzid)
	c := m.component()
	setTime(ov, ical.PropDateTimeStart, orig, m.allDay, m.tzid)
	ov.Props.Del(ical.PropDuration)
	setTime(ov, ical.PropDateTimeEnd, c.occurrenceEnd(orig), m.allDay, m.tzid)
	return ov
}

// saveSummary saves and returns the summary of the VEVENT comp.
func (s *Service) saveSummary(ctx context.Context, p *app.Principal, cal Calendar, loc *time.Location, o *Object, vc *ical.Calendar, ch change, comp *ical.Component) (EventSummary, error) {
	_, ps, err := s.save(ctx, p, cal, loc, o, o.Name, vc, ch)
	if err != nil {
		return EventSummary{}, err
	}
	return ps.summaryOf(cal.ID, comp), nil
}

// summaryOf returns the summary of one VEVENT of a parsed object.
func (ps *parsed) summaryOf(calID string, comp *ical.Component) EventSummary {
	recurring := ps.master != nil && ps.master.recurring()
	for i := range ps.overrides {
		if ps.overrides[i].comp == comp {
			return ps.overrides[i].summary(calID, recurring, ps.zone)
		}
	}
	if ps.master != nil {
		return ps.master.summary(calID, recurring, ps.zone)
	}
	return ps.overrides[0].summary(calID, recurring, ps.zone)
}

// cut ends a series before orig: UNTIL on its rule, and the RDATEs, EXDATEs and
// overrides from orig on removed. It returns what was removed.
func cut(ps *parsed, orig time.Time) (rdates, exdates []time.Time, overrides []*ical.Component) {
	m := ps.master
	if m.rrule != "" {
		until := orig.Add(-time.Second)
		if m.allDay {
			until = orig.AddDate(0, 0, -1)
		}
		m.comp.Props.Set(&ical.Prop{Name: ical.PropRecurrenceRule, Params: ical.Params{}, Value: ruleUntil(m.rrule, until, m.allDay)})
	}
	var keepR, keepX []time.Time
	for _, t := range m.rdates {
		if t.Before(orig) {
			keepR = append(keepR, t)
		} else {
			rdates = append(rdates, t)
		}
	}
	for _, t := range m.exdates {
		if t.Before(orig) {
			keepX = append(keepX, t)
		} else {
			exdates = append(exdates, t)
		}
	}
	setTimeList(m.comp, ical.PropRecurrenceDates, keepR, m.allDay, m.tzid)
	setTimeList(m.comp, ical.PropExceptionDates, keepX, m.allDay, m.tzid)
	var children []*ical.Component
	for _, c := range ps.cal.Children {
		if c.Name == ical.CompEvent && c != m.comp {
			if rid := c.Props.Get(ical.PropRecurrenceID); rid != nil {
				if tv, err := parseTimeValue(rid.Value, rid.Params, m.loc, ps.learned); err == nil && !tv.t.Before(orig) {
					overrides = append(overrides, c)
					continue
				}
			}
		}
		children = append(children, c)
	}
	ps.cal.Children = children
	return rdates, exdates, overrides
}

// countBefore counts the rule's occurrences (EXDATEs included, as COUNT does)
// that start before orig.
func countBefore(m *vevent, orig time.Time) int {
	r, err := parseRule(m.rrule, m.start)
	if err != nil {
		return 0
	}
	n := 0
	next := r.Iterator()
	for t, ok := next(); ok && t.Before(orig); t, ok = next() {
		n++
	}
	return n
}

// split ends the series before the occurrence and starts a new series (new UID)
// from it with the changes applied; overrides and exceptions after the split
// move to the new series.
func (s *Service) split(ctx context.Context, p *app.Principal, cal Calendar, loc *time.Location, o Object, ps *parsed, occ occurrence, in EventInput, date string) (EventSummary, error) {
	m := ps.master
	now := s.clock.Now()
	newUID := app.NewID()
	count := 0
	if r, err := parseRule(m.rrule, m.start); err == nil && r.OrigOptions.Count > 0 {
		count = r.OrigOptions.Count - countBefore(m, occ.orig)
	}
	// The new series: the master's copy starting at this occurrence.
	nm := copyComponent(m.comp)
	nm.Props.SetText(ical.PropUID, newUID)
	nm.Props.Set(&ical.Prop{Name: ical.PropSequence, Params: ical.Params{}, Value: "-1"}) // a new event: 0 after apply
	nm.Props.Set(&ical.Prop{Name: ical.PropCreated, Params: ical.Params{}, Value: now.UTC().Format(icalUTC)})
	rel := ical.NewProp(ical.PropRelatedTo)
	rel.Params.Set(ical.ParamRelationshipType, "SIBLING")
	rel.Value = m.uid
	nm.Props.Set(rel)
	mc := m.component()
	setTime(nm, ical.PropDateTimeStart, occ.orig, m.allDay, m.tzid)
	nm.Props.Del(ical.PropDuration)
	setTime(nm, ical.PropDateTimeEnd, mc.occurrenceEnd(occ.orig), m.allDay, m.tzid)
	if m.rrule != "" && count > 0 {
		nm.Props.Set(&ical.Prop{Name: ical.PropRecurrenceRule, Params: ical.Params{}, Value: ruleCount(m.rrule, count)})
	}
	rdates, exdates, moved := cut(ps, occ.orig)
	setTimeList(nm, ical.PropRecurrenceDates, rdates, m.allDay, m.tzid)
	setTimeList(nm, ical.PropExceptionDates, exdates, m.allDay, m.tzid)
	cur, err := parseVEvent(nm, loc, ps.learned)
	if err != nil {
		return EventSummary{}, err
	}
	f, err := resolve(in, &cur, loc)
	if err != nil {
		return EventSummary{}, err
	}
	f.apply(nm, now, p.Email, true)
	touch(m.comp, now)
	nvc := newVCalendar()
	nvc.Children = append(nvc.Children, nm)
	if f.start.Equal(occ.orig) { // overrides still match the new series' occurrences
		// They move with the changes that are not about time.
		rest := EventInput{Title: in.Title, Location: in.Location, Description: in.Description, Attendees: in.Attendees}
		for _, ov := range moved {
			ov.Props.SetText(ical.PropUID, newUID)
			if cur, err := parseVEvent(ov, loc, ps.learned); err == nil {
				if f, err := resolve(rest, &cur, loc); err == nil {
					f.apply(ov, now, p.Email, false)
				}
			}
			nvc.Children = append(nvc.Children, ov)
		}
	}
	oldPS, old, err := s.prepare(cal, loc, &o, o.Name, ps.cal)
	if err != nil {
		return EventSummary{}, err
	}
	newPS, nw, err := s.prepare(cal, loc, nil, newUID+".ics", nvc)
	if err != nil {
		return EventSummary{}, err
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if err := s.commit(ctx, p, &old, oldPS, false, change{occurrenceDate: date}); err != nil {
			return err
		}
		return s.commit(ctx, p, &nw, newPS, true, change{})
	})
	if err != nil {
		return EventSummary{}, err
	}
	return newPS.summaryOf(cal.ID, nm), nil
}

// DeleteOccurrence removes occurrences of a series: this adds an EXDATE (and
// drops its override), this_and_following ends the series before it, all
// deletes the event. Deleting the only or first-and-following occurrence
// deletes the event. Errors: insufficient_scope (no calendar:write),
// no_bound_user, feature_not_in_plan, validation_failed (the scope, the date),
// not_found (no such calendar of the caller, no such event in it, no occurrence
// on date).
func (s *Service) DeleteOccurrence(ctx context.Context, p *app.Principal, calID, uid, date, scope string) error {
	if scope == "" {
		scope = ScopeThis
	}
	cal, loc, o, ps, occ, err := s.occurrenceObject(ctx, p, calID, uid, date, scope)
	if err != nil {
		return err
	}
	m := ps.master
	switch {
	case scope == ScopeAll, occ.single, occ.first && scope == ScopeThisAndFollowing:
		return s.remove(ctx, p, o)
	case m == nil: // an orphan override: drop it
		if len(ps.overrides) == 1 {
			return s.remove(ctx, p, o)
		}
		ps.cal.Children = without(ps.cal.Children, occ.override.comp)
	case scope == ScopeThis:
		if occ.override != nil {
			ps.cal.Children = without(ps.cal.Children, occ.override.comp)
		}
		ex := ical.NewProp(ical.PropExceptionDates)
		tmp := ical.NewComponent(ical.CompEvent)
		setTime(tmp, ical.PropExceptionDates, occ.orig, m.allDay, m.tzid)
		*ex = *tmp.Props.Get(ical.PropExceptionDates)
		m.comp.Props.Add(ex)
		touch(m.comp, s.clock.Now())
	default:
		cut(ps, occ.orig)
		touch(m.comp, s.clock.Now())
	}
	_, _, err = s.save(ctx, p, cal, loc, &o, o.Name, ps.cal, change{occurrenceDate: date})
	return err
}

func without(cs []*ical.Component, drop *ical.Component) []*ical.Component {
	out := cs[:0:0]
	for _, c := range cs {
		if c != drop {
			out = append(out, c)
		}
	}
	return out
}
