package sqldb

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/calendar"
)

// CalendarStore implements calendar.Store.
type CalendarStore struct{ *DB }

var _ calendar.Store = CalendarStore{}

const calendarCols = `id, organization_id, user_id, name, description, color, timezone, is_default, sync_seq, created_at, updated_at, components`

func scanCalendar(sc interface{ Scan(...any) error }) (calendar.Calendar, error) {
	var c calendar.Calendar
	var def int
	var created, updated int64
	var comps string
	err := sc.Scan(&c.ID, &c.OrgID, &c.UserID, &c.Name, &c.Description, &c.Color, &c.Timezone, &def, &c.SyncSeq, &created, &updated, &comps)
	c.IsDefault, c.CreatedAt, c.UpdatedAt, c.Components = def == 1, fromMS(created), fromMS(updated), strings.Fields(comps)
	return c, err
}

// EnsureDefaultCalendar creates c as the default calendar unless the user has one.
func (s CalendarStore) EnsureDefaultCalendar(ctx context.Context, c calendar.Calendar) (calendar.Calendar, error) {
	got, err := scanCalendar(s.read(ctx).QueryRowContext(ctx, `SELECT `+calendarCols+` FROM calendars
		WHERE organization_id = ? AND user_id = ? AND is_default = 1`, c.OrgID, c.UserID))
	if err == nil {
		return got, nil
	}
	if err != sql.ErrNoRows {
		return got, mapErr(err, "calendar")
	}
	_, err = s.write(ctx).ExecContext(ctx, `INSERT INTO calendars(`+calendarCols+`) VALUES (?,?,?,?,?,?,?,1,0,?,?,?)
		ON CONFLICT DO NOTHING`, c.ID, c.OrgID, c.UserID, c.Name, c.Description, c.Color, c.Timezone, ms(c.CreatedAt), ms(c.UpdatedAt), componentsText(c))
	if err != nil {
		return c, mapErr(err, "calendar")
	}
	got, err = scanCalendar(s.write(ctx).QueryRowContext(ctx, `SELECT `+calendarCols+` FROM calendars
		WHERE organization_id = ? AND user_id = ? AND is_default = 1`, c.OrgID, c.UserID))
	return got, mapErr(err, "calendar")
}

// componentsText is the components column of a calendar: both kinds when it
// names none.
func componentsText(c calendar.Calendar) string {
	if len(c.Components) == 0 {
		return strings.Join(calendar.AllComponents, " ")
	}
	return strings.Join(c.Components, " ")
}

// CreateCalendar inserts a calendar.
func (s CalendarStore) CreateCalendar(ctx context.Context, c calendar.Calendar) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO calendars(`+calendarCols+`) VALUES (?,?,?,?,?,?,?,?,0,?,?,?)`,
		c.ID, c.OrgID, c.UserID, c.Name, c.Description, c.Color, c.Timezone, boolInt(c.IsDefault), ms(c.CreatedAt), ms(c.UpdatedAt), componentsText(c))
	return mapErr(err, "calendar")
}

// UpdateCalendar writes a calendar's editable fields.
func (s CalendarStore) UpdateCalendar(ctx context.Context, c calendar.Calendar) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE calendars SET name = ?, description = ?, color = ?, timezone = ?, updated_at = ?
		WHERE id = ? AND organization_id = ? AND user_id = ?`, c.Name, c.Description, c.Color, c.Timezone, ms(c.UpdatedAt), c.ID, c.OrgID, c.UserID)
	if err != nil {
		return mapErr(err, "calendar")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The calendar was not found.")
	}
	return nil
}

// DeleteCalendar removes a calendar; its objects, components and tombstones go
// with it (ON DELETE CASCADE).
func (s CalendarStore) DeleteCalendar(ctx context.Context, orgID, userID, id string) error {
	res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM calendars WHERE id = ? AND organization_id = ? AND user_id = ?`, id, orgID, userID)
	if err != nil {
		return mapErr(err, "calendar")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.Errorf(app.ENotFound, "The calendar was not found.")
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Calendars lists a user's calendars, the default first.
func (s CalendarStore) Calendars(ctx context.Context, orgID, userID string) ([]calendar.Calendar, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+calendarCols+` FROM calendars WHERE organization_id = ? AND user_id = ?
		ORDER BY is_default DESC, name COLLATE NOCASE, id`, orgID, userID)
	if err != nil {
		return nil, mapErr(err, "calendars")
	}
	defer rows.Close()
	out := []calendar.Calendar{}
	for rows.Next() {
		c, err := scanCalendar(rows)
		if err != nil {
			return nil, mapErr(err, "calendars")
		}
		out = append(out, c)
	}
	return out, mapErr(rows.Err(), "calendars")
}

// Calendar returns one of a user's calendars.
func (s CalendarStore) Calendar(ctx context.Context, orgID, userID, id string) (calendar.Calendar, error) {
	c, err := scanCalendar(s.read(ctx).QueryRowContext(ctx, `SELECT `+calendarCols+` FROM calendars
		WHERE organization_id = ? AND user_id = ? AND id = ?`, orgID, userID, id))
	return c, mapErr(err, "calendar")
}

const objectCols = `id, calendar_id, organization_id, user_id, uid, name, ics, etag, seq, tzids, created_at, updated_at`

func scanObject(sc interface{ Scan(...any) error }) (calendar.Object, error) {
	var o calendar.Object
	var tzids string
	var created, updated int64
	err := sc.Scan(&o.ID, &o.CalendarID, &o.OrgID, &o.UserID, &o.UID, &o.Name, &o.ICS, &o.ETag, &o.Seq, &tzids, &created, &updated)
	o.TZIDs, o.CreatedAt, o.UpdatedAt = strings.Fields(tzids), fromMS(created), fromMS(updated)
	return o, err
}

// Object returns the object of a UID.
func (s CalendarStore) Object(ctx context.Context, calendarID, uid string) (calendar.Object, error) {
	o, err := scanObject(s.read(ctx).QueryRowContext(ctx, `SELECT `+objectCols+` FROM calendar_objects
		WHERE calendar_id = ? AND uid = ?`, calendarID, uid))
	return o, mapErr(err, "event")
}

// ObjectsByUID returns the objects of uids in a calendar (those it has), in
// no order: one query for a report's matches rather than one each.
func (s CalendarStore) ObjectsByUID(ctx context.Context, calendarID string, uids []string) ([]calendar.Object, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+objectCols+` FROM calendar_objects
		WHERE calendar_id = ? AND uid IN (SELECT value FROM json_each(?))`, calendarID, jsonIDs(uids))
	if err != nil {
		return nil, mapErr(err, "events")
	}
	defer rows.Close()
	var out []calendar.Object
	for rows.Next() {
		o, err := scanObject(rows)
		if err != nil {
			return nil, mapErr(err, "events")
		}
		out = append(out, o)
	}
	return out, mapErr(rows.Err(), "events")
}

// ObjectByName returns an object by resource name.
func (s CalendarStore) ObjectByName(ctx context.Context, calendarID, name string) (calendar.Object, error) {
	o, err := scanObject(s.read(ctx).QueryRowContext(ctx, `SELECT `+objectCols+` FROM calendar_objects
		WHERE calendar_id = ? AND name = ?`, calendarID, name))
	return o, mapErr(err, "event")
}

// The statements of a write, prepared on the writer before the first
// transaction needs them (a transaction cannot prepare: it holds the writer).
const (
	qNextSeq = `UPDATE calendars SET sync_seq = sync_seq + 1, updated_at = ? WHERE id = ? RETURNING sync_seq`
	qPutObj  = `INSERT INTO calendar_objects(` + objectCols + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(id) DO UPDATE SET uid = excluded.uid, name = excluded.name, ics = excluded.ics, etag = excluded.etag,
		seq = excluded.seq, tzids = excluded.tzids, updated_at = excluded.updated_at`
	qDelComps = `DELETE FROM calendar_components WHERE object_id = ?`
	qPutComp  = `INSERT INTO calendar_components(object_id, calendar_id, user_id, uid, recurrence_id, has_overrides, title,
		location, start_ms, end_ms, all_day, timezone, rrule, rdates, exdates, busy, cancelled, range_start_ms, range_end_ms)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	qDelTomb = `DELETE FROM calendar_tombstones WHERE calendar_id = ? AND name = ?`
)

// nextSeq takes a calendar's next change sequence.
func (s CalendarStore) nextSeq(ctx context.Context, calendarID string) (int64, error) {
	var seq int64
	err := s.write(ctx).QueryRowContext(ctx, qNextSeq, ms(s.now()), calendarID).Scan(&seq)
	return seq, mapErr(err, "calendar")
}

// PutObject inserts or replaces an object and its components.
func (s CalendarStore) PutObject(ctx context.Context, o *calendar.Object) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		seq, err := s.nextSeq(ctx, o.CalendarID)
		if err != nil {
			return err
		}
		o.Seq = seq
		w := s.write(ctx)
		_, err = w.ExecContext(ctx, qPutObj, o.ID, o.CalendarID, o.OrgID, o.UserID, o.UID, o.Name, o.ICS, o.ETag, o.Seq, strings.Join(o.TZIDs, " "),
			ms(o.CreatedAt), ms(o.UpdatedAt))
		if err != nil {
			return mapErr(err, "event")
		}
		if !o.New {
			if _, err := w.ExecContext(ctx, qDelComps, o.ID); err != nil {
				return mapErr(err, "event")
			}
		}
		overrides := 0
		for _, c := range o.Components {
			if c.RecurrenceID != nil {
				overrides = 1
			}
		}
		for _, c := range o.Components {
			var rid, rend any
			if c.RecurrenceID != nil {
				rid = ms(*c.RecurrenceID)
			}
			if c.RangeEnd != nil {
				rend = ms(*c.RangeEnd)
			}
			_, err := w.ExecContext(ctx, qPutComp, o.ID, o.CalendarID, o.UserID, o.UID, rid, overrides, c.Title, c.Location,
				ms(c.Start), ms(c.End), boolInt(c.AllDay), c.Timezone, c.RRule, msList(c.RDates), msList(c.ExDates),
				boolInt(c.Busy), boolInt(c.Cancelled), ms(c.RangeStart), rend)
			if err != nil {
				return mapErr(err, "event")
			}
		}
		_, err = w.ExecContext(ctx, qDelTomb, o.CalendarID, o.Name)
		return mapErr(err, "event")
	})
}

func msList(ts []time.Time) string {
	if len(ts) == 0 {
		return ""
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strconv.FormatInt(ms(t), 10)
	}
	return strings.Join(parts, " ")
}

func parseMSList(s string) []time.Time {
	if s == "" {
		return nil
	}
	f := strings.Fields(s)
	out := make([]time.Time, 0, len(f))
	for _, v := range f {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out = append(out, fromMS(n))
		}
	}
	return out
}

// DeleteObject removes an object and leaves a tombstone.
func (s CalendarStore) DeleteObject(ctx context.Context, o calendar.Object) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		seq, err := s.nextSeq(ctx, o.CalendarID)
		if err != nil {
			return err
		}
		res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM calendar_objects WHERE id = ? AND calendar_id = ?`, o.ID, o.CalendarID)
		if err != nil {
			return mapErr(err, "event")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.Errorf(app.ENotFound, "The event was not found.")
		}
		_, err = s.write(ctx).ExecContext(ctx, `INSERT INTO calendar_tombstones(calendar_id, name, uid, seq, deleted_at) VALUES (?,?,?,?,?)
			ON CONFLICT(calendar_id, name) DO UPDATE SET uid = excluded.uid, seq = excluded.seq, deleted_at = excluded.deleted_at`,
			o.CalendarID, o.Name, o.UID, seq, ms(s.now()))
		return mapErr(err, "event")
	})
}

// Objects calls fn for every object of a calendar in name order, reading in
// pages so that no more than one page is held at a time.
func (s CalendarStore) Objects(ctx context.Context, calendarID string, fn func(calendar.Object) error) error {
	after := ""
	for {
		rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+objectCols+` FROM calendar_objects WHERE calendar_id = ? AND name > ?
			ORDER BY name LIMIT 500`, calendarID, after)
		if err != nil {
			return mapErr(err, "events")
		}
		var page []calendar.Object
		for rows.Next() {
			o, err := scanObject(rows)
			if err != nil {
				rows.Close()
				return mapErr(err, "events")
			}
			page = append(page, o)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return mapErr(err, "events")
		}
		for _, o := range page {
			if err := fn(o); err != nil {
				return err
			}
		}
		if len(page) < 500 {
			return nil
		}
		after = page[len(page)-1].Name
	}
}

// CalendarTZIDs returns the TZIDs a calendar's objects use.
func (s CalendarStore) CalendarTZIDs(ctx context.Context, calendarID string) ([]string, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT DISTINCT tzids FROM calendar_objects WHERE calendar_id = ? AND tzids != ''`, calendarID)
	if err != nil {
		return nil, mapErr(err, "events")
	}
	defer rows.Close()
	seen := map[string]bool{}
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, mapErr(err, "events")
		}
		for _, id := range strings.Fields(v) {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, mapErr(rows.Err(), "events")
}

// PruneTombstones forgets deletions recorded before before, raising each
// calendar's pruned_seq past them; it returns how many it forgot.
func (s CalendarStore) PruneTombstones(ctx context.Context, before time.Time) (int, error) {
	return pruneTombstones(ctx, s.DB, "calendar_tombstones", "calendar_id", "calendars", "id", before)
}

// Changes returns the objects written and deleted after seq.
func (s CalendarStore) Changes(ctx context.Context, calendarID string, seq int64) ([]calendar.Change, int64, int64, error) {
	var cur, pruned int64
	if err := s.read(ctx).QueryRowContext(ctx, `SELECT sync_seq, pruned_seq FROM calendars WHERE id = ?`, calendarID).Scan(&cur, &pruned); err != nil {
		return nil, 0, 0, mapErr(err, "calendar")
	}
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT name, uid, etag, seq, 0 FROM calendar_objects WHERE calendar_id = ? AND seq > ?
		UNION ALL SELECT name, uid, '', seq, 1 FROM calendar_tombstones WHERE calendar_id = ? AND seq > ? ORDER BY 4`,
		calendarID, seq, calendarID, seq)
	if err != nil {
		return nil, 0, 0, mapErr(err, "changes")
	}
	defer rows.Close()
	var out []calendar.Change
	for rows.Next() {
		var c calendar.Change
		var del int
		if err := rows.Scan(&c.Name, &c.UID, &c.ETag, &c.Seq, &del); err != nil {
			return nil, 0, 0, mapErr(err, "changes")
		}
		c.Deleted = del == 1
		out = append(out, c)
	}
	return out, cur, pruned, mapErr(rows.Err(), "changes")
}

// componentCols packs the flags and the recurrence columns: fewer columns per
// row is what a window query over thousands of rows spends its time on.
const componentCols = `c.object_id, c.uid, c.calendar_id, c.recurrence_id,
	c.all_day + 2*c.busy + 4*c.cancelled + 8*c.has_overrides, c.title, c.location, c.start_ms, c.end_ms, c.timezone,
	CASE WHEN c.rrule = '' AND c.rdates = '' AND c.exdates = '' THEN '' ELSE c.rrule || '|' || c.rdates || '|' || c.exdates END`

// scanComponents reads components and the ids of the objects whose master has
// overrides.
func scanComponents(rows *sql.Rows) ([]calendar.Component, []string, error) {
	defer rows.Close()
	var out []calendar.Component
	var withOverrides []string
	for rows.Next() {
		var c calendar.Component
		var rid sql.NullInt64
		var start, end int64
		var flags int
		var recur string
		if err := rows.Scan(&c.ObjectID, &c.UID, &c.CalendarID, &rid, &flags, &c.Title, &c.Location, &start, &end,
			&c.Timezone, &recur); err != nil {
			return nil, nil, mapErr(err, "events")
		}
		c.RecurrenceID = fromMSPtr(rid)
		c.Start, c.End = fromMS(start), fromMS(end)
		c.AllDay, c.Busy, c.Cancelled = flags&1 != 0, flags&2 != 0, flags&4 != 0
		if recur != "" {
			parts := strings.SplitN(recur, "|", 3)
			c.RRule, c.RDates, c.ExDates = parts[0], parseMSList(parts[1]), parseMSList(parts[2])
		}
		if flags&8 != 0 && !rid.Valid && (c.RRule != "" || len(c.RDates) > 0) {
			withOverrides = append(withOverrides, c.ObjectID)
		}
		out = append(out, c)
	}
	return out, withOverrides, mapErr(rows.Err(), "events")
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// shortSpanMS is the longest range of a component with long_span = 0 (migration 00013).
const shortSpanMS = 7 * 24 * 60 * 60 * 1000

// window selects the components of the calendars (or users) in ids whose
// range overlaps [start, end), then every override of the recurring masters
// among them, in range or not: their original starts are excluded from the
// masters' expansion.
func (s CalendarStore) window(ctx context.Context, scopeCol string, ids []string, start, end time.Time) ([]calendar.Component, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// Short components (long_span = 0: a range of at most a week) overlapping the
	// window start at most a week before it, so their start is bounded on both
	// sides; the long ones (series, long events) are tested by start only.
	in := `c.` + scopeCol + ` IN (` + placeholders(len(ids)) + `)`
	args := append(anySlice(ids), ms(start)-shortSpanMS, ms(end), ms(start))
	args = append(append(args, anySlice(ids)...), ms(end), ms(start))
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+componentCols+` FROM calendar_components c
		WHERE `+in+` AND c.long_span = 0 AND c.range_start_ms >= ? AND c.range_start_ms < ? AND c.range_end_ms > ?
		UNION ALL
		SELECT `+componentCols+` FROM calendar_components c
		WHERE `+in+` AND c.long_span = 1 AND c.range_start_ms < ? AND (c.range_end_ms IS NULL OR c.range_end_ms > ?)`, args...)
	if err != nil {
		return nil, mapErr(err, "events")
	}
	comps, masters, err := scanComponents(rows)
	if err != nil || len(masters) == 0 {
		return comps, err
	}
	have := map[string]map[int64]bool{}
	for _, c := range comps {
		if c.RecurrenceID != nil {
			if have[c.ObjectID] == nil {
				have[c.ObjectID] = map[int64]bool{}
			}
			have[c.ObjectID][ms(*c.RecurrenceID)] = true
		}
	}
	for len(masters) > 0 {
		n := min(len(masters), 500)
		rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+componentCols+` FROM calendar_components c
			WHERE c.object_id IN (`+placeholders(n)+`) AND c.recurrence_id IS NOT NULL`, anySlice(masters[:n])...)
		if err != nil {
			return nil, mapErr(err, "events")
		}
		more, _, err := scanComponents(rows)
		if err != nil {
			return nil, err
		}
		for _, c := range more {
			if !have[c.ObjectID][ms(*c.RecurrenceID)] {
				comps = append(comps, c)
			}
		}
		masters = masters[n:]
	}
	return comps, nil
}

// Window returns the components of calendars overlapping [start, end).
func (s CalendarStore) Window(ctx context.Context, calendarIDs []string, start, end time.Time) ([]calendar.Component, error) {
	return s.window(ctx, "calendar_id", calendarIDs, start, end)
}

// BusyWindow returns the busy components of users' calendars by user.
func (s CalendarStore) BusyWindow(ctx context.Context, userIDs []string, start, end time.Time) (map[string][]calendar.Component, error) {
	comps, err := s.window(ctx, "user_id", userIDs, start, end)
	if err != nil {
		return nil, err
	}
	// user of each object: components carry the calendar; map calendars to users.
	owner := map[string]string{}
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT id, user_id FROM calendars WHERE user_id IN (`+placeholders(len(userIDs))+`)`, anySlice(userIDs)...)
	if err != nil {
		return nil, mapErr(err, "calendars")
	}
	defer rows.Close()
	for rows.Next() {
		var id, uid string
		if err := rows.Scan(&id, &uid); err != nil {
			return nil, mapErr(err, "calendars")
		}
		owner[id] = uid
	}
	out := map[string][]calendar.Component{}
	for _, c := range comps {
		if !c.Busy && c.RecurrenceID == nil {
			continue
		}
		if !c.Busy { // a free override: keep it so its occurrence is skipped, but not busy
			c.Cancelled = true
		}
		out[owner[c.CalendarID]] = append(out[owner[c.CalendarID]], c)
	}
	return out, mapErr(rows.Err(), "calendars")
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// UsersByEmail returns the organisation's users with these addresses.
func (s CalendarStore) UsersByEmail(ctx context.Context, orgID string, emails []string) ([]calendar.UserRef, error) {
	if len(emails) == 0 {
		return nil, nil
	}
	args := []any{orgID}
	for _, e := range emails {
		args = append(args, strings.ToLower(strings.TrimSpace(e)))
	}
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT id, email FROM users WHERE organization_id = ? AND email_key IN (`+
		placeholders(len(emails))+`)`, args...)
	if err != nil {
		return nil, mapErr(err, "users")
	}
	defer rows.Close()
	var out []calendar.UserRef
	for rows.Next() {
		var u calendar.UserRef
		if err := rows.Scan(&u.ID, &u.Email); err != nil {
			return nil, mapErr(err, "users")
		}
		out = append(out, u)
	}
	return out, mapErr(rows.Err(), "users")
}
