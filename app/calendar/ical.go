package calendar

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-ical"
)

// ProdID names Atrium in the iCalendar it writes.
const ProdID = "-//Atrium//Calendar 1.0//EN"

const (
	icalDate     = "20060102"
	icalDateTime = "20060102T150405"
	icalUTC      = "20060102T150405Z"
)

// windowsZones maps the Windows time zone names Outlook and Exchange write as
// TZID to IANA names.
var windowsZones = map[string]string{
	"Eastern Standard Time": "America/New_York", "Central Standard Time": "America/Chicago",
	"Mountain Standard Time": "America/Denver", "US Mountain Standard Time": "America/Phoenix",
	"Pacific Standard Time": "America/Los_Angeles", "Alaskan Standard Time": "America/Anchorage",
	"Hawaiian Standard Time": "Pacific/Honolulu", "Atlantic Standard Time": "America/Halifax",
	"GMT Standard Time": "Europe/London", "Greenwich Standard Time": "Atlantic/Reykjavik",
	"W. Europe Standard Time": "Europe/Berlin", "Romance Standard Time": "Europe/Paris",
	"Central Europe Standard Time": "Europe/Budapest", "Central European Standard Time": "Europe/Warsaw",
	"E. Europe Standard Time": "Europe/Chisinau", "FLE Standard Time": "Europe/Kiev",
	"GTB Standard Time": "Europe/Bucharest", "Russian Standard Time": "Europe/Moscow",
	"India Standard Time": "Asia/Kolkata", "China Standard Time": "Asia/Shanghai",
	"Tokyo Standard Time": "Asia/Tokyo", "Korea Standard Time": "Asia/Seoul",
	"Singapore Standard Time": "Asia/Singapore", "AUS Eastern Standard Time": "Australia/Sydney",
	"E. Australia Standard Time": "Australia/Brisbane", "New Zealand Standard Time": "Pacific/Auckland",
	"SA Pacific Standard Time": "America/Bogota", "E. South America Standard Time": "America/Sao_Paulo",
	"Arabian Standard Time": "Asia/Dubai", "Israel Standard Time": "Asia/Jerusalem",
	"South Africa Standard Time": "Africa/Johannesburg", "UTC": "UTC", "Coordinated Universal Time": "UTC",
}

var tzCache sync.Map // TZID → *time.Location (nil: unknown)

// resolveTZ maps a TZID to a location: an IANA name, an IANA name behind a
// vendor prefix (/mozilla.org/20050126_1/Europe/Paris), or a Windows name. ok is
// false for an unknown TZID.
func resolveTZ(tzid string) (loc *time.Location, ok bool) {
	if tzid == "" {
		return nil, false
	}
	if v, hit := tzCache.Load(tzid); hit {
		loc, _ = v.(*time.Location)
		return loc, loc != nil
	}
	defer func() { tzCache.Store(tzid, loc) }()
	name := strings.Trim(tzid, `"`)
	if l, err := time.LoadLocation(name); err == nil && name != "Local" {
		return l, true
	}
	if iana, hit := windowsZones[name]; hit {
		l, err := time.LoadLocation(iana)
		return l, err == nil
	}
	// Vendor prefixes: try the last two, then the last three path segments.
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for n := 2; n <= 3 && n <= len(parts); n++ {
		if l, err := time.LoadLocation(strings.Join(parts[len(parts)-n:], "/")); err == nil {
			return l, true
		}
	}
	return nil, false
}

// loadLocation resolves a time zone given by a client (IANA names only).
func loadLocation(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return nil, errors.New("unknown time zone")
	}
	return time.LoadLocation(name)
}

// tzName is the TZID written for a location.
func tzName(loc *time.Location) string {
	if loc == nil || loc == time.UTC {
		return "UTC"
	}
	return loc.String()
}

// timeValue is one parsed DATE or DATE-TIME value.
type timeValue struct {
	t      time.Time
	allDay bool
	tzid   string // "" for UTC and dates
	note   string // what lenient parsing repaired
}

// parseTimeValue parses one value with the parameters of its property. Dates
// are midnight UTC; floating date-times are read in def.
func parseTimeValue(value string, params ical.Params, def *time.Location, learned map[string]*time.Location) (timeValue, error) {
	value = strings.TrimSpace(value)
	if i := strings.IndexByte(value, '/'); i >= 0 { // PERIOD: keep the start
		value = value[:i]
	}
	if params.Get(ical.ParamValue) == "DATE" || len(value) == len(icalDate) {
		t, err := time.ParseInLocation(icalDate, value, time.UTC)
		if err != nil {
			return timeValue{}, fmt.Errorf("bad date %q", value)
		}
		return timeValue{t: t, allDay: true}, nil
	}
	if strings.HasSuffix(value, "Z") || strings.HasSuffix(value, "z") {
		t, err := time.ParseInLocation(icalUTC, strings.ToUpper(value), time.UTC)
		if err != nil {
			return timeValue{}, fmt.Errorf("bad date-time %q", value)
		}
		return timeValue{t: t}, nil
	}
	loc, tzid, note := def, tzName(def), ""
	if id := params.Get(ical.ParamTimezoneID); id != "" {
		if l, ok := learned[id]; ok { // a VTIMEZONE of this resource defined it
			loc, tzid = l, l.String()
			if l.String() == id { // a fixed offset: kept as UTC instants
				tzid = ""
			}
		} else if l, ok := resolveTZ(id); ok {
			loc, tzid = l, l.String()
			if tzid != id {
				note = fmt.Sprintf("TZID %q read as %s", id, tzid)
			}
		} else {
			note = fmt.Sprintf("unknown TZID %q read as %s", id, tzid)
		}
	}
	t, err := time.ParseInLocation(icalDateTime, value, loc)
	if err != nil {
		return timeValue{}, fmt.Errorf("bad date-time %q", value)
	}
	if tzid == "UTC" {
		tzid = ""
	}
	return timeValue{t: t, tzid: tzid, note: note}, nil
}

// parseTimeList parses every value of every property named name (EXDATE, RDATE).
func parseTimeList(comp *ical.Component, name string, def *time.Location, learned map[string]*time.Location) ([]time.Time, []string, error) {
	var out []time.Time
	var notes []string
	for _, p := range comp.Props.Values(name) {
		for _, v := range strings.Split(p.Value, ",") {
			if strings.TrimSpace(v) == "" {
				continue
			}
			tv, err := parseTimeValue(v, p.Params, def, learned)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			if tv.note != "" {
				notes = append(notes, tv.note)
			}
			out = append(out, tv.t)
		}
	}
	return out, notes, nil
}

// vevent is a parsed VEVENT.
type vevent struct {
	comp         *ical.Component
	uid          string
	recurrenceID *time.Time
	start, end   time.Time
	allDay       bool
	tzid         string // "" for UTC and all-day
	loc          *time.Location
	rrule        string
	rdates       []time.Time
	exdates      []time.Time
	title        string
	location     string
	description  string
	status       string
	transparent  bool
	notes        []string
}

// tzidOf is the TZID of a VTIMEZONE (go-ical's Text would cut it at a comma).
func tzidOf(c *ical.Component) string {
	p := c.Props.Get(ical.PropTimezoneID)
	if p == nil {
		return ""
	}
	return strings.NewReplacer(`\,`, ",", `\;`, ";", `\\`, `\`).Replace(p.Value)
}

func text(comp *ical.Component, name string) string {
	p := comp.Props.Get(name)
	if p == nil {
		return ""
	}
	s, err := p.Text()
	if err != nil {
		return p.Value
	}
	return s
}

// parseVEvent reads the fields the model holds from a VEVENT.
func parseVEvent(comp *ical.Component, def *time.Location, learned map[string]*time.Location) (vevent, error) {
	ev := vevent{comp: comp, uid: strings.TrimSpace(text(comp, ical.PropUID))}
	dtstart := comp.Props.Get(ical.PropDateTimeStart)
	if dtstart == nil {
		return ev, errors.New("VEVENT has no DTSTART")
	}
	st, err := parseTimeValue(dtstart.Value, dtstart.Params, def, learned)
	if err != nil {
		return ev, fmt.Errorf("DTSTART: %w", err)
	}
	if st.note != "" {
		ev.notes = append(ev.notes, st.note)
	}
	ev.start, ev.allDay, ev.tzid = st.t, st.allDay, st.tzid
	ev.loc = st.t.Location()
	switch {
	case comp.Props.Get(ical.PropDateTimeEnd) != nil:
		p := comp.Props.Get(ical.PropDateTimeEnd)
		et, err := parseTimeValue(p.Value, p.Params, def, learned)
		if err != nil {
			return ev, fmt.Errorf("DTEND: %w", err)
		}
		ev.end = et.t
		if et.allDay != st.allDay { // DTEND must have DTSTART's value type
			ev.end = time.Date(et.t.Year(), et.t.Month(), et.t.Day(), 0, 0, 0, 0, ev.loc)
			ev.notes = append(ev.notes, "DTEND value type aligned with DTSTART")
		}
	case comp.Props.Get(ical.PropDuration) != nil:
		d, err := comp.Props.Get(ical.PropDuration).Duration()
		if err != nil {
			return ev, fmt.Errorf("DURATION: %w", err)
		}
		ev.end = addDuration(ev.start, d, ev.allDay)
	case ev.allDay:
		ev.end = ev.start.AddDate(0, 0, 1)
	default:
		ev.end = ev.start
	}
	if ev.end.Before(ev.start) {
		ev.end = ev.start
		ev.notes = append(ev.notes, "DTEND before DTSTART set to DTSTART")
	}
	if p := comp.Props.Get(ical.PropRecurrenceID); p != nil {
		rt, err := parseTimeValue(p.Value, p.Params, def, learned)
		if err != nil {
			return ev, fmt.Errorf("RECURRENCE-ID: %w", err)
		}
		ev.recurrenceID = &rt.t
	}
	if p := comp.Props.Get(ical.PropRecurrenceRule); p != nil {
		ev.rrule = strings.TrimSpace(p.Value)
		if _, err := parseRule(ev.rrule, ev.start); err != nil {
			return ev, fmt.Errorf("RRULE: %w", err)
		}
	}
	var notes []string
	if ev.exdates, notes, err = parseTimeList(comp, ical.PropExceptionDates, def, learned); err != nil {
		return ev, err
	}
	ev.notes = append(ev.notes, notes...)
	if ev.rdates, notes, err = parseTimeList(comp, ical.PropRecurrenceDates, def, learned); err != nil {
		return ev, err
	}
	ev.notes = append(ev.notes, notes...)
	ev.title = text(comp, ical.PropSummary)
	ev.location = text(comp, ical.PropLocation)
	ev.description = text(comp, ical.PropDescription)
	ev.status = strings.ToUpper(text(comp, ical.PropStatus))
	ev.transparent = strings.EqualFold(text(comp, ical.PropTransparency), "TRANSPARENT")
	return ev, nil
}

// addDuration adds d; whole days of an all-day event are calendar days.
func addDuration(t time.Time, d time.Duration, allDay bool) time.Time {
	if allDay && d%(24*time.Hour) == 0 {
		return t.AddDate(0, 0, int(d/(24*time.Hour)))
	}
	return t.Add(d)
}

// recurring reports whether a master produces more than one occurrence.
func (ev *vevent) recurring() bool { return ev.rrule != "" || len(ev.rdates) > 0 }

// occurrenceDate is the date of an original start in the event's time zone.
func occurrenceDate(t time.Time) string { return t.Format(DateFormat) }

// attendees returns the ATTENDEE properties as attendees.
func attendees(comp *ical.Component) []Attendee {
	out := []Attendee{}
	for _, p := range comp.Props.Values(ical.PropAttendee) {
		out = append(out, Attendee{Email: mailto(p.Value), Name: p.Params.Get(ical.ParamCommonName),
			Status: strings.ToLower(p.Params.Get(ical.ParamParticipationStatus))})
	}
	return out
}

func mailto(v string) string {
	if len(v) >= 7 && strings.EqualFold(v[:7], "mailto:") {
		return v[7:]
	}
	return v
}

// setTime writes a DATE or DATE-TIME property.
func setTime(comp *ical.Component, name string, t time.Time, allDay bool, tzid string) {
	p := ical.NewProp(name)
	switch {
	case allDay:
		p.Params.Set(ical.ParamValue, "DATE")
		p.Value = t.Format(icalDate)
	case tzid == "" || tzid == "UTC":
		p.Value = t.UTC().Format(icalUTC)
	default:
		p.Params.Set(ical.ParamTimezoneID, tzid)
		p.Value = t.Format(icalDateTime)
	}
	comp.Props.Set(p)
}

// setTimeList writes a list property (EXDATE) as one property, or removes it.
func setTimeList(comp *ical.Component, name string, ts []time.Time, allDay bool, tzid string) {
	comp.Props.Del(name)
	if len(ts) == 0 {
		return
	}
	p := ical.NewProp(name)
	vals := make([]string, len(ts))
	for i, t := range ts {
		switch {
		case allDay:
			vals[i] = t.Format(icalDate)
		case tzid == "" || tzid == "UTC":
			vals[i] = t.UTC().Format(icalUTC)
		default:
			vals[i] = t.In(mustLoc(tzid)).Format(icalDateTime)
		}
	}
	switch {
	case allDay:
		p.Params.Set(ical.ParamValue, "DATE")
	case tzid != "" && tzid != "UTC":
		p.Params.Set(ical.ParamTimezoneID, tzid)
	}
	p.Value = strings.Join(vals, ",")
	comp.Props.Set(p)
}

func mustLoc(tzid string) *time.Location {
	if l, ok := resolveTZ(tzid); ok {
		return l
	}
	return time.UTC
}

func setText(comp *ical.Component, name, v string) {
	if v == "" {
		comp.Props.Del(name)
		return
	}
	comp.Props.SetText(name, v)
}

// copyComponent deep-copies a component.
func copyComponent(c *ical.Component) *ical.Component {
	out := &ical.Component{Name: c.Name, Props: make(ical.Props, len(c.Props))}
	for name, ps := range c.Props {
		cp := make([]ical.Prop, len(ps))
		for i, p := range ps {
			cp[i] = ical.Prop{Name: p.Name, Value: p.Value, Params: make(ical.Params, len(p.Params))}
			for k, v := range p.Params {
				cp[i].Params[k] = append([]string(nil), v...)
			}
		}
		out.Props[name] = cp
	}
	for _, ch := range c.Children {
		out.Children = append(out.Children, copyComponent(ch))
	}
	return out
}

// newVCalendar returns an empty VCALENDAR with Atrium's PRODID.
func newVCalendar() *ical.Calendar {
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropProductID, ProdID)
	cal.Props.SetText(ical.PropVersion, "2.0")
	return cal
}

// events returns the VEVENT children of a calendar.
func events(cal *ical.Calendar) []*ical.Component {
	var out []*ical.Component
	for _, c := range cal.Children {
		if c.Name == ical.CompEvent {
			out = append(out, c)
		}
	}
	return out
}

// master returns the VEVENT without RECURRENCE-ID, or nil.
func master(cal *ical.Calendar) *ical.Component {
	for _, c := range events(cal) {
		if c.Props.Get(ical.PropRecurrenceID) == nil {
			return c
		}
	}
	return nil
}

// encode writes a calendar as iCalendar text with lines folded at 75 octets.
func encode(w io.Writer, cal *ical.Calendar) error {
	return ical.NewEncoder(&folder{w: w}).Encode(cal)
}

func encodeString(cal *ical.Calendar) (string, error) {
	var b bytes.Buffer
	if err := encode(&b, cal); err != nil {
		return "", err
	}
	return b.String(), nil
}

// folder folds the content lines go-ical writes (one line per Write).
type folder struct{ w io.Writer }

func (f *folder) Write(p []byte) (int, error) {
	if len(p) <= 77 {
		return f.w.Write(p)
	}
	line := bytes.TrimRight(p, "\r\n")
	var b bytes.Buffer
	limit := 75
	for len(line) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		b.Write(line[:cut])
		b.WriteString("\r\n ")
		line = line[cut:]
		limit = 74
	}
	b.Write(line)
	b.WriteString("\r\n")
	if _, err := f.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// tzidsOf lists the TZIDs the VEVENTs of a calendar refer to.
func tzidsOf(cal *ical.Calendar) []string {
	seen := map[string]bool{}
	for _, ev := range events(cal) {
		for _, ps := range ev.Props {
			for _, p := range ps {
				if id := p.Params.Get(ical.ParamTimezoneID); id != "" {
					seen[id] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// ensureTimezones adds a VTIMEZONE for every TZID in use that has none (known
// zones only) and returns the TZIDs that had to be added.
func ensureTimezones(cal *ical.Calendar, year int) []string {
	have := map[string]bool{}
	for _, c := range cal.Children {
		if c.Name == ical.CompTimezone {
			have[tzidOf(c)] = true
		}
	}
	var added []string
	var tzs []*ical.Component
	for _, id := range tzidsOf(cal) {
		if have[id] {
			continue
		}
		if loc, ok := resolveTZ(id); ok {
			tzs = append(tzs, vtimezone(id, loc, year))
			added = append(added, id)
		}
	}
	if len(tzs) > 0 {
		cal.Children = append(tzs, cal.Children...)
	}
	return added
}

var vtzCache sync.Map // "tzid/year" → *ical.Component

// vtimezone describes loc as a VTIMEZONE with yearly rules derived from its
// transitions in year (a fixed offset when it has none).
func vtimezone(tzid string, loc *time.Location, year int) *ical.Component {
	key := tzid + "/" + strconv.Itoa(year)
	if v, ok := vtzCache.Load(key); ok {
		return copyComponent(v.(*ical.Component))
	}
	tz := ical.NewComponent(ical.CompTimezone)
	tz.Props.SetText(ical.PropTimezoneID, tzid)
	start := time.Date(year, 1, 1, 0, 0, 0, 0, loc)
	_, off0 := start.Zone()
	var trans []time.Time
	prev := off0
	for d := start; d.Year() == year; d = d.Add(6 * time.Hour) {
		if _, off := d.Zone(); off != prev {
			lo, hi := d.Add(-6*time.Hour), d // binary search to the second
			for hi.Sub(lo) > time.Second {
				mid := lo.Add(hi.Sub(lo) / 2)
				if _, o := mid.Zone(); o == prev {
					lo = mid
				} else {
					hi = mid
				}
			}
			trans = append(trans, hi)
			prev = off
		}
	}
	if len(trans) == 0 {
		name, off := start.Zone()
		sub := ical.NewComponent(ical.CompTimezoneStandard)
		sub.Props.SetText(ical.PropTimezoneName, name)
		sub.Props.Set(&ical.Prop{Name: ical.PropDateTimeStart, Params: ical.Params{}, Value: "19700101T000000"})
		sub.Props.Set(&ical.Prop{Name: ical.PropTimezoneOffsetFrom, Params: ical.Params{}, Value: offset(off)})
		sub.Props.Set(&ical.Prop{Name: ical.PropTimezoneOffsetTo, Params: ical.Params{}, Value: offset(off)})
		tz.Children = append(tz.Children, sub)
	}
	for _, t := range trans {
		_, from := t.Add(-time.Second).Zone()
		name, to := t.Zone()
		kind := ical.CompTimezoneStandard
		if to > from {
			kind = ical.CompTimezoneDaylight
		}
		sub := ical.NewComponent(kind)
		sub.Props.SetText(ical.PropTimezoneName, name)
		local := t.UTC().Add(time.Duration(from) * time.Second) // wall clock before the change
		sub.Props.Set(&ical.Prop{Name: ical.PropDateTimeStart, Params: ical.Params{}, Value: local.Format(icalDateTime)})
		sub.Props.Set(&ical.Prop{Name: ical.PropTimezoneOffsetFrom, Params: ical.Params{}, Value: offset(from)})
		sub.Props.Set(&ical.Prop{Name: ical.PropTimezoneOffsetTo, Params: ical.Params{}, Value: offset(to)})
		n := (local.Day()-1)/7 + 1
		if local.AddDate(0, 0, 7).Month() != local.Month() {
			n = -1
		}
		sub.Props.Set(&ical.Prop{Name: ical.PropRecurrenceRule, Params: ical.Params{},
			Value: fmt.Sprintf("FREQ=YEARLY;BYMONTH=%d;BYDAY=%d%s", int(local.Month()), n, strings.ToUpper(local.Weekday().String()[:2]))})
		tz.Children = append(tz.Children, sub)
	}
	vtzCache.Store(key, tz)
	return copyComponent(tz)
}

func offset(sec int) string {
	sign := '+'
	if sec < 0 {
		sign, sec = '-', -sec
	}
	return fmt.Sprintf("%c%02d%02d", sign, sec/3600, sec%3600/60)
}

// candidateZones are matched against a VTIMEZONE whose TZID names no known zone.
var candidateZones = []string{
	"Europe/London", "Europe/Berlin", "Europe/Helsinki", "Europe/Moscow", "Europe/Istanbul", "Europe/Lisbon",
	"America/New_York", "America/Chicago", "America/Denver", "America/Phoenix", "America/Los_Angeles", "America/Anchorage",
	"America/Halifax", "America/St_Johns", "America/Sao_Paulo", "America/Santiago", "America/Mexico_City", "America/Bogota",
	"America/Argentina/Buenos_Aires", "Pacific/Honolulu", "Atlantic/Azores", "Atlantic/Reykjavik", "Africa/Cairo",
	"Africa/Johannesburg", "Africa/Lagos", "Africa/Nairobi", "Asia/Jerusalem", "Asia/Dubai", "Asia/Tehran", "Asia/Karachi",
	"Asia/Kolkata", "Asia/Kathmandu", "Asia/Dhaka", "Asia/Bangkok", "Asia/Shanghai", "Asia/Tokyo", "Asia/Seoul",
	"Australia/Perth", "Australia/Adelaide", "Australia/Darwin", "Australia/Brisbane", "Australia/Sydney",
	"Pacific/Auckland", "Pacific/Fiji", "UTC",
}

// learnTimezones maps, for one resource, the TZID of each VTIMEZONE that names no known zone (for
// example Outlook's "(UTC+01:00) Amsterdam, Berlin, …") to a zone with the same
// offsets in winter and summer, or to a fixed offset. It returns what it did.
func learnTimezones(cal *ical.Calendar, year int) (map[string]*time.Location, []string) {
	var notes []string
	learned := map[string]*time.Location{}
	for _, c := range cal.Children {
		if c.Name != ical.CompTimezone {
			continue
		}
		id := tzidOf(c)
		if _, ok := resolveTZ(id); ok || id == "" {
			continue
		}
		std, dst, hasDST := 0, 0, false
		for _, sub := range c.Children {
			p := sub.Props.Get(ical.PropTimezoneOffsetTo)
			if p == nil {
				continue
			}
			off, ok := parseOffset(p.Value)
			if !ok {
				continue
			}
			if sub.Name == ical.CompTimezoneDaylight {
				dst, hasDST = off, true
			} else {
				std = off
			}
		}
		var found *time.Location
		for _, name := range candidateZones {
			loc, err := time.LoadLocation(name)
			if err != nil {
				continue
			}
			_, jan := time.Date(year, 1, 15, 12, 0, 0, 0, loc).Zone()
			_, jul := time.Date(year, 7, 15, 12, 0, 0, 0, loc).Zone()
			if !hasDST && jan == std && jul == std || hasDST && (jan == std && jul == dst || jan == dst && jul == std) {
				found = loc
				break
			}
		}
		if found == nil {
			found = time.FixedZone(id, std)
			notes = append(notes, fmt.Sprintf("TZID %q read as the fixed offset %s", id, offset(std)))
		} else {
			notes = append(notes, fmt.Sprintf("TZID %q read as %s (same offsets)", id, found))
		}
		// Per resource, never global: another tenant's VTIMEZONE of the same
		// name must not change how this one is read.
		learned[id] = found
	}
	return learned, notes
}

func parseOffset(v string) (int, bool) {
	v = strings.TrimSpace(v)
	if len(v) != 5 && len(v) != 7 || (v[0] != '+' && v[0] != '-') {
		return 0, false
	}
	h, err1 := strconv.Atoi(v[1:3])
	m, err2 := strconv.Atoi(v[3:5])
	if err1 != nil || err2 != nil {
		return 0, false
	}
	sec := h*3600 + m*60
	if v[0] == '-' {
		sec = -sec
	}
	return sec, true
}
