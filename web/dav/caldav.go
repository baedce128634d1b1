package dav

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/calendar"
)

// CalendarsPrefix is where the CalDAV door's collections live.
const CalendarsPrefix = "/dav/calendars/"

// NSApple is the namespace of Apple's calendar properties (calendar-color).
const NSApple = "http://apple.com/ns/ical/"

// CalDAV is the CalDAV door (RFC 4791) over the calendar service:
//
//	/dav/calendars/<user_id>/                   calendar home
//	/dav/calendars/<user_id>/<cal_id>/          a calendar
//	/dav/calendars/<user_id>/<cal_id>/<name>.ics   an event (every VEVENT of one UID) or a task (its VTODOs)
//
// It answers PROPFIND (with getctag and sync-token), PROPPATCH, MKCALENDAR and
// extended MKCOL, GET/PUT/DELETE of objects (the stored iCalendar text, which
// keeps what the client wrote: alarms, X- properties, parameters), and the
// calendar-query, calendar-multiget and sync-collection (RFC 6578) REPORTs.
// calendar-query evaluates the whole filter of RFC 4791 §9.7 (comp-filter,
// prop-filter, param-filter, text-match with i;ascii-casemap and i;octet,
// is-not-defined, time-range); a VEVENT time-range runs through the service's
// recurrence expansion (an event matches when one of its occurrences overlaps
// the range; a range with both ends may span at most 366 days, else 403
// CALDAV:supported-filter), a VTODO's by §9.9's table.
//
// Sync tokens are those of the CardDAV door: the calendar's change sequence
// (urn:atrium:sync:<cal_id>:<seq>), with tombstones for deleted objects.
type CalDAV struct {
	reporter
	svc *calendar.Service
}

var _ Door = (*CalDAV)(nil)

// NewCalDAV returns the CalDAV door.
func NewCalDAV(publicURL string, log *slog.Logger, svc *calendar.Service) *CalDAV {
	return &CalDAV{reporter: newReporter(publicURL, log), svc: svc}
}

// Prefix implements Door.
func (d *CalDAV) Prefix() string { return CalendarsPrefix }

// Capability implements Door.
func (d *CalDAV) Capability() string { return calSpec.capability }

// PrincipalProps implements Door: the calendar home of the caller and the
// address by which calendar users know them.
func (d *CalDAV) PrincipalProps(p *app.Principal) Props {
	ps := Props{}
	ps.Static(Name(NSCalDAV, "calendar-home-set"), Href(calHomePath(p.UserID)))
	if p.Email != "" {
		// A mailto: URI is not a path: its colon stays as it is.
		ps.Static(Name(NSCalDAV, "calendar-user-address-set"), "<d:href>"+Text("mailto:"+p.Email)+"</d:href>")
	}
	return ps
}

func calHomePath(userID string) string             { return CalendarsPrefix + userID + "/" }
func calPath(userID, calID string) string          { return calHomePath(userID) + calID + "/" }
func objectPath(userID, calID, name string) string { return calPath(userID, calID) + name }

const calendarType = "text/calendar; charset=utf-8"

var (
	calendarData   = Name(NSCalDAV, "calendar-data")
	calDescription = Name(NSCalDAV, "calendar-description")
	calColor       = Name(NSApple, "calendar-color")
	calDisplayName = Name(NSDAV, "displayname")
)

// calSpec names the CalDAV door's paths and REPORTs.
var calSpec = doorSpec{prefix: CalendarsPrefix, capability: "calendar-access", kind: "calendar",
	makeMethods: []string{"MKCOL", "MKCALENDAR"}, multiget: Name(NSCalDAV, "calendar-multiget"), query: Name(NSCalDAV, "calendar-query")}

// ServeHTTP implements http.Handler.
func (d *CalDAV) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.serve(w, r, d, calSpec) }

func (d *CalDAV) deleteColl(ctx context.Context, p *app.Principal, calID string) error {
	return d.svc.DeleteCalendar(ctx, p, calID)
}

func (d *CalDAV) getMember(w http.ResponseWriter, r *http.Request, p *app.Principal, calID, name string) error {
	o, err := d.svc.GetObject(r.Context(), p, calID, name)
	if err != nil {
		return err
	}
	serveMember(w, r, calendarType, o.ETag, o.UpdatedAt, o.ICS)
	return nil
}

func (d *CalDAV) deleteMember(ctx context.Context, p *app.Principal, calID, name, ifMatch string) error {
	return d.svc.DeleteObject(ctx, p, calID, name, ifMatch)
}

func (d *CalDAV) propfindMember(w http.ResponseWriter, r *http.Request, p *app.Principal, calID, name string) error {
	o, err := d.svc.GetObject(r.Context(), p, calID, name)
	if err != nil {
		return err
	}
	return propfind(w, r, objectPath(p.UserID, calID, o.Name), objectProps(p, o), []xml.Name{calendarData}, nil)
}

func (d *CalDAV) homeProps(p *app.Principal) Props {
	return ownerProps(p, app.ScopeCalendarWrite, "Calendars")
}

func (d *CalDAV) calendarProps(p *app.Principal, c calendar.Calendar) Props {
	ps := d.homeProps(p)
	ps.Static(Name(NSDAV, "resourcetype"), Elem(Name(NSDAV, "collection"), "")+Elem(Name(NSCalDAV, "calendar"), ""))
	ps.Static(calDisplayName, Text(c.Name))
	ps.Static(calDescription, Text(c.Description))
	if c.Color != "" {
		ps.Static(calColor, Text(c.Color))
	}
	var comps strings.Builder
	for _, k := range calendar.AllComponents {
		if c.Supports(k) {
			comps.WriteString(`<cal:comp name="` + k + `"/>`)
		}
	}
	ps.Static(Name(NSCalDAV, "supported-calendar-component-set"), comps.String())
	ps.Static(Name(NSCalDAV, "supported-calendar-data"), `<cal:calendar-data content-type="text/calendar" version="2.0"/>`)
	ps.Static(Name(NSCalDAV, "max-resource-size"), strconv.Itoa(calendar.MaxImportBytes))
	syncProps(ps, c.ID, c.SyncSeq, c.UpdatedAt,
		Name(NSCalDAV, "calendar-query"), Name(NSCalDAV, "calendar-multiget"), Name(NSDAV, "sync-collection"))
	return ps
}

// objectProps are an object's properties; an object read from the change feed
// has no text or modification time, and those properties are then left out.
func objectProps(p *app.Principal, o calendar.Object) Props {
	return memberProps(p, o.ETag, calendarType, o.UpdatedAt, calendarData, o.ICS)
}

func (d *CalDAV) propfindHome(w http.ResponseWriter, r *http.Request, p *app.Principal, root bool) error {
	return propfindHome(w, r, CalendarsPrefix, calHomePath(p.UserID), d.homeProps(p), root, func(req PropRequest) ([]Response, error) {
		cals, err := d.svc.Calendars(r.Context(), p)
		return resolveEach(req, cals, err, func(c calendar.Calendar) (string, Props) {
			return calPath(p.UserID, c.ID), d.calendarProps(p, c)
		})
	})
}

// propfindColl answers a PROPFIND of a calendar and, with Depth 1, its
// objects: read whole when their text or modification time is asked for,
// from the change feed (name and ETag) otherwise.
func (d *CalDAV) propfindColl(w http.ResponseWriter, r *http.Request, p *app.Principal, calID string) error {
	ctx := r.Context()
	c, err := d.svc.Calendar(ctx, p, calID)
	if err != nil {
		return err
	}
	return propfind(w, r, calPath(p.UserID, c.ID), d.calendarProps(p, c), nil, func(req PropRequest) ([]Response, error) {
		if req.AllProp || wantsData(req, calendarData) || slices.Contains(req.Names, Name(NSDAV, "getlastmodified")) {
			objs, err := d.svc.ObjectsInRange(ctx, p, calID, time.Time{}, time.Time{})
			return resolveEach(req, objs, err, d.object(p, calID), calendarData)
		}
		written, _, _, err := d.changes(ctx, p, calID, 0)
		return resolveEach(req, written, err, d.object(p, calID), calendarData)
	})
}

// object gives the href and properties of an object of a calendar.
func (d *CalDAV) object(p *app.Principal, calID string) func(calendar.Object) (string, Props) {
	return func(o calendar.Object) (string, Props) { return objectPath(p.UserID, calID, o.Name), objectProps(p, o) }
}

// changes reads a calendar's change feed after since: the objects written (name
// and ETag only), the names deleted, and the current sequence.
func (d *CalDAV) changes(ctx context.Context, p *app.Principal, calID string, since int64) (written []calendar.Object, deleted []string, seq int64, err error) {
	chs, seq, err := d.svc.Changes(ctx, p, calID, since)
	for _, ch := range chs {
		if ch.Deleted {
			deleted = append(deleted, ch.Name)
		} else {
			written = append(written, calendar.Object{Name: ch.Name, ETag: ch.ETag})
		}
	}
	return written, deleted, seq, err
}

// proppatchColl sets a calendar's displayname, calendar-description and
// (Apple's) calendar-color; other properties, and removals, are refused (403)
// and then nothing changes (RFC 4918 atomicity).
func (d *CalDAV) proppatchColl(w http.ResponseWriter, r *http.Request, p *app.Principal, calID string) error {
	ctx := r.Context()
	if _, err := d.svc.Calendar(ctx, p, calID); err != nil {
		return err
	}
	var in calendar.CalendarInput
	set := func(n xml.Name, v string) bool {
		switch n {
		case calDisplayName:
			in.Name = v
		case calDescription:
			in.Description = v
		case calColor:
			in.Color = strings.TrimSpace(v)
		default:
			return false
		}
		return true
	}
	refuse := func(xml.Name) bool { return false }
	return patchProps(w, r, calPath(p.UserID, calID), set, refuse, func() error {
		_, err := d.svc.UpdateCalendar(ctx, p, calID, in)
		return err
	})
}

// makeColl creates a calendar named by the path: MKCALENDAR (RFC 4791
// §5.3.1), or an extended MKCOL (RFC 5689) whose resourcetype is a calendar.
func (d *CalDAV) makeColl(w http.ResponseWriter, r *http.Request, p *app.Principal, calID string) error {
	m, err := readMkcol(r)
	if err != nil {
		return err
	}
	if r.Method == "MKCOL" && !slices.Contains(m.Types, Name(NSCalDAV, "calendar")) {
		WriteError(w, http.StatusForbidden, Name(NSDAV, "valid-resourcetype"))
		return nil
	}
	in := calendar.CalendarInput{Name: calID, Description: m.Values[calDescription], Color: strings.TrimSpace(m.Values[calColor])}
	if v := strings.TrimSpace(m.Values[calDisplayName]); v != "" {
		in.Name = v
	}
	if _, err := d.svc.Calendar(r.Context(), p, calID); err == nil {
		d.methodNotAllowed(w, r, "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, REPORT")
		return nil
	}
	if _, err := d.svc.CreateCalendarAt(r.Context(), p, calID, in, m.Components); err != nil {
		if calendar.ComponentRefused(err) {
			writeErrorText(w, http.StatusForbidden, Name(NSCalDAV, "supported-calendar-component"), app.ErrorMessage(err))
			return nil
		}
		return err
	}
	w.Header().Set("Location", calPath(p.UserID, calID))
	w.WriteHeader(http.StatusCreated)
	return nil
}

// getColl answers a GET of a calendar with the whole calendar as one
// iCalendar file (the export).
func (d *CalDAV) getColl(w http.ResponseWriter, r *http.Request, p *app.Principal, calID string) error {
	_, write, err := d.svc.ExportCalendar(r.Context(), p, calID)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", calendarType)
	if r.Method == http.MethodHead {
		return nil
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	_, _ = w.Write(b.Bytes())
	return nil
}

func (d *CalDAV) putMember(w http.ResponseWriter, r *http.Request, p *app.Principal, calID, name string) error {
	data, err := readMember(r, calendar.MaxImportBytes, "An event", "text/calendar")
	if err != nil {
		return err
	}
	o, created, err := d.svc.PutObject(r.Context(), p, calID, name, bytes.NewReader(data), calendar.Conditions{
		IfMatch: r.Header.Get("If-Match"), IfNoneMatch: r.Header.Get("If-None-Match")})
	if calendar.RuleRefused(err) {
		// RFC 4791 §5.3.2.1: the data is iCalendar, but not what this server
		// accepts (a rule with occurrences under a minute apart).
		writeErrorText(w, http.StatusForbidden, Name(NSCalDAV, "valid-calendar-data"), app.ErrorMessage(err))
		return nil
	}
	if calendar.ComponentRefused(err) {
		// RFC 4791 §5.3.2.1: a kind of object the calendar does not hold.
		writeErrorText(w, http.StatusForbidden, Name(NSCalDAV, "supported-calendar-component"), app.ErrorMessage(err))
		return nil
	}
	if err != nil {
		return err
	}
	putAnswer(w, o.ETag, o.ICS == string(data), o.UpdatedAt, created, objectPath(p.UserID, calID, name))
	return nil
}

// writeErrorText is WriteError with a human-readable description after the
// precondition (RFC 4918 §16 lets DAV:error carry more elements).
func writeErrorText(w http.ResponseWriter, status int, condition xml.Name, text string) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<d:error ` + xmlns + `><` + qname(condition) + `/><d:responsedescription>` + Text(text) + `</d:responsedescription></d:error>`))
}

// syncCollection answers RFC 6578 from the calendar's change feed: the objects
// written since the token (with the asked properties), those deleted (404),
// then the new token.
func (d *CalDAV) syncCollection(w http.ResponseWriter, r *http.Request, p *app.Principal, calID string, body reportBody) error {
	ctx := r.Context()
	changes := func(since int64) ([]calendar.Object, []string, int64, error) { return d.changes(ctx, p, calID, since) }
	full := func(written []calendar.Object) ([]calendar.Object, error) {
		names := make([]string, len(written))
		for i, o := range written {
			names[i] = o.Name
		}
		return d.svc.ObjectsByName(ctx, p, calID, names)
	}
	return answerSync(w, body, calID, calPath(p.UserID, calID), calendarData, changes, full, d.object(p, calID))
}

// multiget answers calendar-multiget with the stored objects.
func (d *CalDAV) multiget(w http.ResponseWriter, r *http.Request, p *app.Principal, calID string, body reportBody) error {
	return answerMultiget(w, calPath(p.UserID, calID), body, calendarData, func(names []string) ([]calendar.Object, error) {
		return d.svc.ObjectsByName(r.Context(), p, calID, names)
	}, d.object(p, calID))
}

// compFilter, propFilter, paramFilter and textMatch are the XML of a
// calendar-query filter (RFC 4791 §9.7); toFilter turns them into the
// service's calendar.CompFilter, whose rules decide what matches.
type compFilter struct {
	Name         string       `xml:"name,attr"`
	IsNotDefined *struct{}    `xml:"urn:ietf:params:xml:ns:caldav is-not-defined"`
	TimeRange    *timeRange   `xml:"urn:ietf:params:xml:ns:caldav time-range"`
	Props        []propFilter `xml:"urn:ietf:params:xml:ns:caldav prop-filter"`
	Comps        []compFilter `xml:"urn:ietf:params:xml:ns:caldav comp-filter"`
}

type propFilter struct {
	Name         string        `xml:"name,attr"`
	IsNotDefined *struct{}     `xml:"urn:ietf:params:xml:ns:caldav is-not-defined"`
	TimeRange    *timeRange    `xml:"urn:ietf:params:xml:ns:caldav time-range"`
	TextMatch    *textMatch    `xml:"urn:ietf:params:xml:ns:caldav text-match"`
	Params       []paramFilter `xml:"urn:ietf:params:xml:ns:caldav param-filter"`
}

type paramFilter struct {
	Name         string     `xml:"name,attr"`
	IsNotDefined *struct{}  `xml:"urn:ietf:params:xml:ns:caldav is-not-defined"`
	TextMatch    *textMatch `xml:"urn:ietf:params:xml:ns:caldav text-match"`
}

type textMatch struct {
	Text      string `xml:",chardata"`
	Collation string `xml:"collation,attr"`
	Negate    string `xml:"negate-condition,attr"`
}

type timeRange struct {
	Start string `xml:"start,attr"`
	End   string `xml:"end,attr"`
}

type calendarQueryBody struct {
	Filter *struct {
		Comp compFilter `xml:"urn:ietf:params:xml:ns:caldav comp-filter"`
	} `xml:"urn:ietf:params:xml:ns:caldav filter"`
}

// filterError is a filter the server refuses, with the precondition it
// fails (RFC 4791 §7.8): valid-filter, or supported-collation.
type filterError struct{ condition string }

func (e filterError) Error() string { return "calendar-query filter: " + e.condition }

// toFilter checks and converts a calendar-query filter: its top names
// VCALENDAR (and has no time-range), every time-range has a readable bound
// and ends after it starts, every text-match's collation is supported.
func toFilter(f compFilter) (calendar.CompFilter, error) {
	if !strings.EqualFold(f.Name, "VCALENDAR") || f.TimeRange != nil {
		return calendar.CompFilter{}, filterError{"valid-filter"}
	}
	return convertComp(f)
}

func convertComp(f compFilter) (calendar.CompFilter, error) {
	out := calendar.CompFilter{Name: strings.ToUpper(strings.TrimSpace(f.Name)), IsNotDefined: f.IsNotDefined != nil}
	if out.Name == "" {
		return out, filterError{"valid-filter"}
	}
	var err error
	if out.TimeRange, err = convertRange(f.TimeRange); err != nil {
		return out, err
	}
	for _, pf := range f.Props {
		c, err := convertProp(pf)
		if err != nil {
			return out, err
		}
		out.Props = append(out.Props, c)
	}
	for _, cf := range f.Comps {
		c, err := convertComp(cf)
		if err != nil {
			return out, err
		}
		out.Comps = append(out.Comps, c)
	}
	return out, nil
}

func convertProp(f propFilter) (calendar.PropFilter, error) {
	out := calendar.PropFilter{Name: strings.ToUpper(strings.TrimSpace(f.Name)), IsNotDefined: f.IsNotDefined != nil}
	if out.Name == "" {
		return out, filterError{"valid-filter"}
	}
	var err error
	if out.TimeRange, err = convertRange(f.TimeRange); err != nil {
		return out, err
	}
	if out.TextMatch, err = convertText(f.TextMatch); err != nil {
		return out, err
	}
	for _, pf := range f.Params {
		c := calendar.ParamFilter{Name: strings.ToUpper(strings.TrimSpace(pf.Name)), IsNotDefined: pf.IsNotDefined != nil}
		if c.Name == "" {
			return out, filterError{"valid-filter"}
		}
		if c.TextMatch, err = convertText(pf.TextMatch); err != nil {
			return out, err
		}
		out.Params = append(out.Params, c)
	}
	return out, nil
}

func convertText(m *textMatch) (*calendar.TextMatch, error) {
	if m == nil {
		return nil, nil
	}
	if !calendar.SupportedCollation(m.Collation) {
		return nil, filterError{"supported-collation"}
	}
	neg := strings.TrimSpace(m.Negate)
	if neg != "" && neg != "yes" && neg != "no" {
		return nil, filterError{"valid-filter"}
	}
	return &calendar.TextMatch{Text: m.Text, Collation: m.Collation, Negate: neg == "yes"}, nil
}

func convertRange(r *timeRange) (*calendar.TimeRange, error) {
	if r == nil {
		return nil, nil
	}
	s, okS := parseUTC(r.Start)
	e, okE := parseUTC(r.End)
	if !okS || !okE || s.IsZero() && e.IsZero() || !s.IsZero() && !e.IsZero() && !e.After(s) {
		return nil, filterError{"valid-filter"}
	}
	return &calendar.TimeRange{Start: s, End: e}, nil
}

// parseUTC reads a time-range bound: a UTC date-time (20060102T150405Z); an
// empty bound is the zero time.
func parseUTC(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, true
	}
	for _, layout := range []string{"20060102T150405Z", "20060102T150405", "20060102"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// query answers calendar-query with the objects the filter matches
// (calendar.Service.QueryObjects: a VEVENT time-range by the recurrence
// expansion, every other test on the objects' data); no filter matches every
// object.
func (d *CalDAV) query(w http.ResponseWriter, r *http.Request, p *app.Principal, calID string, data []byte, body reportBody) error {
	var q calendarQueryBody
	if err := xml.Unmarshal(data, &q); err != nil {
		return badRequest(err)
	}
	f := calendar.CompFilter{Name: "VCALENDAR"}
	if q.Filter != nil {
		var err error
		if f, err = toFilter(q.Filter.Comp); err != nil {
			var fe filterError
			if errors.As(err, &fe) {
				WriteError(w, http.StatusForbidden, Name(NSCalDAV, fe.condition))
				return nil
			}
			return err
		}
	}
	objs, err := d.svc.QueryObjects(r.Context(), p, calID, f)
	if calendar.RangeRefused(err) {
		writeErrorText(w, http.StatusForbidden, Name(NSCalDAV, "supported-filter"), app.ErrorMessage(err))
		return nil
	}
	rs, err := resolveEach(body.propRequest(), objs, err, d.object(p, calID), calendarData)
	if err != nil {
		return err
	}
	WriteMultistatus(w, rs, "")
	return nil
}
