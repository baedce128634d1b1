package calendar

import (
	"context"
	"maps"
	"net/mail"
	"sort"
	"strconv"
	"strings"
	"time"

	"atrium/app"
)

// MaxFreeBusyAttendees bounds one free/busy request.
const MaxFreeBusyAttendees = 100

// FreeBusy returns the merged busy times of the attendees over [start, end),
// from every calendar of theirs, recurrences expanded. Only users of the
// caller's organisation are answered; other addresses are left out, and no
// title or other detail of an event is revealed. Errors: insufficient_scope (no
// calendar:read), feature_not_in_plan, validation_failed (no, over 100 or an
// invalid attendee, no start or end, an end not after the start, a range over
// 366 days or holding over MaxOccurrences occurrences).
func (s *Service) FreeBusy(ctx context.Context, p *app.Principal, req FreeBusyRequest) (FreeBusy, error) {
	if err := p.Require(app.ScopeCalendarRead); err != nil {
		return FreeBusy{}, err
	}
	if !p.HasFeature(Feature) {
		return FreeBusy{}, app.Errorf(app.EFeatureNotInPlan, "The organisation's plan does not include the calendar.")
	}
	var v app.Validator
	v.Check(len(req.Attendees) > 0, "body.attendees", "must name at least one attendee", nil)
	v.Check(len(req.Attendees) <= MaxFreeBusyAttendees, "body.attendees", "must name at most 100 attendees", len(req.Attendees))
	for i, a := range req.Attendees {
		if _, err := mail.ParseAddress(a); err != nil || strings.ContainsAny(a, "<> ") {
			v.Add("body.attendees["+strconv.Itoa(i)+"]", "must be an e-mail address", a)
		}
	}
	if err := v.Err(); err != nil {
		return FreeBusy{}, err
	}
	if err := checkRange(req.Start, req.End); err != nil {
		return FreeBusy{}, rebody(err)
	}
	users, err := s.store.UsersByEmail(ctx, p.OrgID, req.Attendees)
	if err != nil {
		return FreeBusy{}, err
	}
	out := FreeBusy{Start: req.Start, End: req.End, Attendees: []FreeBusyAttendee{}}
	if len(users) == 0 {
		return out, nil
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	byUser, err := s.store.BusyWindow(ctx, ids, req.Start.Add(-floatingSlack), req.End.Add(floatingSlack))
	if err != nil {
		return FreeBusy{}, err
	}
	calZones := map[string]*time.Location{}
	for _, u := range users {
		cals, err := s.store.Calendars(ctx, p.OrgID, u.ID)
		if err != nil {
			return FreeBusy{}, err
		}
		maps.Copy(calZones, zones(cals))
	}
	byEmail := map[string]UserRef{}
	for _, u := range users {
		byEmail[strings.ToLower(u.Email)] = u
	}
	b := newBudget(ctx)
	b.field, b.value = "body.end", req.End.Format(time.RFC3339)
	seen := map[string]bool{}
	for _, a := range req.Attendees { // the caller's order, each user once
		u, ok := byEmail[strings.ToLower(a)]
		if !ok || seen[u.ID] {
			continue
		}
		seen[u.ID] = true
		sums, err := expand(b, byUser[u.ID], req.Start, req.End, calZones, false)
		if err != nil {
			return FreeBusy{}, err
		}
		var iv []Interval
		for _, e := range sums {
			st, en := e.Start, e.End
			if st.Before(req.Start) {
				st = req.Start
			}
			if en.After(req.End) {
				en = req.End
			}
			if en.After(st) {
				iv = append(iv, Interval{Start: st.UTC(), End: en.UTC()})
			}
		}
		out.Attendees = append(out.Attendees, FreeBusyAttendee{Email: u.Email, UserID: u.ID, Busy: merge(iv)})
	}
	return out, nil
}

// rebody moves range errors from the query to the body.
func rebody(err error) error {
	if ae, ok := err.(*app.Error); ok {
		for i := range ae.Fields {
			ae.Fields[i].Location = strings.Replace(ae.Fields[i].Location, "query.", "body.", 1)
		}
		ae.Message = strings.Replace(ae.Message, "query.", "body.", 1)
	}
	return err
}

// merge sorts intervals and joins those that overlap or touch.
func merge(iv []Interval) []Interval {
	out := []Interval{}
	if len(iv) == 0 {
		return out
	}
	sort.Slice(iv, func(i, j int) bool { return iv[i].Start.Before(iv[j].Start) })
	cur := iv[0]
	for _, x := range iv[1:] {
		if !x.Start.After(cur.End) {
			if x.End.After(cur.End) {
				cur.End = x.End
			}
			continue
		}
		out = append(out, cur)
		cur = x
	}
	return append(out, cur)
}
