package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/calendar"
)

// Tasks (VTODO) of a calendar: an Atrium extension outside the v1 contract,
// routed but not published in the OpenAPI document (docs/api-extensions.md).
// CalDAV clients keep tasks through /dav/; these are for the web app and
// scripts.

// TaskCreate is the body of a new task.
type TaskCreate struct {
	Title       string `json:"title" minLength:"1" maxLength:"1000"`
	Description string `json:"description,omitempty" maxLength:"100000"`
	Due         string `json:"due,omitempty" doc:"A date (YYYY-MM-DD) or an RFC 3339 time."`
	Priority    int    `json:"priority,omitempty" minimum:"0" maximum:"9" doc:"1 (highest) to 9 (lowest); 0 undefined."`
}

// TaskUpdate is the body of a change of a task; an absent field is unchanged.
type TaskUpdate struct {
	Title       *string `json:"title,omitempty" maxLength:"1000"`
	Description *string `json:"description,omitempty" maxLength:"100000"`
	Due         *string `json:"due,omitempty" doc:"A date (YYYY-MM-DD), an RFC 3339 time, or empty for none."`
	Completed   *bool   `json:"completed,omitempty" doc:"true: done now (STATUS COMPLETED, COMPLETED, PERCENT-COMPLETE 100); false: not done."`
	Priority    *int    `json:"priority,omitempty" minimum:"0" maximum:"9"`
}

// TaskPath names a task.
type TaskPath struct {
	CalPath
	UID string `path:"uid"`
}

type taskOut struct {
	ETag string `header:"ETag"`
	Body calendar.Task
}

func registerTasks(api huma.API, d Deps) {
	const tag = "Calendar"
	c := d.Calendar
	read, write := app.ScopeCalendarRead, app.ScopeCalendarWrite
	hide := func(o huma.Operation, desc string) huma.Operation {
		o.Description = desc
		o.Hidden = true // an Atrium extension outside the stable v1 contract: routed, not published; docs/api-extensions.md
		return o
	}
	huma.Register(api, hide(errs(status(op(http.MethodGet, "/calendar/calendars/{cal_id}/tasks", "listTasks", "List a calendar's tasks", tag, read), http.StatusOK), http.StatusNotFound),
		"Pending tasks first, by due date (those without one last), then the done ones."),
		func(ctx context.Context, in *CalPath) (*body[[]calendar.Task], error) {
			ts, err := c.Tasks(ctx, principal(ctx), in.CalID)
			return out(ts), err
		})
	huma.Register(api, hide(errs(status(op(http.MethodPost, "/calendar/calendars/{cal_id}/tasks", "createTask", "Create a task", tag, write), http.StatusCreated), http.StatusNotFound),
		"A calendar that holds events only → 422 naming `component`."),
		func(ctx context.Context, in *struct {
			CalPath
			Body TaskCreate
		}) (*taskOut, error) {
			b := in.Body
			t, err := c.CreateTask(ctx, principal(ctx), in.CalID, calendar.TaskInput{Title: &b.Title, Description: &b.Description, Due: &b.Due, Priority: &b.Priority})
			return &taskOut{ETag: t.ETag, Body: t}, err
		})
	huma.Register(api, hide(errs(status(op(http.MethodGet, "/calendar/calendars/{cal_id}/tasks/{uid}", "getTask", "Get a task", tag, read), http.StatusOK), http.StatusNotFound), ""),
		func(ctx context.Context, in *TaskPath) (*taskOut, error) {
			t, err := c.Task(ctx, principal(ctx), in.CalID, in.UID)
			return &taskOut{ETag: t.ETag, Body: t}, err
		})
	huma.Register(api, hide(errs(status(op(http.MethodPatch, "/calendar/calendars/{cal_id}/tasks/{uid}", "updateTask", "Change or complete a task", tag, write), http.StatusOK), http.StatusNotFound, http.StatusPreconditionFailed),
		"Changes the task's own fields; every other property, alarm and override its CalDAV client wrote is kept."),
		func(ctx context.Context, in *struct {
			TaskPath
			IfMatch string `header:"If-Match" doc:"The ETag of the task as last read; another value → 412."`
			Body    TaskUpdate
		}) (*taskOut, error) {
			b := in.Body
			t, err := c.UpdateTask(ctx, principal(ctx), in.CalID, in.UID, calendar.TaskInput{Title: b.Title, Description: b.Description, Due: b.Due, Completed: b.Completed, Priority: b.Priority}, in.IfMatch)
			return &taskOut{ETag: t.ETag, Body: t}, err
		})
	huma.Register(api, hide(errs(status(op(http.MethodDelete, "/calendar/calendars/{cal_id}/tasks/{uid}", "deleteTask", "Delete a task", tag, write), http.StatusNoContent), http.StatusNotFound, http.StatusPreconditionFailed), ""),
		func(ctx context.Context, in *struct {
			TaskPath
			IfMatch string `header:"If-Match"`
		}) (*struct{}, error) {
			return nil, c.DeleteTask(ctx, principal(ctx), in.CalID, in.UID, in.IfMatch)
		})
}
