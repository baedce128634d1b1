package wire

import (
	"context"
	"fmt"
	"time"

	"atrium/app"
	"atrium/app/calendar"
)

// demoEvent is a demo event: days from this week's Monday, local start and end
// times ("" with allDay), an optional rule and attendees.
type demoEvent struct {
	title, location, tz string
	day                 int
	start, end          string
	allDay              bool
	rrule               string
	attendees           []string
}

// demoEvents are the demo users' events, by e-mail address.
var demoEvents = map[string][]demoEvent{
	"alice@acme.example": {
		{title: "Daily stand-up", location: "Huddle room", tz: "Europe/Paris", start: "09:30", end: "09:45", rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
			attendees: []string{"bob@acme.example", "carol@acme.example"}},
		{title: "Board review", location: "Boardroom", tz: "Europe/Paris", day: 2, start: "14:00", end: "16:00"},
		{title: "Quarterly planning", location: "Offsite", tz: "Europe/Paris", day: 7, start: "", end: "", allDay: true},
		{title: "1:1 with Bob", tz: "Europe/Paris", day: 1, start: "11:00", end: "11:30", rrule: "FREQ=WEEKLY;INTERVAL=2;COUNT=12",
			attendees: []string{"bob@acme.example"}},
	},
	"bob@acme.example": {
		{title: "Gym", tz: "America/New_York", day: 0, start: "07:00", end: "08:00", rrule: "FREQ=WEEKLY;BYDAY=MO,WE,FR"},
		{title: "Customer call: Iberia Logistics", location: "Phone", tz: "America/New_York", day: 3, start: "10:00", end: "10:45"},
	},
	"carol@acme.example": {
		{title: "Philosophy club", location: "Library", tz: "Europe/Copenhagen", day: 3, start: "18:30", end: "20:00", rrule: "FREQ=MONTHLY;BYDAY=1TH"},
		{title: "Holiday", day: 10, allDay: true},
	},
}

// seedCalendar gives the demo users events, once: a user whose default
// calendar already holds events is left alone.
func seedCalendar(ctx context.Context, m *Main, orgID string) error {
	now := m.Clock.Now()
	monday := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	monday = monday.AddDate(0, 0, -((int(monday.Weekday()) + 6) % 7))
	for email, evs := range demoEvents {
		u, err := m.Identity.UserByEmail(ctx, email)
		if err != nil {
			return fmt.Errorf("demo calendar for %s: %w", email, err)
		}
		p := &app.Principal{OrgID: orgID, UserID: u.ID, Email: u.Email, Scopes: app.NewScopes(app.ScopeCalendarWrite),
			Features: []string{calendar.Feature}}
		cals, err := m.Calendar.Calendars(ctx, p)
		if err != nil {
			return err
		}
		if ch, _, err := m.Calendar.Changes(ctx, p, cals[0].ID, 0); err != nil || len(ch) > 0 {
			continue
		}
		for _, ev := range evs {
			date := monday.AddDate(0, 0, ev.day).Format(calendar.DateFormat)
			start, end := date+"T"+ev.start, date+"T"+ev.end
			if ev.allDay {
				start, end = date, date
			}
			in := calendar.EventInput{Title: &ev.title, Start: &start, End: &end, AllDay: &ev.allDay, Location: &ev.location, RRule: &ev.rrule}
			if ev.tz != "" {
				in.Timezone = &ev.tz
			}
			if len(ev.attendees) > 0 {
				as := make([]calendar.Attendee, len(ev.attendees))
				for i, a := range ev.attendees {
					as[i] = calendar.Attendee{Email: a}
				}
				in.Attendees = &as
			}
			if _, err := m.Calendar.CreateEvent(ctx, p, cals[0].ID, in); err != nil {
				return fmt.Errorf("demo event %q: %w", ev.title, err)
			}
		}
	}
	return nil
}
