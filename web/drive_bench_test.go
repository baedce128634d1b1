package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/storage/sqldb"
	"atrium/wire"
)

// Drive performance targets (issue 7), on a drive of 100,000 files in a real
// SQLite file, measured through the drive service (the REST layer adds its
// constant per-request cost, see BenchmarkStackMe):
//
//	browse of a 5,000-item folder page (per_page 100)   < 15 ms
//	full delta snapshot                                  < 3 s
//	incremental delta after 10 changes                   < 5 ms
//	storage usage                                        < 1 ms
//
//	go test -run '^$' -bench 'BenchmarkDrive' -benchtime 2s ./web/
//
// Each benchmark seeds its own drive once (a few seconds) and measures in a
// sub-benchmark "100k": ns/op is the time of one call (one full snapshot walk
// for Snapshot100k).

const (
	benchFiles      = 100_000
	benchBigFolder  = 5_000
	benchPerFolder  = 1_000
	benchDeltaLimit = 1_000
)

type driveBench struct {
	m   *wire.Main
	svc *drive.Service
	p   *app.Principal
	big string
	// items is the number of live items (files and folders).
	items int
}

// newDriveBench wires Atrium on a fresh data directory and seeds one user's
// drive with 100,000 files: 5,000 in one folder, the rest 1,000 per folder.
// Rows are written through the drive store in one transaction, with change
// sequence numbers and usage counters as the service keeps them.
func newDriveBench(b *testing.B) driveBench {
	b.Helper()
	ctx := context.Background()
	m, creds := benchMain(b, false)
	p, err := m.Identity.Authenticate(ctx, creds.Token)
	if err != nil {
		b.Fatal(err)
	}
	store := sqldb.DriveStore{DB: m.DB}
	rng := rand.New(rand.NewPCG(7, 7))
	now := time.Now().UTC()
	d := driveBench{m: m, svc: m.Drive, p: p}
	start := time.Now()
	err = store.InTx(ctx, func(ctx context.Context) error {
		create := func(f drive.File) (string, error) {
			f.ID, f.OrgID, f.OwnerID, f.Status = app.NewID(), p.OrgID, p.UserID, drive.StatusActive
			f.Metadata = drive.Metadata{Tags: []string{}, Custom: map[string]string{}}
			f.CreatedAt, f.UpdatedAt = now, now
			seq, err := store.NextSeq(ctx, p.UserID)
			if err != nil {
				return "", err
			}
			f.Seq = seq
			d.items++
			return f.ID, store.CreateFile(ctx, f)
		}
		var bytes int64
		for folder, made := 0, 0; made < benchFiles; folder++ {
			n := benchPerFolder
			if folder == 0 {
				n = benchBigFolder
			}
			parent, err := create(drive.File{Name: fmt.Sprintf("Folder %03d", folder), IsFolder: true, MimeType: drive.FolderMime, MimeGroup: "other"})
			if err != nil {
				return err
			}
			if folder == 0 {
				d.big = parent
			}
			for i := range n {
				size := int64(1 + rng.IntN(1<<20))
				sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d", folder, i))
				if _, err := create(drive.File{ParentID: &parent, Name: fmt.Sprintf("%08x-%d.txt", rng.Uint32(), i), MimeType: "text/plain",
					MimeGroup: "text", SizeBytes: size, StoredBytes: size, ContentHash: "sha256:" + hex.EncodeToString(sum[:]), Version: 1}); err != nil {
					return err
				}
				bytes += size
			}
			made += n
		}
		return store.AddUsage(ctx, p.OrgID, p.UserID, "text", bytes, benchFiles)
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d items in %v", d.items, time.Since(start).Round(time.Millisecond))
	return d
}

// BenchmarkDriveBrowse5000: page 20 of a 5,000-item folder, 100 per page, by name.
func BenchmarkDriveBrowse5000(b *testing.B) {
	d := newDriveBench(b)
	ctx := context.Background()
	lp := drive.ListParams{Page: 20, PerPage: 100, SortBy: "name", SortOrder: "asc"}
	b.Run("100k", func(b *testing.B) {
		for b.Loop() {
			fc, err := d.svc.Browse(ctx, d.p, d.big, lp)
			if err != nil || len(fc.Items) != 100 || fc.Total != benchBigFolder {
				b.Fatalf("browse: %v, %d items of %d", err, len(fc.Items), fc.Total)
			}
		}
	})
}

// snapshot walks a full delta snapshot and returns the number of items and the
// final cursor.
func (d driveBench) snapshot(b *testing.B, device string) (int, string) {
	ctx := context.Background()
	n, cursor := 0, ""
	for {
		pg, err := d.svc.Delta(ctx, d.p, device, cursor, benchDeltaLimit)
		if err != nil {
			b.Fatal(err)
		}
		n, cursor = n+len(pg.Items), pg.Cursor
		if !pg.HasMore {
			return n, cursor
		}
	}
}

// BenchmarkDriveSnapshot100k: one full delta snapshot (pages of 1,000).
func BenchmarkDriveSnapshot100k(b *testing.B) {
	d := newDriveBench(b)
	b.Run("100k", func(b *testing.B) {
		for b.Loop() {
			if n, _ := d.snapshot(b, "bench"); n != d.items {
				b.Fatalf("snapshot of %d items, want %d", n, d.items)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/snapshot")
	})
}

// BenchmarkDriveDeltaAfter10: an incremental delta after 10 changes.
func BenchmarkDriveDeltaAfter10(b *testing.B) {
	d := newDriveBench(b)
	ctx := context.Background()
	_, cursor := d.snapshot(b, "bench")
	fc, err := d.svc.Browse(ctx, d.p, d.big, drive.ListParams{PerPage: 10})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range fc.Items {
		if _, err := d.svc.Rename(ctx, d.p, f.ID, "renamed "+f.Name); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("100k", func(b *testing.B) {
		for b.Loop() {
			pg, err := d.svc.Delta(ctx, d.p, "bench", cursor, 0)
			if err != nil || len(pg.Items) != 10 || pg.HasMore {
				b.Fatalf("delta: %v, %d items", err, len(pg.Items))
			}
		}
	})
}

// BenchmarkDriveStorageUsage: the storage usage of the organisation and the caller.
func BenchmarkDriveStorageUsage(b *testing.B) {
	d := newDriveBench(b)
	ctx := context.Background()
	b.Run("100k", func(b *testing.B) {
		for b.Loop() {
			u, err := d.svc.Storage(ctx, d.p)
			if err != nil || u.FileCount != benchFiles {
				b.Fatalf("storage: %v, %+v", err, u)
			}
		}
	})
}

// BenchmarkDriveSearch: a search for a word in 1,000 small text files, a
// page of 20 hits, through the drive service (the index, then the hits' items
// and their permissions). quiet: nothing changed since the last search;
// after-a-write: one file was written before each search (untimed), which the
// search applies to the index before it runs (a search sees every change
// committed before it), as under a steady mix of writes and searches.
//
//	go test -run '^$' -bench BenchmarkDriveSearch -benchtime 300x ./web/
func BenchmarkDriveSearch(b *testing.B) {
	ctx := context.Background()
	m, creds := benchMain(b, true)
	p, err := m.Identity.Authenticate(ctx, creds.Token)
	if err != nil {
		b.Fatal(err)
	}
	put := func(i int) {
		body := fmt.Sprintf("quokka note %d: the wombat%d and the numbat%d", i, i%97, i%89)
		if _, _, err := m.Drive.Put(ctx, p, drive.PutRequest{Name: fmt.Sprintf("note-%05d.txt", i), MimeType: "text/plain",
			Size: int64(len(body)), Body: strings.NewReader(body)}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 1000 {
		put(i)
	}
	search := func(b *testing.B) {
		r, err := m.Drive.DerivedData().Search(ctx, p, drive.SearchParams{Q: "quokka", Limit: 20})
		if err != nil || len(r.Hits) != 20 {
			b.Fatalf("search: %v, %d hits", err, len(r.Hits))
		}
	}
	b.Run("quiet", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			search(b)
		}
	})
	b.Run("after-a-write", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			b.StopTimer()
			put(1000 + i)
			b.StartTimer()
			search(b)
		}
	})
}

// BenchmarkDriveSharedWithTeams: a member of 50 teams to whom 10,000 items
// are shared through them (issue 53's targets: a page of Shared with me
// under 20 ms, a search p50 under 25 ms), two ways:
//
//   - folders: each team has a folder of 200 files shared with it (50 shared
//     roots, 10,000 items below them);
//   - items: each team has 200 files shared with it one by one (10,000
//     shared roots), the hardest case for the visibility filter.
//
// Each sub-benchmark lists page 1 of Shared with me (50 per page, by name)
// and searches a word in every file's content (a page of 20 hits).
//
//	go test -run '^$' -bench BenchmarkDriveSharedWithTeams -benchtime 200x ./web/
func BenchmarkDriveSharedWithTeams(b *testing.B) {
	for _, mode := range []string{"folders", "items"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			m, creds := benchMain(b, true)
			owner, err := m.Identity.Authenticate(ctx, creds.Token)
			if err != nil {
				b.Fatal(err)
			}
			mc, err := m.Bootstrap(ctx, "Bench Org", "member@example.test", "member")
			if err != nil {
				b.Fatal(err)
			}
			member, err := m.Identity.Authenticate(ctx, mc.Token)
			if err != nil {
				b.Fatal(err)
			}
			admin := m.Partner.Admin()
			start := time.Now()
			for t := range 50 {
				team, err := admin.CreateTeam(ctx, owner, fmt.Sprintf("Team %02d", t))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := admin.AddMember(ctx, owner, team.ID, member.UserID); err != nil {
					b.Fatal(err)
				}
				folder, err := m.Drive.CreateFolder(ctx, owner, fmt.Sprintf("Folder %02d", t), "")
				if err != nil {
					b.Fatal(err)
				}
				for i := range 200 {
					body := fmt.Sprintf("quokka memo %d of team %d", i, t)
					f, _, err := m.Drive.Put(ctx, owner, drive.PutRequest{ParentID: folder.ID, Name: fmt.Sprintf("memo-%03d.txt", i),
						MimeType: "text/plain", Size: int64(len(body)), Body: strings.NewReader(body)})
					if err != nil {
						b.Fatal(err)
					}
					if mode == "items" {
						if _, err := m.Drive.CreateShare(ctx, owner, f.ID, drive.ShareRequest{TeamID: team.ID}); err != nil {
							b.Fatal(err)
						}
					}
				}
				if mode == "folders" {
					if _, err := m.Drive.CreateShare(ctx, owner, folder.ID, drive.ShareRequest{TeamID: team.ID}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.Logf("seeded in %v", time.Since(start).Round(time.Millisecond))
			// The figures are of a drive at rest: the search index takes in
			// the 10,000 new items first, not while the listing is timed.
			for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
				r, err := m.Drive.DerivedData().Search(ctx, member, drive.SearchParams{Q: "quokka", Limit: 1})
				if err == nil && r.TotalHits == 10_000 {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("the search index did not take in the 10,000 items: %v, %d", err, r.TotalHits)
				}
			}
			roots := 50
			if mode == "items" {
				roots = 10_000
			}
			b.Run("shared-page", func(b *testing.B) {
				for b.Loop() {
					l, err := m.Drive.SharedWithMe(ctx, member, drive.ListParams{Page: 1, PerPage: 50, SortBy: "name", SortOrder: "asc"})
					if err != nil || l.Total != roots || len(l.Items) != min(50, roots) {
						b.Fatalf("shared with me: %v, %d of %d", err, len(l.Items), l.Total)
					}
				}
			})
			b.Run("search", func(b *testing.B) {
				for b.Loop() {
					r, err := m.Drive.DerivedData().Search(ctx, member, drive.SearchParams{Q: "quokka", Limit: 20})
					if err != nil || len(r.Hits) != 20 || r.TotalHits != 10_000 {
						b.Fatalf("search: %v, %d hits of %d", err, len(r.Hits), r.TotalHits)
					}
				}
			})
		})
	}
}
