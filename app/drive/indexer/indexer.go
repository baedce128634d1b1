// Package indexer keeps the drive's full-text search index: it opens the index
// on disk (rebuilding it from the store when it is missing, unreadable or
// older than the events kept), applies the drive's outbox events to it in
// outbox order, and answers the drive service's queries (drive.SearchBackend).
//
// The index is never the source of truth: it records the last event it
// applied together with the documents, so a crash replays what it had not
// applied, and it can be rebuilt from SQLite at any time (Rebuild, `atrium
// reindex`). While it is being rebuilt, queries answer index_rebuilding (503,
// Retry-After). Who may see a hit is the drive service's rule, decided at
// query time (drive.Service.Search), never here.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

const (
	// extractMaxBytes is the largest content whose text is extracted.
	extractMaxBytes = 128 << 20
	// extractTimeout bounds the text extraction of one file.
	extractTimeout = 30 * time.Second
	// inlineRebuild is the largest drive Start indexes before it returns; a
	// larger one is indexed in the background.
	inlineRebuild = 1000
	// batch is the most items one index batch holds, and the most outbox
	// events or stored items read at a time.
	batch = 500
	// batchBytes is the most one index batch weighs (docWeight): the search
	// index holds a whole batch's analysis while it builds the batch's
	// segment, in memory, some 50-100 bytes for each byte of text (the words,
	// their positions for the highlights, the composite field again), and the
	// documents are all held until the batch is applied. 128 KiB is some
	// 8-12 MB at a time (about 70 small text files); a folder's worth of
	// files in one batch took the server past a gigabyte.
	batchBytes = 128 << 10
	// docOverhead is what a document weighs besides its text: its keyword
	// and number fields (each number 16 terms), some 40 KB in the index's
	// analysis, as much as 768 bytes of text.
	docOverhead = 768
)

// Store is what the indexer reads: the drive's items and the outbox.
type Store interface {
	drive.SearchStore
	// FilesByID returns the items of ids that exist, in any order.
	FilesByID(ctx context.Context, ids []string) ([]drive.File, error)
	Ancestors(ctx context.Context, id string) ([]drive.File, error)
	Subtree(ctx context.Context, id string, includeTrashed bool) ([]drive.File, error)
}

// Contents opens stored contents by blob name (drive.File.Hash).
type Contents interface {
	Open(ctx context.Context, hash string) (io.ReadSeekCloser, error)
}

// Indexer is the search index of a drive and its lifecycle.
type Indexer struct {
	store   Store
	blobs   Contents
	indexes drive.SearchIndexes
	extract drive.TextExtractor
	log     *slog.Logger

	// mu serialises applying events and swapping the index.
	mu  sync.Mutex
	idx drive.SearchIndex
	// rebuilding is set while the index is built anew; queries answer 503.
	rebuilding atomic.Bool
	// progress of a rebuild: done and total items.
	done, total atomic.Int64
	// bg counts the goroutines Start started; Close waits for them.
	bg sync.WaitGroup
}

// New returns the indexer of the index on disk (indexes); Start opens it.
func New(store Store, blobs Contents, indexes drive.SearchIndexes, extract drive.TextExtractor, log *slog.Logger) *Indexer {
	if log == nil {
		log = slog.Default()
	}
	return &Indexer{store: store, blobs: blobs, indexes: indexes, extract: extract, log: log}
}

func rebuildingError() error {
	return &app.Error{Code: app.EIndexRebuilding, RetryAfter: 5,
		Message: "The search index is being rebuilt; search is back in a moment."}
}

// Start opens the search index. A missing or unreadable index is rebuilt from
// the store in the background; until it is ready, queries answer
// index_rebuilding. It returns at once.
func (x *Indexer) Start(ctx context.Context) {
	idx, err := x.indexes.Open()
	if err == nil {
		if err = x.missedEvents(ctx, idx); err == nil {
			x.mu.Lock()
			x.idx = idx
			x.mu.Unlock()
			return
		}
		if cerr := idx.Close(); cerr != nil {
			x.log.Warn("close the outdated search index", slog.Any("err", cerr))
		}
	}
	if errors.Is(err, drive.ErrSearchIndexBusy) {
		// Queries answer index_rebuilding until the other process lets go.
		x.log.Error("search index held by another process; retrying", slog.Any("err", err))
		x.bg.Go(func() { every(ctx, 5*time.Second, x.reopen(ctx)) })
		return
	}
	// A small drive (a new installation) is indexed before serving, so
	// search works from the first request; a large one in the background.
	if n, cerr := x.store.CountIndexable(ctx); cerr == nil && n <= inlineRebuild {
		x.log.Info("search index missing or unusable: building it", slog.Any("reason", err), slog.Int64("items", n))
		if err := x.Rebuild(ctx, nil); err != nil && ctx.Err() == nil {
			x.log.Error("search index rebuild failed", slog.Any("err", err))
		}
		return
	}
	x.log.Info("search index missing or unusable: building it in the background", slog.Any("reason", err))
	x.rebuilding.Store(true)
	x.bg.Go(func() {
		if err := x.Rebuild(ctx, nil); err != nil && ctx.Err() == nil {
			x.log.Error("search index rebuild failed", slog.Any("err", err))
		}
	})
}

// missedEvents returns an error when idx has not seen events that were pruned
// since (an index older than the database): it must be built anew.
func (x *Indexer) missedEvents(ctx context.Context, idx drive.SearchIndex) error {
	cursor, err := idx.Cursor()
	if err != nil {
		return err
	}
	horizon, err := x.store.EventsHorizon(ctx)
	if err != nil {
		return err
	}
	if cursor < horizon {
		return fmt.Errorf("the index stops at event %d, and the events up to %d were pruned since", cursor, horizon)
	}
	return nil
}

// Applied returns the last outbox event the index has applied: the events up
// to it may be pruned. ok is false while the index is being built or is not
// open (then no event may go).
func (x *Indexer) Applied() (seq int64, ok bool) {
	if x.rebuilding.Load() {
		return 0, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return 0, false
	}
	seq, err := x.idx.Cursor()
	return seq, err == nil && seq > 0
}

// reopen returns the step of the retry loop of Start while another process
// holds the index: true to try again later.
func (x *Indexer) reopen(ctx context.Context) func() bool {
	return func() bool {
		idx, err := x.indexes.Open()
		switch {
		case err == nil:
			x.mu.Lock()
			x.idx = idx
			x.mu.Unlock()
		case errors.Is(err, drive.ErrSearchIndexBusy):
			return true
		default:
			x.Start(ctx)
		}
		return false
	}
}

// Close flushes and closes the index. The context given to Start must be
// done: Close waits for the goroutines it started.
func (x *Indexer) Close() error {
	x.bg.Wait()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return nil
	}
	err := x.idx.Close()
	x.idx = nil
	return err
}

// Rebuild builds the index anew from the store and puts it in place; progress,
// when set, is told how many items are done of how many. Queries answer
// index_rebuilding meanwhile.
func (x *Indexer) Rebuild(ctx context.Context, progress func(done, total int64)) error {
	x.rebuilding.Store(true)
	defer x.rebuilding.Store(false)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		// Make sure no other process uses the index we are about to replace.
		idx, err := x.indexes.Open()
		if errors.Is(err, drive.ErrSearchIndexBusy) {
			return err
		}
		if err == nil {
			x.idx = idx
		}
	}
	if x.idx != nil {
		if err := x.idx.Close(); err != nil {
			return fmt.Errorf("close search index: %w", err)
		}
		x.idx = nil
	}
	// Events up to here are covered by the scan; later ones are applied after.
	cursor, err := x.store.LastEventSeq(ctx)
	if err != nil {
		return err
	}
	total, err := x.store.CountIndexable(ctx)
	if err != nil {
		return err
	}
	x.total.Store(total)
	x.done.Store(0)
	parents, err := x.store.FolderParents(ctx)
	if err != nil {
		return err
	}
	idx, err := x.indexes.Build(ctx, func(idx drive.SearchIndex) error {
		// An empty drive's index has its cursor too: the last batch is
		// applied, empty or not.
		return x.indexFiles(ctx, idx, nil, "", parents, cursor, func(n int) {
			done := x.done.Add(int64(n))
			if progress != nil {
				progress(done, total)
			}
		})
	})
	if err != nil {
		return fmt.Errorf("rebuild search index: %w", err)
	}
	x.idx = idx
	return nil
}

// folderChain returns the folders from the root down to parent.
func folderChain(parents map[string]string, parent string) []string {
	var chain []string
	for id := parent; id != "" && len(chain) < 1000; id = parents[id] {
		chain = append(chain, id)
	}
	slices.Reverse(chain)
	return chain
}

// doc makes the document of f. The content's text is reused from the index
// when the content did not change, else extracted from the bytes.
func (x *Indexer) doc(ctx context.Context, idx drive.SearchIndex, f drive.File, folders []string) drive.SearchDoc {
	d := drive.SearchDoc{ID: f.ID, OrgID: f.OrgID, OwnerID: f.OwnerID, OwnerName: f.OwnerName, ParentID: f.Parent(),
		Folders: folders, Name: f.Name, MimeType: f.MimeType, MimeGroup: f.MimeGroup, Description: f.Metadata.Description,
		Tags: f.Metadata.Tags, IsFolder: f.IsFolder, SizeBytes: f.SizeBytes, ContentHash: f.ContentHash,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
	if f.IsFolder || f.ContentHash == "" || !x.extract.Supported(f.MimeType, f.Name) {
		return d
	}
	if idx != nil {
		if hash, text, ok, err := idx.Content(f.ID); err == nil && ok && hash == f.ContentHash {
			d.Content = text
			return d
		}
	}
	if f.SizeBytes > extractMaxBytes || f.Status != drive.StatusActive {
		return d
	}
	r, err := x.blobs.Open(ctx, f.Hash())
	if err != nil {
		x.log.Warn("search: content not readable", slog.String("file_id", f.ID), slog.Any("err", err))
		return d
	}
	defer r.Close()
	// A deadline per file: a hostile document cannot hold the indexer.
	ectx, cancel := context.WithTimeout(ctx, extractTimeout)
	defer cancel()
	text, _, err := x.extract.Text(ectx, r, f.SizeBytes, f.MimeType, f.Name, drive.SearchContentMax)
	if err != nil {
		// A file we cannot read is still found by its name and metadata.
		x.log.Info("search: no text extracted", slog.String("file_id", f.ID), slog.String("mime_type", f.MimeType), slog.Any("err", err))
	}
	d.Content = text
	return d
}

// Pending applies the drive events the index has not seen yet. Query calls
// it first, so a search sees every change committed before it; a background
// loop calls it too (Run).
func (x *Indexer) Pending(ctx context.Context) error {
	if x.rebuilding.Load() {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.idx == nil {
		return nil
	}
	cursor, err := x.idx.Cursor()
	if err != nil {
		return err
	}
	for {
		changes, last, err := x.store.DriveEventsAfter(ctx, cursor, batch)
		if err != nil {
			return err
		}
		if last == cursor {
			return nil
		}
		// The renamed owners' items go in first, and every batch but the
		// last under the old cursor: after a crash half-way, the events are
		// applied again.
		if err := x.reindexOwners(ctx, x.idx, changes.Renamed, cursor); err != nil {
			return err
		}
		if err := x.forgetOwners(ctx, x.idx, changes.Deleted, cursor); err != nil {
			return err
		}
		b := newBatcher(x.idx, cursor)
		if err := x.changedDocs(ctx, x.idx, changes, b); err != nil {
			return err
		}
		if err := b.flush(ctx, last); err != nil {
			return err
		}
		cursor = last
	}
}

// forgetOwners removes every document of the owners, whose drives were
// deleted with them.
func (x *Indexer) forgetOwners(ctx context.Context, idx drive.SearchIndex, owners []string, cursor int64) error {
	for _, owner := range owners {
		for {
			ids, err := idx.OwnedBy(ctx, owner, batch)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				break
			}
			if err := idx.Apply(ctx, nil, ids, cursor); err != nil {
				return err
			}
		}
	}
	return nil
}

// Documents returns the number of items in the index; ok is false while the
// index is being rebuilt or updated.
func (x *Indexer) Documents() (n uint64, ok bool) {
	if x.rebuilding.Load() || !x.mu.TryLock() {
		return 0, false
	}
	defer x.mu.Unlock()
	if x.idx == nil {
		return 0, false
	}
	n, err := x.idx.Count()
	return n, err == nil
}

// reindexOwners indexes again every live item of the owners, in batches, for
// the owner's new name; the content's text is reused from the index.
func (x *Indexer) reindexOwners(ctx context.Context, idx drive.SearchIndex, owners []string, cursor int64) error {
	if len(owners) == 0 {
		return nil
	}
	parents, err := x.store.FolderParents(ctx)
	if err != nil {
		return err
	}
	for _, owner := range slices.Compact(slices.Sorted(slices.Values(owners))) {
		if err := x.indexFiles(ctx, idx, idx, owner, parents, cursor, nil); err != nil {
			return err
		}
	}
	return nil
}

// indexFiles indexes every live item (ownerID's only when it is set) in
// batches, recording cursor with each; the extracted text of documents in
// reuse (when set) is reused. done, when set, is told each batch's size.
func (x *Indexer) indexFiles(ctx context.Context, idx, reuse drive.SearchIndex, ownerID string, parents map[string]string, cursor int64, done func(int)) error {
	b := newBatcher(idx, cursor)
	b.applied = done
	after := ""
	for {
		files, err := x.store.IndexableFiles(ctx, ownerID, after, batch)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return b.flush(ctx, cursor)
		}
		for _, f := range files {
			if err := b.add(ctx, x.doc(ctx, reuse, f, folderChain(parents, f.Parent()))); err != nil {
				return err
			}
		}
		after = files[len(files)-1].ID
	}
}

// changedDocs hands b the documents to index and the ids to remove after
// the events of changes (their FileIDs). A folder whose events may change
// what is below it (changes.Below: a move, trash or restore) is indexed
// again with everything below it.
func (x *Indexer) changedDocs(ctx context.Context, idx drive.SearchIndex, changes drive.SearchChanges, b *batcher) error {
	ids := changes.FileIDs
	seen := map[string]bool{}
	above := map[string][]string{} // a folder's id ("" the root): the ids of the folders down to it
	// A file an event of this batch created has nothing in the index to reuse.
	created := make(map[string]bool, len(changes.Created))
	for _, id := range changes.Created {
		created[id] = true
	}
	below := make(map[string]bool, len(changes.Below))
	for _, id := range changes.Below {
		below[id] = true
	}
	add := func(f drive.File, folders []string) error {
		switch {
		case !f.Searchable():
			return b.remove(ctx, f.ID)
		case created[f.ID]:
			return b.add(ctx, x.doc(ctx, nil, f, folders))
		default:
			return b.add(ctx, x.doc(ctx, idx, f, folders))
		}
	}
	// The items are read in one query per batch rather than one each.
	files := make(map[string]drive.File, len(ids))
	for chunk := range slices.Chunk(ids, batch) {
		found, err := x.store.FilesByID(ctx, chunk)
		if err != nil {
			return err
		}
		for _, f := range found {
			files[f.ID] = f
		}
	}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		f, ok := files[id]
		if !ok {
			if err := b.remove(ctx, id); err != nil {
				return err
			}
			continue
		}
		// Files of one folder share its chain, read once per call (a folder
		// moved meanwhile has an event of its own, which reindexes below it).
		folders, ok := above[f.Parent()]
		if !ok {
			anc, err := x.store.Ancestors(ctx, f.ID)
			if err != nil {
				return err
			}
			folders = make([]string, 0, len(anc))
			for _, a := range anc {
				folders = append(folders, a.ID)
			}
			above[f.Parent()] = folders
		}
		if err := add(f, folders); err != nil {
			return err
		}
		if !f.IsFolder || !below[f.ID] {
			continue
		}
		below, err := x.store.Subtree(ctx, f.ID, false)
		if err != nil {
			return err
		}
		chain := map[string][]string{f.ID: append(slices.Clone(folders), f.ID)}
		for _, c := range below {
			seen[c.ID] = true
			up := chain[c.Parent()]
			if c.IsFolder {
				chain[c.ID] = append(slices.Clone(up), c.ID)
			}
			if err := add(c, up); err != nil { // the descendants of a trashed folder are trashed with it
				return err
			}
		}
	}
	return nil
}

// batcher gathers documents and removals into index batches of at most batch
// items and batchBytes (docWeight; a lone document heavier than that is a
// batch of its own), and applies each as it fills. Every batch it fills
// records the cursor it was made with, the last one (flush) the cursor given:
// after a crash half-way, the index resumes from before the events.
type batcher struct {
	idx     drive.SearchIndex
	cursor  int64
	docs    []drive.SearchDoc
	deletes []string
	weight  int
	// maxItems and maxBytes are batch and batchBytes (tests set others).
	maxItems, maxBytes int
	// applied, when set, is told the documents of each batch applied.
	applied func(int)
}

func newBatcher(idx drive.SearchIndex, cursor int64) *batcher {
	return &batcher{idx: idx, cursor: cursor, maxItems: batch, maxBytes: batchBytes}
}

// add adds d, first applying what is gathered when d would not fit.
func (b *batcher) add(ctx context.Context, d drive.SearchDoc) error {
	w := docWeight(d)
	if n := len(b.docs) + len(b.deletes); n > 0 && (b.weight+w > b.maxBytes || n >= b.maxItems) {
		if err := b.apply(ctx, b.cursor); err != nil {
			return err
		}
	}
	b.docs = append(b.docs, d)
	b.weight += w
	return nil
}

// remove adds the removal of id.
func (b *batcher) remove(ctx context.Context, id string) error {
	if len(b.docs)+len(b.deletes) >= b.maxItems {
		if err := b.apply(ctx, b.cursor); err != nil {
			return err
		}
	}
	b.deletes = append(b.deletes, id)
	return nil
}

// flush applies what is gathered with cursor (nothing, too: the cursor moves).
func (b *batcher) flush(ctx context.Context, cursor int64) error { return b.apply(ctx, cursor) }

func (b *batcher) apply(ctx context.Context, cursor int64) error {
	if err := b.idx.Apply(ctx, b.docs, b.deletes, cursor); err != nil {
		return err
	}
	if b.applied != nil {
		b.applied(len(b.docs))
	}
	clear(b.docs) // let the applied documents' text go
	b.docs, b.deletes, b.weight = b.docs[:0], b.deletes[:0], 0
	return nil
}

// docWeight is what d weighs in a batch: its text and docOverhead.
func docWeight(d drive.SearchDoc) int {
	n := docOverhead + len(d.Content) + len(d.Name) + len(d.Description) + len(d.OwnerName) + len(d.MimeType)
	for _, t := range d.Tags {
		n += len(t)
	}
	for _, f := range d.Folders {
		n += len(f)
	}
	return n
}

// A burst of writes (a sync client uploading a folder of small files) keeps
// the one database writer busy; indexing its files as they come took a fifth
// to a third of the burst's time on a small machine (CPU and reads beside the
// writes). The background batches therefore wait while the writer takes more
// than burstWrites write transactions a second, for at most maxDefer since
// the index last caught up, and take the burst in once it is over. A search
// is not held back: it applies every pending event before it runs (Query).
const (
	burstWrites = 50
	maxDefer    = 10 * time.Second
)

// burstGate decides, tick by tick, whether the background batch waits.
type burstGate struct {
	writes   func() uint64 // the database's write transactions so far
	last     time.Time     // the previous tick
	lastN    uint64        // writes() at the previous tick
	caughtUp time.Time     // when the index last caught up
}

func newBurstGate(writes func() uint64, now time.Time) *burstGate {
	g := &burstGate{writes: writes, last: now, caughtUp: now}
	if writes != nil {
		g.lastN = writes()
	}
	return g
}

// wait reports whether the batch of the tick at now waits: the writer took
// more than burstWrites a second since the previous tick, and the index
// caught up less than maxDefer ago.
func (g *burstGate) wait(now time.Time) bool {
	if g.writes == nil {
		return false
	}
	n := g.writes()
	burst := float64(n-g.lastN) > burstWrites*now.Sub(g.last).Seconds()
	g.lastN, g.last = n, now
	return burst && now.Sub(g.caughtUp) < maxDefer
}

// Run applies new drive events to the index every interval until ctx ends.
// writes, when not nil, counts the database's write transactions so far
// (app.WriteStats.Transactions): the batches wait out a burst of writes (see
// burstWrites).
func (x *Indexer) Run(ctx context.Context, interval time.Duration, writes func() uint64) {
	g := newBurstGate(writes, time.Now())
	every(ctx, interval, func() bool {
		now := time.Now()
		if g.wait(now) {
			return true
		}
		if err := x.Pending(ctx); err != nil {
			if ctx.Err() == nil {
				x.log.Error("search indexing failed", slog.Any("err", err))
			}
			return true
		}
		g.caughtUp = now
		return true
	})
}

// every calls fn every interval until ctx ends or fn returns false.
func every(ctx context.Context, interval time.Duration, fn func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !fn() {
				return
			}
		}
	}
}

// Progress reports whether the index is being rebuilt and how far.
func (x *Indexer) Progress() (rebuilding bool, done, total int64) {
	return x.rebuilding.Load(), x.done.Load(), x.total.Load()
}

// Query runs q on the index once the pending events are applied
// (drive.SearchBackend): a search sees every change committed before it.
func (x *Indexer) Query(ctx context.Context, q drive.SearchQuery) (drive.IndexResult, error) {
	if x.rebuilding.Load() {
		return drive.IndexResult{}, rebuildingError()
	}
	if err := x.Pending(ctx); err != nil {
		return drive.IndexResult{}, fmt.Errorf("search: apply pending changes: %w", err)
	}
	x.mu.Lock()
	idx := x.idx
	x.mu.Unlock()
	if idx == nil {
		return drive.IndexResult{}, rebuildingError()
	}
	res, err := idx.Search(ctx, q)
	if err != nil {
		return drive.IndexResult{}, fmt.Errorf("search: %w", err)
	}
	return res, nil
}
