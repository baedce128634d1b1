package drive

// Maintenance: the periodic sweeps (expired uploads, the trash, old
// versions, orphaned and stray blobs, previews, archive, digests), each
// bounded by sweepTime.

import (
	"context"
	"fmt"
	"time"

	"atrium/app"
)

// batch is how many rows one maintenance transaction handles.
const batch = 200

// Maintain runs the drive's housekeeping once: expired uploads, the bytes
// clients staged for them in the direct store, and pending files go, trash and versions past their retention are purged, old tombstones
// are forgotten, the SHA-1 and MD5 of contents stored without them are
// computed and blobs nothing refers to any more are deleted. It returns a
// summary of what it did. Errors: none of its own.
func (s *Service) Maintain(ctx context.Context) (map[string]int, error) {
	done := map[string]int{}
	now := s.clock.Now()
	steps := []struct {
		name string
		fn   func(context.Context, time.Time) (int, error)
	}{
		{"uploads_expired", s.expireUploads},
		{"staged_swept", s.sweepStaged},
		{"trash_purged", s.purgeTrash},
		{"versions_pruned", s.pruneOldVersions},
		{"tombstones_pruned", func(ctx context.Context, now time.Time) (int, error) {
			return s.store.PruneTombstones(ctx, now.Add(-s.opts.TombstoneMaxAge))
		}},
		{"locks_expired", s.store.DeleteExpiredLocks},
		{"editors_forgotten", s.pruneEditors},
		{"blob_holds_ended", func(ctx context.Context, now time.Time) (int, error) {
			var n int
			err := s.store.InTx(ctx, func(ctx context.Context) (err error) {
				n, err = s.store.PruneBlobHolds(ctx, now)
				return err
			})
			return n, err
		}},
		{"files_archived", s.archiving.archiveCold},
		{"previews_evicted", s.maintainPreviews},
		{"digests_filled", s.fillDigests},
		{"blobs_deleted", s.collect},
		{"strays_found", s.findStrays}, // after collect: marking restarts an orphan's grace
		{"archive_deleted", s.archiving.sweepArchive},
		{"store_swept", func(ctx context.Context, now time.Time) (int, error) {
			if sw, ok := s.blobs.(Sweeper); ok {
				return sw.Sweep(ctx, now)
			}
			return 0, nil
		}},
	}
	for _, st := range steps {
		n, err := st.fn(ctx, now)
		done[st.name] = n
		if err != nil {
			return done, fmt.Errorf("drive maintenance %s: %w", st.name, err)
		}
	}
	return done, nil
}

// Run calls Maintain at once and then every interval until ctx ends. Errors:
// none of its own.
func (s *Service) Run(ctx context.Context, interval time.Duration) {
	app.RunMaintenance(ctx, interval, s.log, "drive", s.Maintain)
}

func (s *Service) expireUploads(ctx context.Context, now time.Time) (int, error) {
	total := 0
	deadline := time.Now().Add(sweepTime)
	for time.Now().Before(deadline) {
		ups, err := s.store.ExpiredUploads(ctx, now, batch)
		if err != nil {
			return total, err
		}
		if len(ups) == 0 {
			break
		}
		err = s.store.InTx(ctx, func(ctx context.Context) error {
			ids := make([]string, 0, len(ups))
			for _, u := range ups {
				ids = append(ids, u.ID)
				if err := s.orphan(ctx, u.ContentHash); err != nil {
					return err
				}
			}
			return s.store.DeleteUploads(ctx, ids)
		})
		if err != nil {
			return total, err
		}
		total += len(ups)
		if err := s.dropStaged(ctx, ups); err != nil {
			return total, err
		}
	}
	pend, err := s.store.StalePending(ctx, now.Add(-s.opts.UploadTTL), batch)
	if err != nil || len(pend) == 0 {
		return total, err
	}
	ids := make([]string, 0, len(pend))
	for _, f := range pend {
		ids = append(ids, f.ID)
	}
	return total + len(pend), s.store.InTx(ctx, func(ctx context.Context) error { return s.store.DeleteFiles(ctx, ids) })
}

// dropStaged removes from the direct store what clients staged for the
// expired uploads ups.
func (s *Service) dropStaged(ctx context.Context, ups []Upload) error {
	if s.opts.direct == nil {
		return nil
	}
	for _, u := range ups {
		if err := s.opts.direct.DropStaged(ctx, u.ID); err != nil {
			return fmt.Errorf("staged upload %s: %w", u.ID, err)
		}
	}
	return nil
}

func (s *Service) purgeTrash(ctx context.Context, now time.Time) (int, error) {
	total := 0
	deadline := time.Now().Add(sweepTime)
	for time.Now().Before(deadline) {
		roots, err := s.store.TrashRootsBefore(ctx, now.Add(-s.opts.TrashMaxAge), 20)
		if err != nil || len(roots) == 0 {
			return total, err
		}
		err = s.store.InTx(ctx, func(ctx context.Context) error {
			for _, f := range roots {
				if err := s.purge(ctx, f); err != nil {
					return err
				}
				if err := s.audit.Record(ctx, app.AuditEntry{Module: module, Action: "file.purged", ActorID: "system",
					TargetType: kind(f), TargetID: f.ID, OrgID: f.OrgID, CreatedAt: now}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(roots)
	}
	return total, nil
}

func (s *Service) pruneOldVersions(ctx context.Context, now time.Time) (int, error) {
	total := 0
	deadline := time.Now().Add(sweepTime)
	for time.Now().Before(deadline) {
		vs, err := s.store.VersionsBefore(ctx, now.Add(-s.opts.VersionMaxAge), batch)
		if err != nil || len(vs) == 0 {
			return total, err
		}
		files := map[string]bool{}
		for _, v := range vs {
			files[v.FileID] = true
		}
		n := 0
		err = s.store.InTx(ctx, func(ctx context.Context) error {
			n = 0 // the transaction may run again (app.TxRunner)
			for id := range files {
				f, err := s.store.File(ctx, id)
				if err != nil {
					return err
				}
				k, err := s.pruneVersions(ctx, &f, s.opts.MaxVersions, now.Add(-s.opts.VersionMaxAge))
				if err != nil {
					return err
				}
				if k > 0 {
					if err := s.store.UpdateFile(ctx, f); err != nil {
						return err
					}
				}
				n += k
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
	return total, nil
}

// collect deletes blobs orphaned longer than the grace period that still have
// no reference; see refMu.
func (s *Service) collect(ctx context.Context, now time.Time) (int, error) {
	hashes, err := s.store.Orphans(ctx, now.Add(-s.opts.OrphanGrace), 1000)
	if err != nil {
		return 0, err
	}
	if len(hashes) == 0 {
		return 0, nil
	}
	if !s.lockForCollect(ctx) {
		return 0, nil // writers all along: the next round tries again
	}
	defer s.refMu.Unlock()
	n := 0
	for _, h := range hashes {
		deleted, err := s.collectOne(ctx, h)
		if err != nil {
			return n, err
		}
		if deleted {
			n++
		}
	}
	return n, nil
}

// collectPatience is how long a round of the collector waits for a moment
// without writers between their blob and its reference; collectStarvedRounds
// is how many such rounds in a row it gives up before it queues for refMu
// (new writers then wait for the uploads under way to finish).
const (
	collectPatience      = 10 * time.Second
	collectStarvedRounds = 60
)

// lockForCollect takes refMu's write lock for the collector: it tries for
// collectPatience without queueing (a queued write lock would hold up every
// new writer behind an upload that streams for minutes), and only after
// collectStarvedRounds fruitless rounds waits its turn. False: not taken.
func (s *Service) lockForCollect(ctx context.Context) bool {
	deadline := time.Now().Add(collectPatience)
	for {
		if s.refMu.TryLock() {
			s.collectStarved.Store(0)
			return true
		}
		if h := s.collectorWaits.Load(); h != nil {
			(*h)()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	rounds := s.collectStarved.Add(1)
	if rounds < collectStarvedRounds {
		s.log.Info("blob collector: uploads under way the whole time, trying next round", "rounds", rounds)
		return false
	}
	s.log.Warn("blob collector: uploads under way for many rounds, waiting for them to finish", "rounds", rounds)
	s.refMu.Lock()
	s.collectStarved.Store(0)
	return true
}

// collectOne deletes blob h unless it is in use again or held; the caller
// holds refMu (which keeps this process's writers out). Writers of other
// processes are kept out by the blob's lock, held from the check to the
// deletion: a write that holds h (storeReferenced) either came first, and the
// blob stays, or waits, then finds it gone.
func (s *Service) collectOne(ctx context.Context, h string) (bool, error) {
	deleted := false
	err := s.store.InTx(ctx, func(ctx context.Context) error {
		deleted = false
		if err := s.store.LockBlob(ctx, h); err != nil {
			return err
		}
		held, err := s.store.BlobHeld(ctx, h, s.clock.Now())
		if err != nil || held {
			return err // held: its orphan mark stays, for after the hold
		}
		used, err := s.store.HashInUse(ctx, h)
		if err != nil {
			return err
		}
		if err := s.store.DeleteOrphan(ctx, h); err != nil {
			return err
		}
		if used {
			return nil
		}
		if err := s.blobs.Delete(ctx, blobName(h)); err != nil {
			return fmt.Errorf("delete blob %s: %w", h, err)
		}
		deleted = true
		return s.store.DeleteDigests(ctx, h)
	})
	return deleted, err
}

// strayInterval is how often findStrays walks the whole blob store.
const strayInterval = 24 * time.Hour

// findStrays finds blobs that nothing refers to and that no one ever marked as
// orphans — what a process stopped between storing bytes and committing their
// reference leaves — and marks them, so that the collector deletes them after
// the grace period (re-checking references then). It walks the store at most
// once a day, and only looks at blobs older than the grace period, so that an
// upload between its Put and its commit is never taken for a stray.
func (s *Service) findStrays(ctx context.Context, now time.Time) (int, error) {
	s.strayMu.Lock()
	due := s.lastStrays.IsZero() || now.Sub(s.lastStrays) >= strayInterval
	if due {
		s.lastStrays = now
	}
	s.strayMu.Unlock()
	if !due {
		return 0, nil
	}
	cutoff := now.Add(-s.opts.OrphanGrace)
	n := 0
	err := s.blobs.Walk(ctx, func(hash string, mod time.Time) error {
		if mod.After(cutoff) {
			return nil
		}
		used, err := s.store.HashInUse(ctx, FormatHash(hash))
		if err != nil || used {
			return err
		}
		n++
		return s.orphan(ctx, hash)
	})
	return n, err
}

// sweepTime is the time budget of one maintenance step.
const sweepTime = 10 * time.Second
