package sqldb

import (
	"context"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/calendar"
	"atrium/app/identity"
)

func calendarStore(t *testing.T) (CalendarStore, []identity.User) {
	t.Helper()
	ctx := context.Background()
	db := openTest(t)
	ids := IdentityStore{DB: db}
	now := time.Now().UTC()
	var users []identity.User
	for i, org := range []string{"one", "one", "two"} {
		if i != 1 {
			if err := ids.CreateOrg(ctx, identity.Organization{ID: org, Name: org, Slug: org, Status: identity.OrgActive, CreatedAt: now, UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
		}
		u := identity.User{ID: app.NewID(), OrgID: org, Email: []string{"Ann@One.test", "ben@one.test", "cy@two.test"}[i],
			RoleSlug: app.RoleMember, Status: identity.UserActive, CreatedAt: now, UpdatedAt: now}
		if err := ids.CreateUser(ctx, u, ""); err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	return CalendarStore{DB: db}, users
}

func TestCalendarStoreDefaultAndScope(t *testing.T) {
	t.Parallel()
	s, users := calendarStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	a := calendar.Calendar{ID: "a", OrgID: "one", UserID: users[0].ID, Name: "Calendar", Timezone: "UTC", IsDefault: true, CreatedAt: now, UpdatedAt: now}
	got, err := s.EnsureDefaultCalendar(ctx, a)
	if err != nil || got.ID != "a" {
		t.Fatalf("first ensure: %+v %v", got, err)
	}
	b := a
	b.ID = "b"
	if got, err = s.EnsureDefaultCalendar(ctx, b); err != nil || got.ID != "a" {
		t.Fatalf("second ensure made another default: %+v %v", got, err)
	}
	if _, err := s.Calendar(ctx, "one", users[1].ID, "a"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("another user's calendar: %v", err)
	}
	if _, err := s.Calendar(ctx, "two", users[0].ID, "a"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("another organisation: %v", err)
	}
	refs, err := s.UsersByEmail(ctx, "one", []string{"ann@one.test", "CY@two.test", "BEN@ONE.TEST"})
	if err != nil || len(refs) != 2 {
		t.Fatalf("users by e-mail: %+v %v", refs, err)
	}
}

func TestCalendarStoreWindowAndChanges(t *testing.T) {
	t.Parallel()
	s, users := calendarStore(t)
	ctx := context.Background()
	now := time.Now().UTC()
	cal, err := s.EnsureDefaultCalendar(ctx, calendar.Calendar{ID: "c", OrgID: "one", UserID: users[0].ID, Name: "Calendar", Timezone: "UTC", IsDefault: true, CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2026, 1, d, 9, 0, 0, 0, time.UTC) }
	rid := day(20)
	moved := day(2) // an override moved before the window
	series := calendar.Object{ID: "o1", CalendarID: cal.ID, OrgID: "one", UserID: users[0].ID, UID: "series", Name: "series.ics", ICS: "x", ETag: `"1"`,
		CreatedAt: now, UpdatedAt: now, Components: []calendar.Component{
			{Title: "Daily", Start: day(1), End: day(1).Add(time.Hour), RRule: "FREQ=DAILY", Busy: true, RangeStart: day(1)},
			{RecurrenceID: &rid, Title: "Moved", Start: moved, End: moved.Add(time.Hour), Busy: true, RangeStart: moved, RangeEnd: ptr(moved.Add(time.Hour))},
		}}
	single := calendar.Object{ID: "o2", CalendarID: cal.ID, OrgID: "one", UserID: users[0].ID, UID: "single", Name: "single.ics", ICS: "y", ETag: `"2"`,
		CreatedAt: now, UpdatedAt: now, Components: []calendar.Component{
			{Title: "Once", Start: day(25), End: day(25).Add(time.Hour), Busy: true, RangeStart: day(25), RangeEnd: ptr(day(25).Add(time.Hour))},
		}}
	for _, o := range []*calendar.Object{&series, &single} {
		if err := s.PutObject(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if series.Seq != 1 || single.Seq != 2 {
		t.Fatalf("sequences %d %d", series.Seq, single.Seq)
	}
	// Window 18–22 January: the master (unbounded) and its override, although
	// the override now lies outside the window; not the single event.
	comps, err := s.Window(ctx, []string{cal.ID}, day(18), day(22))
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 2 || comps[0].UID != "series" || comps[1].RecurrenceID == nil || !comps[1].RecurrenceID.Equal(rid) {
		t.Fatalf("window: %+v", comps)
	}
	busy, err := s.BusyWindow(ctx, []string{users[0].ID, users[1].ID}, day(24), day(26))
	if err != nil || len(busy[users[0].ID]) != 3 || len(busy[users[1].ID]) != 0 {
		t.Fatalf("busy window: %+v %v", busy, err)
	}
	// Changes: an update and a delete leave a change and a tombstone.
	single.ICS, single.ETag = "z", `"3"`
	if err := s.PutObject(ctx, &single); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteObject(ctx, series); err != nil {
		t.Fatal(err)
	}
	ch, seq, _, err := s.Changes(ctx, cal.ID, 2)
	if err != nil || seq != 4 || len(ch) != 2 || ch[0].Name != "single.ics" || ch[0].ETag != `"3"` || !ch[1].Deleted || ch[1].UID != "series" {
		t.Fatalf("changes: %+v %d %v", ch, seq, err)
	}
	if comps, _ = s.Window(ctx, []string{cal.ID}, day(18), day(22)); len(comps) != 0 {
		t.Fatalf("components of a deleted object: %+v", comps)
	}
	// Re-creating the name clears its tombstone.
	series.ID = "o3"
	if err := s.PutObject(ctx, &series); err != nil {
		t.Fatal(err)
	}
	if ch, _, _, _ = s.Changes(ctx, cal.ID, 4); len(ch) != 1 || ch[0].Deleted {
		t.Fatalf("after re-create: %+v", ch)
	}
	if err := s.DeleteObject(ctx, calendar.Object{ID: "missing", CalendarID: cal.ID}); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("delete missing: %v", err)
	}
	// A second object with the same UID conflicts.
	dup := single
	dup.ID, dup.Name = "o4", "other.ics"
	if err := s.PutObject(ctx, &dup); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("duplicate uid: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
