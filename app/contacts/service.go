package contacts

import (
	"context"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode"

	"atrium/app"
)

// DefaultBookName is the name of the address book every user gets on first access.
const DefaultBookName = "Contacts"

// Search limits.
const (
	DefaultSearchLimit = 50
	MaxSearchLimit     = 200
)

const module = "contacts"

// Service is the one place the rules of address books live.
type Service struct {
	store Store
	audit app.Auditor
	clock app.Clock
}

// NewService returns a contacts service.
func NewService(store Store, audit app.Auditor, clock app.Clock) *Service {
	return &Service{store: store, audit: audit, clock: clock}
}

// check verifies the caller may use contacts with scope.
func check(p *app.Principal, scope string) error {
	if err := p.Require(scope); err != nil {
		return err
	}
	if err := p.RequireUser(); err != nil {
		return err
	}
	if len(p.Features) > 0 && !p.HasFeature("contacts") {
		return app.Errorf(app.EFeatureNotInPlan, "The organisation's plan does not include contacts.")
	}
	return nil
}

// DefaultBook returns the caller's default book, creating it on first access.
// Errors: insufficient_scope (no contacts:read), no_bound_user,
// feature_not_in_plan.
func (s *Service) DefaultBook(ctx context.Context, p *app.Principal) (AddressBook, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return AddressBook{}, err
	}
	b, err := s.defaultBook(ctx, p)
	if err != nil {
		return AddressBook{}, err
	}
	return s.withCount(ctx, b)
}

func (s *Service) withCount(ctx context.Context, b AddressBook) (AddressBook, error) {
	n, err := s.store.ContactCount(ctx, b.ID)
	b.ContactCount = n
	return b, err
}

func (s *Service) defaultBook(ctx context.Context, p *app.Principal) (AddressBook, error) {
	b, err := s.store.DefaultBook(ctx, p.OrgID, p.UserID)
	if app.ErrorCode(err) != app.ENotFound {
		return b, err
	}
	now := s.clock.Now()
	b = AddressBook{ID: app.NewID(), OrgID: p.OrgID, OwnerID: p.UserID, Name: DefaultBookName, IsDefault: true, CreatedAt: now, UpdatedAt: now}
	err = s.store.CreateBook(ctx, b)
	if app.ErrorCode(err) == app.EConflict { // created by a concurrent request
		return s.store.DefaultBook(ctx, p.OrgID, p.UserID)
	}
	if err != nil {
		return AddressBook{}, fmt.Errorf("create default address book: %w", err)
	}
	return b, nil
}

// Books lists the caller's address books, the default first. Errors:
// insufficient_scope (no contacts:read), no_bound_user, feature_not_in_plan.
func (s *Service) Books(ctx context.Context, p *app.Principal) ([]AddressBook, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return nil, err
	}
	books, err := s.store.Books(ctx, p.OrgID, p.UserID)
	if err != nil {
		return nil, err
	}
	for _, b := range books {
		if b.IsDefault { // the usual case: one read
			return books, nil
		}
	}
	if _, err := s.defaultBook(ctx, p); err != nil {
		return nil, err
	}
	return s.store.Books(ctx, p.OrgID, p.UserID)
}

// AddressBook returns one of the caller's books. Errors: insufficient_scope (no
// contacts:read), no_bound_user, feature_not_in_plan, not_found (no such book
// of the caller).
func (s *Service) Book(ctx context.Context, p *app.Principal, id string) (AddressBook, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return AddressBook{}, err
	}
	b, err := s.book(ctx, p, id)
	if err != nil {
		return AddressBook{}, err
	}
	return s.withCount(ctx, b)
}

func (s *Service) book(ctx context.Context, p *app.Principal, id string) (AddressBook, error) {
	if _, err := s.defaultBook(ctx, p); err != nil {
		return AddressBook{}, err
	}
	return s.store.Book(ctx, p.OrgID, p.UserID, id)
}

func validateBook(in *AddressBookInput) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Description = strings.TrimSpace(in.Description)
	var v app.Validator
	v.Check(in.Name != "", "body.name", "must not be empty", in.Name)
	v.Check(len([]rune(in.Name)) <= 200, "body.name", "must be at most 200 characters", in.Name)
	v.Check(len([]rune(in.Description)) <= 2000, "body.description", "must be at most 2000 characters", nil)
	return v.Err()
}

// CreateBook creates an address book for the caller; id, when not empty, is the
// identifier to use (a CardDAV client names the collection it creates). Errors:
// insufficient_scope (no contacts:write), no_bound_user, feature_not_in_plan,
// validation_failed (the name, the description or the id), conflict (the id is
// taken).
func (s *Service) CreateBook(ctx context.Context, p *app.Principal, id string, in AddressBookInput) (AddressBook, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return AddressBook{}, err
	}
	if err := validateBook(&in); err != nil {
		return AddressBook{}, err
	}
	if id == "" {
		id = app.NewID()
	} else if !validResourceName(id) {
		return AddressBook{}, app.Invalid("path.book_id", "must be 1–200 letters, digits, '-', '_', '.' or '@'", id)
	}
	now := s.clock.Now()
	b := AddressBook{ID: id, OrgID: p.OrgID, OwnerID: p.UserID, Name: in.Name, Description: in.Description, CreatedAt: now, UpdatedAt: now}
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.defaultBook(ctx, p); err != nil {
			return err
		}
		if err := s.store.CreateBook(ctx, b); err != nil {
			return err
		}
		return s.record(ctx, p, "book.created", "address_book", b.ID, []string{"name"})
	})
	return b, err
}

// UpdateBook renames an address book or changes its description. Errors:
// insufficient_scope (no contacts:write), no_bound_user, feature_not_in_plan,
// validation_failed (the name or the description), not_found (no such book of
// the caller).
func (s *Service) UpdateBook(ctx context.Context, p *app.Principal, id string, in AddressBookInput) (AddressBook, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return AddressBook{}, err
	}
	if err := validateBook(&in); err != nil {
		return AddressBook{}, err
	}
	var b AddressBook
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		var err error
		if b, err = s.book(ctx, p, id); err != nil {
			return err
		}
		b.Name, b.Description, b.UpdatedAt = in.Name, in.Description, s.clock.Now()
		if err := s.store.UpdateBook(ctx, b); err != nil {
			return err
		}
		if b, err = s.withCount(ctx, b); err != nil {
			return err
		}
		return s.record(ctx, p, "book.updated", "address_book", b.ID, []string{"name", "description"})
	})
	return b, err
}

// DeleteBook deletes an address book and its contacts; the default book cannot be
// deleted. Errors: insufficient_scope (no contacts:write), no_bound_user,
// feature_not_in_plan, not_found (no such book of the caller), conflict (the
// default book).
func (s *Service) DeleteBook(ctx context.Context, p *app.Principal, id string) error {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		b, err := s.book(ctx, p, id)
		if err != nil {
			return err
		}
		if b.IsDefault {
			return app.Errorf(app.EConflict, "The default address book cannot be deleted.")
		}
		if err := s.store.DeleteBook(ctx, p.OrgID, p.UserID, id); err != nil {
			return err
		}
		return s.record(ctx, p, "book.deleted", "address_book", id, nil)
	})
}

// ContactsJSON lists the contacts of a book by display name, as a JSON array of
// ContactSummary (the stored list form of each contact, so a 10,000-contact book
// lists without per-field work). Errors: insufficient_scope (no contacts:read),
// no_bound_user, feature_not_in_plan, not_found (no such book of the caller).
func (s *Service) ContactsJSON(ctx context.Context, p *app.Principal, bookID string) ([]byte, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return nil, err
	}
	if _, err := s.book(ctx, p, bookID); err != nil {
		return nil, err
	}
	return s.store.ContactsJSON(ctx, p.OrgID, p.UserID, bookID)
}

// ContactDetail returns a contact of a book. Errors: insufficient_scope (no
// contacts:read), no_bound_user, feature_not_in_plan, not_found (no such book
// of the caller, no such contact in it).
func (s *Service) Contact(ctx context.Context, p *app.Principal, bookID, id string) (ContactDetail, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return ContactDetail{}, err
	}
	if _, err := s.book(ctx, p, bookID); err != nil {
		return ContactDetail{}, err
	}
	c, err := s.store.Contact(ctx, p.OrgID, p.UserID, bookID, id)
	if err != nil {
		return ContactDetail{}, err
	}
	return withFields(c)
}

// StoredFields fills the modelled fields of a stored contact from its vCard
// (its e-mail addresses and phones, say), as the service reads them.
func StoredFields(c ContactDetail) (ContactDetail, error) { return withFields(c) }

// withFields fills the modelled fields of a stored contact from its vCard.
func withFields(c ContactDetail) (ContactDetail, error) {
	d, err := parseDoc([]byte(c.VCard))
	if err != nil {
		return c, fmt.Errorf("stored vCard of contact %s: %w", c.ID, err)
	}
	c.Fields, c.Email, c.Phone = mapOut(d)
	return c, nil
}

var (
	birthdayRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	phoneRE    = regexp.MustCompile(`^[0-9+()\-./ #*pPwWxX;,ext]{1,64}$`)
	typeRE     = regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
)

// normalize trims the fields and checks them; the display name is derived when
// absent. unchangedBirthday is a birthday value accepted as is (a partial date a
// client stored).
func normalize(f *Fields, unchangedBirthday string) error {
	var v app.Validator
	trim := func(s *string, loc string, max int) {
		*s = strings.TrimSpace(*s)
		v.Check(len([]rune(*s)) <= max, loc, fmt.Sprintf("must be at most %d characters", max), nil)
	}
	trim(&f.FirstName, "body.first_name", 200)
	trim(&f.LastName, "body.last_name", 200)
	trim(&f.DisplayName, "body.display_name", 400)
	trim(&f.Organization, "body.organization", 400)
	trim(&f.JobTitle, "body.job_title", 400)
	trim(&f.Birthday, "body.birthday", 20)
	f.Notes = strings.TrimSpace(f.Notes)
	v.Check(len(f.Notes) <= 20000, "body.notes", "must be at most 20000 bytes", nil)
	if f.Emails == nil {
		f.Emails = []Email{}
	}
	if f.Phones == nil {
		f.Phones = []Phone{}
	}
	if f.Addresses == nil {
		f.Addresses = []Address{}
	}
	v.Check(len(f.Emails) <= 50, "body.emails", "must have at most 50 items", nil)
	v.Check(len(f.Phones) <= 50, "body.phones", "must have at most 50 items", nil)
	v.Check(len(f.Addresses) <= 20, "body.addresses", "must have at most 20 items", nil)
	for i := range f.Emails {
		e := &f.Emails[i]
		e.Value, e.Type = strings.TrimSpace(e.Value), normType(e.Type)
		loc := fmt.Sprintf("body.emails[%d]", i)
		a, err := mail.ParseAddress(e.Value)
		v.Check(err == nil && a.Address == e.Value && len(e.Value) <= 320, loc+".value", "must be an e-mail address like name@example.com", e.Value)
		v.Check(typeRE.MatchString(e.Type), loc+".type", "must be 1–40 lowercase letters, digits or '-'", e.Type)
	}
	for i := range f.Phones {
		ph := &f.Phones[i]
		ph.Value, ph.Type = strings.TrimSpace(ph.Value), normType(ph.Type)
		loc := fmt.Sprintf("body.phones[%d]", i)
		v.Check(phoneRE.MatchString(ph.Value) && strings.ContainsAny(ph.Value, "0123456789"), loc+".value", "must be a telephone number (digits, spaces and + ( ) - . /)", ph.Value)
		v.Check(typeRE.MatchString(ph.Type), loc+".type", "must be 1–40 lowercase letters, digits or '-'", ph.Type)
	}
	for i := range f.Addresses {
		a := &f.Addresses[i]
		loc := fmt.Sprintf("body.addresses[%d]", i)
		a.Type = normType(a.Type)
		for _, s := range []*string{&a.Street, &a.City, &a.Region, &a.PostalCode, &a.Country} {
			*s = strings.TrimSpace(*s)
		}
		v.Check(a.Street+a.City+a.Region+a.PostalCode+a.Country != "", loc, "must have at least one part", nil)
		v.Check(len(a.Street) <= 500 && len(a.City) <= 200 && len(a.Region) <= 200 && len(a.PostalCode) <= 40 && len(a.Country) <= 200,
			loc, "a part is too long", nil)
		v.Check(typeRE.MatchString(a.Type), loc+".type", "must be 1–40 lowercase letters, digits or '-'", a.Type)
	}
	if f.Birthday != "" && f.Birthday != unchangedBirthday {
		_, err := time.Parse(time.DateOnly, f.Birthday)
		v.Check(birthdayRE.MatchString(f.Birthday) && err == nil, "body.birthday", "must be a date YYYY-MM-DD", f.Birthday)
	}
	if f.DisplayName == "" {
		f.DisplayName = deriveName(*f)
	}
	v.Check(f.DisplayName != "", "body.display_name", "a contact needs a name, an organization, an e-mail address or a phone number", nil)
	return v.Err()
}

// CreateContact adds a contact to a book. Errors: insufficient_scope (no
// contacts:write), no_bound_user, feature_not_in_plan, validation_failed (a
// field), not_found (no such book of the caller).
func (s *Service) CreateContact(ctx context.Context, p *app.Principal, bookID string, in ContactCreate) (ContactDetail, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return ContactDetail{}, err
	}
	f := Fields(in)
	if err := normalize(&f, ""); err != nil {
		return ContactDetail{}, err
	}
	now := s.clock.Now()
	id := app.NewID()
	d := newDoc("urn:uuid:" + id)
	apply(d, f)
	d.set("REV", now.Format("20060102T150405Z"))
	c := ContactDetail{ID: id, BookID: bookID, OrgID: p.OrgID, OwnerID: p.UserID, Href: id + ".vcf", UID: "urn:uuid:" + id,
		VCard: string(d.bytes()), CreatedAt: now, UpdatedAt: now}
	c.Fields, c.Email, c.Phone = mapOut(d)
	c.ETag = ETag(c.VCard)
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.book(ctx, p, bookID); err != nil {
			return err
		}
		seq, err := s.store.NextSeq(ctx, bookID)
		if err != nil {
			return err
		}
		c.Seq = seq
		return s.insertContact(ctx, p, c)
	})
	return c, err
}

// insertContact stores a new contact and records it: the step every created
// contact goes through (CreateContact, Import).
func (s *Service) insertContact(ctx context.Context, p *app.Principal, c ContactDetail) error {
	if err := s.store.InsertContact(ctx, c); err != nil {
		return err
	}
	return s.record(ctx, p, "contact.created", "contact", c.ID, nil)
}

// UpdateContact changes the fields of a contact present in the patch. ifMatch,
// when not empty, must match the contact's ETag (else precondition_failed).
// Errors: insufficient_scope (no contacts:write), no_bound_user,
// feature_not_in_plan, not_found (no such book of the caller, no such contact
// in it), precondition_failed (ifMatch), validation_failed (a field).
func (s *Service) UpdateContact(ctx context.Context, p *app.Principal, bookID, id string, patch ContactUpdate, ifMatch string) (ContactDetail, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return ContactDetail{}, err
	}
	var c ContactDetail
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.book(ctx, p, bookID); err != nil {
			return err
		}
		var err error
		if c, err = s.store.Contact(ctx, p.OrgID, p.UserID, bookID, id); err != nil {
			return err
		}
		if !MatchETag(ifMatch, c.ETag) {
			return app.Errorf(app.EPreconditionFailed, "The contact has changed since it was read (If-Match does not match the current ETag); fetch it again and retry.")
		}
		d, err := parseDoc([]byte(c.VCard))
		if err != nil {
			return fmt.Errorf("stored vCard of contact %s: %w", c.ID, err)
		}
		cur, _, _ := mapOut(d)
		f := cur
		derived := cur.DisplayName == deriveName(cur)
		patch.applyTo(&f)
		if patch.DisplayName == nil && derived {
			f.DisplayName = "" // follow the names when the display name was derived
		}
		if err := normalize(&f, cur.Birthday); err != nil {
			return err
		}
		apply(d, f)
		text := string(d.bytes())
		if text == c.VCard {
			c.Fields, c.Email, c.Phone = mapOut(d)
			return nil
		}
		now := s.clock.Now()
		d.set("REV", now.Format("20060102T150405Z"))
		seq, err := s.store.NextSeq(ctx, bookID)
		if err != nil {
			return err
		}
		c.VCard, c.ETag, c.Seq, c.UpdatedAt = string(d.bytes()), "", seq, now
		c.ETag = ETag(c.VCard)
		c.Fields, c.Email, c.Phone = mapOut(d)
		if err := s.store.UpdateContact(ctx, c); err != nil {
			return err
		}
		return s.record(ctx, p, "contact.updated", "contact", c.ID, patch.names())
	})
	return c, err
}

func (pt ContactUpdate) applyTo(f *Fields) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&f.FirstName, pt.FirstName)
	set(&f.LastName, pt.LastName)
	set(&f.DisplayName, pt.DisplayName)
	set(&f.Organization, pt.Organization)
	set(&f.JobTitle, pt.JobTitle)
	set(&f.Birthday, pt.Birthday)
	set(&f.Notes, pt.Notes)
	if pt.Emails != nil {
		f.Emails = append([]Email{}, *pt.Emails...)
	}
	if pt.Phones != nil {
		f.Phones = append([]Phone{}, *pt.Phones...)
	}
	if pt.Addresses != nil {
		f.Addresses = append([]Address{}, *pt.Addresses...)
	}
}

func (pt ContactUpdate) names() []string {
	var out []string
	add := func(ok bool, n string) {
		if ok {
			out = append(out, n)
		}
	}
	add(pt.FirstName != nil, "first_name")
	add(pt.LastName != nil, "last_name")
	add(pt.DisplayName != nil, "display_name")
	add(pt.Emails != nil, "emails")
	add(pt.Phones != nil, "phones")
	add(pt.Organization != nil, "organization")
	add(pt.JobTitle != nil, "job_title")
	add(pt.Addresses != nil, "addresses")
	add(pt.Birthday != nil, "birthday")
	add(pt.Notes != nil, "notes")
	return out
}

// DeleteContact deletes a contact; ifMatch as for UpdateContact. Errors:
// insufficient_scope (no contacts:write), no_bound_user, feature_not_in_plan,
// not_found (no such book of the caller, no such contact in it),
// precondition_failed (ifMatch).
func (s *Service) DeleteContact(ctx context.Context, p *app.Principal, bookID, id, ifMatch string) error {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.book(ctx, p, bookID); err != nil {
			return err
		}
		c, err := s.store.Contact(ctx, p.OrgID, p.UserID, bookID, id)
		if err != nil {
			return err
		}
		return s.deleteContact(ctx, p, c, ifMatch)
	})
}

func (s *Service) deleteContact(ctx context.Context, p *app.Principal, c ContactDetail, ifMatch string) error {
	if !MatchETag(ifMatch, c.ETag) {
		return app.Errorf(app.EPreconditionFailed, "The contact has changed since it was read (If-Match does not match the current ETag).")
	}
	seq, err := s.store.NextSeq(ctx, c.BookID)
	if err != nil {
		return err
	}
	if err := s.store.DeleteContact(ctx, c); err != nil {
		return err
	}
	if err := s.store.Tombstone(ctx, c.BookID, c.Href, seq); err != nil {
		return err
	}
	return s.record(ctx, p, "contact.deleted", "contact", c.ID, nil)
}

// ToggleFavorite flips a contact's favorite flag (the vCard is unchanged).
// Errors: insufficient_scope (no contacts:write), no_bound_user,
// feature_not_in_plan, not_found (no such book of the caller, no such contact
// in it).
func (s *Service) ToggleFavorite(ctx context.Context, p *app.Principal, bookID, id string) (ContactDetail, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return ContactDetail{}, err
	}
	var c ContactDetail
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.book(ctx, p, bookID); err != nil {
			return err
		}
		var err error
		if c, err = s.store.Contact(ctx, p.OrgID, p.UserID, bookID, id); err != nil {
			return err
		}
		if c, err = withFields(c); err != nil {
			return err
		}
		c.IsFavorite = !c.IsFavorite
		if err := s.store.UpdateContact(ctx, c); err != nil {
			return err
		}
		return s.record(ctx, p, "contact.updated", "contact", c.ID, []string{"is_favorite"})
	})
	return c, err
}

// Move moves contacts of book fromID to another book of the caller, in one
// transaction. Contacts that are not the caller's, or not in book fromID, are
// listed in Failed; the others move. Errors: insufficient_scope (no
// contacts:write), no_bound_user, feature_not_in_plan, validation_failed (no
// contact ids or over 1000, no target book or the source book as the target),
// not_found (no such source or target book of the caller).
func (s *Service) Move(ctx context.Context, p *app.Principal, fromID string, in MoveContactsRequest) (MoveContactsResponse, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return MoveContactsResponse{}, err
	}
	var v app.Validator
	v.Check(len(in.ContactIDs) > 0, "body.contact_ids", "must list at least one contact", nil)
	v.Check(len(in.ContactIDs) <= 1000, "body.contact_ids", "must list at most 1000 contacts", len(in.ContactIDs))
	v.Check(strings.TrimSpace(in.TargetBookID) != "", "body.target_book_id", "must not be empty", in.TargetBookID)
	v.Check(in.TargetBookID != fromID, "body.target_book_id", "must be another book than the source", in.TargetBookID)
	if err := v.Err(); err != nil {
		return MoveContactsResponse{}, err
	}
	var res MoveContactsResponse
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		// The transaction may run again (app.TxRunner): each run starts over.
		res = MoveContactsResponse{Moved: []string{}, Failed: []MoveFailure{}}
		if _, err := s.book(ctx, p, fromID); err != nil {
			return err
		}
		if _, err := s.store.Book(ctx, p.OrgID, p.UserID, in.TargetBookID); err != nil {
			if app.ErrorCode(err) == app.ENotFound {
				return app.Errorf(app.ENotFound, "The target address book was not found.")
			}
			return err
		}
		var fromSeq, toSeq int64
		seen := map[string]bool{}
		for _, id := range in.ContactIDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			c, err := s.store.ContactByID(ctx, p.OrgID, p.UserID, id)
			if app.ErrorCode(err) == app.ENotFound {
				res.Failed = append(res.Failed, MoveFailure{ID: id, Reason: "not_found"})
				continue
			}
			if err != nil {
				return err
			}
			if c.BookID != fromID {
				res.Failed = append(res.Failed, MoveFailure{ID: id, Reason: "not_in_source_book"})
				continue
			}
			if fromSeq == 0 {
				if fromSeq, err = s.store.NextSeq(ctx, fromID); err != nil {
					return err
				}
				if toSeq, err = s.store.NextSeq(ctx, in.TargetBookID); err != nil {
					return err
				}
			}
			if err := s.store.Tombstone(ctx, fromID, c.Href, fromSeq); err != nil {
				return err
			}
			c.BookID, c.Seq, c.UpdatedAt = in.TargetBookID, toSeq, s.clock.Now()
			if _, err := s.store.ContactByHref(ctx, p.OrgID, p.UserID, in.TargetBookID, c.Href); err == nil {
				c.Href = c.ID + ".vcf" // the resource name is taken in the target book
			}
			if err := s.store.UpdateContact(ctx, c); err != nil {
				return err
			}
			res.Moved = append(res.Moved, id)
		}
		if len(res.Moved) == 0 {
			return nil
		}
		return s.record(ctx, p, "contacts.moved", "address_book", in.TargetBookID, []string{"book_id"})
	})
	if err != nil {
		return MoveContactsResponse{}, err
	}
	return res, nil
}

// Search finds the caller's contacts, across all books, whose names, e-mail
// addresses, phone numbers or organisation match every word of q (as a prefix,
// ignoring case and accents), best match first. Errors: insufficient_scope (no
// contacts:read), no_bound_user, feature_not_in_plan, validation_failed (a
// limit outside 1–200, a q without a letter or digit).
func (s *Service) Search(ctx context.Context, p *app.Principal, q string, limit int) ([]ContactSummary, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if limit < 1 || limit > MaxSearchLimit {
		return nil, app.Invalid("query.limit", fmt.Sprintf("must be between 1 and %d", MaxSearchLimit), limit)
	}
	terms := SearchTerms(q)
	if len(terms) == 0 {
		return nil, app.Invalid("query.q", "must contain at least one letter or digit", q)
	}
	if _, err := s.defaultBook(ctx, p); err != nil {
		return nil, err
	}
	out, err := s.store.Search(ctx, p.OrgID, p.UserID, terms, limit)
	if out == nil {
		out = []ContactSummary{}
	}
	return out, err
}

// SearchTerms splits user input into the terms of a contact search: its runs
// of letters and digits (with their combining marks), at most 16; none when
// the input has none. Operators and quotes never reach the store.
func SearchTerms(q string) []string {
	var terms []string
	for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) }) {
		if len(terms) == 16 {
			break
		}
		terms = append(terms, w)
	}
	return terms
}

// SearchText returns the text a contact is indexed under: names, e-mails,
// phones (also as bare digits) and organisation.
func SearchText(c ContactDetail) (names, emails, phones, org string) {
	names = strings.Join([]string{c.DisplayName, c.FirstName, c.LastName}, " ")
	var e, ph []string
	for _, m := range c.Emails {
		e = append(e, m.Value)
	}
	for _, n := range c.Phones {
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, n.Value)
		ph = append(ph, n.Value, digits)
		if strings.HasPrefix(n.Value, "+") && len(digits) > 2 {
			ph = append(ph, "0"+digits[2:]) // national form of +CC numbers, roughly
		}
	}
	return names, strings.Join(e, " "), strings.Join(ph, " "), c.Organization
}

// MatchETag reports whether an If-Match header value allows a write to a resource
// with entity tag etag (app.CheckIfMatch).
func MatchETag(header, etag string) bool { return app.CheckIfMatch(header, etag) == nil }

func (s *Service) record(ctx context.Context, p *app.Principal, action, targetType, targetID string, fields []string) error {
	if s.audit == nil {
		return nil
	}
	err := s.audit.Record(ctx, app.AuditEntry{Module: module, Action: action, ActorID: p.UserID, TargetType: targetType,
		TargetID: targetID, OrgID: p.OrgID, ChangedFields: fields, CreatedAt: s.clock.Now()})
	if err != nil {
		return fmt.Errorf("record audit: %w", err)
	}
	return nil
}

var resourceNameRE = regexp.MustCompile(`^[A-Za-z0-9@._~+-]{1,200}$`)

// validResourceName reports whether name can name a book or card resource.
func validResourceName(name string) bool {
	return resourceNameRE.MatchString(name) && name != "." && name != ".."
}
