package drive

// Full-text search. The index (an adapter: Bleve under the data dir, or
// tables of the database when it is PostgreSQL) holds one
// document a live file or folder: names, metadata, the extracted text of the
// content and what the filters need. It is never the source of truth: the
// indexer (app/drive/indexer) feeds it from the drive's events in the outbox
// and can rebuild it from SQLite at any time (`atrium reindex`); while it is
// being rebuilt, search answers index_rebuilding (503, Retry-After).
//
// Visibility is decided at query time, never stored: a user sees the files
// they own and those under an item shared with them (each document carries
// the ids of its folders), within their organisation. Hits are loaded again
// from the store before they are returned, so a file whose state changed a
// moment ago is never shown as it was.

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"time"

	"atrium/app"
)

// Search limits.
const (
	SearchMaxLimit     = 100
	SearchDefaultLimit = 50
	// SearchContentMax caps the text indexed of one file's content.
	SearchContentMax = 200_000
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
	// OrgID, OwnerID, SharedRoots and SharedFolders bound what may match:
	// items of OrgID owned by OwnerID, one of SharedRoots (the items shared
	// with the caller), or below one of SharedFolders (those of them that are
	// folders).
	OrgID         string
	OwnerID       string
	SharedRoots   []string
	SharedFolders []string
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
	// IndexableFiles returns live (not pending, not trashed) items with ids
	// after afterID, by id, at most limit; only ownerID's when it is set.
	IndexableFiles(ctx context.Context, ownerID, afterID string, limit int) ([]File, error)
	CountIndexable(ctx context.Context) (int64, error)
	// FolderParents returns the parent of every folder ("" at the root).
	FolderParents(ctx context.Context) (map[string]string, error)
	// SharedRoots returns the items unexpired shares grant userID, and which
	// of them are folders.
	SharedRoots(ctx context.Context, userID string, now time.Time) (roots, folders []string, err error)
}

// SearchChanges are what a run of outbox events changes in the index.
type SearchChanges struct {
	// FileIDs are the items created, changed or deleted, in order.
	FileIDs []string
	// Created are those of FileIDs that an event created: the index holds
	// nothing of theirs to reuse.
	Created []string
	// Below are those of FileIDs whose events may change the items below
	// them: a move, a trash or a restore, or a change the index does not
	// know. A folder's creation, rename, favourite mark or metadata changes
	// nothing below it (what a document holds of its folders is their ids),
	// and what comes into a new folder comes with events of its own.
	Below []string
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

// SearchBackend runs queries on the search index (app/drive/indexer, which
// keeps the index fed from the outbox): it applies the changes committed
// before the query first, and answers index_rebuilding while the index is
// being built.
type SearchBackend interface {
	Query(ctx context.Context, q SearchQuery) (IndexResult, error)
}

// WithSearch sets the search index.
func (o Options) WithSearch(b SearchBackend) Options {
	o.search = b
	return o
}

// Searchable reports whether f belongs in the search index: confirmed and
// not in the trash.
func (f File) Searchable() bool { return f.Status != StatusPending && f.TrashedAt == nil }

// Search finds the caller's files and those shared with them. Errors:
// insufficient_scope (no drive:read), no_bound_user, feature_not_in_plan,
// validation_failed (a parameter, a folder_id that is a file), not_found (no
// such folder, or not shared with the caller), unavailable (no search
// configured), index_rebuilding.
func (dv *DerivedData) Search(ctx context.Context, p *app.Principal, sp SearchParams) (SearchResult, error) {
	start := time.Now()
	if err := check(p, app.ScopeDriveRead); err != nil {
		return SearchResult{}, err
	}
	q, err := dv.searchQuery(ctx, p, sp)
	if err != nil {
		return SearchResult{}, err
	}
	if dv.core.opts.search == nil {
		return SearchResult{}, app.Errorf(app.EUnavailable, "Search is not configured on this server.")
	}
	res, err := dv.core.opts.search.Query(ctx, q)
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchResult{Hits: make([]SearchHit, 0, len(res.Hits)), TotalHits: res.Total, Limit: q.Limit, Offset: q.Offset,
		Query: sp.Q, FacetDistribution: res.Facets}
	// The hits' items in one read, then in the index's order (a read each
	// cost a page of 20 hits about 1.5 ms in a soak, each a reader's first
	// after a commit).
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	files, err := dv.core.store.FilesByID(ctx, ids)
	if err != nil {
		return SearchResult{}, err
	}
	byID := make(map[string]File, len(files))
	for _, f := range files {
		byID[f.ID] = f
	}
	for _, h := range res.Hits {
		f, ok := byID[h.ID]
		if !ok { // deleted since it was indexed
			continue
		}
		if f.OrgID != p.OrgID || !f.Searchable() {
			continue
		}
		f.Permission = PermOwner
		if f.OwnerID != p.UserID {
			if f.Permission, err = dv.core.sharedPermission(ctx, p.UserID, f); err != nil {
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
func (dv *DerivedData) searchQuery(ctx context.Context, p *app.Principal, sp SearchParams) (SearchQuery, error) {
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
		f, err := dv.core.access(ctx, p, q.FolderID, PermView)
		if err != nil {
			return q, err
		}
		if !f.IsFolder {
			return q, app.Invalid("query.folder_id", "The item is a file, not a folder.", q.FolderID)
		}
	}
	roots, folders, err := dv.core.store.SharedRoots(ctx, p.UserID, dv.core.clock.Now())
	if err != nil {
		return q, err
	}
	q.SharedRoots, q.SharedFolders = roots, folders
	return q, nil
}

// parseSearchTime reads an RFC 3339 time or a date (midnight UTC).
func parseSearchTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, v)
}
