package calendar

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"atrium/app"
)

// Tasks (VTODO, RFC 5545 §3.6.2): kept whole as their clients wrote them, in
// calendars that hold tasks, and read and changed here for the REST API and
// the web app (an extension: docs/api-extensions.md). A task has no place in
// the events' lists, free/busy or webhooks.

// Task is a task's summary: what a due-date list shows.
type Task struct {
	UID         string     `json:"uid"`
	CalendarID  string     `json:"calendar_id"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Due         *time.Time `json:"due" doc:"When it is due (DUE); null: no due date."`
	AllDay      bool       `json:"all_day" doc:"The due date is a date, without a time."`
	Completed   bool       `json:"completed" doc:"Done: STATUS COMPLETED, or a COMPLETED time."`
	CompletedAt *time.Time `json:"completed_at" doc:"When it was done (COMPLETED); null when not done or not recorded."`
	Status      string     `json:"status" doc:"STATUS as written: NEEDS-ACTION, IN-PROCESS, COMPLETED, CANCELLED, or empty."`
	Priority    int        `json:"priority" doc:"PRIORITY: 1 (highest) to 9 (lowest), 0 undefined."`
	Recurring   bool       `json:"is_recurring"`
	ETag        string     `json:"etag"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// TaskInput makes or changes a task; on a change a nil field is unchanged.
type TaskInput struct {
	Title       *string
	Description *string
	// Due is an RFC 3339 time, a date (YYYY-MM-DD: due that day), or "" for
	// none.
	Due       *string
	Completed *bool
	Priority  *int
}

// Tasks lists a calendar's tasks: the pending ones first by due date (those
// without one last), then the done ones. Errors: insufficient_scope (no
// calendar:read), no_bound_user, feature_not_in_plan, not_found (no such
// calendar of the caller).
func (s *Service) Tasks(ctx context.Context, p *app.Principal, calID string) ([]Task, error) {
	cal, loc, err := s.calendar(ctx, p, app.ScopeCalendarRead, calID)
	if err != nil {
		return nil, err
	}
	out := []Task{}
	err = s.store.Objects(ctx, cal.ID, func(o Object) error {
		if !o.IsTask() {
			return nil
		}
		t, err := taskOf(o, loc)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Completed != b.Completed {
			return !a.Completed
		}
		if (a.Due == nil) != (b.Due == nil) {
			return a.Due != nil
		}
		if a.Due != nil && !a.Due.Equal(*b.Due) {
			return a.Due.Before(*b.Due)
		}
		return strings.ToLower(a.Title) < strings.ToLower(b.Title)
	})
	return out, nil
}

// taskOf reads a task object's summary from its master VTODO (else its first).
func taskOf(o Object, loc *time.Location) (Task, error) {
	vc, err := decode(o.ICS)
	if err != nil {
		return Task{}, err
	}
	c := masterTodo(vc)
	if c == nil {
		return Task{}, app.Errorf(app.EInternal, "The task %s holds no VTODO.", o.UID)
	}
	t := Task{UID: o.UID, CalendarID: o.CalendarID, ETag: o.ETag, UpdatedAt: o.UpdatedAt}
	t.Title, _ = c.Props.Text(ical.PropSummary)
	t.Description, _ = c.Props.Text(ical.PropDescription)
	if p := c.Props.Get(ical.PropDue); p != nil {
		if d, err := p.DateTime(loc); err == nil {
			t.Due = &d
			t.AllDay = p.ValueType() == ical.ValueDate || len(p.Value) == 8
		}
	}
	if p := c.Props.Get(ical.PropStatus); p != nil {
		t.Status = strings.ToUpper(p.Value)
	}
	if p := c.Props.Get(ical.PropCompleted); p != nil {
		if d, err := p.DateTime(time.UTC); err == nil {
			t.CompletedAt = &d
		}
	}
	t.Completed = t.Status == "COMPLETED" || t.CompletedAt != nil
	if p := c.Props.Get(ical.PropPriority); p != nil {
		t.Priority, _ = strconv.Atoi(p.Value)
	}
	t.Recurring = c.Props.Get(ical.PropRecurrenceRule) != nil
	return t, nil
}

// masterTodo is a task's VTODO without RECURRENCE-ID, else its first.
func masterTodo(vc *ical.Calendar) *ical.Component {
	var first *ical.Component
	for _, c := range vc.Children {
		if c.Name != ical.CompToDo {
			continue
		}
		if c.Props.Get(ical.PropRecurrenceID) == nil {
			return c
		}
		if first == nil {
			first = c
		}
	}
	return first
}

// task loads a task of one of the caller's calendars (not_found for an event).
func (s *Service) task(ctx context.Context, p *app.Principal, scope, calID, uid string) (Calendar, *time.Location, Object, error) {
	cal, loc, err := s.calendar(ctx, p, scope, calID)
	if err != nil {
		return cal, nil, Object{}, err
	}
	o, err := s.store.Object(ctx, cal.ID, uid)
	if app.ErrorCode(err) == app.ENotFound || err == nil && !o.IsTask() {
		return cal, nil, o, app.Errorf(app.ENotFound, "No task %s in this calendar.", uid)
	}
	return cal, loc, o, err
}

// Task returns one task. Errors: insufficient_scope (no calendar:read),
// no_bound_user, feature_not_in_plan, not_found (no such calendar of the
// caller, no such task in it).
func (s *Service) Task(ctx context.Context, p *app.Principal, calID, uid string) (Task, error) {
	_, loc, o, err := s.task(ctx, p, app.ScopeCalendarRead, calID, uid)
	if err != nil {
		return Task{}, err
	}
	return taskOf(o, loc)
}

// CreateTask makes a task (a title is needed) in a calendar that holds tasks.
// Errors: insufficient_scope (no calendar:write), no_bound_user,
// feature_not_in_plan, not_found (no such calendar of the caller),
// validation_failed (a field, a calendar of events only).
func (s *Service) CreateTask(ctx context.Context, p *app.Principal, calID string, in TaskInput) (Task, error) {
	cal, loc, err := s.calendar(ctx, p, app.ScopeCalendarWrite, calID)
	if err != nil {
		return Task{}, err
	}
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		return Task{}, app.Invalid("body.title", "must not be empty", nil)
	}
	now := s.clock.Now()
	uid := app.NewID()
	c := ical.NewComponent(ical.CompToDo)
	c.Props.SetText(ical.PropUID, uid)
	c.Props.Set(&ical.Prop{Name: ical.PropCreated, Params: ical.Params{}, Value: now.UTC().Format(icalUTC)})
	c.Props.Set(&ical.Prop{Name: ical.PropStatus, Params: ical.Params{}, Value: "NEEDS-ACTION"})
	if err := applyTask(c, in, now); err != nil {
		return Task{}, err
	}
	vc := newVCalendar()
	vc.Children = append(vc.Children, c)
	o, _, err := s.save(ctx, p, cal, loc, nil, uid+".ics", vc, change{})
	if err != nil {
		return Task{}, err
	}
	return taskOf(o, loc)
}

// UpdateTask changes a task's master VTODO (every other property, alarm and
// override kept); ifMatch, when set, must be the current ETag. Errors:
// insufficient_scope (no calendar:write), no_bound_user, feature_not_in_plan,
// not_found (no such calendar of the caller, no such task in it),
// precondition_failed (ifMatch), validation_failed (a field).
func (s *Service) UpdateTask(ctx context.Context, p *app.Principal, calID, uid string, in TaskInput, ifMatch string) (Task, error) {
	cal, loc, o, err := s.task(ctx, p, app.ScopeCalendarWrite, calID, uid)
	if err != nil {
		return Task{}, err
	}
	if err := matches(o, ifMatch); err != nil {
		return Task{}, err
	}
	vc, err := decode(o.ICS)
	if err != nil {
		return Task{}, err
	}
	c := masterTodo(vc)
	if c == nil {
		return Task{}, app.Errorf(app.EInternal, "The task %s holds no VTODO.", uid)
	}
	if in.Title != nil && strings.TrimSpace(*in.Title) == "" {
		return Task{}, app.Invalid("body.title", "must not be empty", nil)
	}
	if err := applyTask(c, in, s.clock.Now()); err != nil {
		return Task{}, err
	}
	saved, _, err := s.save(ctx, p, cal, loc, &o, o.Name, vc, change{})
	if err != nil {
		return Task{}, err
	}
	return taskOf(saved, loc)
}

// DeleteTask removes a task. Errors: insufficient_scope (no calendar:write),
// no_bound_user, feature_not_in_plan, not_found (no such calendar of the
// caller, no such task in it), precondition_failed (ifMatch).
func (s *Service) DeleteTask(ctx context.Context, p *app.Principal, calID, uid, ifMatch string) error {
	_, _, o, err := s.task(ctx, p, app.ScopeCalendarWrite, calID, uid)
	if err != nil {
		return err
	}
	if err := matches(o, ifMatch); err != nil {
		return err
	}
	return s.remove(ctx, p, o)
}

// applyTask writes the given fields into a VTODO, with its DTSTAMP,
// LAST-MODIFIED and SEQUENCE, validating them first (nothing changes on a
// refusal).
func applyTask(c *ical.Component, in TaskInput, now time.Time) error {
	var v app.Validator
	if in.Title != nil {
		v.Check(len(*in.Title) <= 1000, "body.title", "must be at most 1000 characters", *in.Title)
	}
	if in.Description != nil {
		v.Check(len(*in.Description) <= 100000, "body.description", "must be at most 100000 characters", nil)
	}
	if in.Priority != nil {
		v.Check(*in.Priority >= 0 && *in.Priority <= 9, "body.priority", "must be 0 (undefined) or 1 (highest) to 9 (lowest)", *in.Priority)
	}
	var due *ical.Prop
	if in.Due != nil && *in.Due != "" {
		d := strings.TrimSpace(*in.Due)
		if day, err := time.Parse(time.DateOnly, d); err == nil {
			due = &ical.Prop{Name: ical.PropDue, Params: ical.Params{}}
			due.SetDate(day)
		} else if at, err := time.Parse(time.RFC3339, d); err == nil {
			due = &ical.Prop{Name: ical.PropDue, Params: ical.Params{}, Value: at.UTC().Format(icalUTC)}
		} else {
			v.Add("body.due", "must be a date (YYYY-MM-DD) or an RFC 3339 time, or empty for none", *in.Due)
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	if in.Title != nil {
		c.Props.SetText(ical.PropSummary, strings.TrimSpace(*in.Title))
	}
	if in.Description != nil {
		if *in.Description == "" {
			c.Props.Del(ical.PropDescription)
		} else {
			c.Props.SetText(ical.PropDescription, *in.Description)
		}
	}
	if in.Due != nil {
		c.Props.Del(ical.PropDue)
		if due != nil {
			c.Props.Set(due)
			// DUE and DURATION cannot both be (RFC 5545 §3.6.2).
			c.Props.Del(ical.PropDuration)
		}
	}
	if in.Priority != nil {
		if *in.Priority == 0 {
			c.Props.Del(ical.PropPriority)
		} else {
			c.Props.Set(&ical.Prop{Name: ical.PropPriority, Params: ical.Params{}, Value: strconv.Itoa(*in.Priority)})
		}
	}
	if in.Completed != nil {
		stamp := now.UTC().Format(icalUTC)
		if *in.Completed {
			c.Props.Set(&ical.Prop{Name: ical.PropStatus, Params: ical.Params{}, Value: "COMPLETED"})
			c.Props.Set(&ical.Prop{Name: ical.PropCompleted, Params: ical.Params{}, Value: stamp})
			c.Props.Set(&ical.Prop{Name: ical.PropPercentComplete, Params: ical.Params{}, Value: "100"})
		} else {
			c.Props.Set(&ical.Prop{Name: ical.PropStatus, Params: ical.Params{}, Value: "NEEDS-ACTION"})
			c.Props.Del(ical.PropCompleted)
			c.Props.Del(ical.PropPercentComplete)
		}
	}
	c.Props.Set(&ical.Prop{Name: ical.PropDateTimeStamp, Params: ical.Params{}, Value: now.UTC().Format(icalUTC)})
	c.Props.Set(&ical.Prop{Name: ical.PropLastModified, Params: ical.Params{}, Value: now.UTC().Format(icalUTC)})
	seq := 0
	if p := c.Props.Get(ical.PropSequence); p != nil {
		if n, err := strconv.Atoi(p.Value); err == nil {
			seq = n + 1
		}
	}
	c.Props.Set(&ical.Prop{Name: ical.PropSequence, Params: ical.Params{}, Value: strconv.Itoa(seq)})
	return nil
}
