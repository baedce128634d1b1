package calendar

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/teambition/rrule-go"
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

var ruleCache sync.Map // key → *rrule.RRule, parsed rules are read-only

const ruleCacheMax = 20000

var ruleCacheLen int64
var ruleCacheMu sync.Mutex

type ruleKey struct {
	value string
	loc   *time.Location
	at    int64
}

// cachedRule parses a rule once per (value, dtstart).
func cachedRule(value string, dtstart time.Time) (*rrule.RRule, error) {
	key := ruleKey{value: value, loc: dtstart.Location(), at: dtstart.Unix()}
	if v, ok := ruleCache.Load(key); ok {
		return v.(*rrule.RRule), nil
	}
	r, err := parseRule(value, dtstart)
	if err != nil {
		return nil, err
	}
	ruleCacheMu.Lock()
	if ruleCacheLen >= ruleCacheMax {
		ruleCache.Clear()
		ruleCacheLen = 0
	}
	ruleCacheLen++
	ruleCacheMu.Unlock()
	ruleCache.Store(key, r)
	return r, nil
}

// set builds the recurrence set of a master: RRULE, RDATE and EXDATE, plus the
// original starts of its overrides as further exclusions when skip is given.
//
// from, when not zero, lets a long DAILY or WEEKLY rule without COUNT start its
// walk shortly before from instead of at DTSTART: it is moved by whole periods
// (wall clock kept in its zone, so the pattern and DST behaviour are
// unchanged), and only occurrences before from are skipped by that.
func (c *Component) set(skip []time.Time, from time.Time) (*rrule.Set, error) {
	s := &rrule.Set{}
	s.DTStart(c.Start)
	if c.RRule != "" {
		r, err := c.rule(from)
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

// rule returns the master's parsed rule, fast-forwarded towards from.
func (c *Component) rule(from time.Time) (*rrule.RRule, error) {
	start := c.Start
	if period := ffPeriod(c.RRule); period > 0 && !from.IsZero() {
		start = fastForward(c.Start, from, period)
	}
	r, err := cachedRule(c.RRule, start)
	if err != nil {
		return nil, fmt.Errorf("rrule: %w", err)
	}
	return r, nil
}

// ffPeriod returns the period in days by which a rule can be moved forward
// without changing its occurrences: DAILY or WEEKLY rules without COUNT,
// BYWEEKNO or BYYEARDAY (their other parts are absolute or repeat each period);
// 0 for any other rule.
func ffPeriod(value string) int {
	period, interval := 0, 1
	for _, part := range strings.Split(value, ";") {
		name, v, _ := strings.Cut(part, "=")
		switch strings.ToUpper(name) {
		case "FREQ":
			switch strings.ToUpper(v) {
			case "DAILY":
				period = 1
			case "WEEKLY":
				period = 7
			default:
				return 0
			}
		case "INTERVAL":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0
			}
			interval = n
		case "COUNT", "BYWEEKNO", "BYYEARDAY":
			return 0
		}
	}
	return period * interval
}

// fastForward returns DTSTART moved forward by whole periods (wall clock kept
// in its zone), staying more than a period before from.
func fastForward(start, from time.Time, period int) time.Time {
	days := int(from.Sub(start).Hours() / 24)
	for k := days/period - 1; k > 0; k-- { // a date where the wall-clock time does not exist would change the rule's hour
		t := start.AddDate(0, 0, k*period)
		if t.Hour() == start.Hour() && t.Minute() == start.Minute() && t.Second() == start.Second() {
			return t
		}
	}
	return start
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
// unbounded rule is never expanded past to.
func (c *Component) Occurrences(from, to time.Time, skip []time.Time) ([]time.Time, error) {
	if c.RRule == "" && len(c.RDates) == 0 {
		if overlaps(c.Start, c.End, from, to) && !contains(c.ExDates, c.Start) && !contains(skip, c.Start) {
			return []time.Time{c.Start}, nil
		}
		return nil, nil
	}
	dur := c.duration()
	walkFrom := from.Add(-dur - 24*time.Hour)
	if c.AllDay {
		dur += time.Hour // a day can be 25 hours long
	}
	var starts []time.Time
	if c.RRule != "" && len(c.RDates) == 0 && len(c.ExDates) == 0 && len(skip) == 0 {
		r, err := c.rule(walkFrom) // the rule alone: no set to merge
		if err != nil {
			return nil, err
		}
		starts = r.Between(from.Add(-dur), to, true)
	} else {
		s, err := c.set(skip, walkFrom)
		if err != nil {
			return nil, err
		}
		starts = s.Between(from.Add(-dur), to, true)
	}
	var out []time.Time
	for _, t := range starts {
		if !t.Before(to) {
			continue
		}
		if overlaps(t, c.occurrenceEnd(t), from, to) {
			out = append(out, t)
		}
	}
	return out, nil
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
