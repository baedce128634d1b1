package sqldb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/contacts"
)

func contactsDB(t testing.TB) (*DB, ContactsStore) {
	t.Helper()
	ctx := context.Background()
	db := openTest(t)
	now := time.Now().UnixMilli()
	for _, q := range []string{
		`INSERT INTO organizations(id, name, slug, created_at, updated_at) VALUES ('oa', 'A', 'a', ?, ?), ('ob', 'B', 'b', ?, ?)`,
		`INSERT INTO users(id, organization_id, email, email_key, role_slug, status, created_at, updated_at, first_name, last_name) VALUES
			('u1', 'oa', 'one@a.test', 'one@a.test', 'admin', 'active', ?, ?, 'Una', 'One'),
			('u2', 'oa', 'two@a.test', 'two@a.test', 'member', 'active', ?, ?, 'Tom', 'Two'),
			('u4', 'oa', 'off@a.test', 'off@a.test', 'member', 'suspended', ?, ?, '', ''),
			('u3', 'ob', 'three@b.test', 'three@b.test', 'admin', 'active', ?, ?, '', '')`,
	} {
		args := []any{now, now, now, now, now, now, now, now}
		if _, err := db.Exec(ctx, q, args[:countParams(q)]...); err != nil {
			t.Fatal(err)
		}
	}
	return db, ContactsStore{DB: db}
}

func countParams(q string) int {
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
		}
	}
	return n
}

func TestContactsStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s := contactsDB(t)
	now := time.Now().UTC()
	b1 := contacts.AddressBook{ID: "b1", OrgID: "oa", OwnerID: "u1", Name: "Contacts", IsDefault: true, CreatedAt: now, UpdatedAt: now}
	if err := s.CreateBook(ctx, b1); err != nil {
		t.Fatal(err)
	}
	dup := b1
	dup.ID = "b1bis"
	if err := s.CreateBook(ctx, dup); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("second default book: %v", err)
	}
	if _, err := s.DefaultBook(ctx, "oa", "u2"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("u2 has no default book: %v", err)
	}
	if _, err := s.Book(ctx, "oa", "u2", "b1"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("u2 reads u1's book: %v", err)
	}

	add := func(id, name, email string) contacts.ContactDetail {
		t.Helper()
		seq, err := s.NextSeq(ctx, "b1")
		if err != nil {
			t.Fatal(err)
		}
		c := contacts.ContactDetail{ID: id, BookID: "b1", OrgID: "oa", OwnerID: "u1", Href: id + ".vcf", UID: id, Seq: seq,
			VCard: "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:" + name + "\r\nEND:VCARD\r\n", ETag: `"` + id + `"`, CreatedAt: now, UpdatedAt: now}
		c.DisplayName, c.Email = name, email
		c.Emails = []contacts.Email{{Type: "work", Value: email}}
		if err := s.InsertContact(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	add("c1", "Zoë Älmhult", "zoe@example.com")
	c2 := add("c2", "Bob Builder", "bob@example.com")
	if err := s.InsertContact(ctx, c2); app.ErrorCode(err) != app.EConflict {
		t.Fatalf("same href twice: %v", err)
	}

	// The list JSON is sorted and valid.
	raw, err := s.ContactsJSON(ctx, "oa", "u1", "b1")
	if err != nil {
		t.Fatal(err)
	}
	var list []contacts.ContactSummary
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 2 || list[0].ID != "c2" || list[1].DisplayName != "Zoë Älmhult" {
		t.Fatalf("list %s: %v", raw, err)
	}
	if raw, _ := s.ContactsJSON(ctx, "oa", "u2", "b1"); string(raw) != "[]" {
		t.Fatalf("another owner lists %s", raw)
	}
	if n, _ := s.ContactCount(ctx, "b1"); n != 2 {
		t.Fatalf("count %d", n)
	}

	// Search: accents and case folded, prefixes, scoped by owner.
	for _, c := range []struct {
		owner, q string
		n        int
	}{{"u1", "zoe", 1}, {"u1", "almh", 1}, {"u1", "EXAMPLE", 2}, {"u2", "zoe", 0}, {"u1", "nobody", 0}, {"u1", "zoe alm", 1}, {"u1", "zoe bob", 0}} {
		got, err := s.Search(ctx, "oa", c.owner, strings.Fields(c.q), 10)
		if err != nil || len(got) != c.n {
			t.Errorf("search %s as %s: %d results, %v", c.q, c.owner, len(got), err)
		}
	}

	// Changes after a sequence, and tombstones.
	before, err := s.Changes(ctx, "oa", "u1", "b1", 0)
	if err != nil || before.Seq != 2 || len(before.Changed) != 2 || len(before.Deleted) != 0 {
		t.Fatalf("changes from 0: %+v %v", before, err)
	}
	seq, _ := s.NextSeq(ctx, "b1")
	if err := s.DeleteContact(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if err := s.Tombstone(ctx, "b1", c2.Href, seq); err != nil {
		t.Fatal(err)
	}
	after, err := s.Changes(ctx, "oa", "u1", "b1", before.Seq)
	if err != nil || after.Seq != 3 || len(after.Changed) != 0 || len(after.Deleted) != 1 || after.Deleted[0] != "c2.vcf" {
		t.Fatalf("changes after delete: %+v %v", after, err)
	}
	if got, _ := s.Search(ctx, "oa", "u1", []string{"bob"}, 10); len(got) != 0 {
		t.Fatalf("deleted contact still found")
	}
	// Re-creating at the href clears its tombstone.
	add("c2", "Bob Again", "bob@example.com")
	again, _ := s.Changes(ctx, "oa", "u1", "b1", before.Seq)
	if len(again.Deleted) != 0 || len(again.Changed) != 1 {
		t.Fatalf("changes after re-create: %+v", again)
	}
	if _, err := s.ContactByHref(ctx, "ob", "u3", "b1", "c2.vcf"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("another organisation reads a contact: %v", err)
	}

	// Directory: active users of one organisation.
	dir, err := s.Directory(ctx, "oa")
	if err != nil || len(dir) != 2 || dir[0].Email != "two@a.test" || dir[1].DisplayName != "Una One" || dir[0].OrgName != "A" {
		t.Fatalf("directory %+v: %v", dir, err)
	}
	if _, err := s.DirectoryEntry(ctx, "oa", "u4"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("suspended user in the directory: %v", err)
	}
	if _, err := s.DirectoryEntry(ctx, "ob", "u1"); app.ErrorCode(err) != app.ENotFound {
		t.Fatalf("user of another organisation in the directory: %v", err)
	}

	// Deleting a book removes its contacts from search.
	if err := s.DeleteBook(ctx, "oa", "u1", "b1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Search(ctx, "oa", "u1", []string{"zoe"}, 10); len(got) != 0 {
		t.Fatalf("contacts of a deleted book still found")
	}
}

// PruneTombstones forgets old deletions across books and raises each book's
// horizon to the newest sequence it forgot; recent deletions stay.
func TestContactTombstonesPruned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, s := contactsDB(t)
	now := time.Now().UTC()
	for _, id := range []string{"b1", "b2"} {
		if err := s.CreateBook(ctx, contacts.AddressBook{ID: id, OrgID: "oa", OwnerID: "u1", Name: id, IsDefault: id == "b1", CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, `UPDATE address_books SET sync_seq = 2000`); err != nil {
		t.Fatal(err)
	}
	old, recent := now.Add(-100*24*time.Hour).UnixMilli(), now.UnixMilli()
	for i := range 1200 { // old: 700 in b1 (seq 1..700), 500 in b2 (seq 1..500)
		book, seq := "b1", int64(i+1)
		if i >= 700 {
			book, seq = "b2", int64(i-699)
		}
		if _, err := db.Exec(ctx, `INSERT INTO contact_tombstones(book_id, href, seq, deleted_at) VALUES (?,?,?,?)`, book, fmt.Sprintf("c%d.vcf", i), seq, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, `INSERT INTO contact_tombstones(book_id, href, seq, deleted_at) VALUES ('b1', 'new.vcf', 1500, ?)`, recent); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneTombstones(ctx, now.Add(-90*24*time.Hour))
	if err != nil || n != 1200 {
		t.Fatalf("pruned %d: %v", n, err)
	}
	for _, c := range []struct {
		book    string
		pruned  int64
		deleted []string
	}{{"b1", 700, []string{"new.vcf"}}, {"b2", 500, nil}} {
		ch, err := s.Changes(ctx, "oa", "u1", c.book, 0)
		if err != nil || ch.Pruned != c.pruned || strings.Join(ch.Deleted, ",") != strings.Join(c.deleted, ",") {
			t.Errorf("%s: pruned %d, deleted %v, %v; want %d, %v", c.book, ch.Pruned, ch.Deleted, err, c.pruned, c.deleted)
		}
	}
}
