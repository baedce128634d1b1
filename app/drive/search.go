package drive

// Full-text search. The index (an adapter: Bleve under the data dir) holds one
// document a live file or folder: names, metadata, the extracted text of the
// content and what the filters need. It is never the source of truth: it is
// fed from the drive's events in the outbox, in outbox order, and records the
// last event it applied together with the documents, so a crash replays what
// it had not applied; it can be rebuilt from SQLite at any time (Rebuild,
// `atrium reindex`). While it is being rebuilt, search answers
// index_rebuilding (503, Retry-After).
//
// Visibility is decided at query time, never stored: a user sees the files
// they own and those under an item shared with them (each document carries
// the ids of its folders), within their organisation. Hits are loaded again
// from the store before they are returned, so a file whose state changed a
// moment ago is never shown as it was.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"atrium/app"
)

// Search limits.
const (
	SearchMaxLimit     = 100
	SearchDefaultLimit = 50
	// SearchContentMax caps the text indexed of one file's content.
	SearchContentMax = 200_000
	// searchExtractMaxBytes is the largest content whose text is extracted.
	searchExtractMaxBytes = 128 << 20
	// searchExtractTimeout bounds the text extraction of one file.
	searchExtractTimeout = 30 * time.Second
	// searchInlineRebuild is the largest drive StartSearch indexes before it
	// returns; a larger one is indexed in the background.
	searchInlineRebuild = 1000
	// searchBatch is how many documents one index batch holds.
	searchBatch = 500
)

// Search sort keys.
var searchSorts = []string{"relevance", "name", "size_bytes", "created_at", "updated_at", "mime_type"}

// SearchDoc is what the index holds of a live file or folder.
type SearchDoc struct {
	ID        string
	OrgID     string
	OwnerID   string
	OwnerName string
	ParentID  string
	// Folders are the ids of the folders above the item, the root-most first.
	Folders     []string
	Name        string
	MimeType    string
	MimeGroup   string
	Description string
	Tags        []string
	IsFolder    bool
	SizeBytes   int64
	ContentHash string
	// Content is the extracted text of the content, at most SearchContentMax bytes.
	Content   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SearchQuery is a search as the index runs it: the text, the caller's
// visibility and the filters.
type SearchQuery struct {
	Text string
	// OrgID, OwnerID and SharedRoots bound what may match: items of OrgID
	// owned by OwnerID, or at or below one of SharedRoots.
	OrgID       string
	OwnerID     string
	SharedRoots []string
	// FolderID keeps items below this folder (any depth).
	FolderID       string
	MimeTypes      []string
	CreatedAfter   *time.Time
	CreatedBefore  *time.Time
	ModifiedAfter  *time.Time
	ModifiedBefore *time.Time
	OwnerName      string
	IsFolder       *bool
	MinSize        *int64
	MaxSize        *int64
	// SortBy is one of relevance, name, size_bytes, created_at, updated_at,
	// mime_type; SortOrder asc or desc.
	SortBy    string
	SortOrder string
	Limit     int
	Offset    int
	Facets    bool
}

// IndexHit is one match of the index with its highlighted fragments by field.
type IndexHit struct {
	ID         string
	Highlights map[string][]string
}

// IndexResult is what the index found.
type IndexResult struct {
	Hits  []IndexHit
	Total int
	// Facets counts matches by mime_group, owner_name and is_folder.
	Facets map[string]map[string]int
}

// SearchIndex is the full-text index.
type SearchIndex interface {
	// Apply indexes docs, removes deletes and records cursor, in one batch.
	Apply(ctx context.Context, docs []SearchDoc, deletes []string, cursor int64) error
	// Cursor returns the last event applied (0 for a new index).
	Cursor() (int64, error)
	// Content returns the indexed text of id and the content hash it was
	// extracted from; ok is false when id is not indexed.
	Content(id string) (hash, text string, ok bool, err error)
	Search(ctx context.Context, q SearchQuery) (IndexResult, error)
	// Count returns the number of indexed documents.
	Count() (uint64, error)
	// OwnedBy returns the ids of at most limit documents of ownerID.
	OwnedBy(ctx context.Context, ownerID string, limit int) ([]string, error)
	Close() error
}

// ErrSearchIndexBusy is the error of SearchIndexes.Open when another process
// holds the index (a second server on the same data dir, or `atrium reindex`).
var ErrSearchIndexBusy = errors.New("the search index is in use by another process")

// SearchIndexes opens the index on disk and builds new ones.
type SearchIndexes interface {
	// Open opens the existing index; an error when it is missing or unreadable.
	Open() (SearchIndex, error)
	// Build fills a new index beside the current one and, when fill succeeds,
	// replaces the current one with it (the current one must be closed).
	// Returns the new index, open.
	Build(ctx context.Context, fill func(SearchIndex) error) (SearchIndex, error)
}

// TextExtractor returns the plain text of content for the index, at most max
// bytes, and whether the type is one it reads.
type TextExtractor interface {
	Supported(mimeType, name string) bool
	Text(ctx context.Context, r io.Reader, size int64, mimeType, name string, max int) (string, bool, error)
}

// SearchStore is what search needs from the store.
type SearchStore interface {
	// DriveEventsAfter returns what the outbox events after seq change in the
	// index, reading at most limit events, and the seq of the last one read
	// (seq when none).
	DriveEventsAfter(ctx context.Context, seq int64, limit int) (SearchChanges, int64, error)
	// LastEventSeq returns the seq of the newest outbox event.
	LastEventSeq(ctx context.Context) (int64, error)
	// EventsHorizon returns the seq up to which outbox events were pruned.
	EventsHorizon(ctx context.Context) (int64, error)
	// PruneEvents deletes at most limit outbox events up to seq upTo created
	// before t, and returns how many went.
	PruneEvents(ctx context.Context, upTo int64, t time.Time, limit int) (int, error)
	// IndexableFiles returns live (not pending, not trashed) items with ids
	// after afterID, by id, at most limit; only ownerID's when it is set.
	IndexableFiles(ctx context.Context, ownerID, afterID string, limit int) ([]File, error)
	CountIndexable(ctx context.Context) (int64, error)
	// FolderParents returns the parent of every folder ("" at the root).
	FolderParents(ctx context.Context) (map[string]string, error)
	// SharedRoots returns the items shared with userID by unexpired user shares.
	SharedRoots(ctx context.Context, userID string, now time.Time) ([]string, error)
}

// SearchChanges are what a run of outbox events changes in the index.
type SearchChanges struct {
	// FileIDs are the items created, changed or deleted, in order.
	FileIDs []string
	// Renamed are the users whose display name changed: every item they own
	// carries their name (owner_name).
	Renamed []string
	// Deleted are the users deleted, with their drives.
	Deleted []string
}

// SearchParams are the query parameters of GET /drive/search.
type SearchParams struct {
	Q              string
	Limit          int
	Offset         int
	MimeTypes      []string
	Facets         bool
	CreatedAfter   string
	CreatedBefore  string
	ModifiedAfter  string
	ModifiedBefore string
	OwnerName      string
	FolderID       string
	IsFolder       *bool
	MinSize        *int64
	MaxSize        *int64
	SortBy         string
	SortOrder      string
}

// SearchHit is a file found, with the fragments that matched.
type SearchHit struct {
	File
	Highlights map[string][]string `json:"highlights" doc:"Matching fragments by field (name, content, description, tags), the matched words in <mark>."`
}

// SearchResult is the search envelope.
type SearchResult struct {
	Hits              []SearchHit               `json:"hits"`
	TotalHits         int                       `json:"total_hits"`
	ProcessingTimeMS  int64                     `json:"processing_time_ms"`
	Limit             int                       `json:"limit"`
	Offset            int                       `json:"offset"`
	Query             string                    `json:"query"`
	FacetDistribution map[string]map[string]int `json:"facet_distribution,omitempty" doc:"With facets=true: counts of the matches by mime_group, owner_name and is_folder."`
}

// searcher is the state of the search index of a Service.
type searcher struct {
	indexes SearchIndexes
	extract TextExtractor

	// mu serialises applying events and swapping the index.
	mu  sync.Mutex
	idx SearchIndex
	// rebuilding is set while the index is built anew; search answers 503.
	rebuilding atomic.Bool
	// progress of a rebuild: done and total items.
	done, total atomic.Int64
	// bg counts the goroutines StartSearch started; CloseSearch waits for them.
	bg sync.WaitGroup
}

// WithSearch sets the search index and the text extractor.
func (o Options) WithSearch(indexes SearchIndexes, extract TextExtractor) Options {
	o.search = &searcher{indexes: indexes, extract: extract}
	return o
}

func rebuildingError() error {
	return &app.Error{Code: app.EIndexRebuilding, RetryAfter: 5,
		Message: "The search index is being rebuilt; search is back in a moment."}
}

// StartSearch opens the search index. A missing or unreadable index is
// rebuilt from the store in the background; until it is ready, search answers
// index_rebuilding. It returns at once.
func (s *Service) StartSearch(ctx context.Context) {
	sr := s.opts.search
	if sr == nil {
		return
	}
	idx, err := sr.indexes.Open()
	if err == nil {
		if err = s.missedEvents(ctx, idx); err == nil {
			sr.mu.Lock()
			sr.idx = idx
			sr.mu.Unlock()
			return
		}
		if cerr := idx.Close(); cerr != nil {
			s.log.Warn("close the outdated search index", slog.Any("err", cerr))
		}
	}
	if errors.Is(err, ErrSearchIndexBusy) {
		// Search answers index_rebuilding until the other process lets go.
		s.log.Error("search index held by another process; retrying", slog.Any("err", err))
		sr.bg.Go(func() { every(ctx, 5*time.Second, s.reopenSearch(ctx)) })
		return
	}
	// A small drive (a new installation) is indexed before serving, so
	// search works from the first request; a large one in the background.
	if n, cerr := s.store.CountIndexable(ctx); cerr == nil && n <= searchInlineRebuild {
		s.log.Info("search index missing or unusable: building it", slog.Any("reason", err), slog.Int64("items", n))
		if err := s.Rebuild(ctx, nil); err != nil && ctx.Err() == nil {
			s.log.Error("search index rebuild failed", slog.Any("err", err))
		}
		return
	}
	s.log.Info("search index missing or unusable: building it in the background", slog.Any("reason", err))
	sr.rebuilding.Store(true)
	sr.bg.Go(func() {
		if err := s.Rebuild(ctx, nil); err != nil && ctx.Err() == nil {
			s.log.Error("search index rebuild failed", slog.Any("err", err))
		}
	})
}

// missedEvents returns an error when idx has not seen events that were pruned
// since (an index older than the database): it must be built anew.
func (s *Service) missedEvents(ctx context.Context, idx SearchIndex) error {
	cursor, err := idx.Cursor()
	if err != nil {
		return err
	}
	horizon, err := s.store.EventsHorizon(ctx)
	if err != nil {
		return err
	}
	if cursor < horizon {
		return fmt.Errorf("the index stops at event %d, and the events up to %d were pruned since", cursor, horizon)
	}
	return nil
}

// EventsMaxAge is how long outbox events are kept once the search index has
// applied them. (Webhook deliveries carry their own copy of the event.)
const EventsMaxAge = 7 * 24 * time.Hour

// pruneEvents deletes the outbox events older than EventsMaxAge that the
// search index has applied: with search configured, none while the index is
// being built or is not open.
func (s *Service) pruneEvents(ctx context.Context, now time.Time) (int, error) {
	upTo := int64(math.MaxInt64)
	if sr := s.opts.search; sr != nil {
		if sr.rebuilding.Load() {
			return 0, nil
		}
		sr.mu.Lock()
		var err error
		if sr.idx == nil {
			upTo = 0
		} else {
			upTo, err = sr.idx.Cursor()
		}
		sr.mu.Unlock()
		if err != nil || upTo == 0 {
			return 0, err
		}
	}
	total := 0
	deadline := time.Now().Add(sweepTime)
	for time.Now().Before(deadline) {
		n, err := s.store.PruneEvents(ctx, upTo, now.Add(-EventsMaxAge), 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
	return total, nil
}

// reopenSearch returns the step of the retry loop of StartSearch while
// another process holds the index: true to try again later.
func (s *Service) reopenSearch(ctx context.Context) func() bool {
	sr := s.opts.search
	return func() bool {
		idx, err := sr.indexes.Open()
		switch {
		case err == nil:
			sr.mu.Lock()
			sr.idx = idx
			sr.mu.Unlock()
		case errors.Is(err, ErrSearchIndexBusy):
			return true
		default:
			s.StartSearch(ctx)
		}
		return false
	}
}

// CloseSearch flushes and closes the index. The context given to
// StartSearch must be done: CloseSearch waits for the goroutines it started.
func (s *Service) CloseSearch() error {
	sr := s.opts.search
	if sr == nil {
		return nil
	}
	sr.bg.Wait()
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.idx == nil {
		return nil
	}
	err := sr.idx.Close()
	sr.idx = nil
	return err
}

// Rebuild builds the index anew from the store and puts it in place; progress,
// when set, is told how many items are done of how many. Search answers
// index_rebuilding meanwhile.
func (s *Service) Rebuild(ctx context.Context, progress func(done, total int64)) error {
	sr := s.opts.search
	if sr == nil {
		return errors.New("search is not configured")
	}
	sr.rebuilding.Store(true)
	defer sr.rebuilding.Store(false)
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.idx == nil {
		// Make sure no other process uses the index we are about to replace.
		idx, err := sr.indexes.Open()
		if errors.Is(err, ErrSearchIndexBusy) {
			return err
		}
		if err == nil {
			sr.idx = idx
		}
	}
	if sr.idx != nil {
		if err := sr.idx.Close(); err != nil {
			return fmt.Errorf("close search index: %w", err)
		}
		sr.idx = nil
	}
	// Events up to here are covered by the scan; later ones are applied after.
	cursor, err := s.store.LastEventSeq(ctx)
	if err != nil {
		return err
	}
	total, err := s.store.CountIndexable(ctx)
	if err != nil {
		return err
	}
	sr.total.Store(total)
	sr.done.Store(0)
	parents, err := s.store.FolderParents(ctx)
	if err != nil {
		return err
	}
	idx, err := sr.indexes.Build(ctx, func(idx SearchIndex) error {
		err := s.indexFiles(ctx, idx, nil, "", parents, cursor, func(batch int) {
			n := sr.done.Add(int64(batch))
			if progress != nil {
				progress(n, total)
			}
		})
		if err != nil {
			return err
		}
		return idx.Apply(ctx, nil, nil, cursor) // an empty drive's index has its cursor too
	})
	if err != nil {
		return fmt.Errorf("rebuild search index: %w", err)
	}
	sr.idx = idx
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

// searchDoc makes the document of f. The content's text is reused from the
// index when the content did not change, else extracted from the bytes.
func (s *Service) searchDoc(ctx context.Context, idx SearchIndex, f File, folders []string) SearchDoc {
	d := SearchDoc{ID: f.ID, OrgID: f.OrgID, OwnerID: f.OwnerID, OwnerName: f.OwnerName, ParentID: f.Parent(),
		Folders: folders, Name: f.Name, MimeType: f.MimeType, MimeGroup: f.MimeGroup, Description: f.Metadata.Description,
		Tags: f.Metadata.Tags, IsFolder: f.IsFolder, SizeBytes: f.SizeBytes, ContentHash: f.ContentHash,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
	if f.IsFolder || f.ContentHash == "" || !s.opts.search.extract.Supported(f.MimeType, f.Name) {
		return d
	}
	if idx != nil {
		if hash, text, ok, err := idx.Content(f.ID); err == nil && ok && hash == f.ContentHash {
			d.Content = text
			return d
		}
	}
	if f.SizeBytes > searchExtractMaxBytes || f.Status != StatusActive {
		return d
	}
	r, err := s.blobs.Open(f.Hash())
	if err != nil {
		s.log.Warn("search: content not readable", slog.String("file_id", f.ID), slog.Any("err", err))
		return d
	}
	defer r.Close()
	// A deadline per file: a hostile document cannot hold the indexer.
	ectx, cancel := context.WithTimeout(ctx, searchExtractTimeout)
	defer cancel()
	text, _, err := s.opts.search.extract.Text(ectx, r, f.SizeBytes, f.MimeType, f.Name, SearchContentMax)
	if err != nil {
		// A file we cannot read is still found by its name and metadata.
		s.log.Info("search: no text extracted", slog.String("file_id", f.ID), slog.String("mime_type", f.MimeType), slog.Any("err", err))
	}
	d.Content = text
	return d
}

// indexable reports whether f belongs in the index.
func indexable(f File) bool { return f.Status != StatusPending && f.TrashedAt == nil }

// IndexPending applies the drive events the index has not seen yet. Search
// calls it first, so a search sees every change committed before it; a
// background loop calls it too (RunIndexer).
func (s *Service) IndexPending(ctx context.Context) error {
	sr := s.opts.search
	if sr == nil || sr.rebuilding.Load() {
		return nil
	}
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.idx == nil {
		return nil
	}
	cursor, err := sr.idx.Cursor()
	if err != nil {
		return err
	}
	for {
		changes, last, err := s.store.DriveEventsAfter(ctx, cursor, searchBatch)
		if err != nil {
			return err
		}
		if last == cursor {
			return nil
		}
		docs, deletes, err := s.changedDocs(ctx, sr.idx, changes.FileIDs)
		if err != nil {
			return err
		}
		// The renamed owners' items go in first, under the old cursor: after a
		// crash half-way, the events are applied again.
		if err := s.reindexOwners(ctx, sr.idx, changes.Renamed, cursor); err != nil {
			return err
		}
		if err := s.forgetOwners(ctx, sr.idx, changes.Deleted, cursor); err != nil {
			return err
		}
		if err := sr.idx.Apply(ctx, docs, deletes, last); err != nil {
			return err
		}
		cursor = last
	}
}

// forgetOwners removes every document of the owners, whose drives were
// deleted with them.
func (s *Service) forgetOwners(ctx context.Context, idx SearchIndex, owners []string, cursor int64) error {
	for _, owner := range owners {
		for {
			ids, err := idx.OwnedBy(ctx, owner, searchBatch)
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

// SearchDocuments returns the number of items in the search index; ok is
// false while the index is being rebuilt or updated.
func (s *Service) SearchDocuments() (n uint64, ok bool) {
	sr := s.opts.search
	if sr == nil || sr.rebuilding.Load() || !sr.mu.TryLock() {
		return 0, false
	}
	defer sr.mu.Unlock()
	if sr.idx == nil {
		return 0, false
	}
	n, err := sr.idx.Count()
	return n, err == nil
}

// reindexOwners indexes again every live item of the owners, in batches, for
// the owner's new name; the content's text is reused from the index.
func (s *Service) reindexOwners(ctx context.Context, idx SearchIndex, owners []string, cursor int64) error {
	if len(owners) == 0 {
		return nil
	}
	parents, err := s.store.FolderParents(ctx)
	if err != nil {
		return err
	}
	for _, owner := range slices.Compact(slices.Sorted(slices.Values(owners))) {
		if err := s.indexFiles(ctx, idx, idx, owner, parents, cursor, nil); err != nil {
			return err
		}
	}
	return nil
}

// indexFiles indexes every live item (ownerID's only when it is set) in
// batches, recording cursor with each; the extracted text of documents in
// reuse (when set) is reused. done, when set, is told each batch's size.
func (s *Service) indexFiles(ctx context.Context, idx, reuse SearchIndex, ownerID string, parents map[string]string, cursor int64, done func(int)) error {
	after := ""
	for {
		files, err := s.store.IndexableFiles(ctx, ownerID, after, searchBatch)
		if err != nil || len(files) == 0 {
			return err
		}
		docs := make([]SearchDoc, 0, len(files))
		for _, f := range files {
			docs = append(docs, s.searchDoc(ctx, reuse, f, folderChain(parents, f.Parent())))
		}
		if err := idx.Apply(ctx, docs, nil, cursor); err != nil {
			return err
		}
		after = files[len(files)-1].ID
		if done != nil {
			done(len(files))
		}
	}
}

// changedDocs returns the documents to index and the ids to remove after
// events about ids. An event about a folder re-indexes everything below it:
// a move, rename, trash or restore of a folder changes what is below it too.
func (s *Service) changedDocs(ctx context.Context, idx SearchIndex, ids []string) ([]SearchDoc, []string, error) {
	var docs []SearchDoc
	var deletes []string
	seen := map[string]bool{}
	add := func(f File, folders []string) {
		if indexable(f) {
			docs = append(docs, s.searchDoc(ctx, idx, f, folders))
		} else {
			deletes = append(deletes, f.ID)
		}
	}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		f, err := s.store.File(ctx, id)
		if app.ErrorCode(err) == app.ENotFound {
			deletes = append(deletes, id)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		anc, err := s.store.Ancestors(ctx, f.ID)
		if err != nil {
			return nil, nil, err
		}
		folders := make([]string, 0, len(anc))
		for _, a := range anc {
			folders = append(folders, a.ID)
		}
		add(f, folders)
		if !f.IsFolder {
			continue
		}
		below, err := s.store.Subtree(ctx, f.ID, false)
		if err != nil {
			return nil, nil, err
		}
		chain := map[string][]string{f.ID: append(slices.Clone(folders), f.ID)}
		for _, c := range below {
			seen[c.ID] = true
			up := chain[c.Parent()]
			if c.IsFolder {
				chain[c.ID] = append(slices.Clone(up), c.ID)
			}
			add(c, up) // the descendants of a trashed folder are trashed with it
		}
	}
	return docs, deletes, nil
}

// RunIndexer applies new drive events to the index every interval until ctx ends.
func (s *Service) RunIndexer(ctx context.Context, interval time.Duration) {
	if s.opts.search == nil {
		return
	}
	every(ctx, interval, func() bool {
		if err := s.IndexPending(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("search indexing failed", slog.Any("err", err))
		}
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

// SearchProgress reports whether the index is being rebuilt and how far.
func (s *Service) SearchProgress() (rebuilding bool, done, total int64) {
	sr := s.opts.search
	if sr == nil {
		return false, 0, 0
	}
	return sr.rebuilding.Load(), sr.done.Load(), sr.total.Load()
}

// Search finds the caller's files and those shared with them.
func (s *Service) Search(ctx context.Context, p *app.Principal, sp SearchParams) (SearchResult, error) {
	start := time.Now()
	if err := check(p, app.ScopeDriveRead); err != nil {
		return SearchResult{}, err
	}
	q, err := s.searchQuery(ctx, p, sp)
	if err != nil {
		return SearchResult{}, err
	}
	sr := s.opts.search
	if sr == nil {
		return SearchResult{}, app.Errorf(app.EUnavailable, "Search is not configured on this server.")
	}
	if sr.rebuilding.Load() {
		return SearchResult{}, rebuildingError()
	}
	if err := s.IndexPending(ctx); err != nil {
		return SearchResult{}, fmt.Errorf("search: apply pending changes: %w", err)
	}
	sr.mu.Lock()
	idx := sr.idx
	sr.mu.Unlock()
	if idx == nil {
		return SearchResult{}, rebuildingError()
	}
	res, err := idx.Search(ctx, q)
	if err != nil {
		return SearchResult{}, fmt.Errorf("search: %w", err)
	}
	out := SearchResult{Hits: make([]SearchHit, 0, len(res.Hits)), TotalHits: res.Total, Limit: q.Limit, Offset: q.Offset,
		Query: sp.Q, FacetDistribution: res.Facets}
	for _, h := range res.Hits {
		f, err := s.store.File(ctx, h.ID)
		if app.ErrorCode(err) == app.ENotFound {
			continue
		}
		if err != nil {
			return SearchResult{}, err
		}
		if f.OrgID != p.OrgID || !indexable(f) {
			continue
		}
		f.Permission = PermOwner
		if f.OwnerID != p.UserID {
			if f.Permission, err = s.sharedPermission(ctx, p.UserID, f); err != nil {
				return SearchResult{}, err
			}
			if f.Permission == "" {
				continue
			}
		}
		if h.Highlights == nil {
			h.Highlights = map[string][]string{}
		}
		out.Hits = append(out.Hits, SearchHit{File: f, Highlights: h.Highlights})
	}
	out.ProcessingTimeMS = time.Since(start).Milliseconds()
	return out, nil
}

// searchQuery validates sp and makes the index query of the caller.
func (s *Service) searchQuery(ctx context.Context, p *app.Principal, sp SearchParams) (SearchQuery, error) {
	q := SearchQuery{Text: strings.TrimSpace(sp.Q), OrgID: p.OrgID, OwnerID: p.UserID, FolderID: sp.FolderID,
		MimeTypes: sp.MimeTypes, OwnerName: strings.TrimSpace(sp.OwnerName), IsFolder: sp.IsFolder,
		MinSize: sp.MinSize, MaxSize: sp.MaxSize, SortBy: sp.SortBy, SortOrder: sp.SortOrder,
		Limit: sp.Limit, Offset: sp.Offset, Facets: sp.Facets}
	if q.Limit == 0 {
		q.Limit = SearchDefaultLimit
	}
	if q.Limit < 1 || q.Limit > SearchMaxLimit {
		return q, app.Invalid("query.limit", "limit must be between 1 and 100.", q.Limit)
	}
	if q.Offset < 0 {
		return q, app.Invalid("query.offset", "offset must not be negative.", q.Offset)
	}
	if q.Offset+q.Limit > 10_000 {
		return q, app.Invalid("query.offset", "Search pages end at the 10,000th hit; narrow the search.", q.Offset)
	}
	if q.SortBy == "" {
		q.SortBy = "relevance"
		if q.Text == "" {
			q.SortBy = "updated_at"
		}
	}
	if !slices.Contains(searchSorts, q.SortBy) {
		return q, app.Invalid("query.sort_by", "sort_by must be one of "+strings.Join(searchSorts, ", ")+".", q.SortBy)
	}
	switch q.SortOrder {
	case "":
		q.SortOrder = "desc"
		if q.SortBy == "name" || q.SortBy == "mime_type" {
			q.SortOrder = "asc"
		}
	case "asc", "desc":
	default:
		return q, app.Invalid("query.sort_order", "sort_order must be asc or desc.", q.SortOrder)
	}
	if q.MinSize != nil && *q.MinSize < 0 {
		return q, app.Invalid("query.min_size", "min_size must not be negative.", *q.MinSize)
	}
	if q.MaxSize != nil && *q.MaxSize < 0 {
		return q, app.Invalid("query.max_size", "max_size must not be negative.", *q.MaxSize)
	}
	if q.MinSize != nil && q.MaxSize != nil && *q.MinSize > *q.MaxSize {
		return q, app.Invalid("query.max_size", "max_size is below min_size.", *q.MaxSize)
	}
	for _, d := range []struct {
		loc, val string
		dst      **time.Time
	}{
		{"query.created_after", sp.CreatedAfter, &q.CreatedAfter},
		{"query.created_before", sp.CreatedBefore, &q.CreatedBefore},
		{"query.modified_after", sp.ModifiedAfter, &q.ModifiedAfter},
		{"query.modified_before", sp.ModifiedBefore, &q.ModifiedBefore},
	} {
		if d.val == "" {
			continue
		}
		t, err := parseSearchTime(d.val)
		if err != nil {
			return q, app.Invalid(d.loc, "Expected a date (YYYY-MM-DD) or an RFC 3339 time.", d.val)
		}
		*d.dst = &t
	}
	if q.FolderID != "" {
		f, err := s.access(ctx, p, q.FolderID, PermView)
		if err != nil {
			return q, err
		}
		if !f.IsFolder {
			return q, app.Invalid("query.folder_id", "The item is a file, not a folder.", q.FolderID)
		}
	}
	roots, err := s.store.SharedRoots(ctx, p.UserID, s.clock.Now())
	if err != nil {
		return q, err
	}
	q.SharedRoots = roots
	return q, nil
}

// parseSearchTime reads an RFC 3339 time or a date (midnight UTC).
func parseSearchTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, v)
}
