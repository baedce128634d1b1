// Package contacts holds the rules of Atrium's address books: books and contacts
// of a user, the vCard each contact is kept as, search, moving between books,
// favorites and the organisation directory. REST and CardDAV are two doors to the
// same Service.
//
// A contact is stored as the full vCard text its client wrote. The fields Atrium
// models (names, e-mails, phones, organisation, title, addresses, birthday, notes)
// are mapped out of it, and a REST edit rewrites only the properties it changes:
// every other line — X- properties, photos, extra parameters — stays byte for byte.
// The ETag is a strong hash of the stored text.
package contacts

import (
	"context"
	"time"

	"atrium/app"
)

// AddressBook is an address book.
type AddressBook struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Description  string    `json:"description"`
	IsDefault    bool      `json:"is_default"`
	ContactCount int       `json:"contact_count"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`

	OrgID   string `json:"-"`
	OwnerID string `json:"-"`
	// SyncSeq is the book's change sequence (CardDAV sync-token and getctag).
	SyncSeq int64 `json:"-"`
}

// Email is one e-mail address of a contact.
type Email struct {
	Type  string `json:"type" required:"false" doc:"home, work or other (free text, lowercased)." maxLength:"40"`
	Value string `json:"value" doc:"The address." maxLength:"320"`
}

// Phone is one telephone number of a contact.
type Phone struct {
	Type  string `json:"type" required:"false" doc:"cell, home, work, fax, pager or other (free text, lowercased)." maxLength:"40"`
	Value string `json:"value" doc:"The number as written, e.g. +49 30 1234567." maxLength:"64"`
}

// Address is one postal address of a contact.
type Address struct {
	Type       string `json:"type" required:"false" doc:"home, work or other." maxLength:"40"`
	Street     string `json:"street" required:"false" maxLength:"500"`
	City       string `json:"city" required:"false" maxLength:"200"`
	Region     string `json:"region" required:"false" maxLength:"200"`
	PostalCode string `json:"postal_code" required:"false" maxLength:"40"`
	Country    string `json:"country" required:"false" maxLength:"200"`
}

// Fields are the parts of a vCard Atrium models.
type Fields struct {
	FirstName    string    `json:"first_name" required:"false"`
	LastName     string    `json:"last_name" required:"false"`
	DisplayName  string    `json:"display_name" required:"false"`
	Emails       []Email   `json:"emails" required:"false"`
	Phones       []Phone   `json:"phones" required:"false"`
	Organization string    `json:"organization" required:"false"`
	JobTitle     string    `json:"job_title" required:"false"`
	Addresses    []Address `json:"addresses" required:"false"`
	Birthday     string    `json:"birthday" required:"false" doc:"YYYY-MM-DD, or empty."`
	Notes        string    `json:"notes" required:"false"`
}

// ContactDetail is a stored contact: every modelled field, the ETag and the vCard.
type ContactDetail struct {
	ID     string `json:"id"`
	BookID string `json:"book_id"`
	UID    string `json:"uid" doc:"The vCard UID."`
	Fields
	Email      string    `json:"email" doc:"The primary e-mail address."`
	Phone      string    `json:"phone" doc:"The primary telephone number."`
	IsFavorite bool      `json:"is_favorite"`
	ETag       string    `json:"etag" doc:"Strong entity tag of the stored vCard, quoted; send it as If-Match."`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`

	OrgID   string `json:"-"`
	OwnerID string `json:"-"`
	// Href is the resource name of the contact in its book (CardDAV), e.g. "<id>.vcf".
	Href string `json:"-"`
	// VCard is the full stored vCard text.
	VCard string `json:"-"`
	// Seq is the book change sequence of the contact's last change.
	Seq int64 `json:"-"`
}

// ContactSummary is a contact in lists.
type ContactSummary struct {
	ID           string    `json:"id"`
	BookID       string    `json:"book_id"`
	DisplayName  string    `json:"display_name"`
	FirstName    string    `json:"first_name"`
	LastName     string    `json:"last_name"`
	Email        string    `json:"email" doc:"The primary e-mail address."`
	Phone        string    `json:"phone" doc:"The primary telephone number."`
	Organization string    `json:"organization"`
	IsFavorite   bool      `json:"is_favorite"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// ContactSummary returns the list form of c.
func (c ContactDetail) Summary() ContactSummary {
	return ContactSummary{ID: c.ID, BookID: c.BookID, DisplayName: c.DisplayName, FirstName: c.FirstName, LastName: c.LastName,
		Email: c.Email, Phone: c.Phone, Organization: c.Organization, IsFavorite: c.IsFavorite, UpdatedAt: c.UpdatedAt}
}

// AddressBookInput creates or renames an address book.
type AddressBookInput struct {
	Name        string `json:"name" doc:"1–200 characters." maxLength:"200"`
	Description string `json:"description,omitempty" maxLength:"2000"`
}

// ContactCreate is the body of a new contact.
type ContactCreate Fields

// ContactUpdate is the body of a contact update: a field that is
// absent stays as it is; a field that is present replaces the stored one (an
// empty string or array clears it).
type ContactUpdate struct {
	FirstName    *string    `json:"first_name,omitempty" maxLength:"200"`
	LastName     *string    `json:"last_name,omitempty" maxLength:"200"`
	DisplayName  *string    `json:"display_name,omitempty" maxLength:"400"`
	Emails       *[]Email   `json:"emails,omitempty" maxItems:"50"`
	Phones       *[]Phone   `json:"phones,omitempty" maxItems:"50"`
	Organization *string    `json:"organization,omitempty" maxLength:"400"`
	JobTitle     *string    `json:"job_title,omitempty" maxLength:"400"`
	Addresses    *[]Address `json:"addresses,omitempty" maxItems:"20"`
	Birthday     *string    `json:"birthday,omitempty" doc:"YYYY-MM-DD, or empty to clear."`
	Notes        *string    `json:"notes,omitempty" maxLength:"20000"`
}

// MoveContactsRequest moves contacts to another book (MoveContactsRequest).
type MoveContactsRequest struct {
	ContactIDs   []string `json:"contact_ids" minItems:"1" maxItems:"1000"`
	TargetBookID string   `json:"target_book_id"`
}

// MoveFailure is a contact that was not moved and why.
type MoveFailure struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// MoveContactsResponse says which contacts moved (MoveContactsResponse).
type MoveContactsResponse struct {
	Moved  []string      `json:"moved"`
	Failed []MoveFailure `json:"failed"`
}

// DirectoryEntry is an active user of the caller's organisation.
type DirectoryEntry struct {
	UserID      string `json:"user_id"`
	Email       string `json:"email"`
	DisplayName string `json:"display_name"`
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`

	// OrgName is the organisation's name (for the vCard ORG).
	OrgName string `json:"-"`
}

// Changes are what changed in a book after a sync sequence.
type Changes struct {
	// Seq is the book's current sequence (the new sync-token).
	Seq int64
	// Changed are contacts created or modified after the asked sequence (without
	// their vCard text).
	Changed []ContactDetail
	// Deleted are resource names removed from the book after it.
	Deleted []string
	// Pruned is the newest sequence of the deletions the book has forgotten: a
	// sequence older than it may miss some.
	Pruned int64
}

// Store keeps books and contacts. Every method is scoped by organisation and owner;
// a book or contact of someone else is not_found. Writes join the transaction of
// ctx.
type Store interface {
	app.TxRunner

	// DefaultBook returns the owner's default book (without its contact count):
	// not_found when there is none.
	DefaultBook(ctx context.Context, orgID, ownerID string) (AddressBook, error)
	// Books lists the owner's books, the default first, with contact counts.
	Books(ctx context.Context, orgID, ownerID string) ([]AddressBook, error)
	// AddressBook returns one book (without its contact count): not_found.
	Book(ctx context.Context, orgID, ownerID, id string) (AddressBook, error)
	// ContactCount counts the contacts of a book.
	ContactCount(ctx context.Context, bookID string) (int, error)
	// CreateBook inserts a book: conflict when the owner already has a default.
	CreateBook(ctx context.Context, b AddressBook) error
	// UpdateBook stores a book's name and description: not_found.
	UpdateBook(ctx context.Context, b AddressBook) error
	// DeleteBook deletes a book and its contacts: not_found.
	DeleteBook(ctx context.Context, orgID, ownerID, id string) error
	// NextSeq increments a book's change sequence and returns the new value.
	NextSeq(ctx context.Context, bookID string) (int64, error)

	// ContactsJSON lists the contacts of a book by display name, as a JSON array
	// of ContactSummary.
	ContactsJSON(ctx context.Context, orgID, ownerID, bookID string) ([]byte, error)
	// ContactsMeta lists the contacts of a book without their vCard text (href,
	// etag, times), for DAV listings.
	ContactsMeta(ctx context.Context, orgID, ownerID, bookID string) ([]ContactDetail, error)
	// ContactDetail returns a contact with its vCard: not_found.
	Contact(ctx context.Context, orgID, ownerID, bookID, id string) (ContactDetail, error)
	// ContactByID returns a contact of the owner in any book: not_found.
	ContactByID(ctx context.Context, orgID, ownerID, id string) (ContactDetail, error)
	// ContactByHref returns the contact at a resource name of a book: not_found.
	ContactByHref(ctx context.Context, orgID, ownerID, bookID, href string) (ContactDetail, error)
	// ContactsByHref returns the contacts at the resource names of a book that exist.
	ContactsByHref(ctx context.Context, orgID, ownerID, bookID string, hrefs []string) ([]ContactDetail, error)
	// ContactsFull returns every contact of a book with its vCard.
	ContactsFull(ctx context.Context, orgID, ownerID, bookID string) ([]ContactDetail, error)
	// InsertContact stores a new contact and clears a tombstone at its href:
	// conflict when the href is taken.
	InsertContact(ctx context.Context, c ContactDetail) error
	// UpdateContact stores a contact's book, href, vCard, fields, etag, seq,
	// favorite flag and update time: not_found; conflict when the href is taken.
	UpdateContact(ctx context.Context, c ContactDetail) error
	// DeleteContact removes a contact: not_found.
	DeleteContact(ctx context.Context, c ContactDetail) error
	// Tombstone records that href left a book at sequence seq.
	Tombstone(ctx context.Context, bookID, href string, seq int64) error
	// Changes returns what changed in a book after sequence since.
	Changes(ctx context.Context, orgID, ownerID, bookID string, since int64) (Changes, error)
	// PruneTombstones forgets the deletions recorded before before and returns
	// how many; sync tokens older than them are refused from then on.
	PruneTombstones(ctx context.Context, before time.Time) (int, error)
	// Search finds the owner's contacts whose names, e-mail addresses, phone
	// numbers or organisation have a word starting with each of terms
	// (letters and digits, compared without case or accents), best first:
	// names weigh most, then addresses, phones, organisation; favourites
	// come first among equals.
	Search(ctx context.Context, orgID, ownerID string, terms []string, limit int) ([]ContactSummary, error)

	// Directory lists the active users of an organisation.
	Directory(ctx context.Context, orgID string) ([]DirectoryEntry, error)
	// DirectoryEntry returns one active user of an organisation: not_found.
	DirectoryEntry(ctx context.Context, orgID, userID string) (DirectoryEntry, error)
}
