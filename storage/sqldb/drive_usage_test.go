package sqldb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDriveOrgUsage: an organisation's totals (OrgUsage, which every write's
// quota check reads) follow its owners' counters through every change: a
// new owner or kind, more and fewer bytes, an owner's drive deleted; another
// organisation's stay apart.
func TestDriveOrgUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	sum := func(org string) (int64, int64) {
		t.Helper()
		var b, c int64
		if err := db.read(ctx).QueryRowContext(ctx, `SELECT coalesce(sum(bytes), 0), coalesce(sum(file_count), 0) FROM drive_usage WHERE organization_id = ?`, org).Scan(&b, &c); err != nil {
			t.Fatal(err)
		}
		return b, c
	}
	add := func(org, owner, group string, bytes, count int64) func() error {
		return func() error {
			return db.InTx(ctx, func(ctx context.Context) error { return s.AddUsage(ctx, org, owner, group, bytes, count) })
		}
	}
	steps := []struct {
		name         string
		do           func() error
		org          string
		bytes, count int64
	}{
		{"nothing stored", func() error { return nil }, "oa", 0, 0},
		{"a first file", add("oa", "u1", "document", 100, 1), "oa", 100, 1},
		{"another kind", add("oa", "u1", "image", 2000, 2), "oa", 2100, 3},
		{"another owner", add("oa", "u2", "document", 50, 1), "oa", 2150, 4},
		{"a file removed", add("oa", "u1", "image", -1000, -1), "oa", 1150, 3},
		{"another organisation", add("ob", "u3", "video", 7000, 1), "ob", 7000, 1},
		{"the first unchanged by it", func() error { return nil }, "oa", 1150, 3},
		{"a rolled-back change", func() error {
			_ = db.InTx(ctx, func(ctx context.Context) error {
				if err := s.AddUsage(ctx, "oa", "u1", "document", 999, 9); err != nil {
					return err
				}
				return context.Canceled
			})
			return nil
		}, "oa", 1150, 3},
		{"an owner's drive deleted", func() error {
			return db.InTx(ctx, func(ctx context.Context) error { return s.DeleteOwner(ctx, "u1", time.Now()) })
		}, "oa", 50, 1},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		b, c, err := s.OrgUsage(ctx, st.org)
		if err != nil || b != st.bytes || c != st.count {
			t.Fatalf("%s: OrgUsage %d bytes, %d files (%v); want %d, %d", st.name, b, c, err, st.bytes, st.count)
		}
		if sb, sc := sum(st.org); sb != b || sc != c {
			t.Fatalf("%s: OrgUsage %d, %d against the counters' sum %d, %d", st.name, b, c, sb, sc)
		}
	}
}

// TestDriveOrgUsageMigration: migration 00025 starts each organisation's
// totals from its counters, and goes back down.
func TestDriveOrgUsageMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, p := migrationsOn(t)
	if _, err := p.UpTo(ctx, 24); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO drive_usage (organization_id, owner_id, mime_group, bytes, file_count) VALUES
		('oa', 'u1', 'document', 10, 1), ('oa', 'u1', 'image', 200, 2), ('oa', 'u2', 'document', 3000, 3), ('ob', 'u3', 'video', 5, 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 25); err != nil {
		t.Fatal(err)
	}
	totals := func() string {
		t.Helper()
		var s string
		if err := raw.QueryRowContext(ctx, `SELECT group_concat(organization_id || ':' || bytes || '/' || file_count, ',')
			FROM (SELECT * FROM drive_org_usage ORDER BY organization_id)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := totals(); got != "oa:3210/6,ob:5/1" {
		t.Fatalf("totals after 00025: %q", got)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE drive_usage SET bytes = bytes + 1, file_count = file_count + 1 WHERE owner_id = 'u3'`); err != nil {
		t.Fatal(err)
	}
	if got := totals(); got != "oa:3210/6,ob:6/2" {
		t.Fatalf("totals after an update: %q", got)
	}
	if _, err := p.DownTo(ctx, 24); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDriveOrgUsage is the quota check's read of an organisation's
// totals, in a write transaction, for an organisation of 1, 50 and 500 owners
// with files of six kinds each: the same point read whatever the size
// (before migration 00025 it summed the counters: 4, 48 and 450 us).
//
//	go test -run '^$' -bench BenchmarkDriveOrgUsage ./storage/sqldb/
func BenchmarkDriveOrgUsage(b *testing.B) {
	for _, owners := range []int{1, 50, 500} {
		b.Run(fmt.Sprintf("owners=%d", owners), func(b *testing.B) {
			db, _ := contactsDB(b)
			ctx := context.Background()
			s := DriveStore{DB: db}
			if err := db.InTx(ctx, func(ctx context.Context) error {
				for u := range owners {
					for _, g := range []string{"document", "image", "video", "audio", "archive", "other"} {
						if err := s.AddUsage(ctx, "oa", fmt.Sprint("user", u), g, 1000, 1); err != nil {
							return err
						}
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			if err := db.InTx(ctx, func(ctx context.Context) error {
				for b.Loop() {
					if _, _, err := s.OrgUsage(ctx, "oa"); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestDriveUsagePending: in a group commit the writes' changes of the usage
// counters are kept and written once, before the commit, yet every write of
// the group sees them: the quota's OrgUsage adds them, a statement naming the
// counters finds them written, and a write that fails takes only its own
// changes with it, even after it wrote the others' (its savepoint undoes
// that, and they are kept again).
func TestDriveUsagePending(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	db.cm.joinFor = 0 // the held transaction takes nobody in
	document := func(ctx context.Context) (int64, int64, error) {
		gs, err := s.OwnerUsage(ctx, "oa", "u1")
		for _, g := range gs {
			if g.MimeGroup == "document" {
				return g.Bytes, g.Count, err
			}
		}
		return 0, 0, err
	}
	pending := func(ctx context.Context) int { return len(ctx.Value(txKey{}).(*txState).w.usage.sums) }
	jobs := []struct {
		name string
		fn   func(ctx context.Context) error
		fail bool
	}{
		{"kept, not written, and counted by the quota", func(ctx context.Context) error {
			if err := s.AddUsage(ctx, "oa", "u1", "document", 100, 1); err != nil {
				return err
			}
			if n := pending(ctx); n != 1 {
				return fmt.Errorf("%d changes pending, want 1", n)
			}
			if b, c, err := s.OrgUsage(ctx, "oa"); err != nil || b != 100 || c != 1 {
				return fmt.Errorf("OrgUsage %d bytes %d files (%v), want 100 and 1", b, c, err)
			}
			return nil
		}, false},
		{"writes the others' changes to read the counters, then fails", func(ctx context.Context) error {
			if b, c, err := document(ctx); err != nil || b != 100 || c != 1 {
				return fmt.Errorf("counter %d bytes %d files (%v), want 100 and 1", b, c, err)
			}
			if err := s.AddUsage(ctx, "oa", "u1", "document", 200, 1); err != nil {
				return err
			}
			return errors.New("refused")
		}, true},
		{"reads the counters after its own change", func(ctx context.Context) error {
			if err := s.AddUsage(ctx, "oa", "u1", "document", 300, 1); err != nil {
				return err
			}
			if b, c, err := document(ctx); err != nil || b != 400 || c != 2 {
				return fmt.Errorf("counter %d bytes %d files (%v), want 400 and 2", b, c, err)
			}
			return nil
		}, false},
		{"kept until the commit", func(ctx context.Context) error {
			if err := s.AddUsage(ctx, "oa", "u1", "document", 7, 1); err != nil {
				return err
			}
			if b, c, err := s.OrgUsage(ctx, "oa"); err != nil || b != 407 || c != 3 {
				return fmt.Errorf("OrgUsage %d bytes %d files (%v), want 407 and 3", b, c, err)
			}
			return nil
		}, false},
	}
	release := make(chan struct{})
	held := holdWriter(ctx, db, "", release)
	errs := make([]chan error, len(jobs))
	for i, j := range jobs {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- db.InTx(ctx, j.fn) }()
		queued(t, db, i+1, release) // one after the other: the group's order
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		if err := <-errs[i]; (err != nil) != j.fail {
			t.Errorf("%s: %v", j.name, err)
		}
	}
	if b, c, err := document(ctx); err != nil || b != 407 || c != 3 {
		t.Errorf("committed counter %d bytes %d files (%v), want 407 and 3", b, c, err)
	}
	if b, c, err := s.OrgUsage(ctx, "oa"); err != nil || b != 407 || c != 3 {
		t.Errorf("committed OrgUsage %d bytes %d files (%v), want 407 and 3", b, c, err)
	}
	if n := len(db.cm.w.usage.sums); n != 0 {
		t.Errorf("%d changes pending after the commit", n)
	}
}

// A transaction that changes the counters many times (a folder copied, an
// import) keeps one sum a counter, which the quota reads and the commit
// writes.
func TestDriveUsagePendingSums(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	err := db.InTx(ctx, func(ctx context.Context) error {
		for i := range 1000 {
			group := []string{"document", "image"}[i%2]
			if err := s.AddUsage(ctx, "oa", "u1", group, 10, 1); err != nil {
				return err
			}
		}
		if n := len(ctx.Value(txKey{}).(*txState).w.usage.sums); n != 2 {
			return fmt.Errorf("%d sums pending, want 2", n)
		}
		if b, c, err := s.OrgUsage(ctx, "oa"); err != nil || b != 10000 || c != 1000 {
			return fmt.Errorf("OrgUsage %d bytes %d files (%v), want 10000 and 1000", b, c, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := s.OwnerUsage(ctx, "oa", "u1")
	if err != nil || fmt.Sprint(gs) != "[{document 5000 500} {image 5000 500}]" {
		t.Fatalf("committed counters %v (%v)", gs, err)
	}
}

// A pending change that cannot be written, at the statement that needed it
// or at the commit, fails its transaction: the caller hears it, and nothing
// of the transaction stays.
func TestDriveUsagePendingFails(t *testing.T) {
	sqliteOnly(t)
	t.Parallel()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	if _, err := db.Exec(ctx, `CREATE TRIGGER usage_refused BEFORE UPDATE ON drive_usage WHEN new.bytes > 1000
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(ctx context.Context) error { return s.AddUsage(ctx, "oa", "u1", "document", 10, 1) }); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		then func(ctx context.Context) error
	}{
		{"at a statement that reads the counters", func(ctx context.Context) error { _, err := s.OwnerUsage(ctx, "oa", "u1"); return err }},
		{"at the commit", func(context.Context) error { return nil }},
	} {
		err := db.InTx(ctx, func(ctx context.Context) error {
			if _, err := db.Exec(ctx, `UPDATE users SET first_name = 'Changed' WHERE id = 'u2'`); err != nil {
				return err
			}
			if err := s.AddUsage(ctx, "oa", "u1", "document", 5000, 1); err != nil {
				return err
			}
			return c.then(ctx)
		})
		if err == nil || !strings.Contains(err.Error(), "refused by the test") {
			t.Errorf("%s: %v, want the refusal", c.name, err)
		}
		if b, n, err := s.OrgUsage(ctx, "oa"); err != nil || b != 10 || n != 1 {
			t.Errorf("%s: counters %d bytes %d files (%v), want 10 and 1", c.name, b, n, err)
		}
		var name string
		if err := db.read(ctx).QueryRowContext(ctx, `SELECT first_name FROM users WHERE id = 'u2'`).Scan(&name); err != nil || name != "Tom" {
			t.Errorf("%s: the transaction's other change stayed: %q (%v)", c.name, name, err)
		}
	}
}
