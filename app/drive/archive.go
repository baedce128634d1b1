package drive

// The archive tier. Files nobody downloaded for Options' archive age, and files
// an admin archives, move to a compressed cold store: the head version's bytes
// are compressed into the Archive and the file becomes "archived". Older
// versions stay in the hot store. The hot blob of the head is orphaned and the
// collector deletes it unless another version or file still uses it — the
// store's HashInUse does not count the head version of an archived file.
//
// Downloading an archived file answers a RestoreInfo (202) and starts, once, a
// background restore: the file is "restoring" while its bytes are decompressed
// back into the hot store (the hash is checked), then "active" again.
// RestoreStatus reports the progress. An archived copy no archived or
// restoring file refers to any more is deleted by maintenance.
//
// While a file is archived or restoring its content cannot be read by other
// doors (Open, version downloads) or replaced (new versions, version restore):
// those answer 409; a download through the API restores it first.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"atrium/app"
)

// Archive is the cold byte store: compressed copies named by the hex SHA-256 of
// their uncompressed content.
type Archive interface {
	// Put stores the bytes of r as hash; the SHA-256 of r must be hash. The
	// copy is durable on return.
	Put(hash string, from io.Reader) error
	// Open returns the uncompressed bytes of hash.
	Open(hash string) (io.ReadCloser, error)
	// Delete removes hash; a missing copy is not an error.
	Delete(hash string) error
	Exists(hash string) bool
}

// ArchiveStore keeps the drive's archive bookkeeping.
type ArchiveStore interface {
	// TouchFile records a download of file id at time at.
	TouchFile(ctx context.Context, id string, at time.Time) error
	// ColdCandidates returns live active files neither downloaded nor changed
	// since t, at most limit.
	ColdCandidates(ctx context.Context, t time.Time, limit int) ([]File, error)
	// AddArchived records that the archive holds content hash ("sha256:…").
	AddArchived(ctx context.Context, hash string, size int64, at time.Time) error
	// UnusedArchived returns archived hashes no archived or restoring file
	// refers to, at most limit.
	UnusedArchived(ctx context.Context, limit int) ([]string, error)
	DeleteArchived(ctx context.Context, hash string) error
}

// RestoreInfo answers the download of an archived file (202).
type RestoreInfo struct {
	Status            string `json:"status" doc:"restoring"`
	FileID            string `json:"file_id"`
	RestoreStatusURL  string `json:"restore_status_url" doc:"Where to follow the restore."`
	RetryAfterSeconds int    `json:"retry_after_seconds" doc:"When to try the download again."`
}

// RestoreStatus is the progress of a restore.
type RestoreStatus struct {
	FileID string `json:"file_id"`
	// Status is the file's: archived, restoring, or active once restored.
	Status   string  `json:"status" doc:"archived, restoring, or active once the file can be downloaded."`
	Progress float64 `json:"progress" doc:"0..1: the share of the bytes restored."`
	// ReadyAt is when the file became (or is expected to become) downloadable.
	ReadyAt *time.Time `json:"ready_at" doc:"When the file became, or is expected to become, downloadable; null when unknown."`
}

// archiveTier is the archive and the state of its restores.
type archiveTier struct {
	store Archive
	after time.Duration

	// mu orders "an archived copy exists and a file refers to it" against "the
	// sweep deletes a copy nothing refers to".
	mu sync.Mutex

	jobsMu sync.Mutex
	jobs   map[string]*restoreJob
}

type restoreJob struct {
	size    int64
	done    atomic.Int64
	started time.Time
	// finished and err are guarded by jobsMu.
	finished time.Time
	err      error
}

// WithArchive sets the archive store and the age after which files nobody
// downloaded are archived (0: only admins archive).
func (o Options) WithArchive(a Archive, after time.Duration) Options {
	o.archive = &archiveTier{store: a, after: after, jobs: map[string]*restoreJob{}}
	return o
}

// restoreRate is the assumed restore speed, for retry hints.
const restoreRate = 50 << 20

func restoreStatusURL(id string) string { return "/api/v1/drive/" + id + "/restore-status" }

func isCold(f File) bool { return f.Status == StatusArchived || f.Status == StatusRestoring }

func archivedConflict(f File) error {
	return app.Errorf(app.EConflict, "%q is %s; download it through the API to restore it.", f.Name, f.Status)
}

// DownloadOrRestore returns a presigned URL of the file's content, or, when the
// file is archived, starts its restore and returns where to follow it. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), conflict (a folder,
// a pending upload).
func (ar *Archiving) DownloadOrRestore(ctx context.Context, p *app.Principal, id string) (PresignedURL, *RestoreInfo, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return PresignedURL{}, nil, err
	}
	f, err := ar.core.access(ctx, p, id, PermView)
	if err != nil {
		return PresignedURL{}, nil, err
	}
	if !f.IsFolder && isCold(f) {
		info, err := ar.startRestore(ctx, f)
		if err != nil || info != nil {
			return PresignedURL{}, info, err
		}
		if f, err = ar.core.store.File(ctx, id); err != nil {
			return PresignedURL{}, nil, err
		}
	}
	l, err := ar.core.presignedDownload(ctx, f, false)
	if err != nil {
		return PresignedURL{}, nil, err
	}
	ar.core.accessed(ctx, f)
	return l, nil, nil
}

// startRestore starts the restore of f unless one runs; nil info means the file
// is active again.
func (ar *Archiving) startRestore(ctx context.Context, f File) (*RestoreInfo, error) {
	t := ar.core.opts.archive
	if t == nil {
		return nil, fmt.Errorf("file %s is %s but the drive has no archive", f.ID, f.Status)
	}
	info := &RestoreInfo{Status: StatusRestoring, FileID: f.ID, RestoreStatusURL: restoreStatusURL(f.ID),
		RetryAfterSeconds: max(1, int(math.Ceil(float64(f.SizeBytes)/restoreRate)))}
	t.jobsMu.Lock()
	if j, ok := t.jobs[f.ID]; ok && j.finished.IsZero() {
		t.jobsMu.Unlock()
		return info, nil
	}
	j := &restoreJob{size: f.SizeBytes, started: ar.core.clock.Now()}
	t.jobs[f.ID] = j
	t.jobsMu.Unlock()

	var cur File
	err := func() error {
		// Under refMu: once the file is restoring the collector counts its head,
		// so it cannot delete the blob the restore is about to write.
		ar.core.refMu.RLock()
		defer ar.core.refMu.RUnlock()
		return ar.core.store.InTx(ctx, func(ctx context.Context) error {
			var err error
			if cur, err = ar.core.store.File(ctx, f.ID); err != nil {
				return err
			}
			if cur.Status != StatusArchived {
				return nil
			}
			cur.Status = StatusRestoring
			if err := ar.core.change(ctx, &cur); err != nil {
				return err
			}
			if err := ar.core.store.UpdateFile(ctx, cur); err != nil {
				return err
			}
			return ar.core.emit(ctx, EventFileUpdated, cur, map[string]any{"change": "restoring"})
		})
	}()
	if err == nil && !isCold(cur) {
		err = errNotCold
	}
	if err != nil {
		t.jobsMu.Lock()
		delete(t.jobs, f.ID)
		t.jobsMu.Unlock()
		if errors.Is(err, errNotCold) {
			return nil, nil
		}
		return nil, fmt.Errorf("start restore of %s: %w", f.ID, err)
	}
	go ar.runRestore(context.WithoutCancel(ctx), t, j, cur)
	return info, nil
}

var errNotCold = errors.New("file is not archived")

func (ar *Archiving) runRestore(ctx context.Context, t *archiveTier, j *restoreJob, f File) {
	err := ar.restore(ctx, t, j, f)
	if err != nil {
		ar.core.log.ErrorContext(ctx, "drive restore failed", "file_id", f.ID, "err", err)
		if rerr := ar.core.store.InTx(ctx, func(ctx context.Context) error {
			cur, err := ar.core.store.File(ctx, f.ID)
			if err != nil || cur.Status != StatusRestoring {
				return nil
			}
			cur.Status = StatusArchived
			if err := ar.core.change(ctx, &cur); err != nil {
				return err
			}
			if err := ar.core.store.UpdateFile(ctx, cur); err != nil {
				return err
			}
			return ar.core.emit(ctx, EventFileUpdated, cur, map[string]any{"change": "archived"})
		}); rerr != nil {
			ar.core.log.ErrorContext(ctx, "drive restore: reset to archived failed", "file_id", f.ID, "err", rerr)
		}
	}
	t.jobsMu.Lock()
	j.finished, j.err = ar.core.clock.Now(), err
	t.jobsMu.Unlock()
}

// restore decompresses f's head into the hot store and makes f active.
func (ar *Archiving) restore(ctx context.Context, t *archiveTier, j *restoreJob, f File) error {
	rc, err := t.store.Open(f.Hash())
	if err != nil {
		return err
	}
	defer rc.Close()
	hash, _, err := ar.core.blobs.Put(ctx, &countingReader{r: rc, n: &j.done}, f.SizeBytes+1)
	if err != nil {
		return fmt.Errorf("restore into the blob store: %w", err)
	}
	if hash != f.Hash() {
		return fmt.Errorf("restored content hash %s, want %s", hash, f.Hash())
	}
	gone := false
	err = ar.core.referenced(ctx, hash, func(ctx context.Context) error {
		cur, err := ar.core.store.File(ctx, f.ID)
		if app.ErrorCode(err) == app.ENotFound {
			gone = true
			return nil
		}
		if err != nil {
			return err
		}
		if cur.Status != StatusRestoring || cur.ContentHash != f.ContentHash {
			gone = true
			return nil
		}
		now := ar.core.clock.Now()
		cur.Status, cur.LastAccessAt = StatusActive, &now
		if err := ar.core.change(ctx, &cur); err != nil {
			return err
		}
		if err := ar.core.store.UpdateFile(ctx, cur); err != nil {
			return err
		}
		return ar.core.emit(ctx, EventFileUpdated, cur, map[string]any{"change": "restored"})
	})
	if err == nil && gone {
		err = ar.core.orphan(ctx, f.ContentHash)
	}
	return err
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// RestoreStatus reports the restore of an archived file. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), conflict (a folder).
func (ar *Archiving) RestoreStatus(ctx context.Context, p *app.Principal, id string) (RestoreStatus, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return RestoreStatus{}, err
	}
	f, err := ar.core.access(ctx, p, id, PermView)
	if err != nil {
		return RestoreStatus{}, err
	}
	if f.IsFolder {
		return RestoreStatus{}, app.Errorf(app.EConflict, "%q is a folder; folders are not archived.", f.Name)
	}
	out := RestoreStatus{FileID: f.ID, Status: f.Status}
	var j *restoreJob
	var finished time.Time
	if t := ar.core.opts.archive; t != nil {
		t.jobsMu.Lock()
		if j = t.jobs[f.ID]; j != nil {
			finished = j.finished
		}
		t.jobsMu.Unlock()
	}
	out.Progress, out.ReadyAt = restoreProgress(f.Status, j, finished, ar.core.clock.Now())
	return out, nil
}

// restoreProgress returns the progress of a file in status whose restore job,
// if any, is j (finished then, or zero), and when it is or will be ready: the
// time it finished, or an estimate from the rate so far.
func restoreProgress(status string, j *restoreJob, finished, now time.Time) (float64, *time.Time) {
	switch status {
	case StatusActive:
		if j != nil && !finished.IsZero() {
			return 1, &finished
		}
		return 1, nil
	case StatusRestoring:
		if j == nil || j.size <= 0 {
			return 0, nil
		}
		p := min(float64(j.done.Load())/float64(j.size), 0.99)
		if p <= 0 {
			return 0, nil
		}
		eta := j.started.Add(time.Duration(float64(now.Sub(j.started)) / p))
		return p, &eta
	}
	return 0, nil
}

// Archive moves a file's content to the archive tier (admin). Errors:
// insufficient_scope (no admin:access), no_bound_user, feature_not_in_plan,
// not_found (no such file in the organisation), conflict (no archive tier, a
// folder, a file not active, a file changed meanwhile).
func (ar *Archiving) Archive(ctx context.Context, p *app.Principal, id string) (File, error) {
	if err := check(p, app.ScopeAdmin); err != nil {
		return File{}, err
	}
	f, err := ar.core.store.File(ctx, id)
	if app.ErrorCode(err) == app.ENotFound || (err == nil && f.OrgID != p.OrgID) {
		return File{}, notFound()
	}
	if err != nil {
		return File{}, err
	}
	if f, err = ar.archiveFile(ctx, f, p.UserID); err != nil {
		return File{}, err
	}
	f.Permission = PermView
	if f.OwnerID == p.UserID {
		f.Permission = PermOwner
	}
	return f, nil
}

// ArchiveFile archives a file of any organisation, for operators (the CLI).
// Errors: not_found (no such file), conflict (no archive tier, a folder, a file
// not active, a file changed meanwhile).
func (ar *Archiving) ArchiveFile(ctx context.Context, id string) (File, error) {
	f, err := ar.core.store.File(ctx, id)
	if app.ErrorCode(err) == app.ENotFound {
		return File{}, notFound()
	}
	if err != nil {
		return File{}, err
	}
	return ar.archiveFile(ctx, f, "system")
}

func (ar *Archiving) archiveFile(ctx context.Context, f File, actor string) (File, error) {
	t := ar.core.opts.archive
	switch {
	case t == nil:
		return File{}, app.Errorf(app.EConflict, "The drive has no archive tier.")
	case f.IsFolder:
		return File{}, app.Errorf(app.EConflict, "%q is a folder; archive its files.", f.Name)
	case f.Status == StatusArchived:
		return f, nil
	case f.Status != StatusActive:
		return File{}, app.Errorf(app.EConflict, "%q is %s; only active files can be archived.", f.Name, f.Status)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.store.Exists(f.Hash()) {
		rc, err := ar.core.blobs.Open(ctx, f.Hash())
		if err != nil {
			return File{}, fmt.Errorf("archive %s: open blob: %w", f.ID, err)
		}
		err = t.store.Put(f.Hash(), rc)
		rc.Close()
		if err != nil {
			return File{}, fmt.Errorf("archive %s: %w", f.ID, err)
		}
	}
	now := ar.core.clock.Now()
	var out File
	err := ar.core.store.InTx(ctx, func(ctx context.Context) error {
		cur, err := ar.core.store.File(ctx, f.ID)
		if err != nil {
			return err
		}
		if cur.Status != StatusActive || cur.ContentHash != f.ContentHash {
			return app.Errorf(app.EConflict, "%q changed while it was being archived; try again.", f.Name)
		}
		cur.Status = StatusArchived
		if err := ar.core.change(ctx, &cur); err != nil {
			return err
		}
		if err := ar.core.store.UpdateFile(ctx, cur); err != nil {
			return err
		}
		if err := ar.core.store.AddArchived(ctx, cur.ContentHash, cur.SizeBytes, now); err != nil {
			return err
		}
		if err := ar.core.orphan(ctx, cur.ContentHash); err != nil {
			return err
		}
		if err := ar.core.emit(ctx, EventFileUpdated, cur, map[string]any{"change": "archived"}); err != nil {
			return err
		}
		if err := ar.core.audit.Record(ctx, app.AuditEntry{Module: module, Action: "file.archived", ActorID: actor,
			TargetType: "file", TargetID: cur.ID, OrgID: cur.OrgID, CreatedAt: now}); err != nil {
			return err
		}
		out = cur
		return nil
	})
	if err != nil {
		return File{}, err
	}
	t.jobsMu.Lock()
	delete(t.jobs, f.ID)
	t.jobsMu.Unlock()
	// Another process (the CLI beside a server) may have swept a copy this one
	// found present just before the file referred to it: the hot blob outlives
	// its orphaning by the grace period, so put the copy back.
	if !t.store.Exists(f.Hash()) {
		if err := ar.rearchive(ctx, t, out, now); err != nil {
			return File{}, err
		}
	}
	return out, nil
}

func (ar *Archiving) rearchive(ctx context.Context, t *archiveTier, f File, now time.Time) error {
	rc, err := ar.core.blobs.Open(ctx, f.Hash())
	if err != nil {
		return fmt.Errorf("archive %s: open blob: %w", f.ID, err)
	}
	err = t.store.Put(f.Hash(), rc)
	rc.Close()
	if err != nil {
		return fmt.Errorf("archive %s: %w", f.ID, err)
	}
	return ar.core.store.AddArchived(ctx, f.ContentHash, f.SizeBytes, now)
}

// archiveCold archives files neither downloaded nor changed for the archive
// age (a maintenance step; off when the age is 0).
func (ar *Archiving) archiveCold(ctx context.Context, now time.Time) (int, error) {
	t := ar.core.opts.archive
	if t == nil || t.after <= 0 {
		return 0, nil
	}
	files, err := ar.core.store.ColdCandidates(ctx, now.Add(-t.after), batch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range files {
		if _, err := ar.archiveFile(ctx, f, "system"); err != nil {
			if ctx.Err() != nil {
				return n, err
			}
			ar.core.log.WarnContext(ctx, "drive: archiving a cold file failed", "file_id", f.ID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// sweepArchive deletes archived copies no archived or restoring file refers to.
func (ar *Archiving) sweepArchive(ctx context.Context, _ time.Time) (int, error) {
	t := ar.core.opts.archive
	if t == nil {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hashes, err := ar.core.store.UnusedArchived(ctx, 1000)
	if err != nil {
		return 0, err
	}
	for i, h := range hashes {
		if err := t.store.Delete(blobName(h)); err != nil {
			return i, fmt.Errorf("delete archived %s: %w", h, err)
		}
		if err := ar.core.store.DeleteArchived(ctx, h); err != nil {
			return i, err
		}
	}
	return len(hashes), nil
}

// Archiving is the part of the drive that moves contents to and from the
// archive tier (Options.Archive): files not read for a while are archived
// (by the maintenance, or by their owner), and a download of an archived
// file starts its restore, whose progress can be asked. It holds the drive's
// core (Service): an archived file stays a file of the core, its content's
// bytes elsewhere.
type Archiving struct {
	core *Service
}

// Archiving returns the drive's archive tier part. Errors: none of its own.
func (s *Service) Archiving() *Archiving { return s.archiving }
