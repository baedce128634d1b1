package calendar

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/emersion/go-ical"

	"atrium/app"
)

const (
	importBatch   = 500
	maxReportRows = 1000
)

// chunk is one top-level component of an imported file, as unfolded lines.
type chunk struct {
	name  string
	uid   string
	lines []string
}

// scanner reads iCalendar text as unfolded content lines, accepting CRLF, LF or
// a mix, and lines of any length.
type scanner struct {
	r    *bufio.Reader
	next string
	has  bool
	eof  bool
}

func (s *scanner) raw() (string, bool, error) {
	if s.eof {
		return "", false, nil
	}
	line, err := s.r.ReadString('\n')
	if err == io.EOF {
		s.eof = true
		if line == "" {
			return "", false, nil
		}
	} else if err != nil {
		return "", false, err
	}
	return strings.TrimRight(line, "\r\n"), true, nil
}

// line returns the next unfolded content line.
func (s *scanner) line() (string, bool, error) {
	var cur string
	if s.has {
		cur, s.has = s.next, false
	} else {
		for {
			l, ok, err := s.raw()
			if err != nil || !ok {
				return "", ok, err
			}
			if strings.TrimSpace(l) != "" {
				cur = l
				break
			}
		}
	}
	// Continuations are gathered and joined once (linear: appending to a
	// string line by line copies it every time).
	var b strings.Builder
	b.WriteString(cur)
	for {
		l, ok, err := s.raw()
		if err != nil {
			return "", false, err
		}
		if !ok {
			return b.String(), true, nil
		}
		if len(l) > 0 && (l[0] == ' ' || l[0] == '\t') {
			b.WriteString(l[1:])
			continue
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		s.next, s.has = l, true
		return b.String(), true, nil
	}
}

// propName returns the upper-cased name of a content line and its value.
func propName(line string) (string, string) {
	i := strings.IndexAny(line, ";:")
	if i < 0 {
		return strings.ToUpper(strings.TrimSpace(line)), ""
	}
	name := strings.ToUpper(strings.TrimSpace(line[:i]))
	j := strings.IndexByte(line, ':') // the value follows the first unquoted colon
	inQuote := false
	for k := i; k < len(line); k++ {
		if line[k] == '"' {
			inQuote = !inQuote
		} else if line[k] == ':' && !inQuote {
			j = k
			break
		}
	}
	if j < 0 {
		return name, ""
	}
	return name, line[j+1:]
}

// errNotICalendar marks input that is not iCalendar at all.
var errNotICalendar = errors.New("not an iCalendar file")

// split reads a file into its top-level components.
func split(r io.Reader, fn func(chunk) error) error {
	sc := &scanner{r: bufio.NewReaderSize(r, 64<<10)}
	first, ok, err := sc.line()
	if err != nil {
		return err
	}
	first = strings.TrimPrefix(first, "\ufeff")
	if n, v := propName(first); !ok || n != "BEGIN" || !strings.EqualFold(strings.TrimSpace(v), "VCALENDAR") {
		return errNotICalendar
	}
	var cur *chunk
	depth := 0
	for {
		l, ok, err := sc.line()
		if err != nil {
			return err
		}
		if !ok {
			return nil // a missing END:VCALENDAR is forgiven
		}
		name, value := propName(l)
		switch {
		case cur == nil && name == "BEGIN":
			cur = &chunk{name: strings.ToUpper(strings.TrimSpace(value)), lines: []string{l}}
			depth = 1
			continue
		case cur == nil && name == "END":
			if strings.EqualFold(strings.TrimSpace(value), "VCALENDAR") {
				// Several VCALENDARs in one file: carry on with the next.
				if n, v, ok := peekBegin(sc); ok && n == "BEGIN" && strings.EqualFold(v, "VCALENDAR") {
					continue
				}
				return nil
			}
			continue
		case cur == nil:
			continue // calendar properties
		}
		cur.lines = append(cur.lines, l)
		switch name {
		case "BEGIN":
			depth++
		case "END":
			depth--
			if depth == 0 {
				if err := fn(*cur); err != nil {
					return err
				}
				cur = nil
			}
		case "UID":
			if depth == 1 && cur.uid == "" {
				cur.uid = strings.TrimSpace(value)
			}
		case "TZID":
			if depth == 1 && cur.name == ical.CompTimezone {
				cur.uid = strings.NewReplacer(`\,`, ",", `\;`, ";", `\\`, `\`).Replace(strings.TrimSpace(value))
			}
		}
	}
}

// peekBegin consumes a BEGIN:VCALENDAR following an END:VCALENDAR.
func peekBegin(sc *scanner) (string, string, bool) {
	l, ok, err := sc.line()
	if err != nil || !ok {
		return "", "", false
	}
	n, v := propName(l)
	if n != "BEGIN" || !strings.EqualFold(strings.TrimSpace(v), "VCALENDAR") {
		sc.next, sc.has = l, true
	}
	return n, strings.TrimSpace(v), true
}

var tzidParam = regexp.MustCompile(`(?i);TZID=("[^"]*"|[^;:]*)`)

var safeName = regexp.MustCompile(`^[A-Za-z0-9@._-]{1,200}$`)

// resourceName is the CalDAV resource name of an event made outside CalDAV.
func resourceName(uid string) string {
	if safeName.MatchString(uid) {
		return uid + ".ics"
	}
	sum := sha256.Sum256([]byte(uid))
	return hex.EncodeToString(sum[:16]) + ".ics"
}

// report collects import outcomes, bounded in size.
type report struct {
	res          ImportResult
	errsDropped  int
	fixesDropped int
}

func (r *report) fail(uid, msg string) {
	r.res.Skipped++
	if len(r.res.Errors) >= maxReportRows {
		r.errsDropped++
		return
	}
	r.res.Errors = append(r.res.Errors, ImportError{UID: uid, Message: msg})
}

func (r *report) fix(uid, msg string) {
	if len(r.res.Fixes) >= maxReportRows {
		r.fixesDropped++
		return
	}
	r.res.Fixes = append(r.res.Fixes, ImportFix{UID: uid, Message: msg})
}

// Import reads an iCalendar file into a calendar: an event whose UID exists is
// replaced, others are added. Each UID succeeds or fails on its own; a file
// that is not iCalendar at all is refused. Sloppy files are read leniently
// (CRLF/LF mixes, unfolded long lines, missing VTIMEZONE or DTSTAMP, Windows or
// prefixed TZIDs) and the result says what was repaired or skipped. Errors:
// insufficient_scope (no calendar:write), no_bound_user, feature_not_in_plan,
// not_found (no such calendar of the caller), validation_failed (not an
// iCalendar file, a file without VEVENT).
func (s *Service) Import(ctx context.Context, p *app.Principal, calID string, r io.Reader) (ImportResult, error) {
	cal, loc, err := s.calendar(ctx, p, app.ScopeCalendarWrite, calID)
	if err != nil {
		return ImportResult{}, err
	}
	rep := &report{res: ImportResult{Errors: []ImportError{}, Fixes: []ImportFix{}}}
	timezones := map[string][]string{}
	groups := map[string][][]string{}
	var order []string
	n := 0
	err = split(r, func(c chunk) error {
		switch c.name {
		case ical.CompTimezone:
			timezones[c.uid] = c.lines
		case ical.CompEvent:
			n++
			if c.uid == "" {
				sum := sha256.Sum256([]byte(strings.Join(c.lines, "\n")))
				c.uid = "import-" + hex.EncodeToString(sum[:12])
				c.lines = append([]string{c.lines[0], "UID:" + c.uid}, c.lines[1:]...)
				rep.fix(c.uid, "VEVENT without UID given one derived from its content")
			}
			if _, ok := groups[c.uid]; !ok {
				order = append(order, c.uid)
			}
			groups[c.uid] = append(groups[c.uid], c.lines)
		default:
			rep.fail(c.uid, c.name+" components are not supported; skipped")
		}
		return nil
	})
	if errors.Is(err, errNotICalendar) {
		return ImportResult{}, app.Invalid("body.file", "is not an iCalendar file (it must start with BEGIN:VCALENDAR)", nil)
	}
	if err != nil {
		return ImportResult{}, fmt.Errorf("read import: %w", err)
	}
	if n == 0 && len(rep.res.Errors) == 0 {
		return ImportResult{}, app.Invalid("body.file", "holds no VEVENT", nil)
	}
	type pending struct {
		o       Object
		ps      *parsed
		created bool
	}
	var batch []pending
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.store.InTx(ctx, func(ctx context.Context) error {
			for i := range batch {
				if err := s.commit(ctx, p, &batch[i].o, batch[i].ps, batch[i].created, change{imported: true}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil { // isolate the failing event: one transaction each
			for i := range batch {
				b := batch[i]
				err := s.store.InTx(ctx, func(ctx context.Context) error {
					return s.commit(ctx, p, &b.o, b.ps, b.created, change{imported: true})
				})
				switch {
				case err == nil && b.created:
					rep.res.Imported++
				case err == nil:
					rep.res.Updated++
				case app.ErrorCode(err) == app.EInternal:
					return err
				default:
					rep.fail(b.o.UID, app.ErrorMessage(err))
				}
			}
		} else {
			for _, b := range batch {
				if b.created {
					rep.res.Imported++
				} else {
					rep.res.Updated++
				}
			}
		}
		batch = batch[:0]
		return nil
	}
	year := s.clock.Now().Year()
	for _, uid := range order {
		var b strings.Builder
		b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:" + ProdID + "\r\n")
		used := map[string]bool{}
		for _, lines := range groups[uid] {
			for _, l := range lines {
				for _, m := range tzidParam.FindAllStringSubmatch(l, -1) {
					used[strings.Trim(m[1], `"`)] = true
				}
			}
		}
		for id := range used {
			for _, l := range timezones[id] {
				b.WriteString(l + "\r\n")
			}
		}
		for _, lines := range groups[uid] {
			for _, l := range lines {
				b.WriteString(l + "\r\n")
			}
		}
		b.WriteString("END:VCALENDAR\r\n")
		delete(groups, uid)
		vc, err := decode(b.String())
		if err != nil {
			rep.fail(uid, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "parse iCalendar: "), "ical: "))
			continue
		}
		for _, ev := range events(vc) {
			if ev.Props.Get(ical.PropDateTimeStamp) == nil {
				ev.Props.Set(&ical.Prop{Name: ical.PropDateTimeStamp, Params: ical.Params{}, Value: s.clock.Now().UTC().Format(icalUTC)})
				rep.fix(uid, "added missing DTSTAMP")
			}
		}
		for id := range used {
			if _, ok := timezones[id]; !ok {
				if _, known := resolveTZ(id); known {
					rep.fix(uid, fmt.Sprintf("added the missing VTIMEZONE of %s", id))
				}
			}
		}
		existing, err := s.store.Object(ctx, cal.ID, uid)
		var ex *Object
		name := resourceName(uid)
		switch {
		case err == nil:
			ex, name = &existing, existing.Name
		case app.ErrorCode(err) != app.ENotFound:
			return rep.res, err
		}
		ensureTimezones(vc, year)
		ps, o, err := s.prepare(cal, loc, ex, name, vc)
		if err != nil {
			rep.fail(uid, strings.TrimSuffix(strings.TrimPrefix(app.ErrorMessage(err), "Invalid event: "), "."))
			continue
		}
		for _, note := range ps.notes {
			rep.fix(uid, note)
		}
		batch = append(batch, pending{o: o, ps: ps, created: ex == nil})
		if len(batch) >= importBatch {
			if err := flush(); err != nil {
				return rep.res, err
			}
		}
	}
	if err := flush(); err != nil {
		return rep.res, err
	}
	if rep.errsDropped > 0 {
		rep.res.Errors = append(rep.res.Errors, ImportError{Message: fmt.Sprintf("and %d more errors", rep.errsDropped)})
	}
	if rep.fixesDropped > 0 {
		rep.res.Fixes = append(rep.res.Fixes, ImportFix{Message: fmt.Sprintf("and %d more repairs", rep.fixesDropped)})
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		return s.audit.Record(ctx, app.AuditEntry{Module: "calendar", Action: "calendar.imported", ActorID: p.UserID,
			TargetType: "calendar", TargetID: cal.ID, OrgID: p.OrgID, CreatedAt: s.clock.Now(),
			ChangedFields: []string{fmt.Sprintf("imported=%d", rep.res.Imported), fmt.Sprintf("updated=%d", rep.res.Updated)}})
	})
	return rep.res, err
}
