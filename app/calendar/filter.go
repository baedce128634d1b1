package calendar

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"atrium/app"
)

// A calendar-query filter (RFC 4791 §9.7), evaluated on an object's
// iCalendar data. The doors parse their syntax into it; the rules of what
// matches are here.

// Collations of a text-match (RFC 4791 §7.5): i;ascii-casemap (the default)
// folds ASCII letters; i;octet compares bytes.
const (
	CollationASCIICasemap = "i;ascii-casemap"
	CollationOctet        = "i;octet"
)

// CompFilter matches a component (§9.7.1): by its absence (IsNotDefined), or
// by one instance that overlaps TimeRange and satisfies every prop-filter and
// every nested comp-filter.
type CompFilter struct {
	Name         string
	IsNotDefined bool
	TimeRange    *TimeRange
	Props        []PropFilter
	Comps        []CompFilter
}

// PropFilter matches a property (§9.7.2): by its absence, or by one instance
// whose value overlaps TimeRange, matches TextMatch and satisfies every
// param-filter.
type PropFilter struct {
	Name         string
	IsNotDefined bool
	TimeRange    *TimeRange
	TextMatch    *TextMatch
	Params       []ParamFilter
}

// ParamFilter matches a property parameter (§9.7.3): by its absence, or by
// a value that matches TextMatch (any value when there is none).
type ParamFilter struct {
	Name         string
	IsNotDefined bool
	TextMatch    *TextMatch
}

// TextMatch is a substring match (§9.7.5) under a collation, negated when
// Negate is set.
type TextMatch struct {
	Text      string
	Collation string
	Negate    bool
}

// TimeRange is [Start, End); a zero bound is open (§9.9).
type TimeRange struct {
	Start, End time.Time
}

// SupportedCollation reports whether a text-match collation is one this
// server evaluates ("" is the default, i;ascii-casemap).
func SupportedCollation(c string) bool {
	return c == "" || c == CollationASCIICasemap || c == CollationOctet
}

// Matches reports whether s contains the text under the collation, negated
// when asked.
func (m *TextMatch) Matches(s string) bool {
	var hit bool
	if m.Collation == CollationOctet {
		hit = strings.Contains(s, m.Text)
	} else {
		hit = strings.Contains(asciiLower(s), asciiLower(m.Text))
	}
	return hit != m.Negate
}

// asciiLower folds ASCII letters only (i;ascii-casemap).
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// filterEnv is what the evaluation of one object needs beyond its data.
type filterEnv struct {
	loc *time.Location
	// eventInRange answers a VEVENT time-range by the service's recurrence
	// expansion (an occurrence overlaps the range), not by the master's
	// DTSTART alone.
	eventInRange func(TimeRange) bool
}

// matchCalendar evaluates the top filter, which names VCALENDAR, on an object.
func (env filterEnv) matchCalendar(cal *ical.Calendar, f CompFilter) bool {
	if f.IsNotDefined {
		return false // every object is a VCALENDAR
	}
	if f.TimeRange != nil {
		return false // VCALENDAR has no time (§9.7.1: not valid there); refused by the door
	}
	for _, pf := range f.Props {
		if !env.matchProps(cal.Props, pf) {
			return false
		}
	}
	for _, cf := range f.Comps {
		if !env.matchChildren(cal.Children, cf) {
			return false
		}
	}
	return true
}

// matchChildren evaluates a comp-filter against the children of a component.
func (env filterEnv) matchChildren(children []*ical.Component, f CompFilter) bool {
	name := strings.ToUpper(f.Name)
	var found bool
	for _, c := range children {
		if c.Name != name {
			continue
		}
		found = true
		if !f.IsNotDefined && env.matchComp(c, f) {
			return true
		}
	}
	return f.IsNotDefined && !found
}

func (env filterEnv) matchComp(c *ical.Component, f CompFilter) bool {
	if f.TimeRange != nil && !env.compInRange(c, *f.TimeRange) {
		return false
	}
	for _, pf := range f.Props {
		if !env.matchProps(c.Props, pf) {
			return false
		}
	}
	for _, cf := range f.Comps {
		if !env.matchChildren(c.Children, cf) {
			return false
		}
	}
	return true
}

func (env filterEnv) matchProps(props ical.Props, f PropFilter) bool {
	list := props[strings.ToUpper(f.Name)]
	if f.IsNotDefined {
		return len(list) == 0
	}
	for i := range list {
		if env.matchProp(&list[i], f) {
			return true
		}
	}
	return false
}

func (env filterEnv) matchProp(p *ical.Prop, f PropFilter) bool {
	if f.TimeRange != nil {
		t, err := p.DateTime(env.loc)
		if err != nil || !instantIn(t, *f.TimeRange) {
			return false
		}
	}
	if f.TextMatch != nil && !f.TextMatch.Matches(propText(p)) {
		return false
	}
	for _, pf := range f.Params {
		if !matchParam(p, pf) {
			return false
		}
	}
	return true
}

func matchParam(p *ical.Prop, f ParamFilter) bool {
	vals, ok := p.Params[strings.ToUpper(f.Name)]
	if f.IsNotDefined {
		return !ok
	}
	if !ok {
		return false
	}
	if f.TextMatch == nil {
		return true
	}
	for _, v := range vals {
		if f.TextMatch.Matches(v) {
			return true
		}
	}
	return false
}

// propText is a property's value as text: a TEXT value unescaped (RFC 5545
// §3.3.11), any other as written.
func propText(p *ical.Prop) string {
	if t, err := p.Text(); err == nil {
		return t
	}
	return p.Value
}

// compInRange is a component's time-range test (§9.9): VEVENT by the
// recurrence expansion, VTODO by the table of its DTSTART, DUE, DURATION,
// COMPLETED and CREATED, VALARM and others not (they never match a range).
func (env filterEnv) compInRange(c *ical.Component, r TimeRange) bool {
	switch c.Name {
	case ical.CompEvent:
		return env.eventInRange != nil && env.eventInRange(r)
	case ical.CompToDo:
		return todoInRange(c, r, env.loc)
	}
	return false
}

// todoInRange is RFC 4791 §9.9's table for a VTODO (its first instance; a
// recurring task also matches a range after its first instance while its
// rule goes on).
func todoInRange(c *ical.Component, r TimeRange, loc *time.Location) bool {
	start, end := r.Start, r.End
	lt := func(a, b time.Time) bool { return a.Before(b) } // a < b
	le := func(a, b time.Time) bool { return !b.Before(a) }
	// Open bounds: the start before everything, the end after everything.
	sLT := func(t time.Time) bool { return start.IsZero() || lt(start, t) }
	sLE := func(t time.Time) bool { return start.IsZero() || le(start, t) }
	eGT := func(t time.Time) bool { return end.IsZero() || lt(t, end) }
	eGE := func(t time.Time) bool { return end.IsZero() || le(t, end) }
	get := func(name string) (time.Time, bool) {
		p := c.Props.Get(name)
		if p == nil {
			return time.Time{}, false
		}
		t, err := p.DateTime(loc)
		return t, err == nil
	}
	dtstart, hasStart := get(ical.PropDateTimeStart)
	due, hasDue := get(ical.PropDue)
	completed, hasCompleted := get(ical.PropCompleted)
	created, hasCreated := get(ical.PropCreated)
	var dur time.Duration
	hasDur := false
	if p := c.Props.Get(ical.PropDuration); p != nil {
		if d, err := p.Duration(); err == nil {
			dur, hasDur = d, true
		}
	}
	recurring := c.Props.Get(ical.PropRecurrenceRule) != nil || c.Props.Get(ical.PropRecurrenceDates) != nil
	switch {
	case hasStart && hasDur:
		stop := dtstart.Add(dur)
		return (sLE(stop) || recurring) && (eGT(dtstart) || eGE(stop))
	case hasStart && hasDue:
		return (sLT(due) || sLE(dtstart) || recurring) && (eGT(dtstart) || eGE(due))
	case hasStart:
		return (sLE(dtstart) || recurring) && eGT(dtstart)
	case hasDue:
		return (sLT(due) || recurring) && eGE(due)
	case hasCompleted && hasCreated:
		return (sLE(created) || sLE(completed)) && (eGE(created) || eGE(completed))
	case hasCompleted:
		return sLE(completed) && eGE(completed)
	case hasCreated:
		return eGT(created)
	}
	return true
}

// instantIn reports whether t is in [start, end).
func instantIn(t time.Time, r TimeRange) bool {
	return (r.Start.IsZero() || !t.Before(r.Start)) && (r.End.IsZero() || t.Before(r.End))
}

// QueryObjects answers a calendar-query (RFC 4791 §7.8): the objects of a
// calendar that the filter, whose top names VCALENDAR, matches. A VEVENT
// time-range is answered by the recurrence expansion (ObjectsInRange, with
// its bound on the span: RangeRefused); every other test is evaluated on the
// object's data. Errors: insufficient_scope (no calendar:read), no_bound_user,
// feature_not_in_plan, not_found (no such calendar of the caller),
// validation_failed (a VEVENT time-range over MaxRange, a rule too dense for
// it).
func (s *Service) QueryObjects(ctx context.Context, p *app.Principal, calID string, f CompFilter) ([]Object, error) {
	cal, loc, err := s.calendar(ctx, p, app.ScopeCalendarRead, calID)
	if err != nil {
		return nil, err
	}
	// The objects with an occurrence in each VEVENT time-range the filter
	// names, by UID.
	ranges := map[TimeRange]map[string]bool{}
	var walk func(CompFilter)
	walk = func(c CompFilter) {
		if strings.EqualFold(c.Name, ical.CompEvent) && c.TimeRange != nil {
			ranges[*c.TimeRange] = nil
		}
		for _, cc := range c.Comps {
			walk(cc)
		}
	}
	walk(f)
	for r := range ranges {
		objs, err := s.ObjectsInRange(ctx, p, cal.ID, r.Start, r.End)
		if err != nil {
			return nil, err
		}
		hit := make(map[string]bool, len(objs))
		for _, o := range objs {
			hit[o.UID] = true
		}
		ranges[r] = hit
	}
	// Candidates: when the filter asks for a VEVENT in a range, those found
	// by the expansion; else every object.
	var candidates []Object
	if r, ok := requiredEventRange(f); ok {
		candidates, err = s.ObjectsInRange(ctx, p, cal.ID, r.Start, r.End)
	} else {
		err = s.store.Objects(ctx, cal.ID, func(o Object) error { candidates = append(candidates, o); return nil })
	}
	if err != nil {
		return nil, err
	}
	out := candidates[:0]
	for _, o := range candidates {
		vc, err := decode(o.ICS)
		if err != nil {
			return nil, fmt.Errorf("query calendar %s: object %s: %w", cal.ID, o.Name, err)
		}
		env := filterEnv{loc: loc, eventInRange: func(r TimeRange) bool { return ranges[r][o.UID] }}
		if env.matchCalendar(vc, f) {
			out = append(out, o)
		}
	}
	return out, nil
}

// requiredEventRange is the time-range of a VEVENT comp-filter right under
// the top one, which every match must satisfy.
func requiredEventRange(f CompFilter) (TimeRange, bool) {
	for _, c := range f.Comps {
		if strings.EqualFold(c.Name, ical.CompEvent) && !c.IsNotDefined && c.TimeRange != nil {
			return *c.TimeRange, true
		}
	}
	return TimeRange{}, false
}
