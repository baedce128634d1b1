package contacts

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/emersion/go-vcard"

	"atrium/app"
)

// VCardFile is a vCard ready to download.
type VCardFile struct {
	// Name is a file name for Content-Disposition, ending in .vcf.
	Name string
	Data []byte
}

// Directory lists the active users of the caller's organisation, by name.
// Errors: insufficient_scope (no contacts:read), no_bound_user,
// feature_not_in_plan.
func (s *Service) Directory(ctx context.Context, p *app.Principal) ([]DirectoryEntry, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return nil, err
	}
	out, err := s.store.Directory(ctx, p.OrgID)
	if out == nil {
		out = []DirectoryEntry{}
	}
	return out, err
}

// ExportDirectoryEntry returns an active user of the caller's organisation as a
// vCard 4.0. Errors: insufficient_scope (no contacts:read), no_bound_user,
// feature_not_in_plan, not_found (no active user of the organisation with this
// id).
func (s *Service) ExportDirectoryEntry(ctx context.Context, p *app.Principal, userID string) (VCardFile, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return VCardFile{}, err
	}
	e, err := s.store.DirectoryEntry(ctx, p.OrgID, userID)
	if err != nil {
		return VCardFile{}, err
	}
	c := vcard.Card{}
	c.SetValue(vcard.FieldVersion, "4.0")
	c.SetValue(vcard.FieldProductID, "-//Atrium//Directory//EN")
	c.SetValue(vcard.FieldUID, "urn:uuid:"+e.UserID)
	c.SetKind(vcard.KindIndividual)
	c.SetValue(vcard.FieldFormattedName, e.DisplayName)
	c.SetName(&vcard.Name{FamilyName: e.LastName, GivenName: e.FirstName})
	c.Set(vcard.FieldEmail, &vcard.Field{Value: e.Email, Params: vcard.Params{vcard.ParamType: {"work"}}})
	if e.OrgName != "" {
		c.SetValue(vcard.FieldOrganization, e.OrgName)
	}
	var b bytes.Buffer
	if err := vcard.NewEncoder(&b).Encode(c); err != nil {
		return VCardFile{}, fmt.Errorf("encode directory vCard: %w", err)
	}
	return VCardFile{Name: fileName(e.DisplayName), Data: b.Bytes()}, nil
}

// ExportContact returns a contact as a vCard 4.0: a card stored as 3.0 is
// converted; properties Atrium does not model are kept. Errors:
// insufficient_scope (no contacts:read), no_bound_user, feature_not_in_plan,
// not_found (no such book of the caller, no such contact in it).
func (s *Service) ExportContact(ctx context.Context, p *app.Principal, bookID, id string) (VCardFile, error) {
	c, err := s.Contact(ctx, p, bookID, id)
	if err != nil {
		return VCardFile{}, err
	}
	d, err := parseDoc([]byte(c.VCard))
	if err != nil {
		return VCardFile{}, fmt.Errorf("stored vCard of contact %s: %w", c.ID, err)
	}
	if d.v3() {
		toV4(d)
	}
	return VCardFile{Name: fileName(c.DisplayName), Data: d.bytes()}, nil
}

// toV4 converts a vCard 3.0 to 4.0 (RFC 6350 §1.3.1 and appendix A): the
// version, preference as PREF=1 instead of TYPE=pref, dates in basic format and
// inline photos, logos and sounds as data: URIs. Lines that need no change stay
// as they are.
func toV4(d *doc) {
	for _, l := range d.lines {
		if l.key == "" {
			continue
		}
		f := l.field
		nf := &vcard.Field{Value: f.Value, Group: f.Group, Params: vcard.Params{}}
		changed := false
		for k, vs := range f.Params {
			if k != vcard.ParamType {
				nf.Params[k] = append([]string(nil), vs...)
				continue
			}
			for _, v := range vs {
				switch strings.ToLower(v) {
				case "pref":
					nf.Params.Set(vcard.ParamPreferred, "1")
					changed = true
				case "internet", "x400":
					changed = true // vCard 3.0 only
				default:
					nf.Params.Add(vcard.ParamType, strings.ToLower(v))
					changed = changed || v != strings.ToLower(v)
				}
			}
		}
		switch l.key {
		case vcard.FieldVersion:
			nf.Value, changed = "4.0", true
		case vcard.FieldBirthday, vcard.FieldAnniversary:
			if v := readDate(f.Value); len(v) == 10 && v[4] == '-' {
				nf.Value = strings.ReplaceAll(v, "-", "")
				delete(nf.Params, "VALUE")
				changed = nf.Value != f.Value
			}
		case vcard.FieldPhoto, vcard.FieldLogo, vcard.FieldSound:
			if enc := strings.ToLower(f.Params.Get("ENCODING")); enc == "b" || enc == "base64" {
				mt := strings.ToLower(nf.Params.Get(vcard.ParamType))
				switch mt {
				case "":
					mt = "application/octet-stream"
				case "jpg":
					mt = "image/jpeg"
				default:
					if !strings.Contains(mt, "/") {
						mt = map[bool]string{true: "audio/", false: "image/"}[l.key == vcard.FieldSound] + mt
					}
				}
				delete(nf.Params, "ENCODING")
				delete(nf.Params, vcard.ParamType)
				nf.Value = "data:" + mt + ";base64," + strings.Join(strings.Fields(f.Value), "")
				changed = true
			}
		}
		if changed {
			l.raw, l.field = "", nf
		}
	}
}

// fileName makes a safe .vcf file name from a display name.
func fileName(name string) string {
	n := strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.':
			return r
		case unicode.IsSpace(r):
			return ' '
		}
		return -1
	}, name)
	n = strings.Join(strings.Fields(n), " ")
	n = strings.Trim(n, ".")
	if r := []rune(n); len(r) > 100 {
		n = string(r[:100])
	}
	if n == "" {
		n = "contact"
	}
	return n + ".vcf"
}
