package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"atrium/app/contacts"
)

// ContactsStore implements contacts.Store.
type ContactsStore struct{ *DB }

var _ contacts.Store = ContactsStore{}

const bookCols = `b.id, b.organization_id, b.owner_id, b.name, b.description, b.is_default, b.sync_seq, b.created_at, b.updated_at`

// bookCount is the contact count column of book lists.
const bookCount = `, (SELECT count(*) FROM contacts c WHERE c.book_id = b.id)`

func scanBook(sc interface{ Scan(...any) error }, count ...any) (contacts.AddressBook, error) {
	var b contacts.AddressBook
	var c, u int64
	err := sc.Scan(append([]any{&b.ID, &b.OrgID, &b.OwnerID, &b.Name, &b.Description, &b.IsDefault, &b.SyncSeq, &c, &u}, count...)...)
	b.CreatedAt, b.UpdatedAt = fromMS(c), fromMS(u)
	return b, err
}

// DefaultBook returns the owner's default book.
func (s ContactsStore) DefaultBook(ctx context.Context, orgID, ownerID string) (contacts.AddressBook, error) {
	b, err := scanBook(s.read(ctx).QueryRowContext(ctx, `SELECT `+bookCols+` FROM address_books b
		WHERE b.organization_id = ? AND b.owner_id = ? AND b.is_default = 1`, orgID, ownerID))
	return b, mapErr(err, "address book")
}

// Books lists the owner's books, the default first, then by name.
func (s ContactsStore) Books(ctx context.Context, orgID, ownerID string) ([]contacts.AddressBook, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+bookCols+bookCount+` FROM address_books b
		WHERE b.organization_id = ? AND b.owner_id = ? ORDER BY b.is_default DESC, b.name COLLATE NOCASE, b.id`, orgID, ownerID)
	if err != nil {
		return nil, mapErr(err, "address books")
	}
	defer rows.Close()
	out := []contacts.AddressBook{}
	for rows.Next() {
		var n int
		b, err := scanBook(rows, &n)
		b.ContactCount = n
		if err != nil {
			return nil, mapErr(err, "address books")
		}
		out = append(out, b)
	}
	return out, mapErr(rows.Err(), "address books")
}

// ContactCount counts the contacts of a book.
func (s ContactsStore) ContactCount(ctx context.Context, bookID string) (int, error) {
	var n int
	err := s.read(ctx).QueryRowContext(ctx, `SELECT count(*) FROM contacts WHERE book_id = ?`, bookID).Scan(&n)
	return n, mapErr(err, "address book")
}

// AddressBook returns one of the owner's books.
func (s ContactsStore) Book(ctx context.Context, orgID, ownerID, id string) (contacts.AddressBook, error) {
	b, err := scanBook(s.read(ctx).QueryRowContext(ctx, `SELECT `+bookCols+` FROM address_books b
		WHERE b.organization_id = ? AND b.owner_id = ? AND b.id = ?`, orgID, ownerID, id))
	return b, mapErr(err, "address book")
}

// CreateBook inserts a book.
func (s ContactsStore) CreateBook(ctx context.Context, b contacts.AddressBook) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO address_books(id, organization_id, owner_id, name, description,
		is_default, sync_seq, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)`,
		b.ID, b.OrgID, b.OwnerID, b.Name, b.Description, b.IsDefault, b.SyncSeq, ms(b.CreatedAt), ms(b.UpdatedAt))
	return mapErr(err, "address book")
}

// UpdateBook stores a book's name and description.
func (s ContactsStore) UpdateBook(ctx context.Context, b contacts.AddressBook) error {
	res, err := s.write(ctx).ExecContext(ctx, `UPDATE address_books SET name = ?, description = ?, updated_at = ?
		WHERE organization_id = ? AND owner_id = ? AND id = ?`, b.Name, b.Description, ms(b.UpdatedAt), b.OrgID, b.OwnerID, b.ID)
	return affected(res, err, "address book")
}

// DeleteBook deletes a book, its contacts (and their index entries) and tombstones.
func (s ContactsStore) DeleteBook(ctx context.Context, orgID, ownerID, id string) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		if _, err := s.write(ctx).ExecContext(ctx, `DELETE FROM contacts_fts WHERE rowid IN
			(SELECT n FROM contacts WHERE book_id = ? AND owner_id = ? AND organization_id = ?)`, id, ownerID, orgID); err != nil {
			return mapErr(err, "address book")
		}
		res, err := s.write(ctx).ExecContext(ctx, `DELETE FROM address_books WHERE organization_id = ? AND owner_id = ? AND id = ?`,
			orgID, ownerID, id)
		return affected(res, err, "address book")
	})
}

// NextSeq increments a book's change sequence.
func (s ContactsStore) NextSeq(ctx context.Context, bookID string) (int64, error) {
	var seq int64
	err := s.write(ctx).QueryRowContext(ctx, `UPDATE address_books SET sync_seq = sync_seq + 1 WHERE id = ? RETURNING sync_seq`,
		bookID).Scan(&seq)
	return seq, mapErr(err, "address book")
}

func affected(res sql.Result, err error, what string) error {
	if err != nil {
		return mapErr(err, what)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return mapErr(sql.ErrNoRows, what)
	}
	return nil
}

const summaryCols = `c.id, c.book_id, c.display_name, c.first_name, c.last_name, c.email, c.phone, c.organization, c.is_favorite, c.updated_at`

func scanSummary(sc interface{ Scan(...any) error }) (contacts.ContactSummary, error) {
	var x contacts.ContactSummary
	var u int64
	err := sc.Scan(&x.ID, &x.BookID, &x.DisplayName, &x.FirstName, &x.LastName, &x.Email, &x.Phone, &x.Organization, &x.IsFavorite, &u)
	x.UpdatedAt = fromMS(u)
	return x, err
}

func (s ContactsStore) summaries(ctx context.Context, q string, args ...any) ([]contacts.ContactSummary, error) {
	rows, err := s.read(ctx).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, mapErr(err, "contacts")
	}
	defer rows.Close()
	out := []contacts.ContactSummary{}
	for rows.Next() {
		x, err := scanSummary(rows)
		if err != nil {
			return nil, mapErr(err, "contacts")
		}
		out = append(out, x)
	}
	return out, mapErr(rows.Err(), "contacts")
}

// ContactsJSON returns a book's contacts by display name as a JSON array of
// summaries, concatenated by SQLite from the stored list form of each (one row
// crosses the driver instead of one per contact). The rows are read in the order
// of the covering index, which is the listing order.
func (s ContactsStore) ContactsJSON(ctx context.Context, orgID, ownerID, bookID string) ([]byte, error) {
	var list sql.NullString
	err := s.read(ctx).QueryRowContext(ctx, `SELECT string_agg(summary, ','`+s.orderedAgg(`ORDER BY sort_key, id`)+`)
		FROM (SELECT summary, sort_key, id FROM contacts INDEXED BY contacts_book_list
		WHERE book_id = ? AND owner_id = ? AND organization_id = ? ORDER BY sort_key, id) AS c`, bookID, ownerID, orgID).Scan(&list)
	if err != nil {
		return nil, mapErr(err, "contacts")
	}
	out := make([]byte, 0, len(list.String)+2)
	out = append(out, '[')
	out = append(out, list.String...)
	return append(out, ']'), nil
}

const metaCols = `c.id, c.book_id, c.organization_id, c.owner_id, c.href, c.uid, c.display_name, c.first_name, c.last_name,
	c.email, c.phone, c.organization, c.is_favorite, c.etag, c.seq, c.created_at, c.updated_at`

func scanContact(sc interface{ Scan(...any) error }, withVCard bool) (contacts.ContactDetail, error) {
	var c contacts.ContactDetail
	var cr, up int64
	dest := []any{&c.ID, &c.BookID, &c.OrgID, &c.OwnerID, &c.Href, &c.UID, &c.DisplayName, &c.FirstName, &c.LastName,
		&c.Email, &c.Phone, &c.Organization, &c.IsFavorite, &c.ETag, &c.Seq, &cr, &up}
	if withVCard {
		dest = append(dest, &c.VCard)
	}
	err := sc.Scan(dest...)
	c.CreatedAt, c.UpdatedAt = fromMS(cr), fromMS(up)
	return c, err
}

func (s ContactsStore) contacts(ctx context.Context, withVCard bool, q string, args ...any) ([]contacts.ContactDetail, error) {
	cols := metaCols
	if withVCard {
		cols += `, c.vcard`
	}
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+cols+` FROM contacts c `+q, args...)
	if err != nil {
		return nil, mapErr(err, "contacts")
	}
	defer rows.Close()
	out := []contacts.ContactDetail{}
	for rows.Next() {
		c, err := scanContact(rows, withVCard)
		if err != nil {
			return nil, mapErr(err, "contacts")
		}
		out = append(out, c)
	}
	return out, mapErr(rows.Err(), "contacts")
}

func (s ContactsStore) one(ctx context.Context, q string, args ...any) (contacts.ContactDetail, error) {
	c, err := scanContact(s.read(ctx).QueryRowContext(ctx, `SELECT `+metaCols+`, c.vcard FROM contacts c `+q, args...), true)
	return c, mapErr(err, "contact")
}

// ContactsMeta lists a book's contacts without their vCard text.
func (s ContactsStore) ContactsMeta(ctx context.Context, orgID, ownerID, bookID string) ([]contacts.ContactDetail, error) {
	return s.contacts(ctx, false, `WHERE c.book_id = ? AND c.owner_id = ? AND c.organization_id = ? ORDER BY c.href`,
		bookID, ownerID, orgID)
}

// ContactsFull lists a book's contacts with their vCard text.
func (s ContactsStore) ContactsFull(ctx context.Context, orgID, ownerID, bookID string) ([]contacts.ContactDetail, error) {
	return s.contacts(ctx, true, `WHERE c.book_id = ? AND c.owner_id = ? AND c.organization_id = ? ORDER BY c.href`,
		bookID, ownerID, orgID)
}

// ContactDetail returns a contact of a book.
func (s ContactsStore) Contact(ctx context.Context, orgID, ownerID, bookID, id string) (contacts.ContactDetail, error) {
	return s.one(ctx, `WHERE c.id = ? AND c.book_id = ? AND c.owner_id = ? AND c.organization_id = ?`, id, bookID, ownerID, orgID)
}

// ContactByID returns a contact of the owner in any book.
func (s ContactsStore) ContactByID(ctx context.Context, orgID, ownerID, id string) (contacts.ContactDetail, error) {
	return s.one(ctx, `WHERE c.id = ? AND c.owner_id = ? AND c.organization_id = ?`, id, ownerID, orgID)
}

// ContactByHref returns the contact at a resource name of a book.
func (s ContactsStore) ContactByHref(ctx context.Context, orgID, ownerID, bookID, href string) (contacts.ContactDetail, error) {
	return s.one(ctx, `WHERE c.book_id = ? AND c.href = ? AND c.owner_id = ? AND c.organization_id = ?`, bookID, href, ownerID, orgID)
}

// ContactsByHref returns the contacts at the resource names of a book that exist.
func (s ContactsStore) ContactsByHref(ctx context.Context, orgID, ownerID, bookID string, hrefs []string) ([]contacts.ContactDetail, error) {
	var out []contacts.ContactDetail
	const chunk = 500
	for i := 0; i < len(hrefs); i += chunk {
		part := hrefs[i:min(i+chunk, len(hrefs))]
		args := []any{bookID, ownerID, orgID}
		for _, h := range part {
			args = append(args, h)
		}
		got, err := s.contacts(ctx, true, `WHERE c.book_id = ? AND c.owner_id = ? AND c.organization_id = ?
			AND c.href IN (?`+strings.Repeat(",?", len(part)-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

func sortKey(c contacts.ContactDetail) string { return strings.ToLower(c.DisplayName) }

func summaryJSON(c contacts.ContactDetail) (string, error) {
	b, err := json.Marshal(c.Summary())
	return string(b), err
}

// InsertContact stores a new contact, indexes it and clears a tombstone at its href.
func (s ContactsStore) InsertContact(ctx context.Context, c contacts.ContactDetail) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		sum, err := summaryJSON(c)
		if err != nil {
			return mapErr(err, "contact")
		}
		var n int64
		err = s.write(ctx).QueryRowContext(ctx, `INSERT INTO contacts(id, book_id, organization_id, owner_id, href, uid,
			display_name, first_name, last_name, email, phone, organization, sort_key, summary, is_favorite, vcard, etag, seq,
			created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING n`,
			c.ID, c.BookID, c.OrgID, c.OwnerID, c.Href, c.UID, c.DisplayName, c.FirstName, c.LastName, c.Email, c.Phone,
			c.Organization, sortKey(c), sum, c.IsFavorite, c.VCard, c.ETag, c.Seq, ms(c.CreatedAt), ms(c.UpdatedAt)).Scan(&n)
		if err != nil {
			return mapErr(err, "contact")
		}
		if err := s.index(ctx, n, c); err != nil {
			return err
		}
		_, err = s.write(ctx).ExecContext(ctx, `DELETE FROM contact_tombstones WHERE book_id = ? AND href = ?`, c.BookID, c.Href)
		return mapErr(err, "contact")
	})
}

// index writes the search index's entry of contact n. The engines' full-text
// search differ: SQLite's is FTS5 (contacts_fts, tokenizer unicode61 without
// diacritics), PostgreSQL's a tsvector of the words without accents
// (unaccent), weighted A to D as FTS5's columns are by Search.
func (s ContactsStore) index(ctx context.Context, n int64, c contacts.ContactDetail) error {
	names, emails, phones, org := contacts.SearchText(c)
	if s.pg != nil {
		_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO contacts_fts(rowid, doc) VALUES (?,
			setweight(to_tsvector('simple', unaccent(?)), 'A') || setweight(to_tsvector('simple', unaccent(?)), 'B') ||
			setweight(to_tsvector('simple', unaccent(?)), 'C') || setweight(to_tsvector('simple', unaccent(?)), 'D'))
			ON CONFLICT (rowid) DO UPDATE SET doc = excluded.doc`, n, words(names), words(emails), words(phones), words(org))
		return mapErr(err, "contact index")
	}
	_, err := s.write(ctx).ExecContext(ctx, `INSERT OR REPLACE INTO contacts_fts(rowid, names, emails, phones, organization)
		VALUES (?,?,?,?,?)`, n, names, emails, phones, org)
	return mapErr(err, "contact index")
}

// words is s with every character but letters, digits and combining marks
// made a space: the words FTS5's unicode61 tokenizer finds (an e-mail
// address is three or more), for PostgreSQL's parser, which would keep an
// address or a URL as one word.
func words(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			return r
		}
		return ' '
	}, s)
}

// UpdateContact stores a contact's changes and re-indexes it.
func (s ContactsStore) UpdateContact(ctx context.Context, c contacts.ContactDetail) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		sum, err := summaryJSON(c)
		if err != nil {
			return mapErr(err, "contact")
		}
		var n int64
		err = s.write(ctx).QueryRowContext(ctx, `UPDATE contacts SET book_id = ?, href = ?, uid = ?, display_name = ?,
			first_name = ?, last_name = ?, email = ?, phone = ?, organization = ?, sort_key = ?, summary = ?, is_favorite = ?,
			vcard = ?, etag = ?, seq = ?, updated_at = ? WHERE id = ? AND owner_id = ? AND organization_id = ? RETURNING n`,
			c.BookID, c.Href, c.UID, c.DisplayName, c.FirstName, c.LastName, c.Email, c.Phone, c.Organization, sortKey(c), sum,
			c.IsFavorite, c.VCard, c.ETag, c.Seq, ms(c.UpdatedAt), c.ID, c.OwnerID, c.OrgID).Scan(&n)
		if err != nil {
			return mapErr(err, "contact")
		}
		if err := s.index(ctx, n, c); err != nil {
			return err
		}
		_, err = s.write(ctx).ExecContext(ctx, `DELETE FROM contact_tombstones WHERE book_id = ? AND href = ?`, c.BookID, c.Href)
		return mapErr(err, "contact")
	})
}

// DeleteContact removes a contact and its index entry.
func (s ContactsStore) DeleteContact(ctx context.Context, c contacts.ContactDetail) error {
	return s.InTx(ctx, func(ctx context.Context) error {
		var n int64
		err := s.write(ctx).QueryRowContext(ctx, `DELETE FROM contacts WHERE id = ? AND owner_id = ? AND organization_id = ?
			RETURNING n`, c.ID, c.OwnerID, c.OrgID).Scan(&n)
		if err != nil {
			return mapErr(err, "contact")
		}
		_, err = s.write(ctx).ExecContext(ctx, `DELETE FROM contacts_fts WHERE rowid = ?`, n)
		return mapErr(err, "contact index")
	})
}

// Tombstone records that href left a book at sequence seq.
func (s ContactsStore) Tombstone(ctx context.Context, bookID, href string, seq int64) error {
	_, err := s.write(ctx).ExecContext(ctx, `INSERT INTO contact_tombstones(book_id, href, seq, deleted_at) VALUES (?,?,?,?)
		ON CONFLICT(book_id, href) DO UPDATE SET seq = excluded.seq, deleted_at = excluded.deleted_at`, bookID, href, seq, ms(s.now()))
	return mapErr(err, "contact tombstone")
}

// PruneTombstones forgets deletions recorded before before, raising each book's
// pruned_seq past them; it returns how many it forgot.
func (s ContactsStore) PruneTombstones(ctx context.Context, before time.Time) (int, error) {
	return pruneTombstones(ctx, s.DB, "contact_tombstones", "book_id", "address_books", "id", before)
}

// Changes returns what changed in a book after sequence since.
func (s ContactsStore) Changes(ctx context.Context, orgID, ownerID, bookID string, since int64) (contacts.Changes, error) {
	var ch contacts.Changes
	err := s.read(ctx).QueryRowContext(ctx, `SELECT sync_seq, pruned_seq FROM address_books WHERE id = ? AND owner_id = ? AND organization_id = ?`,
		bookID, ownerID, orgID).Scan(&ch.Seq, &ch.Pruned)
	if err != nil {
		return ch, mapErr(err, "address book")
	}
	if ch.Changed, err = s.contacts(ctx, false, `WHERE c.book_id = ? AND c.owner_id = ? AND c.organization_id = ? AND c.seq > ?
		ORDER BY c.seq`, bookID, ownerID, orgID, since); err != nil {
		return ch, err
	}
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT href FROM contact_tombstones WHERE book_id = ? AND seq > ? ORDER BY seq`,
		bookID, since)
	if err != nil {
		return ch, mapErr(err, "contact tombstones")
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return ch, mapErr(err, "contact tombstones")
		}
		ch.Deleted = append(ch.Deleted, h)
	}
	return ch, mapErr(rows.Err(), "contact tombstones")
}

// Search finds the owner's contacts with a word starting with each of terms;
// names weigh most (contacts.Store).
func (s ContactsStore) Search(ctx context.Context, orgID, ownerID string, terms []string, limit int) ([]contacts.ContactSummary, error) {
	if s.pg != nil {
		// Each term a prefix (term:*), all of them (&); terms are letters
		// and digits only (contacts.SearchTerms), nothing tsquery reads as
		// an operator.
		q := make([]string, len(terms))
		for i, t := range terms {
			q[i] = strings.ToLower(t) + ":*"
		}
		return s.summaries(ctx, `SELECT `+summaryCols+` FROM contacts_fts f JOIN contacts c ON c.n = f.rowid
			WHERE f.doc @@ to_tsquery('simple', unaccent(?)) AND c.owner_id = ? AND c.organization_id = ?
			ORDER BY ts_rank('{0.2, 0.3, 0.4, 1.0}', f.doc, to_tsquery('simple', unaccent(?))) + c.is_favorite * 0.05 DESC,
			c.sort_key, c.id LIMIT ?`,
			strings.Join(q, " & "), ownerID, orgID, strings.Join(q, " & "), limit)
	}
	// An FTS5 query: each term quoted, as a prefix; all must match.
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + t + `"*`
	}
	return s.summaries(ctx, `SELECT `+summaryCols+` FROM contacts_fts f JOIN contacts c ON c.n = f.rowid
		WHERE contacts_fts MATCH ? AND c.owner_id = ? AND c.organization_id = ?
		ORDER BY bm25(contacts_fts, 10.0, 4.0, 3.0, 2.0) - c.is_favorite * 0.5, c.sort_key, c.id LIMIT ?`,
		strings.Join(q, " "), ownerID, orgID, limit)
}

const dirCols = `u.id, u.email, u.first_name, u.last_name, o.name`

func scanDir(sc interface{ Scan(...any) error }) (contacts.DirectoryEntry, error) {
	var e contacts.DirectoryEntry
	err := sc.Scan(&e.UserID, &e.Email, &e.FirstName, &e.LastName, &e.OrgName)
	e.DisplayName = strings.TrimSpace(e.FirstName + " " + e.LastName)
	if e.DisplayName == "" {
		e.DisplayName = e.Email
	}
	return e, err
}

// Directory lists the active users of an organisation by name.
func (s ContactsStore) Directory(ctx context.Context, orgID string) ([]contacts.DirectoryEntry, error) {
	rows, err := s.read(ctx).QueryContext(ctx, `SELECT `+dirCols+` FROM users u JOIN organizations o ON o.id = u.organization_id
		WHERE u.organization_id = ? AND u.status = 'active'
		ORDER BY u.first_name COLLATE NOCASE, u.last_name COLLATE NOCASE, u.email_key`, orgID)
	if err != nil {
		return nil, mapErr(err, "directory")
	}
	defer rows.Close()
	out := []contacts.DirectoryEntry{}
	for rows.Next() {
		e, err := scanDir(rows)
		if err != nil {
			return nil, mapErr(err, "directory")
		}
		out = append(out, e)
	}
	return out, mapErr(rows.Err(), "directory")
}

// DirectoryEntry returns one active user of an organisation.
func (s ContactsStore) DirectoryEntry(ctx context.Context, orgID, userID string) (contacts.DirectoryEntry, error) {
	e, err := scanDir(s.read(ctx).QueryRowContext(ctx, `SELECT `+dirCols+` FROM users u JOIN organizations o ON o.id = u.organization_id
		WHERE u.organization_id = ? AND u.id = ? AND u.status = 'active'`, orgID, userID))
	return e, mapErr(err, "user")
}
