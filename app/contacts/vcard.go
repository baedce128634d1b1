package contacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-vcard"
)

// MaxVCardBytes bounds the size of one stored vCard (photos included).
const MaxVCardBytes = 2 << 20

// doc is a vCard kept as its content lines. A line read from the client keeps its
// raw text (folding included) and is written back unchanged unless an edit
// replaces it; lines an edit creates are formatted anew.
type doc struct {
	lines []*line
}

type line struct {
	raw   string // original text including folding, without the final CRLF; "" for new lines
	key   string // upper-case property name; "" for a line go-vcard cannot read
	field *vcard.Field
}

var errNotVCard = errors.New("not a vCard")

// parseDoc reads one vCard. Lines outside BEGIN/END are dropped; a second card is
// refused.
func parseDoc(data []byte) (*doc, error) {
	if len(data) > MaxVCardBytes {
		return nil, fmt.Errorf("the vCard is larger than %d bytes", MaxVCardBytes)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("the vCard is not valid UTF-8")
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	phys := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	// Join folded lines, keeping their raw form. A logical line is joined once
	// from its physical lines (linear: appending to a string line by line
	// copies it every time).
	var logical []string
	var raws []string
	var parts []string // the physical lines of the logical line being read
	flush := func() {
		if len(parts) == 0 {
			return
		}
		var l strings.Builder
		l.WriteString(parts[0])
		for _, p := range parts[1:] {
			l.WriteString(p[1:])
		}
		logical = append(logical, l.String())
		raws = append(raws, strings.Join(parts, "\r\n"))
		parts = parts[:0]
	}
	for _, p := range phys {
		p = strings.TrimSuffix(p, "\r")
		if (strings.HasPrefix(p, " ") || strings.HasPrefix(p, "\t")) && len(parts) > 0 {
			parts = append(parts, p)
			continue
		}
		if strings.TrimSpace(p) == "" {
			continue
		}
		flush()
		parts = append(parts, p)
	}
	flush()
	d := &doc{}
	state := 0 // 0 before BEGIN, 1 inside, 2 after END
	depth := 0
	for i, l := range logical {
		name := propName(l)
		switch state {
		case 0:
			if name == "BEGIN" && strings.EqualFold(propValue(l), "VCARD") {
				state = 1
				continue
			}
			return nil, errNotVCard
		case 1:
			if name == "BEGIN" && strings.EqualFold(propValue(l), "VCARD") {
				depth++ // an embedded card (vCard 2.1/3.0 AGENT): kept as raw lines
			}
			if name == "END" && strings.EqualFold(propValue(l), "VCARD") {
				if depth == 0 {
					state = 2
					continue
				}
				depth--
			}
			ln := &line{raw: raws[i]}
			if depth == 0 && name != "BEGIN" && name != "END" {
				if k, f := parseLine(l); f != nil {
					ln.key, ln.field = k, f
				}
			}
			d.lines = append(d.lines, ln)
		case 2:
			if name == "BEGIN" {
				return nil, errors.New("the body holds more than one vCard")
			}
		}
	}
	if state != 2 {
		return nil, errors.New("the vCard has no END:VCARD line")
	}
	if d.version() == "" {
		return nil, errors.New("the vCard has no VERSION")
	}
	return d, nil
}

// propName returns the upper-case property name of an unfolded line (without group).
func propName(l string) string {
	i := strings.IndexAny(l, ";:")
	if i < 0 {
		return ""
	}
	name := l[:i]
	if j := strings.LastIndexByte(name, '.'); j >= 0 {
		name = name[j+1:]
	}
	return strings.ToUpper(strings.TrimSpace(name))
}

func propValue(l string) string {
	if i := strings.IndexByte(l, ':'); i >= 0 {
		return strings.TrimSpace(l[i+1:])
	}
	return ""
}

// parseLine reads one unfolded content line with go-vcard.
func parseLine(l string) (string, *vcard.Field) {
	c, err := vcard.NewDecoder(strings.NewReader("BEGIN:VCARD\r\n" + l + "\r\nEND:VCARD\r\n")).Decode()
	if err != nil {
		return "", nil
	}
	for k, fs := range c {
		if len(fs) == 1 {
			return k, fs[0]
		}
	}
	return "", nil
}

// version returns the card's VERSION value.
func (d *doc) version() string {
	if f := d.first("VERSION"); f != nil {
		return strings.TrimSpace(f.Value)
	}
	return ""
}

func (d *doc) v3() bool { return !strings.HasPrefix(d.version(), "4") }

// fields returns the fields of a property, in order.
func (d *doc) fields(key string) []*vcard.Field {
	var out []*vcard.Field
	for _, l := range d.lines {
		if l.key == key {
			out = append(out, l.field)
		}
	}
	return out
}

func (d *doc) first(key string) *vcard.Field {
	for _, l := range d.lines {
		if l.key == key {
			return l.field
		}
	}
	return nil
}

// replace sets the fields of a property. A field that is one of the current
// fields (the same pointer) keeps its raw line and its place; new fields take the
// places of current fields that are dropped, in order, and the rest follow the
// last line of the property (or go before END when there was none).
func (d *doc) replace(key string, fields []*vcard.Field) {
	old := map[*vcard.Field]bool{}
	for _, l := range d.lines {
		if l.key == key {
			old[l.field] = true
		}
	}
	keep := map[*vcard.Field]bool{}
	var fresh []*vcard.Field
	for _, f := range fields {
		if old[f] && !keep[f] {
			keep[f] = true
		} else {
			fresh = append(fresh, f)
		}
	}
	out := make([]*line, 0, len(d.lines)+len(fresh))
	last := -1
	for _, l := range d.lines {
		switch {
		case l.key != key:
			out = append(out, l)
			continue
		case keep[l.field]:
			out = append(out, l)
		case len(fresh) > 0:
			out = append(out, &line{key: key, field: fresh[0]})
			fresh = fresh[1:]
		default:
			continue // dropped
		}
		last = len(out) - 1
	}
	if len(fresh) > 0 {
		pos := last + 1
		if last < 0 {
			pos = len(out)
		}
		tail := append([]*line(nil), out[pos:]...)
		out = out[:pos]
		for _, f := range fresh {
			out = append(out, &line{key: key, field: f})
		}
		out = append(out, tail...)
	}
	d.lines = out
}

// set sets a single-valued property: unchanged when the value is the same, removed
// when value is "", otherwise the first field is replaced keeping its parameters.
func (d *doc) set(key, value string) {
	cur := d.fields(key)
	if len(cur) > 0 && cur[0].Value == value {
		return
	}
	if value == "" {
		d.replace(key, nil)
		return
	}
	f := &vcard.Field{Value: value}
	if len(cur) > 0 {
		f.Params, f.Group = cur[0].Params, cur[0].Group
	}
	d.replace(key, append([]*vcard.Field{f}, rest(cur)...))
}

func rest(fs []*vcard.Field) []*vcard.Field {
	if len(fs) < 2 {
		return nil
	}
	return fs[1:]
}

// bytes writes the card: original lines as they were, new lines formatted (and
// folded at 75 octets).
func (d *doc) bytes() []byte {
	var b bytes.Buffer
	b.WriteString("BEGIN:VCARD\r\n")
	for _, l := range d.lines {
		if l.raw != "" {
			b.WriteString(l.raw)
		} else {
			b.WriteString(fold(formatLine(l.key, l.field)))
		}
		b.WriteString("\r\n")
	}
	b.WriteString("END:VCARD\r\n")
	return b.Bytes()
}

// formatLine formats a field. The value is written as go-vcard holds it: text
// values keep `\;` escapes; backslashes, newlines and commas are escaped.
func formatLine(key string, f *vcard.Field) string {
	var b strings.Builder
	if f.Group != "" {
		b.WriteString(f.Group + ".")
	}
	b.WriteString(key)
	keys := make([]string, 0, len(f.Params))
	for k := range f.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals := f.Params[k]
		if len(vals) == 0 {
			continue
		}
		b.WriteString(";" + k + "=")
		for i, v := range vals {
			if i > 0 {
				b.WriteByte(',')
			}
			if strings.ContainsAny(v, ":;,\"") {
				b.WriteString(`"` + strings.ReplaceAll(v, `"`, "'") + `"`)
			} else {
				b.WriteString(v)
			}
		}
	}
	b.WriteByte(':')
	if strings.EqualFold(f.Params.Get("VALUE"), "uri") || strings.HasPrefix(f.Value, "data:") {
		b.WriteString(f.Value) // URI values are not escaped
	} else {
		b.WriteString(escapeRaw(f.Value))
	}
	return b.String()
}

// escapeRaw escapes a value held in go-vcard form (where `\;` is still escaped).
func escapeRaw(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && v[i+1] == ';':
			b.WriteString(`\;`)
			i++
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
		case c == ',':
			b.WriteString(`\,`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// fold folds a content line at 75 octets without splitting a UTF-8 sequence.
func fold(s string) string {
	if len(s) <= 75 {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		w := utf8.RuneLen(r)
		if n+w > 75 {
			b.WriteString("\r\n ")
			n = 1
		}
		b.WriteRune(r)
		n += w
	}
	return b.String()
}

// textValue turns plain text into go-vcard form: semicolons escaped.
func textValue(s string) string { return strings.ReplaceAll(s, ";", `\;`) }

// plainText reads a single text value from go-vcard form.
func plainText(v string) string { return strings.ReplaceAll(v, `\;`, ";") }

// components splits a structured value (N, ADR, ORG) at unescaped semicolons and
// unescapes each component.
func components(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && v[i+1] == ';' {
			cur.WriteByte(';')
			i++
			continue
		}
		if v[i] == ';' {
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(v[i])
	}
	return append(out, cur.String())
}

// structured joins components into go-vcard form.
func structured(parts ...string) string {
	for i, p := range parts {
		parts[i] = textValue(p)
	}
	return strings.Join(parts, ";")
}

func component(parts []string, i int) string {
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

// ETag returns the strong entity tag of a stored vCard, quoted.
func ETag(vcardText string) string {
	sum := sha256.Sum256([]byte(vcardText))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// typeOf returns the first meaningful TYPE of a field, lowercased; "other" when none.
func typeOf(f *vcard.Field) string {
	for _, t := range f.Params.Types() {
		switch t = strings.ToLower(strings.TrimSpace(t)); t {
		case "", "pref", "internet", "voice", "x400", "postal", "parcel", "dom", "intl":
		default:
			return t
		}
	}
	return "other"
}

func isPref(f *vcard.Field) bool {
	if f.Params.Get(vcard.ParamPreferred) != "" {
		return true
	}
	for _, t := range f.Params.Types() {
		if strings.EqualFold(t, "pref") {
			return true
		}
	}
	return false
}

// mapOut reads the modelled fields of a card, and its primary e-mail and phone.
func mapOut(d *doc) (f Fields, email, phone string) {
	var prefEmail, prefPhone bool
	if fn := d.first(vcard.FieldFormattedName); fn != nil {
		f.DisplayName = plainText(fn.Value)
	}
	if n := d.first(vcard.FieldName); n != nil {
		parts := components(n.Value)
		f.LastName, f.FirstName = component(parts, 0), component(parts, 1)
	}
	for _, e := range d.fields(vcard.FieldEmail) {
		v := strings.TrimPrefix(strings.TrimSpace(e.Value), "mailto:")
		f.Emails = append(f.Emails, Email{Type: typeOf(e), Value: v})
		if email == "" || isPref(e) && !prefEmail {
			email, prefEmail = v, isPref(e)
		}
	}
	for _, t := range d.fields(vcard.FieldTelephone) {
		v := strings.TrimPrefix(strings.TrimSpace(t.Value), "tel:")
		f.Phones = append(f.Phones, Phone{Type: typeOf(t), Value: v})
		if phone == "" || isPref(t) && !prefPhone {
			phone, prefPhone = v, isPref(t)
		}
	}
	if o := d.first(vcard.FieldOrganization); o != nil {
		f.Organization = component(components(o.Value), 0)
	}
	if t := d.first(vcard.FieldTitle); t != nil {
		f.JobTitle = plainText(t.Value)
	}
	for _, a := range d.fields(vcard.FieldAddress) {
		p := components(a.Value)
		f.Addresses = append(f.Addresses, Address{Type: typeOf(a), Street: component(p, 2), City: component(p, 3),
			Region: component(p, 4), PostalCode: component(p, 5), Country: component(p, 6)})
	}
	if b := d.first(vcard.FieldBirthday); b != nil {
		f.Birthday = readDate(b.Value)
	}
	if n := d.first(vcard.FieldNote); n != nil {
		f.Notes = plainText(n.Value)
	}
	if f.Emails == nil {
		f.Emails = []Email{}
	}
	if f.Phones == nil {
		f.Phones = []Phone{}
	}
	if f.Addresses == nil {
		f.Addresses = []Address{}
	}
	if f.DisplayName == "" {
		f.DisplayName = deriveName(f)
	}
	return f, email, phone
}

// readDate reads a vCard date (19850412, 1985-04-12, 1985-04-12T…) as YYYY-MM-DD;
// partial dates (--0412) are returned as written.
func readDate(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 8 && !strings.HasPrefix(v, "--") {
		digits := strings.ReplaceAll(v, "-", "")
		if len(digits) >= 8 {
			if t, err := time.Parse("20060102", digits[:8]); err == nil {
				return t.Format(time.DateOnly)
			}
		}
	}
	return v
}

func deriveName(f Fields) string {
	if n := strings.TrimSpace(strings.TrimSpace(f.FirstName) + " " + strings.TrimSpace(f.LastName)); n != "" {
		return n
	}
	if f.Organization != "" {
		return f.Organization
	}
	if len(f.Emails) > 0 {
		return f.Emails[0].Value
	}
	if len(f.Phones) > 0 {
		return f.Phones[0].Value
	}
	return ""
}

// newDoc makes an empty vCard 4.0 with a UID.
func newDoc(uid string) *doc {
	d := &doc{}
	d.lines = append(d.lines,
		&line{key: "VERSION", field: &vcard.Field{Value: "4.0"}},
		&line{key: "PRODID", field: &vcard.Field{Value: "-//Atrium//Contacts//EN"}},
		&line{key: "UID", field: &vcard.Field{Value: uid}},
	)
	return d
}

// apply writes the modelled fields into the card. Properties whose value does
// not change keep their line; list entries (EMAIL, TEL, ADR) that match an
// existing field keep it, parameters and all.
func apply(d *doc, f Fields) {
	v3 := d.v3()
	d.set(vcard.FieldFormattedName, textValue(f.DisplayName))

	// N: family;given;additional;prefixes;suffixes — keep the components we do not model.
	if n := d.first(vcard.FieldName); n != nil || f.FirstName != "" || f.LastName != "" || v3 {
		var parts []string
		if n != nil {
			parts = components(n.Value)
		}
		for len(parts) < 5 {
			parts = append(parts, "")
		}
		parts[0], parts[1] = f.LastName, f.FirstName
		d.set(vcard.FieldName, structured(parts...))
	}

	var emails []*vcard.Field
	old := d.fields(vcard.FieldEmail)
	used := map[*vcard.Field]bool{}
	for _, e := range f.Emails {
		emails = append(emails, reuse(old, used, e.Value, e.Type, v3, func(a, b string) bool {
			return strings.EqualFold(strings.TrimPrefix(a, "mailto:"), b)
		}))
	}
	d.replace(vcard.FieldEmail, emails)

	var phones []*vcard.Field
	old = d.fields(vcard.FieldTelephone)
	used = map[*vcard.Field]bool{}
	for _, p := range f.Phones {
		phones = append(phones, reuse(old, used, p.Value, p.Type, v3, func(a, b string) bool {
			return strings.TrimPrefix(a, "tel:") == b
		}))
	}
	d.replace(vcard.FieldTelephone, phones)

	if o := d.first(vcard.FieldOrganization); o != nil && f.Organization != "" {
		parts := components(o.Value)
		parts[0] = f.Organization
		d.set(vcard.FieldOrganization, structured(parts...))
	} else {
		d.set(vcard.FieldOrganization, structured(f.Organization))
	}
	d.set(vcard.FieldTitle, textValue(f.JobTitle))

	var adrs []*vcard.Field
	old = d.fields(vcard.FieldAddress)
	used = map[*vcard.Field]bool{}
	for _, a := range f.Addresses {
		var match *vcard.Field
		for _, o := range old {
			p := components(o.Value)
			if !used[o] && component(p, 2) == a.Street && component(p, 3) == a.City && component(p, 4) == a.Region &&
				component(p, 5) == a.PostalCode && component(p, 6) == a.Country {
				match = o
				break
			}
		}
		if match != nil {
			used[match] = true
			if typeOf(match) == normType(a.Type) {
				adrs = append(adrs, match)
				continue
			}
			nf := &vcard.Field{Value: match.Value, Params: withType(match.Params, a.Type, v3), Group: match.Group}
			adrs = append(adrs, nf)
			continue
		}
		adrs = append(adrs, &vcard.Field{Value: structured("", "", a.Street, a.City, a.Region, a.PostalCode, a.Country),
			Params: withType(nil, a.Type, v3)})
	}
	d.replace(vcard.FieldAddress, adrs)

	if cur := d.first(vcard.FieldBirthday); cur == nil || readDate(cur.Value) != f.Birthday {
		if f.Birthday == "" {
			d.set(vcard.FieldBirthday, "")
		} else if t, err := time.Parse(time.DateOnly, f.Birthday); err == nil {
			if v3 {
				d.set(vcard.FieldBirthday, t.Format(time.DateOnly))
			} else {
				d.set(vcard.FieldBirthday, t.Format("20060102"))
			}
		}
	}
	if cur := d.first(vcard.FieldNote); cur == nil || plainText(cur.Value) != f.Notes {
		d.set(vcard.FieldNote, textValue(f.Notes))
	}
}

// reuse returns the field for a list entry: an existing field with the same value
// (kept as is when its type is unchanged), or a new one.
func reuse(old []*vcard.Field, used map[*vcard.Field]bool, value, typ string, v3 bool, same func(a, b string) bool) *vcard.Field {
	for _, o := range old {
		if used[o] || !same(strings.TrimSpace(o.Value), value) {
			continue
		}
		used[o] = true
		if typeOf(o) == normType(typ) {
			return o
		}
		return &vcard.Field{Value: o.Value, Params: withType(o.Params, typ, v3), Group: o.Group}
	}
	return &vcard.Field{Value: value, Params: withType(nil, typ, v3)}
}

func normType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if t == "" {
		return "other"
	}
	return t
}

// withType copies params with TYPE set to typ (keeping a preference marker).
func withType(p vcard.Params, typ string, v3 bool) vcard.Params {
	out := vcard.Params{}
	for k, v := range p {
		out[k] = append([]string(nil), v...)
	}
	var keep []string
	for _, t := range out[vcard.ParamType] {
		if strings.EqualFold(t, "pref") || strings.EqualFold(t, "internet") || strings.EqualFold(t, "voice") {
			keep = append(keep, t)
		}
	}
	if t := normType(typ); t != "other" {
		if v3 {
			t = strings.ToUpper(t)
		}
		keep = append([]string{t}, keep...)
	}
	if len(keep) == 0 {
		delete(out, vcard.ParamType)
	} else {
		out[vcard.ParamType] = keep
	}
	return out
}

// uid returns the card's UID.
func (d *doc) uid() string {
	if f := d.first(vcard.FieldUID); f != nil {
		return strings.TrimSpace(f.Value)
	}
	return ""
}
