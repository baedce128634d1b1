package rest

import (
	"context"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"

	"atrium/app"
	"atrium/app/calendar"
	"atrium/web/presign"
)

// CalendarCreate is the body of a new calendar.
type CalendarCreate struct {
	Name        string `json:"name" minLength:"1" maxLength:"200"`
	Description string `json:"description,omitempty" maxLength:"2000"`
	Color       string `json:"color,omitempty" doc:"#rrggbb or #rrggbbaa." example:"#3366ff"`
	Timezone    string `json:"timezone,omitempty" doc:"IANA time zone; default UTC." example:"Europe/Paris"`
}

// CalendarUpdate changes a calendar; absent or empty fields keep their value.
type CalendarUpdate struct {
	Name        string `json:"name,omitempty" maxLength:"200"`
	Description string `json:"description,omitempty" maxLength:"2000"`
	Color       string `json:"color,omitempty" doc:"#rrggbb or #rrggbbaa." example:"#3366ff"`
	Timezone    string `json:"timezone,omitempty" doc:"IANA time zone." example:"Europe/Paris"`
}

// EventCreate is the body of a new event.
type EventCreate struct {
	Title       string              `json:"title" minLength:"1" maxLength:"1000"`
	Start       string              `json:"start" doc:"RFC 3339 date-time, a local date-time read in timezone, or for all-day events a date (YYYY-MM-DD)." example:"2026-03-10T09:00:00-04:00"`
	End         string              `json:"end" doc:"As start; exclusive. For all-day events the day after the last day (the same day is read as one day)." example:"2026-03-10T10:00:00-04:00"`
	AllDay      bool                `json:"all_day,omitempty"`
	Timezone    string              `json:"timezone,omitempty" doc:"IANA time zone of the event; default the calendar's. Recurrences keep their wall-clock time across DST changes in this zone." example:"America/New_York"`
	Location    string              `json:"location,omitempty" maxLength:"1000"`
	Description string              `json:"description,omitempty" maxLength:"100000"`
	RRule       string              `json:"rrule,omitempty" doc:"RFC 5545 RRULE value. Occurrences must be at least a minute apart: FREQ=SECONDLY, or BYSECOND with several values, → 422; COUNT at most 50000." example:"FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10"`
	ExDates     []string            `json:"exdates,omitempty" doc:"Excluded occurrences: their original start date-times (or dates)."`
	Attendees   []calendar.Attendee `json:"attendees,omitempty"`
}

// EventUpdate changes an event; absent fields keep their value.
type EventUpdate struct {
	Title       *string              `json:"title,omitempty" minLength:"1" maxLength:"1000"`
	Start       *string              `json:"start,omitempty" doc:"As in EventCreate. Given without end, the event keeps its length."`
	End         *string              `json:"end,omitempty"`
	AllDay      *bool                `json:"all_day,omitempty"`
	Timezone    *string              `json:"timezone,omitempty"`
	Location    *string              `json:"location,omitempty" maxLength:"1000"`
	Description *string              `json:"description,omitempty" maxLength:"100000"`
	RRule       *string              `json:"rrule,omitempty" doc:"RFC 5545 RRULE value (as in EventCreate); an empty string ends the recurrence."`
	ExDates     *[]string            `json:"exdates,omitempty"`
	Attendees   *[]calendar.Attendee `json:"attendees,omitempty" doc:"Replaces the attendees; parameters of those kept (participation status, role) are preserved."`
}

// OccurrenceUpdate is EventUpdate on the occurrence path, with its scope.
type OccurrenceUpdate struct {
	EventUpdate
	Scope string `json:"scope,omitempty" enum:"this,this_and_following,all" default:"this" doc:"this: only this occurrence (an override); this_and_following: this and later ones (the series is split, the new part gets a new uid); all: the whole series, moved by as much as this occurrence moves."`
}

func (u EventUpdate) input() calendar.EventInput {
	return calendar.EventInput{Title: u.Title, Start: u.Start, End: u.End, AllDay: u.AllDay, Timezone: u.Timezone,
		Location: u.Location, Description: u.Description, RRule: u.RRule, ExDates: u.ExDates, Attendees: u.Attendees}
}

func (c EventCreate) input() calendar.EventInput {
	in := calendar.EventInput{Title: &c.Title, Start: &c.Start, End: &c.End, AllDay: &c.AllDay, Location: &c.Location,
		Description: &c.Description, RRule: &c.RRule}
	if c.Timezone != "" {
		in.Timezone = &c.Timezone
	}
	if c.ExDates != nil {
		in.ExDates = &c.ExDates
	}
	if c.Attendees != nil {
		in.Attendees = &c.Attendees
	}
	return in
}

// FreeBusyBody is a FreeBusyRequest.
type FreeBusyBody struct {
	Attendees []string  `json:"attendees" minItems:"1" maxItems:"100" doc:"E-mail addresses; those outside the caller's organisation are left out of the answer."`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end" doc:"After start, at most 366 days later."`
}

// CalPath names a calendar.
type CalPath struct {
	CalID string `path:"cal_id"`
}

// EventPath names an event.
type EventPath struct {
	CalPath
	UID string `path:"uid"`
}

// OccurrencePath names an occurrence of an event.
type OccurrencePath struct {
	EventPath
	Date string `path:"occurrence_date" doc:"The occurrence's original start date (YYYY-MM-DD) in the event's time zone." example:"2026-03-10"`
}

// RangeQuery is an expansion range.
type RangeQuery struct {
	Start time.Time `query:"start" required:"true" doc:"Start of the range (RFC 3339)."`
	End   time.Time `query:"end" required:"true" doc:"End of the range, exclusive; after start and at most 366 days later."`
}

// eventOut is an event written: the whole event, as GET answers it, so that
// what was sent (description, rrule, exdates, attendees) comes back.
type eventOut struct {
	ETag string `header:"ETag"`
	Body calendar.EventDetail
}

type icsOut struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	ETag               string `header:"ETag"`
	Body               []byte
}

// maxBytes refuses request bodies over n bytes with 413 before the form is read.
func maxBytes(api huma.API, n int64) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		if cl, err := strconv.ParseInt(ctx.Header("Content-Length"), 10, 64); err == nil && cl > n+64<<10 {
			_ = huma.WriteErr(api, ctx, http.StatusRequestEntityTooLarge, fmt.Sprintf("The file may be at most %d MiB.", n>>20))
			return
		}
		if gc := humagin.Unwrap(ctx); gc != nil {
			gc.Request.Body = http.MaxBytesReader(gc.Writer, gc.Request.Body, n+64<<10)
			if err := gc.Request.ParseMultipartForm(1 << 20); err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					_ = huma.WriteErr(api, ctx, http.StatusRequestEntityTooLarge, fmt.Sprintf("The file may be at most %d MiB.", n>>20))
					return
				}
				_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "The body must be multipart/form-data with a field file.",
					&huma.ErrorDetail{Location: "body", Message: "cannot read multipart form: " + err.Error()})
				return
			}
		}
		next(ctx)
	}
}

func registerCalendar(api huma.API, d Deps) {
	const tag = "Calendar"
	read, write := app.ScopeCalendarRead, app.ScopeCalendarWrite
	c := d.Calendar

	huma.Register(api, status(op(http.MethodGet, "/calendar/calendars", "listCalendars", "List my calendars", tag, read), http.StatusOK),
		func(ctx context.Context, _ *struct{}) (*body[[]calendar.Calendar], error) {
			cals, err := c.Calendars(ctx, principal(ctx))
			return out(cals), err
		})
	create := errs(idempotent(status(op(http.MethodPost, "/calendar/calendars", "createCalendar", "Create a calendar", tag, write), http.StatusCreated)))
	create.Description = "Adds a calendar besides the default one (the calendar CalDAV MKCALENDAR makes). Name 1 to 200 characters, colour `#rrggbb` or `#rrggbbaa`, IANA time zone (default UTC); anything else → 422."
	create.Hidden = true // an Atrium extension outside the stable v1 contract: routed, not published; docs/api-extensions.md
	huma.Register(api, create,
		func(ctx context.Context, in *struct{ Body CalendarCreate }) (*body[calendar.Calendar], error) {
			cal, err := c.CreateCalendar(ctx, principal(ctx), calendar.CalendarInput(in.Body))
			return out(cal), err
		})
	patch := errs(status(op(http.MethodPatch, "/calendar/calendars/{cal_id}", "updateCalendar", "Rename a calendar or change its colour or time zone", tag, write), http.StatusOK), http.StatusNotFound)
	patch.Description = "Absent or empty fields keep their value (CalDAV PROPPATCH does the same)."
	patch.Hidden = true // an Atrium extension outside the stable v1 contract: routed, not published; docs/api-extensions.md
	huma.Register(api, patch,
		func(ctx context.Context, in *struct {
			CalPath
			Body CalendarUpdate
		}) (*body[calendar.Calendar], error) {
			cal, err := c.UpdateCalendar(ctx, principal(ctx), in.CalID, calendar.CalendarInput(in.Body))
			return out(cal), err
		})
	del := errs(status(op(http.MethodDelete, "/calendar/calendars/{cal_id}", "deleteCalendar", "Delete a calendar with its events", tag, write), http.StatusNoContent), http.StatusNotFound, http.StatusConflict)
	del.Description = "The default calendar cannot be deleted → 409 `conflict`."
	del.Hidden = true // an Atrium extension outside the stable v1 contract: routed, not published; docs/api-extensions.md
	huma.Register(api, del,
		func(ctx context.Context, in *CalPath) (*struct{}, error) {
			return nil, c.DeleteCalendar(ctx, principal(ctx), in.CalID)
		})

	list := status(op(http.MethodGet, "/calendar/events", "listEvents", "List events of all my calendars in a range", tag, read), http.StatusOK)
	list.Description = "Recurring events are expanded into their occurrences (each with `occurrence_date`) in the event's time zone; an unbounded rule is never expanded past `end`, and expansion starts at `start`, whatever the event's first date. Missing `start`/`end`, `end` ≤ `start`, or a range over 366 days → 422. " +
		"A range holding more than 20000 occurrences (all events together) is refused whole, never cut short: 422 `validation_failed` naming `query.end` (\"the range holds more than 20000 occurrences\"); ask again for shorter ranges."
	huma.Register(api, errs(list, http.StatusNotFound),
		func(ctx context.Context, in *struct {
			RangeQuery
			CalendarIDs []string `query:"calendar_ids" doc:"Only these calendars (comma separated)."`
		}) (*body[[]calendar.EventSummary], error) {
			evs, err := c.Events(ctx, principal(ctx), in.CalendarIDs, in.Start, in.End)
			return out(evs), err
		})
	calList := status(op(http.MethodGet, "/calendar/calendars/{cal_id}/events", "listCalendarEvents", "List a calendar's events in a range", tag, read), http.StatusOK)
	calList.Description = list.Description
	huma.Register(api, errs(calList, http.StatusNotFound),
		func(ctx context.Context, in *struct {
			CalPath
			RangeQuery
		}) (*body[[]calendar.EventSummary], error) {
			evs, err := c.Events(ctx, principal(ctx), []string{in.CalID}, in.Start, in.End)
			return out(evs), err
		})
	huma.Register(api, errs(op(http.MethodPost, "/calendar/calendars/{cal_id}/events", "createEvent", "Create an event", tag, write), http.StatusNotFound),
		func(ctx context.Context, in *struct {
			CalPath
			Body EventCreate
		}) (*eventOut, error) {
			ev, err := c.CreateEvent(ctx, principal(ctx), in.CalID, in.Body.input())
			return &eventOut{ETag: ev.ETag, Body: ev}, err
		})
	huma.Register(api, errs(status(op(http.MethodGet, "/calendar/calendars/{cal_id}/events/{uid}", "getEvent", "Get an event", tag, read), http.StatusOK), http.StatusNotFound),
		func(ctx context.Context, in *EventPath) (*struct {
			ETag string `header:"ETag"`
			Body calendar.EventDetail
		}, error) {
			ev, err := c.Event(ctx, principal(ctx), in.CalID, in.UID)
			return &struct {
				ETag string `header:"ETag"`
				Body calendar.EventDetail
			}{ETag: ev.ETag, Body: ev}, err
		})
	huma.Register(api, errs(status(op(http.MethodPut, "/calendar/calendars/{cal_id}/events/{uid}", "updateEvent", "Update an event (the whole series)", tag, write), http.StatusOK), http.StatusNotFound, http.StatusConflict, http.StatusPreconditionFailed),
		func(ctx context.Context, in *struct {
			EventPath
			IfMatch string `header:"If-Match" doc:"The ETag of the event as last read; another value → 412."`
			Body    EventUpdate
		}) (*eventOut, error) {
			ev, err := c.UpdateEvent(ctx, principal(ctx), in.CalID, in.UID, in.Body.input(), in.IfMatch)
			return &eventOut{ETag: ev.ETag, Body: ev}, err
		})
	huma.Register(api, errs(op(http.MethodDelete, "/calendar/calendars/{cal_id}/events/{uid}", "deleteEvent", "Delete an event with all its occurrences", tag, write), http.StatusNotFound, http.StatusPreconditionFailed),
		func(ctx context.Context, in *struct {
			EventPath
			IfMatch string `header:"If-Match"`
		}) (*struct{}, error) {
			return nil, c.DeleteEvent(ctx, principal(ctx), in.CalID, in.UID, in.IfMatch)
		})
	occPut := status(op(http.MethodPut, "/calendar/calendars/{cal_id}/events/{uid}/occurrences/{occurrence_date}", "updateOccurrence", "Update an occurrence, this and following, or the series", tag, write), http.StatusOK)
	occPut.Description = "`scope` this writes an override (RECURRENCE-ID) and emits `calendar.event.updated` with `occurrence_date`; this_and_following ends the series before this occurrence (UNTIL) and starts a new series (new uid) from it; all edits the master."
	huma.Register(api, errs(occPut, http.StatusNotFound),
		func(ctx context.Context, in *struct {
			OccurrencePath
			Body OccurrenceUpdate
		}) (*body[calendar.EventSummary], error) {
			ev, err := c.UpdateOccurrence(ctx, principal(ctx), in.CalID, in.UID, in.Date, in.Body.Scope, in.Body.input())
			return out(ev), err
		})
	huma.Register(api, errs(op(http.MethodDelete, "/calendar/calendars/{cal_id}/events/{uid}/occurrences/{occurrence_date}", "deleteOccurrence", "Delete an occurrence, this and following, or the series", tag, write), http.StatusNotFound),
		func(ctx context.Context, in *struct {
			OccurrencePath
			DeleteScope string `query:"delete_scope" enum:"this,this_and_following,all" default:"this" doc:"this adds an EXDATE; this_and_following ends the series before it; all deletes the event."`
		}) (*struct{}, error) {
			return nil, c.DeleteOccurrence(ctx, principal(ctx), in.CalID, in.UID, in.Date, in.DeleteScope)
		})

	exp := status(op(http.MethodGet, "/calendar/calendars/{cal_id}/export.ics", "exportCalendar", "Export a calendar as iCalendar", tag, read), http.StatusOK)
	exp.Responses = map[string]*huma.Response{"200": {Description: "The calendar as one iCalendar file with a VTIMEZONE per zone in use.",
		Content: map[string]*huma.MediaType{"text/calendar": {Schema: &huma.Schema{Type: "string"}}}}}
	huma.Register(api, errs(exp, http.StatusNotFound),
		func(ctx context.Context, in *CalPath) (*huma.StreamResponse, error) {
			cal, write, err := c.ExportCalendar(ctx, principal(ctx), in.CalID)
			if err != nil {
				return nil, err
			}
			return &huma.StreamResponse{Body: func(hc huma.Context) {
				hc.SetHeader("Content-Type", "text/calendar; charset=utf-8")
				hc.SetHeader("Content-Disposition", presign.ContentDisposition(calendar.ExportFileName(cal), false))
				hc.SetStatus(http.StatusOK)
				// The status is sent: a failure shows as a body without END:VCALENDAR.
				_ = write(hc.BodyWriter())
			}}, nil
		})
	evExp := status(op(http.MethodGet, "/calendar/calendars/{cal_id}/events/{uid}/event.ics", "exportEvent", "Export an event as iCalendar", tag, read), http.StatusOK)
	evExp.Responses = map[string]*huma.Response{"200": {Description: "The event, its overrides and VTIMEZONEs, as stored (properties clients wrote are kept).",
		Content: map[string]*huma.MediaType{"text/calendar": {Schema: &huma.Schema{Type: "string"}}}}}
	huma.Register(api, errs(evExp, http.StatusNotFound),
		func(ctx context.Context, in *EventPath) (*icsOut, error) {
			b, err := c.ExportEvent(ctx, principal(ctx), in.CalID, in.UID)
			if err != nil {
				return nil, err
			}
			return &icsOut{ContentType: "text/calendar; charset=utf-8", ContentDisposition: `attachment; filename="event.ics"`, Body: b}, nil
		})

	imp := op(http.MethodPost, "/calendar/calendars/{cal_id}/import", "importCalendar", "Import an iCalendar file", tag, write)
	imp.Description = "Multipart field `file` (at most 10 MiB, else 413). Events whose UID exists are replaced, others added; each UID succeeds or fails on its own (`errors`), a file that is not iCalendar → 422. An event whose RRULE has occurrences under a minute apart (FREQ=SECONDLY) is not imported (an entry in `errors`). Lenient with real-world files (CRLF/LF mixes, unfolded long lines, missing VTIMEZONE for a known TZID, Windows TZIDs, missing DTSTAMP); `fixes` says what was repaired."
	imp.Middlewares = huma.Middlewares{maxBytes(api, calendar.MaxImportBytes)}
	imp.BodyReadTimeout = 2 * time.Minute
	huma.Register(api, errs(imp, http.StatusNotFound, http.StatusRequestEntityTooLarge),
		func(ctx context.Context, in *struct {
			CalPath
			RawBody multipart.Form
		}) (*body[calendar.ImportResult], error) {
			files := in.RawBody.File["file"]
			if len(files) == 0 {
				return nil, app.Invalid("body.file", "is required: send the .ics file in the multipart field file", nil)
			}
			if files[0].Size > calendar.MaxImportBytes {
				return nil, app.Errorf(app.EPayloadTooLarge, "The file may be at most 10 MiB.")
			}
			f, err := files[0].Open()
			if err != nil {
				return nil, fmt.Errorf("open upload: %w", err)
			}
			defer f.Close()
			res, err := c.Import(ctx, principal(ctx), in.CalID, f)
			return out(res), err
		})

	fb := status(op(http.MethodPost, "/calendar/freebusy", "freeBusy", "Busy times of people of my organisation", tag, read), http.StatusOK)
	fb.Description = "Busy intervals per attendee over the range, merged, from all their calendars with recurrences expanded; transparent and cancelled events do not count. Only users of the caller's organisation are returned; other addresses are left out. No titles or details are revealed. More than 20000 occurrences over every attendee → 422 naming `body.end`."
	huma.Register(api, fb,
		func(ctx context.Context, in *struct{ Body FreeBusyBody }) (*body[calendar.FreeBusy], error) {
			res, err := c.FreeBusy(ctx, principal(ctx), calendar.FreeBusyRequest{Attendees: in.Body.Attendees, Start: in.Body.Start, End: in.Body.End})
			return out(res), err
		})
}
