-- +goose Up
-- Address books: each user has a default book (created on first access) and may
-- create more. sync_seq is the book's change sequence: every change to a contact
-- of the book bumps it in the same transaction (CardDAV sync-token and getctag).
CREATE TABLE address_books (
    id              TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    owner_id        TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    is_default      INTEGER NOT NULL DEFAULT 0,
    sync_seq        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX address_books_owner ON address_books(organization_id, owner_id, id);
CREATE UNIQUE INDEX address_books_one_default ON address_books(owner_id) WHERE is_default = 1;

-- Contacts keep the full vCard text as the client wrote it; the other columns are
-- the fields Atrium models, mapped out of it. n is the row number the search index
-- refers to.
CREATE TABLE contacts (
    n               INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    book_id         TEXT NOT NULL REFERENCES address_books(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    owner_id        TEXT NOT NULL,
    href            TEXT NOT NULL,          -- resource name in the book (CardDAV)
    uid             TEXT NOT NULL,
    display_name    TEXT NOT NULL,
    first_name      TEXT NOT NULL DEFAULT '',
    last_name       TEXT NOT NULL DEFAULT '',
    email           TEXT NOT NULL DEFAULT '',  -- primary
    phone           TEXT NOT NULL DEFAULT '',  -- primary
    organization    TEXT NOT NULL DEFAULT '',
    sort_key        TEXT NOT NULL,
    summary         TEXT NOT NULL,          -- the list form (ContactSummary JSON)
    is_favorite     INTEGER NOT NULL DEFAULT 0,
    vcard           TEXT NOT NULL,
    etag            TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX contacts_book_href ON contacts(book_id, href);
-- Covers the book listing: one pre-rendered column, no table lookups.
CREATE INDEX contacts_book_list ON contacts(book_id, sort_key, id, owner_id, organization_id, summary);
CREATE INDEX contacts_book_seq ON contacts(book_id, seq);
CREATE INDEX contacts_owner ON contacts(owner_id, organization_id);

-- Deleted (or moved away) resources of a book, for CardDAV sync-collection.
CREATE TABLE contact_tombstones (
    book_id    TEXT NOT NULL REFERENCES address_books(id) ON DELETE CASCADE,
    href       TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    deleted_at INTEGER NOT NULL,
    PRIMARY KEY (book_id, href)
) STRICT, WITHOUT ROWID;
CREATE INDEX contact_tombstones_seq ON contact_tombstones(book_id, seq);

-- Search: case- and accent-insensitive, prefix queries; rowid = contacts.n.
CREATE VIRTUAL TABLE contacts_fts USING fts5(
    names, emails, phones, organization,
    content = '', contentless_delete = 1,
    tokenize = "unicode61 remove_diacritics 2"
);

-- +goose Down
DROP TABLE contacts_fts;
DROP TABLE contact_tombstones;
DROP TABLE contacts;
DROP TABLE address_books;
