package calendar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/teambition/rrule-go"

	"atrium/app"
)

// maxCountScan bounds how many occurrences a COUNT rule is walked to find its
// last one when it is written; longer rules are stored as unbounded (they are
// still cut at the COUNT when expanded).
const maxCountScan = 50000

// parseRule parses an RRULE value for a series starting at dtstart (in the
// event's time zone, which the expansion keeps: wall-clock times survive DST).
func parseRule(value string, dtstart time.Time) (*rrule.RRule, error) {
	value = strings.TrimPrefix(strings.TrimSpace(value), "RRULE:")
	if value == "" {
		return nil, errors.New("empty rule")
	}
	if strings.ContainsAny(value, "\r\n") {
		return nil, errors.New("a rule is one line without DTSTART")
	}
	opt, err := rrule.StrToROptionInLocation(value, dtstart.Location())
	if err != nil {
		return nil, err
	}
	opt.Dtstart = dtstart
	return rrule.NewRRule(*opt)
}

// MinRuleSpacing is the shortest time a rule may put between two
// occurrences, as written: FREQ=SECONDLY, and BYSECOND with more than one
// value, are refused at every door (REST, CalDAV PUT, import).
const MinRuleSpacing = time.Minute

// checkRule refuses a rule whose occurrences can be less than a minute apart,
// or whose COUNT is over maxCountScan; the message names what is accepted.
// Rules stored before this check are still expanded (within the budget).
func checkRule(value string) error {
	_, parts := ruleParts(value)
	switch {
	case strings.EqualFold(parts["FREQ"], "SECONDLY"):
		return errors.New("FREQ=SECONDLY is not accepted: occurrences must be at least a minute apart (MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY)")
	case strings.Contains(parts["BYSECOND"], ","):
		return fmt.Errorf("BYSECOND=%s is not accepted: occurrences must be at least a minute apart (one BYSECOND value at most)", parts["BYSECOND"])
	}
	if v, ok := parts["COUNT"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n > maxCountScan {
			return fmt.Errorf("COUNT=%d is not accepted: at most %d occurrences (or use UNTIL)", n, maxCountScan)
		}
	}
	if parts["BYMONTH"] != "" && parts["BYMONTHDAY"] != "" && !monthDayPossible(parts["BYMONTH"], parts["BYMONTHDAY"]) {
		// rrule-go would search every year up to 9999 for an occurrence, for
		// every request that reads the event.
		return fmt.Errorf("BYMONTH=%s with BYMONTHDAY=%s never happens: no such day in those months", parts["BYMONTH"], parts["BYMONTHDAY"])
	}
	return nil
}

// monthDayPossible reports whether some month of BYMONTH has some day of
// BYMONTHDAY (February counted with 29 days). Values that do not parse are
// left to the rule parser.
func monthDayPossible(months, days string) bool {
	length := [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for _, m := range strings.Split(months, ",") {
		mi, err := strconv.Atoi(strings.TrimSpace(m))
		if err != nil || mi < 1 || mi > 12 {
			return true
		}
		for _, d := range strings.Split(days, ",") {
			di, err := strconv.Atoi(strings.TrimSpace(d))
			if err != nil {
				return true
			}
			if di < 0 {
				di = -di
			}
			if di >= 1 && di <= length[mi] {
				return true
			}
		}
	}
	return false
}

// RuleRefused reports whether err refuses an event for its RRULE (see
// checkRule); the CalDAV door answers it with CALDAV:valid-calendar-data.
func RuleRefused(err error) bool { return refused(err, "rrule") }

// RangeRefused reports whether err refuses a CalDAV time-range for its span
// (see ObjectsInRange); the door answers it with CALDAV:supported-filter.
func RangeRefused(err error) bool { return refused(err, "time-range") }

// ComponentRefused reports whether err refuses an object for its kind (an
// event in a calendar of tasks, a task in one of events, a journal) or a
// calendar for the kinds asked of it; the CalDAV door answers it with
// CALDAV:supported-calendar-component.
func ComponentRefused(err error) bool { return refused(err, "component") }

func componentRefused(msg string) error {
	return &app.Error{Code: app.EValidation, Message: msg + ".", Fields: []app.FieldError{{Location: "component", Message: msg}}}
}

// refused reports whether err is an app.Error naming the field location.
func refused(err error, location string) bool {
	var ae *app.Error
	if !errors.As(err, &ae) {
		return false
	}
	for _, f := range ae.Fields {
		if f.Location == location {
			return true
		}
	}
	return false
}

// ruleCacheMax bounds each cache of rules: past it, the cache starts over.
const ruleCacheMax = 20000

// ruleCache holds parsed rules (read-only once parsed); countCache the last
// occurrence of COUNT rules.
var (
	ruleCache  boundedCache[*rrule.RRule]
	countCache boundedCache[time.Time]
)

// boundedCache is a concurrent map of ruleKey to V that empties itself when
// it reaches ruleCacheMax entries.
type boundedCache[V any] struct {
	m   sync.Map
	mu  sync.Mutex
	len int
}

func (c *boundedCache[V]) load(k ruleKey) (V, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (c *boundedCache[V]) store(k ruleKey, v V) {
	c.mu.Lock()
	if c.len >= ruleCacheMax {
		c.m.Clear()
		c.len = 0
	}
	c.len++
	c.mu.Unlock()
	c.m.Store(k, v)
}

type ruleKey struct {
	value string
	loc   *time.Location
	at    int64
}

// cachedRule parses a rule once per (value, dtstart).
func cachedRule(value string, dtstart time.Time) (*rrule.RRule, error) {
	key := ruleKey{value: value, loc: dtstart.Location(), at: dtstart.Unix()}
	if r, ok := ruleCache.load(key); ok {
		return r, nil
	}
	r, err := parseRule(value, dtstart)
	if err != nil {
		return nil, err
	}
	ruleCache.store(key, r)
	return r, nil
}

// set builds the recurrence set of a master: RRULE, RDATE and EXDATE, plus the
// original starts of its overrides as further exclusions when skip is given.
//
// from, when not zero, lets the rule start its walk shortly before from
// instead of at DTSTART (see forward); only occurrences before from are
// skipped by that.
func (c *Component) set(b *budget, skip []time.Time, from time.Time) (*rrule.Set, error) {
	s := &rrule.Set{}
	s.DTStart(c.Start)
	if c.RRule != "" {
		r, err := c.rule(b, from)
		if err != nil {
			return nil, err
		}
		s.RRule(r) // after DTStart: the shared rule is never modified
	} else {
		s.RDate(c.Start)
	}
	for _, t := range c.RDates {
		s.RDate(t.In(c.Start.Location()))
	}
	for _, t := range c.ExDates {
		s.ExDate(t.In(c.Start.Location()))
	}
	for _, t := range skip {
		s.ExDate(t.In(c.Start.Location()))
	}
	return s, nil
}

// rule returns the master's parsed rule, fast-forwarded towards from (see
// forward); b, when not nil, is charged for the walk a COUNT rule needs.
func (c *Component) rule(b *budget, from time.Time) (*rrule.RRule, error) {
	value, start := c.RRule, c.Start
	if !from.IsZero() {
		var err error
		if value, start, err = forward(b, c.RRule, c.Start, from); err != nil {
			return nil, err
		}
	}
	r, err := cachedRule(value, start)
	if err != nil {
		return nil, fmt.Errorf("rrule: %w", err)
	}
	return r, nil
}

// ruleParts splits an RRULE value into its parts, names upper-cased.
func ruleParts(value string) (names []string, values map[string]string) {
	values = map[string]string{}
	for _, part := range strings.Split(strings.TrimPrefix(strings.TrimSpace(value), "RRULE:"), ";") {
		name, v, _ := strings.Cut(part, "=")
		name = strings.ToUpper(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		names = append(names, name)
		values[name] = strings.TrimSpace(v)
	}
	return names, values
}

// forward returns a rule and a DTSTART that give the same occurrences as
// value and start from shortly before from on, but whose walk begins there
// instead of at DTSTART: the cost of an expansion is then that of the
// occurrences near the window, not of the time since DTSTART.
//
//   - A COUNT rule (COUNT at most maxCountScan) becomes the same rule with
//     UNTIL at its last occurrence: COUNT=n and UNTIL=<n-th occurrence> give
//     the same occurrences. That walk from DTSTART is done once per rule and
//     start (cached), and stops when b's context is done.
//   - A SECONDLY, MINUTELY, HOURLY, DAILY or WEEKLY rule has a fixed period in
//     wall-clock time (INTERVAL seconds, minutes, hours, days or weeks): its
//     DTSTART moves forward by whole periods, so the grid its BY parts filter
//     stays the same.
//   - A MONTHLY or YEARLY rule starts at from itself (see forwardCalendar),
//     after the parts rrule-go would take from DTSTART (BYMONTHDAY, BYMONTH
//     for YEARLY, BYHOUR, BYMINUTE, BYSECOND) are written out.
//
// The new DTSTART stays more than a period before from in wall-clock time,
// with room for a change of UTC offset near from (see wallSlack), and is never
// a wall-clock time that does not exist in its zone: the occurrences it skips
// all start before from. Rules with BYWEEKNO, BYYEARDAY or
// BYEASTER, and COUNT rules longer than maxCountScan, are walked from DTSTART
// (their walk is still bounded by the budget).
func forward(b *budget, value string, start, from time.Time) (string, time.Time, error) {
	names, parts := ruleParts(value)
	for _, n := range []string{"BYWEEKNO", "BYYEARDAY", "BYEASTER"} {
		if _, ok := parts[n]; ok {
			return value, start, nil
		}
	}
	if c, ok := parts["COUNT"]; ok {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > maxCountScan {
			return value, start, nil
		}
		last, err := countUntil(b, value, start)
		if err != nil {
			return value, start, err
		}
		if last.IsZero() {
			return value, start, nil
		}
		kept := ruleWithout(value, "COUNT", "UNTIL")
		value = strings.Join(append(kept, "UNTIL="+last.UTC().Format(icalUTC)), ";")
		names, parts = ruleParts(value)
	}
	interval := int64(1)
	if v, ok := parts["INTERVAL"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return value, start, nil
		}
		interval = int64(n)
	}
	loc := start.Location()
	from = from.In(loc)
	var unit int64 // seconds of a fixed period
	switch parts["FREQ"] {
	case "SECONDLY":
		unit = 1
	case "MINUTELY":
		unit = 60
	case "HOURLY":
		unit = 3600
	case "DAILY":
		unit = 86400
	case "WEEKLY":
		unit = 7 * 86400
	case "MONTHLY", "YEARLY":
		t, ok := forwardCalendar(start, from, parts["FREQ"] == "YEARLY", interval)
		if !ok {
			return value, start, nil
		}
		// What rrule-go would take from DTSTART, written out: the new DTSTART
		// is any time in its period.
		implied := []struct {
			name string
			v    int
			when bool
		}{
			{"BYMONTHDAY", start.Day(), !has(parts, "BYMONTHDAY") && !has(parts, "BYDAY")},
			{"BYMONTH", int(start.Month()), parts["FREQ"] == "YEARLY" && !has(parts, "BYMONTH") && !has(parts, "BYMONTHDAY") && !has(parts, "BYDAY")},
			{"BYHOUR", start.Hour(), !has(parts, "BYHOUR")},
			{"BYMINUTE", start.Minute(), !has(parts, "BYMINUTE")},
			{"BYSECOND", start.Second(), !has(parts, "BYSECOND")},
		}
		for _, p := range implied {
			if p.when {
				names = append(names, p.name)
				parts[p.name] = strconv.Itoa(p.v)
			}
		}
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = n + "=" + parts[n]
		}
		return strings.Join(out, ";"), t, nil
	default:
		return value, start, nil
	}
	return value, forwardWall(start, from, unit*interval), nil
}

// wallSeconds is t's wall-clock time in its zone, counted in seconds as if it
// were UTC: rrule-go walks wall-clock fields, not elapsed time.
func wallSeconds(t time.Time) int64 {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d, h, mi, s, 0, time.UTC).Unix()
}

// atWall is the time of wall-clock seconds w in loc, and whether that
// wall-clock time exists there (not in a DST gap).
func atWall(w int64, loc *time.Location) (time.Time, bool) {
	u := time.Unix(w, 0).UTC()
	t := time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, loc)
	return t, wallSeconds(t) == w
}

// wallSlack is how far, in seconds, the wall-clock time of an instant at or
// after from can fall behind from's own: a minute where the zone keeps its
// offset for a day either side, else the offset changes around from and an
// hour more.
func wallSlack(from time.Time) int64 {
	day := 26 * time.Hour
	zs, ze := from.ZoneBounds()
	if (zs.IsZero() || !zs.After(from.Add(-day))) && (ze.IsZero() || !ze.Before(from.Add(day))) {
		return 60
	}
	_, before := from.Add(-day).Zone()
	_, at := from.Zone()
	_, after := from.Add(day).Zone()
	return int64(abs(before-at)+abs(at-after)) + 3600
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// forwardWall moves start forward by whole periods of period wall-clock
// seconds, staying more than a period (and the slack of from's zone) before
// from.
func forwardWall(start, from time.Time, period int64) time.Time {
	ws := wallSeconds(start)
	target := wallSeconds(from) - period - wallSlack(from)
	if period <= 0 || target <= ws {
		return start
	}
	k := (target - ws) / period
	back := max(1, 3600/period) // out of a DST gap in a few tries
	for tries := 0; k > 0 && tries < 64; tries++ {
		if t, ok := atWall(ws+k*period, start.Location()); ok {
			return t
		}
		k -= back
	}
	return start
}

func has(parts map[string]string, name string) bool { _, ok := parts[name]; return ok }

// forwardCalendar returns the DTSTART of a MONTHLY (or yearly) rule of the
// given INTERVAL moved to from: from itself when from's month (year) is one
// of the rule's periods, else the start of the rule's next period after from
// (no occurrence lies between). rrule-go builds a whole period's set whatever
// the day of DTSTART in it and drops what comes before DTSTART, so BYSETPOS
// and BYDAY=-1FR keep their meaning. ok is false when from is not after
// start's period.
func forwardCalendar(start, from time.Time, yearly bool, interval int64) (time.Time, bool) {
	index := func(t time.Time) int64 {
		if yearly {
			return int64(t.Year())
		}
		return int64(t.Year())*12 + int64(t.Month()) - 1
	}
	is, i := index(start), index(from)
	if i <= is || interval <= 0 {
		return start, false
	}
	if (i-is)%interval == 0 {
		return from.Truncate(time.Second), true
	}
	next := is + ((i-is)/interval+1)*interval
	if yearly {
		return time.Date(int(next), time.January, 1, 0, 0, 0, 0, start.Location()), true
	}
	return time.Date(int(next/12), time.Month(next%12+1), 1, 0, 0, 0, 0, start.Location()), true
}

// countUntil returns the last occurrence of a COUNT rule (zero when it has
// none), walking it from DTSTART once per rule and start.
func countUntil(b *budget, value string, start time.Time) (time.Time, error) {
	key := ruleKey{value: value, loc: start.Location(), at: start.Unix()}
	if t, ok := countCache.load(key); ok {
		return t, nil
	}
	r, err := cachedRule(value, start)
	if err != nil {
		return time.Time{}, fmt.Errorf("rrule: %w", err)
	}
	var last time.Time
	next := r.Iterator()
	n := 0
	for t, ok := next(); ok && n <= maxCountScan; t, ok = next() { // COUNT is at most maxCountScan
		if n++; n%256 == 0 {
			if err := b.done(); err != nil {
				return time.Time{}, err
			}
		}
		last = t
	}
	countCache.store(key, last)
	return last, nil
}

// duration of one occurrence.
func (c *Component) duration() time.Duration { return c.End.Sub(c.Start) }

// occurrenceEnd is the end of an occurrence starting at t; all-day lengths are
// calendar days.
func (c *Component) occurrenceEnd(t time.Time) time.Time {
	if c.AllDay {
		d := c.duration()
		if d%(24*time.Hour) == 0 {
			return t.AddDate(0, 0, int(d/(24*time.Hour)))
		}
	}
	return t.Add(c.duration())
}

// Occurrences returns the starts of a master's occurrences that overlap
// [from, to), skipping the original starts in skip (its overrides). An
// unbounded rule is never expanded past to. It is bounded as one request's
// expansion is (see budget).
func (c *Component) Occurrences(from, to time.Time, skip []time.Time) ([]time.Time, error) {
	return c.occurrences(newBudget(context.Background()), from, to, skip, false)
}

// occurrences is Occurrences charged to b; first stops at the first
// occurrence found (does the master meet the range at all?).
func (c *Component) occurrences(b *budget, from, to time.Time, skip []time.Time, first bool) ([]time.Time, error) {
	if c.RRule == "" && len(c.RDates) == 0 {
		if overlaps(c.Start, c.End, from, to) && !contains(c.ExDates, c.Start) && !contains(skip, c.Start) {
			return []time.Time{c.Start}, b.emit(c.UID, 1, first)
		}
		return nil, nil
	}
	dur := c.duration()
	if c.AllDay {
		dur += time.Hour // a day can be 25 hours long
	}
	lo := from.Add(-dur) // the earliest start that can overlap the range
	var next func() (time.Time, bool)
	if c.RRule != "" && len(c.RDates) == 0 && len(c.ExDates) == 0 && len(skip) == 0 {
		r, err := c.rule(b, lo) // the rule alone: no set to merge
		if err != nil {
			return nil, err
		}
		next = r.Iterator()
	} else {
		s, err := c.set(b, skip, lo)
		if err != nil {
			return nil, err
		}
		next = s.Iterator()
	}
	// A wall-clock time in a DST gap comes out an hour or so later than its
	// neighbours, out of order: the walk goes on past to by the zone's slack.
	stop := to.Add(time.Duration(wallSlack(to.In(c.Start.Location()))) * time.Second)
	var out []time.Time
	for t, ok := next(); ok && t.Before(stop); t, ok = next() {
		if err := b.step(c.UID); err != nil {
			return nil, err
		}
		if !t.Before(to) || t.Before(lo) || !overlaps(t, c.occurrenceEnd(t), from, to) || slices.ContainsFunc(out[max(0, len(out)-4):], t.Equal) {
			continue
		}
		if err := b.emit(c.UID, 1, first); err != nil {
			return nil, err
		}
		out = append(out, t)
		if first {
			break
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return slices.CompactFunc(out, time.Time.Equal), nil
}

// overlaps reports whether [s, e) meets [from, to); an instant (s == e) meets it
// when it lies inside.
func overlaps(s, e, from, to time.Time) bool {
	if s.Equal(e) {
		return !s.Before(from) && s.Before(to)
	}
	return s.Before(to) && e.After(from)
}

func contains(ts []time.Time, t time.Time) bool {
	for _, v := range ts {
		if v.Equal(t) {
			return true
		}
	}
	return false
}

// bounds returns the first start and the last end of every occurrence a master
// can produce; end nil for an unbounded rule.
func (c *Component) bounds() (time.Time, *time.Time, error) {
	first, last := c.Start, c.End
	for _, t := range c.RDates {
		if t.Before(first) {
			first = t
		}
		if e := c.occurrenceEnd(t); e.After(last) {
			last = e
		}
	}
	if c.RRule == "" {
		return first, &last, nil
	}
	r, err := cachedRule(c.RRule, c.Start)
	if err != nil {
		return first, nil, fmt.Errorf("rrule: %w", err)
	}
	switch {
	case !r.OrigOptions.Until.IsZero():
		if e := c.occurrenceEnd(r.OrigOptions.Until.In(c.Start.Location())); e.After(last) {
			last = e
		}
		return first, &last, nil
	case r.OrigOptions.Count > 0 && r.OrigOptions.Count <= maxCountScan:
		next := r.Iterator()
		var lastStart time.Time
		for t, ok := next(); ok; t, ok = next() {
			lastStart = t
		}
		if e := c.occurrenceEnd(lastStart); e.After(last) {
			last = e
		}
		return first, &last, nil
	}
	return first, nil, nil
}

// ruleWithout returns an RRULE value without the given parts (COUNT, UNTIL).
func ruleWithout(value string, parts ...string) []string {
	var keep []string
	for _, p := range strings.Split(strings.TrimPrefix(value, "RRULE:"), ";") {
		name, _, _ := strings.Cut(p, "=")
		drop := false
		for _, d := range parts {
			if strings.EqualFold(name, d) {
				drop = true
			}
		}
		if !drop && p != "" {
			keep = append(keep, p)
		}
	}
	return keep
}

// ruleUntil returns value ending with the last occurrence at or before until.
func ruleUntil(value string, until time.Time, allDay bool) string {
	parts := ruleWithout(value, "COUNT", "UNTIL")
	if allDay {
		parts = append(parts, "UNTIL="+until.Format(icalDate))
	} else {
		parts = append(parts, "UNTIL="+until.UTC().Format(icalUTC))
	}
	return strings.Join(parts, ";")
}

// ruleCount returns value with COUNT=n instead of COUNT/UNTIL.
func ruleCount(value string, n int) string {
	return strings.Join(append(ruleWithout(value, "COUNT", "UNTIL"), fmt.Sprintf("COUNT=%d", n)), ";")
}
