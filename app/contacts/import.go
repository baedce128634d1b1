package contacts

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"atrium/app"
)

// Limits of a book import.
const (
	// MaxImportBytes caps an imported .vcf file.
	MaxImportBytes = 10 << 20
	// MaxImportCards caps the number of cards of an imported file.
	MaxImportCards = 10000
	// maxImportFailures caps the failures listed in an BookImportResult.
	maxImportFailures = 1000
)

// BookImportResult reports a book import.
type BookImportResult struct {
	Created   int                 `json:"created" doc:"Cards added as new contacts."`
	Updated   int                 `json:"updated" doc:"Cards whose UID was already in the book: that contact was replaced by the card."`
	Unchanged int                 `json:"unchanged" doc:"Cards identical to the contact of the book with their UID: nothing written."`
	Failed    []BookImportFailure `json:"failed" doc:"Cards not imported, with why (at most 1000 listed; failed_count counts them all)."`
	// FailedCount counts every failed card, listed or not.
	FailedCount int `json:"failed_count"`
}

// BookImportFailure is a card that was not imported.
type BookImportFailure struct {
	Index  int    `json:"index" doc:"Position of the card in the file, from 0."`
	UID    string `json:"uid,omitempty" doc:"The card's UID, when it has one."`
	Reason string `json:"reason"`
}

func (r *BookImportResult) fail(i int, uid, reason string) {
	r.FailedCount++
	if len(r.Failed) < maxImportFailures {
		r.Failed = append(r.Failed, BookImportFailure{Index: i, UID: uid, Reason: reason})
	}
}

// splitCards cuts a .vcf file into its cards (the text from each top-level
// BEGIN:VCARD to its END:VCARD; an embedded AGENT card stays inside its card).
// A last card without END:VCARD is kept as it is (its parse fails). Lines
// outside cards are ignored. The file must start with BEGIN:VCARD.
func splitCards(data []byte) ([][]byte, error) {
	text := bytes.TrimPrefix(data, []byte("\uFEFF"))
	var cards [][]byte
	depth, start, pos := 0, -1, 0
	seen := false
	for pos < len(text) {
		end := bytes.IndexByte(text[pos:], '\n')
		next := len(text)
		if end >= 0 {
			next = pos + end + 1
		}
		l := strings.TrimSpace(string(text[pos:next]))
		if l == "" {
			pos = next
			continue
		}
		begin := strings.EqualFold(l, "BEGIN:VCARD")
		if !seen && !begin {
			return nil, app.Invalid("body", "is not a vCard file (it must start with BEGIN:VCARD)", nil)
		}
		seen = true
		switch {
		case begin:
			if depth == 0 {
				start = pos
			}
			depth++
		case depth > 0 && strings.EqualFold(l, "END:VCARD"):
			depth--
			if depth == 0 {
				cards = append(cards, text[start:next])
				start = -1
			}
		}
		pos = next
	}
	if start >= 0 {
		cards = append(cards, text[start:])
	}
	if len(cards) == 0 {
		return nil, app.Invalid("body", "is not a vCard file (it must start with BEGIN:VCARD)", nil)
	}
	if len(cards) > MaxImportCards {
		return nil, app.Invalid("body", fmt.Sprintf("must hold at most %d cards", MaxImportCards), len(cards))
	}
	return cards, nil
}

// Import reads a .vcf file of one or more cards into a book. Each card is
// checked as a created contact is (the fields Atrium models must be valid) and
// kept whole, as a CardDAV client's card is: properties Atrium does not model
// stay. A card keeps its UID; a card without one gets one. A card whose UID is
// already that of a contact of the book replaces that contact (a second import
// of the same file changes nothing); two cards of the file with one UID: the
// later fails. Cards fail on their own (listed with their index and why); the
// others are written together in one transaction. A body that is not a vCard
// file, or has more than MaxImportCards cards, changes nothing (validation).
// Errors: insufficient_scope (no contacts:write), no_bound_user,
// feature_not_in_plan, not_found (no such book of the caller),
// payload_too_large (over MaxImportBytes), validation_failed (not a vCard file,
// over MaxImportCards cards).
func (s *Service) Import(ctx context.Context, p *app.Principal, bookID string, data []byte) (BookImportResult, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return BookImportResult{}, err
	}
	if _, err := s.book(ctx, p, bookID); err != nil {
		return BookImportResult{}, err
	}
	if len(data) > MaxImportBytes {
		return BookImportResult{}, app.Errorf(app.EPayloadTooLarge, "The file may be at most %d MiB.", MaxImportBytes>>20)
	}
	cards, err := splitCards(data)
	if err != nil {
		return BookImportResult{}, err
	}
	existing, err := s.store.ContactsMeta(ctx, p.OrgID, p.UserID, bookID)
	if err != nil {
		return BookImportResult{}, err
	}
	byUID := make(map[string]ContactDetail, len(existing))
	for _, c := range existing {
		byUID[c.UID] = c
	}
	res := BookImportResult{Failed: []BookImportFailure{}}
	now := s.clock.Now()
	var writes []ContactDetail
	created := map[string]bool{} // contact ids written as new
	seen := map[string]int{}     // UID → index of its card in the file
	for i, raw := range cards {
		d, err := parseDoc(raw)
		if err != nil {
			res.fail(i, "", err.Error())
			continue
		}
		uid := d.uid()
		if j, dup := seen[uid]; dup && uid != "" {
			res.fail(i, uid, fmt.Sprintf("the UID is also that of card %d of the file", j))
			continue
		}
		f, _, _ := mapOut(d)
		if err := normalize(&f, f.Birthday); err != nil {
			res.fail(i, uid, strings.ReplaceAll(app.ErrorMessage(err), "body.", ""))
			continue
		}
		id := app.NewID()
		if uid == "" {
			uid = "urn:uuid:" + id
			d.replace("UID", nil)
			d.set("UID", uid)
		}
		seen[uid] = i
		if d.first("FN") == nil {
			d.set("FN", textValue(f.DisplayName))
		}
		text := string(d.bytes())
		c, ok := byUID[uid]
		switch {
		case ok && c.ETag == ETag(text):
			res.Unchanged++
			continue
		case ok:
			c.UpdatedAt = now
		default:
			c = ContactDetail{ID: id, BookID: bookID, OrgID: p.OrgID, OwnerID: p.UserID, Href: id + ".vcf", CreatedAt: now, UpdatedAt: now}
			created[id] = true
		}
		c.UID, c.VCard, c.ETag = uid, text, ETag(text)
		c.Fields, c.Email, c.Phone = mapOut(d)
		writes = append(writes, c)
	}
	if len(writes) == 0 {
		return res, nil
	}
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.book(ctx, p, bookID); err != nil {
			return err
		}
		seq, err := s.store.NextSeq(ctx, bookID)
		if err != nil {
			return err
		}
		for _, c := range writes {
			c.Seq = seq
			if created[c.ID] {
				err = s.insertContact(ctx, p, c)
			} else {
				err = s.store.UpdateContact(ctx, c)
				if err == nil {
					err = s.record(ctx, p, "contact.updated", "contact", c.ID, []string{"vcard"})
				}
			}
			if err != nil {
				return fmt.Errorf("import contact %s: %w", c.UID, err)
			}
		}
		return nil
	})
	if err != nil {
		return BookImportResult{}, err
	}
	for _, c := range writes {
		if created[c.ID] {
			res.Created++
		} else {
			res.Updated++
		}
	}
	return res, nil
}

// ExportBook returns every contact of a book as one .vcf file of vCard 4.0
// cards, by display name, each as ExportContact writes it. Errors:
// insufficient_scope (no contacts:read), no_bound_user, feature_not_in_plan,
// not_found (no such book of the caller).
func (s *Service) ExportBook(ctx context.Context, p *app.Principal, bookID string) (VCardFile, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return VCardFile{}, err
	}
	b, err := s.book(ctx, p, bookID)
	if err != nil {
		return VCardFile{}, err
	}
	cs, err := s.store.ContactsFull(ctx, p.OrgID, p.UserID, bookID)
	if err != nil {
		return VCardFile{}, err
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := strings.ToLower(cs[i].DisplayName), strings.ToLower(cs[j].DisplayName)
		if a != b {
			return a < b
		}
		return cs[i].ID < cs[j].ID
	})
	var out bytes.Buffer
	for _, c := range cs {
		d, err := parseDoc([]byte(c.VCard))
		if err != nil {
			return VCardFile{}, fmt.Errorf("stored vCard of contact %s: %w", c.ID, err)
		}
		if d.v3() {
			toV4(d)
		}
		out.Write(d.bytes())
	}
	return VCardFile{Name: fileName(b.Name), Data: out.Bytes()}, nil
}
