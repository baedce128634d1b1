package calendar

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-ical"
)

// decode parses iCalendar text. go-ical panics on some malformed lines (a
// parameter with an empty value ending the line: "X;P=" indexes past the end),
// so a panic inside the decoder is returned as a parse error.
func decode(ics string) (cal *ical.Calendar, err error) {
	defer func() {
		if r := recover(); r != nil {
			cal, err = nil, fmt.Errorf("parse iCalendar: malformed content line (%v)", r)
		}
	}()
	cal, err = ical.NewDecoder(strings.NewReader(ics)).Decode()
	if err != nil {
		return nil, fmt.Errorf("parse iCalendar: %w", err)
	}
	return cal, nil
}

// etagOf is the strong ETag of an object's iCalendar text.
func etagOf(ics string) string {
	sum := sha256.Sum256([]byte(ics))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// parsed is an object's iCalendar data with its VEVENTs read, or, for a
// task, its VTODOs.
type parsed struct {
	cal       *ical.Calendar
	uid       string
	master    *vevent // nil when the resource holds only overrides
	overrides []vevent
	// todos are a task's VTODOs (its master and overrides); a task has no
	// VEVENT, no index rows, and no place in free/busy (RFC 4791 §7.10).
	todos   []*ical.Component
	notes   []string
	zone    *time.Location // the calendar's: all-day dates are shown as its midnights
	learned map[string]*time.Location
}

// parseObject reads a resource: one UID; either an event (at most one
// master, every VEVENT with a DTSTART) or a task (VTODOs). VJOURNAL and other
// components are refused.
func parseObject(cal *ical.Calendar, def *time.Location) (*parsed, error) {
	p := &parsed{cal: cal, zone: def}
	p.learned, p.notes = learnTimezones(cal, time.Now().Year())
	seen := map[int64]bool{}
	sameUID := func(uid string) error {
		if p.uid == "" {
			p.uid = uid
		} else if uid != p.uid {
			return fmt.Errorf("one resource holds one UID; found %q and %q", p.uid, uid)
		}
		return nil
	}
	for _, c := range cal.Children {
		switch c.Name {
		case ical.CompEvent:
		case ical.CompToDo:
			uid, _ := c.Props.Text(ical.PropUID)
			if uid == "" {
				return nil, errors.New("VTODO has no UID")
			}
			if err := sameUID(uid); err != nil {
				return nil, err
			}
			p.todos = append(p.todos, c)
			continue
		case ical.CompTimezone:
			continue
		case ical.CompJournal:
			return nil, errors.New("VJOURNAL components (journal entries) are not supported; only VEVENT (events) and VTODO (tasks)")
		default:
			return nil, fmt.Errorf("%s components are not supported; only VEVENT (events) and VTODO (tasks)", c.Name)
		}
		ev, err := parseVEvent(c, def, p.learned)
		if err != nil {
			return nil, err
		}
		if ev.uid == "" {
			return nil, errors.New("VEVENT has no UID")
		}
		if err := sameUID(ev.uid); err != nil {
			return nil, err
		}
		p.notes = append(p.notes, ev.notes...)
		if ev.recurrenceID == nil {
			if p.master != nil {
				return nil, errors.New("two VEVENTs without RECURRENCE-ID")
			}
			p.master = &ev
			continue
		}
		k := ev.recurrenceID.UnixMilli()
		if seen[k] {
			return nil, errors.New("two overrides with the same RECURRENCE-ID")
		}
		seen[k] = true
		p.overrides = append(p.overrides, ev)
	}
	if p.uid == "" {
		return nil, errors.New("no VEVENT or VTODO")
	}
	if len(p.todos) > 0 && (p.master != nil || len(p.overrides) > 0) {
		return nil, errors.New("one resource holds events (VEVENT) or a task (VTODO), not both")
	}
	return p, nil
}

// isTask reports whether the resource is a task (VTODOs).
func (p *parsed) isTask() bool { return len(p.todos) > 0 }

// IsTask reports whether an object is a task (its VTODOs) rather than an
// event: a line BEGIN:VTODO, which no folded or escaped text can fake.
func (o Object) IsTask() bool {
	return strings.Contains(o.ICS, "\nBEGIN:VTODO\r\n") || strings.Contains(o.ICS, "\nBEGIN:VTODO\n")
}

// component is the index row of a parsed VEVENT.
func (ev *vevent) component() Component {
	c := Component{UID: ev.uid, RecurrenceID: ev.recurrenceID, Title: ev.title, Location: ev.location,
		Start: ev.start, End: ev.end, AllDay: ev.allDay, Timezone: ev.tzid, RRule: ev.rrule,
		RDates: ev.rdates, ExDates: ev.exdates, Cancelled: ev.status == "CANCELLED"}
	c.Busy = !c.Cancelled && !ev.transparent
	return c
}

// index derives the components of a resource (none for a task).
func (p *parsed) index() ([]Component, error) {
	var out []Component
	if p.isTask() {
		return nil, nil
	}
	if p.master != nil {
		c := p.master.component()
		first, last, err := c.bounds()
		if err != nil {
			return nil, err
		}
		c.RangeStart, c.RangeEnd = first, last
		out = append(out, c)
	}
	for i := range p.overrides {
		c := p.overrides[i].component()
		c.RRule, c.RDates, c.ExDates = "", nil, nil
		end := c.End
		c.RangeStart, c.RangeEnd = c.Start, &end
		out = append(out, c)
	}
	return out, nil
}

// summary is the EventSummary of a parsed VEVENT.
func (ev *vevent) summary(calID string, recurring bool, zone *time.Location) EventSummary {
	start, end := ev.start, ev.end
	if ev.allDay && zone != nil {
		start = time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, zone)
		end = time.Date(end.Year(), end.Month(), end.Day(), 0, 0, 0, 0, zone)
	}
	s := EventSummary{UID: ev.uid, CalendarID: calID, Title: ev.title, Start: start, End: end,
		AllDay: ev.allDay, Location: ev.location, Timezone: ev.tzid, IsRecurring: recurring,
		Cancelled: ev.status == "CANCELLED"}
	if ev.recurrenceID != nil {
		s.OccurrenceDate = occurrenceDate(*ev.recurrenceID)
	}
	return s
}

// detail is the EventDetail of an object.
func (p *parsed) detail(o Object) EventDetail {
	var d EventDetail
	recurring := p.master != nil && p.master.recurring()
	head := p.master
	if head == nil { // overrides only: describe the first
		head = &p.overrides[0]
	}
	d.EventSummary = head.summary(o.CalendarID, recurring, p.zone)
	d.Description = head.description
	d.RRule = head.rrule
	d.ExDates, d.RDates = []string{}, []string{}
	for _, t := range head.exdates {
		d.ExDates = append(d.ExDates, formatInstant(t, head.allDay, head.loc))
	}
	for _, t := range head.rdates {
		d.RDates = append(d.RDates, formatInstant(t, head.allDay, head.loc))
	}
	d.Attendees = attendees(head.comp)
	if org := head.comp.Props.Get(ical.PropOrganizer); org != nil {
		d.Organizer = mailto(org.Value)
	}
	d.Overrides = []EventSummary{}
	for i := range p.overrides {
		d.Overrides = append(d.Overrides, p.overrides[i].summary(o.CalendarID, recurring, p.zone))
	}
	d.ETag, d.CreatedAt, d.UpdatedAt = o.ETag, o.CreatedAt, o.UpdatedAt
	return d
}

func formatInstant(t time.Time, allDay bool, loc *time.Location) string {
	if allDay {
		return t.Format(DateFormat)
	}
	return t.In(loc).Format(time.RFC3339)
}
