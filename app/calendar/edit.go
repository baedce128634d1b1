package calendar

import (
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"atrium/app"
)

// parseInputTime reads a client's time: a date (YYYY-MM-DD), an RFC 3339
// date-time, or a local date-time read in loc. All-day values become midnight
// UTC of their date.
func parseInputTime(s string, loc *time.Location, allDay bool) (time.Time, bool) {
	s = strings.TrimSpace(s)
	var t time.Time
	var err error
	switch {
	case len(s) == len(DateFormat):
		t, err = time.ParseInLocation(DateFormat, s, loc)
	case strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") || strings.LastIndexAny(s, "+-") > len("2006-01-02T"):
		t, err = time.Parse(time.RFC3339Nano, s)
		if err == nil {
			t = t.In(loc)
		}
	default:
		for _, f := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04"} {
			if t, err = time.ParseInLocation(f, s, loc); err == nil {
				break
			}
		}
	}
	if err != nil {
		return time.Time{}, false
	}
	if allDay {
		t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return t.Truncate(time.Second), true
}

// fields are an event's values after an input is applied.
type fields struct {
	title, location, description string
	start, end                   time.Time
	allDay                       bool
	loc                          *time.Location
	rrule                        string
	exdates                      []time.Time
	attendees                    *[]Attendee
}

// resolve validates in against the current values cur (nil for a new event in
// a calendar whose zone is def) and returns the new values. Locations name the
// body fields.
func resolve(in EventInput, cur *vevent, def *time.Location) (fields, error) {
	var v app.Validator
	f := fields{loc: def}
	if cur != nil {
		f = fields{title: cur.title, location: cur.location, description: cur.description, start: cur.start,
			end: cur.end, allDay: cur.allDay, loc: cur.loc, rrule: cur.rrule, exdates: cur.exdates}
		if cur.allDay {
			f.loc = def
		}
	}
	if in.Title != nil {
		f.title = strings.TrimSpace(*in.Title)
		v.Check(f.title != "", "body.title", "must not be empty", *in.Title)
		v.Check(len(f.title) <= 1000, "body.title", "must be at most 1000 characters", nil)
	}
	if cur == nil && in.Title == nil {
		v.Add("body.title", "is required", nil)
	}
	if in.Location != nil {
		f.location = strings.TrimSpace(*in.Location)
	}
	if in.Description != nil {
		f.description = *in.Description
	}
	if in.Timezone != nil && *in.Timezone != "" {
		loc, err := loadLocation(*in.Timezone)
		if err != nil {
			v.Add("body.timezone", "must be an IANA time zone such as Europe/Paris", *in.Timezone)
		} else {
			f.loc = loc
		}
	}
	if in.AllDay != nil {
		f.allDay = *in.AllDay
	}
	dur := f.end.Sub(f.start)
	if cur != nil && in.Start == nil && !f.allDay {
		f.start, f.end = f.start.In(f.loc), f.end.In(f.loc)
	}
	if cur != nil && cur.allDay && !f.allDay && in.Start == nil { // all-day → timed: keep the date at 09:00
		f.start = time.Date(f.start.Year(), f.start.Month(), f.start.Day(), 9, 0, 0, 0, f.loc)
		f.end, dur = f.start.Add(time.Hour), time.Hour
	}
	if cur != nil && !cur.allDay && f.allDay && in.Start == nil {
		f.start = time.Date(f.start.Year(), f.start.Month(), f.start.Day(), 0, 0, 0, 0, time.UTC)
		f.end, dur = f.start.AddDate(0, 0, 1), 24*time.Hour
	}
	if in.Start != nil {
		t, ok := parseInputTime(*in.Start, f.loc, f.allDay)
		v.Check(ok, "body.start", "must be a date-time (RFC 3339) or, for all-day events, a date", *in.Start)
		f.start = t
		if in.End == nil && cur != nil {
			f.end = addDuration(t, dur, f.allDay)
		}
	} else if cur == nil {
		v.Add("body.start", "is required", nil)
	}
	if in.End != nil {
		t, ok := parseInputTime(*in.End, f.loc, f.allDay)
		v.Check(ok, "body.end", "must be a date-time (RFC 3339) or, for all-day events, a date", *in.End)
		f.end = t
	} else if cur == nil {
		v.Add("body.end", "is required", nil)
	}
	if f.allDay && f.end.Equal(f.start) {
		f.end = f.start.AddDate(0, 0, 1)
	}
	if !f.start.IsZero() && !f.end.IsZero() && !f.end.After(f.start) {
		v.Add("body.end", "must be after start", stringOr(in.End))
	}
	if in.RRule != nil {
		f.rrule = strings.TrimPrefix(strings.TrimSpace(*in.RRule), "RRULE:")
		if f.rrule != "" && !f.start.IsZero() {
			if _, err := parseRule(f.rrule, f.start); err != nil {
				v.Add("body.rrule", "must be an RFC 5545 RRULE value such as FREQ=WEEKLY;BYDAY=MO: "+err.Error(), *in.RRule)
			} else if err := checkRule(f.rrule); err != nil {
				v.Add("body.rrule", err.Error(), *in.RRule)
			}
		}
	}
	if in.ExDates != nil {
		f.exdates = nil
		for i, s := range *in.ExDates {
			t, ok := parseInputTime(s, f.loc, f.allDay)
			if !ok {
				v.Add("body.exdates["+strconv.Itoa(i)+"]", "must be a date-time or a date", s)
				continue
			}
			if !f.allDay && len(strings.TrimSpace(s)) == len(DateFormat) { // a date excludes that day's occurrence
				t = time.Date(t.Year(), t.Month(), t.Day(), f.start.Hour(), f.start.Minute(), f.start.Second(), 0, f.loc)
			}
			f.exdates = append(f.exdates, t)
		}
	}
	if in.Attendees != nil {
		for i, a := range *in.Attendees {
			if _, err := mail.ParseAddress(a.Email); err != nil || strings.ContainsAny(a.Email, "<> ") {
				v.Add("body.attendees["+strconv.Itoa(i)+"].email", "must be an e-mail address", a.Email)
			}
		}
		f.attendees = in.Attendees
	}
	return f, v.Err()
}

func stringOr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// tzidOf is the TZID the fields are written with ("" for UTC and all-day).
func (f *fields) tzid() string {
	if f.allDay || f.loc == time.UTC {
		return ""
	}
	return f.loc.String()
}

// apply writes the fields into a VEVENT, keeping every property the model does
// not hold, and bumps SEQUENCE and the timestamps.
func (f *fields) apply(comp *ical.Component, now time.Time, organizer string, series bool) {
	setText(comp, ical.PropSummary, f.title)
	setText(comp, ical.PropLocation, f.location)
	setText(comp, ical.PropDescription, f.description)
	setTime(comp, ical.PropDateTimeStart, f.start, f.allDay, f.tzid())
	comp.Props.Del(ical.PropDuration)
	setTime(comp, ical.PropDateTimeEnd, f.end, f.allDay, f.tzid())
	if series {
		if f.rrule == "" {
			comp.Props.Del(ical.PropRecurrenceRule)
		} else {
			comp.Props.Set(&ical.Prop{Name: ical.PropRecurrenceRule, Params: ical.Params{}, Value: f.rrule})
		}
		setTimeList(comp, ical.PropExceptionDates, f.exdates, f.allDay, f.tzid())
	}
	if f.attendees != nil {
		old := map[string]ical.Prop{}
		for _, p := range comp.Props.Values(ical.PropAttendee) {
			old[strings.ToLower(mailto(p.Value))] = p
		}
		comp.Props.Del(ical.PropAttendee)
		for _, a := range *f.attendees {
			p, ok := old[strings.ToLower(a.Email)]
			if !ok {
				p = ical.Prop{Name: ical.PropAttendee, Params: ical.Params{}}
				p.Params.Set(ical.ParamParticipationStatus, "NEEDS-ACTION")
				p.Params.Set(ical.ParamRole, "REQ-PARTICIPANT")
			}
			p.Value = "mailto:" + a.Email
			if a.Name != "" {
				p.Params.Set(ical.ParamCommonName, a.Name)
			}
			if a.Status != "" {
				p.Params.Set(ical.ParamParticipationStatus, strings.ToUpper(a.Status))
			}
			comp.Props.Add(&p)
		}
		if len(*f.attendees) > 0 && comp.Props.Get(ical.PropOrganizer) == nil && organizer != "" {
			comp.Props.Set(&ical.Prop{Name: ical.PropOrganizer, Params: ical.Params{}, Value: "mailto:" + organizer})
		}
	}
	touch(comp, now)
}

// touch bumps SEQUENCE, LAST-MODIFIED and DTSTAMP.
func touch(comp *ical.Component, now time.Time) {
	seq := 1 // absent means 0
	if p := comp.Props.Get(ical.PropSequence); p != nil {
		seq, _ = p.Int()
		seq++
	}
	comp.Props.Set(&ical.Prop{Name: ical.PropSequence, Params: ical.Params{}, Value: strconv.Itoa(seq)})
	comp.Props.Set(&ical.Prop{Name: ical.PropLastModified, Params: ical.Params{}, Value: now.UTC().Format(icalUTC)})
	comp.Props.Set(&ical.Prop{Name: ical.PropDateTimeStamp, Params: ical.Params{}, Value: now.UTC().Format(icalUTC)})
}

// newEvent makes a VEVENT with a fresh UID.
func newEvent(uid string, now time.Time) *ical.Component {
	comp := ical.NewComponent(ical.CompEvent)
	comp.Props.SetText(ical.PropUID, uid)
	comp.Props.Set(&ical.Prop{Name: ical.PropCreated, Params: ical.Params{}, Value: now.UTC().Format(icalUTC)})
	comp.Props.Set(&ical.Prop{Name: ical.PropSequence, Params: ical.Params{}, Value: "-1"}) // the first touch makes it 0
	return comp
}

// shiftWall moves t by the wall-clock change from oldStart to newStart: the
// same number of days and the same change of time of day, in t's zone.
func shiftWall(t, oldStart, newStart time.Time) time.Time {
	loc := newStart.Location()
	o, n := oldStart.In(loc), newStart
	days := int(time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, time.UTC).Sub(time.Date(o.Year(), o.Month(), o.Day(), 0, 0, 0, 0, time.UTC)).Hours() / 24)
	clock := (n.Hour()-o.Hour())*3600 + (n.Minute()-o.Minute())*60 + n.Second() - o.Second()
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day()+days, t.Hour(), t.Minute(), t.Second()+clock, 0, loc)
}

// moveSeries keeps a series' exceptions attached to their occurrences when its
// start moves: EXDATEs (unless the input replaces them) and the RECURRENCE-IDs
// of its overrides shift as the start does.
func moveSeries(ps *parsed, f *fields, in EventInput) {
	m := ps.master
	if m == nil || !m.recurring() || f.start.Equal(m.start) || f.allDay != m.allDay {
		return
	}
	if in.ExDates == nil {
		for i, t := range f.exdates {
			f.exdates[i] = shiftWall(t, m.start, f.start)
		}
	}
	for i := range ps.overrides {
		ov := &ps.overrides[i]
		setTime(ov.comp, ical.PropRecurrenceID, shiftWall(*ov.recurrenceID, m.start, f.start), f.allDay, f.tzid())
		if ov.start.Equal(*ov.recurrenceID) && ov.allDay == f.allDay { // not moved on its own: it moves along
			setTime(ov.comp, ical.PropDateTimeStart, shiftWall(ov.start, m.start, f.start), f.allDay, f.tzid())
			ov.comp.Props.Del(ical.PropDuration)
			setTime(ov.comp, ical.PropDateTimeEnd, shiftWall(ov.end, m.start, f.start), f.allDay, f.tzid())
		}
	}
}
