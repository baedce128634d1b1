package sqldb

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"atrium/app/drive"
)

// lockTree makes the folders d1/d2/d3 and the file d3/f of user u1 and returns
// the store and the file's id.
func lockTree(t testing.TB) (*DB, DriveStore) {
	t.Helper()
	ctx := context.Background()
	db, _ := contactsDB(t)
	s := DriveStore{DB: db}
	now := time.Now().UTC().Truncate(time.Millisecond)
	var parent *string
	for _, id := range []string{"d1", "d2", "d3", "f"} {
		f := drive.File{ID: id, OrgID: "oa", OwnerID: "u1", ParentID: parent, Name: id, IsFolder: id != "f",
			MimeType: "inode/directory", MimeGroup: "folder", Status: drive.StatusActive, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		parent = &f.ID
	}
	return db, s
}

// LocksOn finds the live locks on an item, the deep ones on the folders
// above it and, with below, those on what it holds; none when no lock is
// live anywhere.
func TestDriveLocksOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, c := range []struct {
		name  string
		locks []drive.Lock
		on    string
		below bool
		want  []string // tokens
	}{
		{name: "no lock", on: "f"},
		{name: "only expired locks", locks: []drive.Lock{{FileID: "f", Token: "t1", ExpiresAt: now.Add(-time.Second)}}, on: "f"},
		{name: "on the item", locks: []drive.Lock{{FileID: "f", Token: "t1", ExpiresAt: now.Add(time.Hour)}}, on: "f", want: []string{"t1"}},
		{name: "deep, two folders up", locks: []drive.Lock{{FileID: "d2", Token: "t1", Deep: true, ExpiresAt: now.Add(time.Hour)}}, on: "f", want: []string{"t1"}},
		{name: "not deep, on the folder", locks: []drive.Lock{{FileID: "d3", Token: "t1", ExpiresAt: now.Add(time.Hour)}}, on: "f"},
		{name: "elsewhere only", locks: []drive.Lock{{FileID: "d1", Token: "t1", ExpiresAt: now.Add(time.Hour)}}, on: "f"},
		{name: "below, asked", locks: []drive.Lock{{FileID: "f", Token: "t1", ExpiresAt: now.Add(time.Hour)}}, on: "d2", below: true, want: []string{"t1"}},
		{name: "below, not asked", locks: []drive.Lock{{FileID: "f", Token: "t1", ExpiresAt: now.Add(time.Hour)}}, on: "d2"},
		{name: "above and below", on: "d2", below: true, want: []string{"t1", "t2"}, locks: []drive.Lock{
			{FileID: "d1", Token: "t1", Deep: true, ExpiresAt: now.Add(time.Hour)}, {FileID: "d3", Token: "t2", ExpiresAt: now.Add(time.Hour)},
			{FileID: "f", Token: "t3", ExpiresAt: now.Add(-time.Hour)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, s := lockTree(t)
			for _, l := range c.locks {
				l.OwnerID, l.Kind, l.CreatedAt = "u1", drive.LockKindWebDAV, now
				if err := s.AddLock(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			locks, err := s.LocksOn(ctx, c.on, c.below, now)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, l := range locks {
				got = append(got, l.Token)
			}
			slices.Sort(got)
			if want := append([]string{}, c.want...); !slices.Equal(got, want) {
				t.Errorf("locks %v, want %v", got, want)
			}
		})
	}
}

// BenchmarkDriveLocksOn is the lock check every write makes, in the writer's
// transaction, on a file three folders deep: with no lock anywhere (the
// usual case) and with a live lock elsewhere (the folders are walked). The
// empty transaction is the part that is not the check.
//
//	go test -run '^$' -bench BenchmarkDriveLocksOn ./storage/sqldb/
func BenchmarkDriveLocksOn(b *testing.B) {
	ctx := context.Background()
	check := func(b *testing.B, db *DB, s DriveStore) {
		now := time.Now()
		for b.Loop() {
			if err := db.InTx(ctx, func(ctx context.Context) error {
				_, err := s.LocksOn(ctx, "f", false, now)
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("none", func(b *testing.B) {
		db, s := lockTree(b)
		check(b, db, s)
	})
	b.Run("one elsewhere", func(b *testing.B) {
		db, s := lockTree(b)
		if err := s.AddLock(ctx, drive.Lock{FileID: "d1", Token: "t1", OwnerID: "u1", Kind: drive.LockKindWebDAV,
			ExpiresAt: time.Now().Add(time.Hour), CreatedAt: time.Now()}); err != nil {
			b.Fatal(err)
		}
		check(b, db, s)
	})
	b.Run("empty transaction", func(b *testing.B) {
		db, _ := lockTree(b)
		for b.Loop() {
			if err := db.InTx(ctx, func(ctx context.Context) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDriveLocksHint: the lock checks skip SQLite while no lock was ever
// taken, and find the locks that are there: one taken after the DB opened
// (AddLock) and one taken before it opened (an earlier run of the server).
func TestDriveLocksHint(t *testing.T) {
	sqliteOnly(t) // the hint is SQLite's (one process writes)
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	db, s := lockTree(t)
	tokens := func(s DriveStore) []string {
		t.Helper()
		locks, err := s.LocksOn(ctx, "f", false, now)
		if err != nil {
			t.Fatal(err)
		}
		onFiles, err := s.LocksOnFiles(ctx, []string{"f"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(onFiles) != len(locks) {
			t.Fatalf("LocksOn %d, LocksOnFiles %d", len(locks), len(onFiles))
		}
		got := []string{}
		for _, l := range locks {
			got = append(got, l.Token)
		}
		slices.Sort(got)
		return got
	}
	if got := tokens(s); len(got) != 0 || s.driveLocks.Load() {
		t.Fatalf("no lock: %v, hint %v", got, s.driveLocks.Load())
	}
	lock := drive.Lock{FileID: "f", Token: "t1", OwnerID: "u1", Kind: drive.LockKindWebDAV, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	if err := db.InTx(ctx, func(ctx context.Context) error { return s.AddLock(ctx, lock) }); err != nil {
		t.Fatal(err)
	}
	if got := tokens(s); !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("after AddLock: %v", got)
	}
	// A DB opened on the file afterwards finds the lock there.
	db2, err := Open(ctx, db.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if got := tokens(DriveStore{DB: db2}); !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("a DB opened with a lock there: %v", got)
	}
}

// The lock hint goes once a commit that deleted locks leaves none, and only
// then: not while a lock is left, not when the transaction that deleted the
// last one fails, not when the same transaction takes another. The checks
// find every lock that is there throughout.
func TestDriveLocksHintCleared(t *testing.T) {
	sqliteOnly(t) // the hint is SQLite's (one process writes)
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	db, s := lockTree(t)
	lock := func(token, file string, expires time.Time) drive.Lock {
		return drive.Lock{FileID: file, Token: token, OwnerID: "u1", Kind: drive.LockKindWebDAV, ExpiresAt: expires, CreatedAt: now}
	}
	tx := func(fn func(ctx context.Context) error) error { return db.InTx(ctx, fn) }
	add := func(l drive.Lock) func(ctx context.Context) error {
		return func(ctx context.Context) error { return s.AddLock(ctx, l) }
	}
	unlock := func(token string) func(ctx context.Context) error {
		return func(ctx context.Context) error { return s.DeleteLock(ctx, token) }
	}
	refused := errors.New("refused")
	cases := []struct {
		name string
		fn   func(ctx context.Context) error
		err  error
		hint bool
		live []string // the live locks on f and its folders afterwards
	}{
		{"a lock taken", add(lock("t1", "f", now.Add(time.Hour))), nil, true, []string{"t1"}},
		{"a second lock", add(lock("t2", "d1", now.Add(time.Hour))), nil, true, []string{"t1"}},
		{"one of two unlocked", unlock("t1"), nil, true, []string{}},
		{"the last unlocked in a failed transaction", func(ctx context.Context) error {
			if err := s.DeleteLock(ctx, "t2"); err != nil {
				return err
			}
			return refused
		}, refused, true, []string{}},
		{"the last unlocked and another taken at once", func(ctx context.Context) error {
			if err := s.DeleteLock(ctx, "t2"); err != nil {
				return err
			}
			return s.AddLock(ctx, lock("t3", "f", now.Add(time.Hour)))
		}, nil, true, []string{"t3"}},
		{"the last unlocked", unlock("t3"), nil, false, []string{}},
		{"a lock taken outside a transaction", nil, nil, true, []string{"t5"}},
		{"the last unlocked outside a transaction", nil, nil, false, []string{}},
		{"an expired lock taken", add(lock("t4", "f", now.Add(-time.Minute))), nil, true, []string{}},
		{"the expired ones swept (maintenance, outside a transaction)", nil, nil, false, []string{}},
		{"a lock taken again", add(lock("t6", "f", now.Add(time.Hour))), nil, true, []string{"t6"}},
		{"its owner's drive deleted", func(ctx context.Context) error { return s.DeleteOwner(ctx, "u1", now) }, nil, false, []string{}},
	}
	for _, c := range cases {
		var err error
		switch c.name {
		case "a lock taken outside a transaction":
			err = s.AddLock(ctx, lock("t5", "f", now.Add(time.Hour)))
		case "the last unlocked outside a transaction":
			err = s.DeleteLock(ctx, "t5")
		case "the expired ones swept (maintenance, outside a transaction)":
			_, err = s.DeleteExpiredLocks(ctx, now)
		default:
			err = tx(c.fn)
		}
		if !errors.Is(err, c.err) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.err)
		}
		if got := s.driveLocks.Load(); got != c.hint {
			t.Errorf("%s: hint %v, want %v", c.name, got, c.hint)
		}
		locks, err := s.LocksOn(ctx, "f", false, now)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, l := range locks {
			if l.Deep || l.FileID == "f" {
				got = append(got, l.Token)
			}
		}
		if !slices.Equal(got, c.live) {
			t.Errorf("%s: live locks on f %v, want %v", c.name, got, c.live)
		}
	}
}
