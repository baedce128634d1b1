package contacts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-vcard"

	"atrium/app"
)

// The methods of this file serve resource-oriented doors (CardDAV): contacts are
// addressed by their resource name (href) in a book, and written as whole vCards.

// ContactsMeta lists a book's contacts without their vCard text. Errors:
// insufficient_scope (no contacts:read), no_bound_user, feature_not_in_plan,
// not_found (no such book of the caller).
func (s *Service) ContactsMeta(ctx context.Context, p *app.Principal, bookID string) ([]ContactDetail, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return nil, err
	}
	if _, err := s.book(ctx, p, bookID); err != nil {
		return nil, err
	}
	return s.store.ContactsMeta(ctx, p.OrgID, p.UserID, bookID)
}

// ContactsFull lists a book's contacts with their vCard text and fields.
// Errors: insufficient_scope (no contacts:read), no_bound_user,
// feature_not_in_plan, not_found (no such book of the caller).
func (s *Service) ContactsFull(ctx context.Context, p *app.Principal, bookID string) ([]ContactDetail, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return nil, err
	}
	if _, err := s.book(ctx, p, bookID); err != nil {
		return nil, err
	}
	return s.store.ContactsFull(ctx, p.OrgID, p.UserID, bookID)
}

// ContactByHref returns the contact at a resource name of a book, with its vCard.
// Errors: insufficient_scope (no contacts:read), no_bound_user,
// feature_not_in_plan, not_found (no such book of the caller, no contact at
// href).
func (s *Service) ContactByHref(ctx context.Context, p *app.Principal, bookID, href string) (ContactDetail, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return ContactDetail{}, err
	}
	if _, err := s.book(ctx, p, bookID); err != nil {
		return ContactDetail{}, err
	}
	return s.store.ContactByHref(ctx, p.OrgID, p.UserID, bookID, href)
}

// ContactsByHref returns the contacts at the resource names of a book that exist,
// with their vCards (a CardDAV multiget). Errors: insufficient_scope (no
// contacts:read), no_bound_user, feature_not_in_plan, not_found (no such book
// of the caller).
func (s *Service) ContactsByHref(ctx context.Context, p *app.Principal, bookID string, hrefs []string) ([]ContactDetail, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return nil, err
	}
	if _, err := s.book(ctx, p, bookID); err != nil {
		return nil, err
	}
	return s.store.ContactsByHref(ctx, p.OrgID, p.UserID, bookID, hrefs)
}

// Changes returns what changed in a book after sequence since (a CardDAV
// sync-collection). A sequence the book has not reached, or one older than the
// deletions it has forgotten (PruneTombstones), is invalid. Errors:
// insufficient_scope (no contacts:read), no_bound_user, feature_not_in_plan,
// not_found (no such book of the caller), validation_failed (a sequence the
// book has not reached or older than the deletions it remembers).
func (s *Service) Changes(ctx context.Context, p *app.Principal, bookID string, since int64) (Changes, error) {
	if err := check(p, app.ScopeContactsRead); err != nil {
		return Changes{}, err
	}
	b, err := s.book(ctx, p, bookID)
	if err != nil {
		return Changes{}, err
	}
	if since < 0 || since > b.SyncSeq {
		return Changes{}, app.Errorf(app.EValidation, "The sync token is not valid for this address book.")
	}
	ch, err := s.store.Changes(ctx, p.OrgID, p.UserID, bookID, since)
	if err == nil && since > 0 && since < ch.Pruned {
		return Changes{}, app.Errorf(app.EValidation, "The sync token is older than the deletions this address book remembers: sync again from the start.")
	}
	return ch, err
}

// PutOptions are the preconditions of a whole-vCard write.
type PutOptions struct {
	// IfMatch must match the current ETag when not empty ("*": the resource exists).
	IfMatch string
	// IfNoneMatch "*" refuses to overwrite an existing resource.
	IfNoneMatch string
}

// PutResult is a stored vCard write.
type PutResult struct {
	Contact ContactDetail
	Created bool
	// Rewritten is true when the stored text differs from what the client sent
	// (a UID or FN was added): the client must fetch it again, so no ETag is sent.
	Rewritten bool
}

// PutVCard creates or replaces the contact at a resource name of a book with a
// whole vCard, kept as sent. A vCard without UID or FN gets one. Errors:
// insufficient_scope (no contacts:write), no_bound_user, feature_not_in_plan,
// validation_failed (the resource name, not one vCard, a vCard with neither FN,
// N, ORG, EMAIL nor TEL), not_found (no such book of the caller),
// precondition_failed (IfMatch or IfNoneMatch).
func (s *Service) PutVCard(ctx context.Context, p *app.Principal, bookID, href string, data []byte, o PutOptions) (PutResult, error) {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return PutResult{}, err
	}
	if !validResourceName(href) {
		return PutResult{}, app.Invalid("path", "the resource name must be 1–200 letters, digits, '-', '_', '.', '~', '+' or '@'", href)
	}
	d, err := parseDoc(data)
	if err != nil {
		return PutResult{}, app.Invalid("body", "must be one vCard: "+err.Error(), nil)
	}
	var res PutResult
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.book(ctx, p, bookID); err != nil {
			return err
		}
		old, err := s.store.ContactByHref(ctx, p.OrgID, p.UserID, bookID, href)
		exists := err == nil
		if err != nil && app.ErrorCode(err) != app.ENotFound {
			return err
		}
		switch {
		case exists && strings.TrimSpace(o.IfNoneMatch) == "*":
			return app.Errorf(app.EPreconditionFailed, "A contact already exists at this resource name (If-None-Match: *).")
		case !exists && strings.TrimSpace(o.IfMatch) != "":
			return app.Errorf(app.EPreconditionFailed, "No contact exists at this resource name (If-Match).")
		case exists && !MatchETag(o.IfMatch, old.ETag):
			return app.Errorf(app.EPreconditionFailed, "The contact has changed since it was read (If-Match does not match the current ETag).")
		}
		now := s.clock.Now()
		c := old
		if !exists {
			c = ContactDetail{ID: app.NewID(), BookID: bookID, OrgID: p.OrgID, OwnerID: p.UserID, Href: href, CreatedAt: now}
		}
		if d.uid() == "" {
			uid := c.UID
			if uid == "" {
				uid = "urn:uuid:" + c.ID
			}
			d.replace("UID", nil)
			d.set("UID", uid)
			res.Rewritten = true
		}
		f, _, _ := mapOut(d)
		if d.first("FN") == nil {
			if f.DisplayName == "" {
				return app.Invalid("body", "the vCard needs an FN, N, ORG, EMAIL or TEL", nil)
			}
			d.set("FN", textValue(f.DisplayName))
			res.Rewritten = true
		}
		text := string(data)
		if res.Rewritten {
			text = string(d.bytes())
		}
		if exists && text == old.VCard {
			res.Contact = old
			return nil
		}
		seq, err := s.store.NextSeq(ctx, bookID)
		if err != nil {
			return err
		}
		c.UID, c.VCard, c.ETag, c.Seq, c.UpdatedAt = d.uid(), text, ETag(text), seq, now
		c.Fields, c.Email, c.Phone = mapOut(d)
		if exists {
			err = s.store.UpdateContact(ctx, c)
		} else {
			err = s.store.InsertContact(ctx, c)
		}
		if err != nil {
			return err
		}
		res.Contact, res.Created = c, !exists
		action := "contact.updated"
		if !exists {
			action = "contact.created"
		}
		return s.record(ctx, p, action, "contact", c.ID, nil)
	})
	if err != nil {
		return PutResult{}, err
	}
	return res, nil
}

// DeleteByHref deletes the contact at a resource name of a book. Errors:
// insufficient_scope (no contacts:write), no_bound_user, feature_not_in_plan,
// not_found (no such book of the caller, no contact at href),
// precondition_failed (ifMatch).
func (s *Service) DeleteByHref(ctx context.Context, p *app.Principal, bookID, href, ifMatch string) error {
	if err := check(p, app.ScopeContactsWrite); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.book(ctx, p, bookID); err != nil {
			return err
		}
		c, err := s.store.ContactByHref(ctx, p.OrgID, p.UserID, bookID, href)
		if err != nil {
			return err
		}
		return s.deleteContact(ctx, p, c, ifMatch)
	})
}

// Card returns a contact's vCard as go-vcard fields (for filters of DAV queries).
// The stored card passed our own parser; a panic of go-vcard on it is still an
// error of this contact, not of the server.
func Card(c ContactDetail) (card vcard.Card, err error) {
	defer func() {
		if r := recover(); r != nil {
			card, err = nil, fmt.Errorf("stored vCard of contact %s: go-vcard: %v", c.ID, r)
		}
	}()
	card, err = vcard.NewDecoder(strings.NewReader(c.VCard)).Decode()
	if err != nil {
		return nil, fmt.Errorf("stored vCard of contact %s: %w", c.ID, err)
	}
	return card, nil
}

// PruneTombstones forgets deletions older than maxAge, so that the change feed
// of a collection with steady churn does not grow without bound. A client whose
// sync token predates them is refused (DAV:valid-sync-token) and syncs again
// from the start, as RFC 6578 provides. Errors: none of its own.
func (s *Service) PruneTombstones(ctx context.Context, maxAge time.Duration) (int, error) {
	n, err := s.store.PruneTombstones(ctx, s.clock.Now().Add(-maxAge))
	if err != nil {
		return n, fmt.Errorf("prune contacts tombstones: %w", err)
	}
	return n, nil
}
