// Package calendar holds the rules of calendars and events: recurrence (RFC 5545
// RRULE, EXDATE, RDATE and RECURRENCE-ID overrides, expanded with rrule-go in the
// event's time zone), iCalendar mapping, import and export, and free/busy.
//
// An event is stored as one iCalendar resource — the VEVENTs of one UID (the
// master and its overrides) with their VTIMEZONEs — kept as the client wrote it,
// so properties the model does not hold (alarms, X- properties, attendee
// parameters) survive every edit. The columns the queries need are derived from
// it on every write. REST and CalDAV are adapters over the same Service.
package calendar

import (
	"context"
	"slices"
	"time"

	_ "time/tzdata" // time zones resolve on machines without a zoneinfo database

	"atrium/app"
)

// Feature is the plan feature the calendar needs.
const Feature = "calendar"

// Event types emitted to the outbox (spec §6).
const (
	EventCreated = "calendar.event.created"
	EventUpdated = "calendar.event.updated"
)

// Scopes of an occurrence edit or delete (CONTRACT §4).
const (
	ScopeThis             = "this"
	ScopeThisAndFollowing = "this_and_following"
	ScopeAll              = "all"
)

// Limits.
const (
	// MaxRange is the longest range an expansion query may ask for.
	MaxRange = 366 * 24 * time.Hour
	// MaxImportBytes caps an imported .ics file.
	MaxImportBytes = 10 << 20
	// DateFormat is the form of occurrence_date.
	DateFormat = "2006-01-02"
)

// Calendar is one of a user's calendars (CalendarInfo).
type Calendar struct {
	ID          string `json:"id"`
	OrgID       string `json:"-"`
	UserID      string `json:"-"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Color       string `json:"color"`
	Timezone    string `json:"timezone" doc:"IANA time zone of floating times in this calendar."`
	IsDefault   bool   `json:"is_default"`
	// Components are the kinds of objects it holds: VEVENT (events), VTODO
	// (tasks) or both.
	Components []string  `json:"components" doc:"What the calendar holds: VEVENT (events), VTODO (tasks), or both."`
	SyncSeq    int64     `json:"-"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// AllComponents are the kinds of objects a calendar can hold.
var AllComponents = []string{"VEVENT", "VTODO"}

// Supports reports whether the calendar holds objects of kind (VEVENT or
// VTODO); one that names none holds both.
func (c Calendar) Supports(kind string) bool {
	return len(c.Components) == 0 || slices.Contains(c.Components, kind)
}

// CalendarInput creates a calendar; on update an empty field keeps its value.
type CalendarInput struct {
	Name        string
	Description string
	Color       string
	Timezone    string
}

// Attendee is an invited person.
type Attendee struct {
	Email  string `json:"email"`
	Name   string `json:"name,omitempty"`
	Status string `json:"status,omitempty" doc:"PARTSTAT: needs-action, accepted, declined, tentative, delegated."`
}

// EventSummary is an event, or one occurrence of a recurring event.
type EventSummary struct {
	UID         string    `json:"uid"`
	CalendarID  string    `json:"calendar_id"`
	Title       string    `json:"title"`
	Start       time.Time `json:"start" doc:"Start, with the offset of the event's time zone (all-day events: midnight of the date in the calendar's time zone)."`
	End         time.Time `json:"end"`
	AllDay      bool      `json:"all_day"`
	Location    string    `json:"location"`
	Timezone    string    `json:"timezone"`
	IsRecurring bool      `json:"is_recurring"`
	// OccurrenceDate is set on expanded occurrences: the occurrence's original
	// start date in the event's time zone.
	OccurrenceDate string `json:"occurrence_date,omitempty" doc:"Set on occurrences of a recurring event: the original start date (YYYY-MM-DD) in the event's time zone."`
	Cancelled      bool   `json:"cancelled,omitempty"`
}

// EventDetail is the whole event: the master of a series with its overrides.
type EventDetail struct {
	EventSummary
	Description string     `json:"description"`
	RRule       string     `json:"rrule,omitempty" doc:"RFC 5545 RRULE value."`
	ExDates     []string   `json:"exdates"`
	RDates      []string   `json:"rdates"`
	Attendees   []Attendee `json:"attendees"`
	Organizer   string     `json:"organizer,omitempty"`
	// Overrides are the occurrences edited on their own (RECURRENCE-ID).
	Overrides []EventSummary `json:"overrides"`
	ETag      string         `json:"etag"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// EventInput creates or changes an event. On update a nil field keeps its value.
// Start and End take RFC 3339 date-times, local date-times (in Timezone) or, for
// all-day events, dates (YYYY-MM-DD; End exclusive).
type EventInput struct {
	Title       *string
	Start       *string
	End         *string
	AllDay      *bool
	Timezone    *string
	Location    *string
	Description *string
	RRule       *string
	ExDates     *[]string
	Attendees   *[]Attendee
}

// ImportResult reports an import (CONTRACT §4) and what lenient parsing did.
type ImportResult struct {
	Imported int           `json:"imported"`
	Updated  int           `json:"updated"`
	Skipped  int           `json:"skipped"`
	Errors   []ImportError `json:"errors"`
	Fixes    []ImportFix   `json:"fixes"`
}

// ImportError is an event that was not imported.
type ImportError struct {
	UID     string `json:"uid"`
	Message string `json:"message"`
}

// ImportFix is a repair lenient parsing made to an imported event.
type ImportFix struct {
	UID     string `json:"uid"`
	Message string `json:"message"`
}

// FreeBusyRequest asks for the busy times of attendees.
type FreeBusyRequest struct {
	Attendees []string
	Start     time.Time
	End       time.Time
}

// Interval is a busy time.
type Interval struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// FreeBusyAttendee is one attendee's busy times, merged.
type FreeBusyAttendee struct {
	Email  string     `json:"email"`
	UserID string     `json:"user_id"`
	Busy   []Interval `json:"busy"`
}

// FreeBusy answers a FreeBusyRequest.
type FreeBusy struct {
	Start     time.Time          `json:"start"`
	End       time.Time          `json:"end"`
	Attendees []FreeBusyAttendee `json:"attendees"`
}

// Object is one stored iCalendar resource: every VEVENT of one UID.
type Object struct {
	ID         string
	CalendarID string
	OrgID      string
	UserID     string
	UID        string
	// Name is the resource name in the CalDAV collection (`<uid>.ics` for events
	// made through REST).
	Name string
	// ICS is the VCALENDAR text.
	ICS  string
	ETag string
	// Seq is the calendar change sequence of the object's last write.
	Seq       int64
	TZIDs     []string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Components is the derived index (written by PutObject; filled by Window).
	Components []Component
	// New tells PutObject the object is being created (no index rows to replace).
	New bool
}

// Component is the index of one VEVENT of an object: its master (RecurrenceID
// nil) or an override.
type Component struct {
	ObjectID     string
	UID          string
	CalendarID   string
	RecurrenceID *time.Time
	Title        string
	Location     string
	Start        time.Time
	End          time.Time
	AllDay       bool
	Timezone     string
	RRule        string
	RDates       []time.Time
	ExDates      []time.Time
	Busy         bool
	Cancelled    bool
	RangeStart   time.Time
	// RangeEnd is nil for an unbounded rule.
	RangeEnd *time.Time
}

// Change is an object changed after a sync sequence.
type Change struct {
	Name    string
	UID     string
	ETag    string
	Seq     int64
	Deleted bool
}

// UserRef is a user of an organisation found by e-mail address.
type UserRef struct {
	ID    string
	Email string
}

// Store is what the calendar service needs from storage. Every method is scoped
// by organisation and user where it names them; a missing calendar or object is
// app.ENotFound, a duplicate UID or name in a calendar is app.EConflict.
type Store interface {
	app.TxRunner

	// EnsureDefaultCalendar creates c as the user's default calendar unless one
	// exists, and returns the default calendar.
	EnsureDefaultCalendar(ctx context.Context, c Calendar) (Calendar, error)
	CreateCalendar(ctx context.Context, c Calendar) error
	// UpdateCalendar writes a calendar's name, description, colour and zone.
	UpdateCalendar(ctx context.Context, c Calendar) error
	// DeleteCalendar removes a calendar with its events.
	DeleteCalendar(ctx context.Context, orgID, userID, id string) error
	Calendars(ctx context.Context, orgID, userID string) ([]Calendar, error)
	Calendar(ctx context.Context, orgID, userID, id string) (Calendar, error)

	// Object returns the object of a UID in a calendar; ObjectByName by its
	// resource name.
	Object(ctx context.Context, calendarID, uid string) (Object, error)
	ObjectByName(ctx context.Context, calendarID, name string) (Object, error)
	// ObjectsByUID returns the objects of uids in a calendar (those it has),
	// in no order.
	ObjectsByUID(ctx context.Context, calendarID string, uids []string) ([]Object, error)
	// PutObject inserts or replaces o (by ID) with its components, takes the
	// calendar's next change sequence (set into o.Seq) and clears a tombstone of
	// the same name.
	PutObject(ctx context.Context, o *Object) error
	// DeleteObject removes an object and leaves a tombstone at the next sequence.
	DeleteObject(ctx context.Context, o Object) error
	// PruneTombstones forgets the deletions recorded before before and returns
	// how many; sync tokens older than them are refused from then on.
	PruneTombstones(ctx context.Context, before time.Time) (int, error)
	// Objects calls fn for every object of a calendar, in name order.
	Objects(ctx context.Context, calendarID string, fn func(Object) error) error
	// CalendarTZIDs returns the TZIDs used by a calendar's objects.
	CalendarTZIDs(ctx context.Context, calendarID string) ([]string, error)
	// Changes returns the objects written and deleted after seq, the calendar's
	// current sequence, and the newest sequence of the deletions it has
	// forgotten (a seq older than that may miss some).
	Changes(ctx context.Context, calendarID string, seq int64) (changes []Change, cur, pruned int64, err error)

	// Window returns the components of the calendars whose range overlaps
	// [start, end), plus every override of a recurring master among them.
	Window(ctx context.Context, calendarIDs []string, start, end time.Time) ([]Component, error)
	// BusyWindow is Window over every calendar of the users, busy components only.
	BusyWindow(ctx context.Context, userIDs []string, start, end time.Time) (map[string][]Component, error)

	// UsersByEmail returns the users of the organisation with these addresses
	// (compared case-insensitively).
	UsersByEmail(ctx context.Context, orgID string, emails []string) ([]UserRef, error)
}
