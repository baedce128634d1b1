// Package index is the drive's full-text search index in Bleve (scorch, on
// disk under the data directory). It implements drive.SearchIndex and
// drive.SearchIndexes: the mapping, the query (the tenant filter comes from
// the caller's drive.SearchQuery), facets, highlights, and the build of a new
// index beside the current one that is swapped in when complete.
package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/char/regexp"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/highlight/highlighter/html"
	"github.com/blevesearch/bleve/v2/search/query"
	zapv17 "github.com/blevesearch/zapx/v17"
	bbolt "go.etcd.io/bbolt"

	"atrium/app/drive"
)

// cursorKey is the internal key holding the last event applied.
var cursorKey = []byte("atrium.cursor")

// schemaVersion names the mapping; an index of another version is rebuilt.
const schemaVersion = "3"

var schemaKey = []byte("atrium.schema")

// folded is the analyzer of text fields: Unicode words, lower case, accents
// folded (so "resume" finds "Résumé").
const folded = "atrium_folded"

// punct is the char filter that turns dots, dashes and underscores into spaces.
const punct = "atrium_punct"

// Dir is an index directory: the index lives in Path, a new one is built in
// Path+".new" and renamed into place.
type Dir struct {
	Path string
	// OpenTimeout bounds the wait for the index's file lock (another process
	// holding it); default 2 s.
	OpenTimeout time.Duration
	// segmentDocs is the most documents a merge makes a segment of:
	// maxSegmentDocs unless a test sets another.
	segmentDocs int64
	// releaseEvery is how often the index's mapped pages are released
	// besides after its work: releaseEvery unless a test sets another.
	releaseEvery time.Duration
	// napMS is the persister's nap, ms: persisterNap unless a test sets
	// another.
	napMS int
}

func (d Dir) maxSegment() int64 {
	if d.segmentDocs > 0 {
		return d.segmentDocs
	}
	return maxSegmentDocs
}

var _ drive.SearchIndexes = Dir{}

// ErrMissing is returned by Open when there is no index yet.
var ErrMissing = errors.New("no search index")

// What the index holds in memory is bounded by design (issue 47; see
// docs/operations.md, "Memory and durable writes"): the indexer's batches
// are bounded by the weight of their text (app/drive/indexer), a batch's new
// segment is written as soon as the persister is free (persisterNap), no
// merge makes a segment of more than maxSegmentDocs documents, and the pages
// of the segments' files that the process reads are released once the work
// that read them is done (releaseMapped).
const (
	// persisterNap is how long the persister waits, between two writes of
	// the index's new segments, for the next batches to merge with in
	// memory (Bleve's default, 0: none). What it holds meanwhile is the new
	// segments of that wait: with 3 s those of a burst's backlog came to
	// some 60 MB, and with 1 s the live heap while the index took in small
	// files peaked at 36-38 MB against 25-26 MB with none (6,000 documents
	// of 1 KiB of text in batches of 70, in process, two and three runs;
	// 27-31 MB with 250 ms). The wait saved fsyncs, one a second rather
	// than one or two a batch (a few a second), beside the drive's hundreds
	// a second during a burst of uploads; the indexer waits out such a
	// burst anyway (app/drive/indexer).
	persisterNap = 0
	// maxSegmentDocs is the most documents a merge makes a segment of. A
	// merge reads the whole of the segments it merges, which are mapped
	// into the process (and released as it goes, releaseEvery), and builds
	// the new one's dictionaries in memory, so a merge's work is what
	// maxSegmentDocs documents take (some 20-27 MB on disk of small text
	// files) rather than a good part of the index: with Bleve's default (5
	// million) the merges of a burst of 100,000 small files mapped 250-280
	// MB, before the releases. Not fewer: every batch reads a
	// little of every segment (its ids), which maps a page-cache folio of
	// each (some 64 KB, see init), so the segments' count costs memory too,
	// and searches time: a search of 100,000 documents reads some 20-30
	// segments instead of a few, about a third longer (p50 10-11 ms against
	// 7.7, index/bench_test.go).
	maxSegmentDocs = 5000
	// maxUnwritten is the most batches whose new segments are in memory
	// only, not yet written (Apply waits for the oldest past it): the
	// persister writes them as they come, but it may fall behind on a busy
	// machine, and nothing in Bleve holds new batches back meanwhile.
	maxUnwritten = 4
)

func init() {
	// Bleve's segment format (zap) writes a merged segment in writes of this
	// size (1 MiB by default), and Linux's page cache holds a file in folios
	// as large as the writes that made it (up to 1 MiB on the benchmark
	// machine's 6.18): a read of a few bytes of a segment then maps its whole
	// folio into the process, and every batch reads a little of every
	// segment (the ids it replaces). A batch mapped some 1 MiB of each
	// segment, 35 MB of a 100,000-file index; with 64 KiB writes it maps
	// some 64 KB of each.
	zapv17.DefaultFileMergerBufferSize = 64 << 10
}

// config is the index's configuration. A batch returns once it is
// searchable, without waiting for its segment to reach the disk (a search
// applies the pending changes first, and would otherwise wait for an fsync).
// What a crash or a stop loses of the index that follows the drive is lost
// consistently — the cursor is stored with the documents — and applied again
// from the outbox at the next start; a rebuild waits for its batches to
// reach the disk once, at the end (Build).
func (d Dir) config() map[string]any {
	t := d.OpenTimeout
	if t <= 0 {
		t = 2 * time.Second
	}
	return map[string]any{"bolt_timeout": t.String(), "unsafe_batch": true,
		// The persister writes new segments as they come (persisterNap).
		"scorchPersisterOptions": map[string]any{"PersisterNapTimeMSec": max(d.napMS, persisterNap)},
		// Bleve's defaults but for the largest segment a merge makes.
		"scorchMergePlanOptions": map[string]any{"MaxSegmentSize": d.maxSegment()},
		// The release of the mapped pages after a batch or a merge.
		"eventCallbackName": releaseEvents}
}

// Open opens the existing index.
func (d Dir) Open() (drive.SearchIndex, error) {
	if _, err := os.Stat(d.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMissing
	}
	bi, err := bleve.OpenUsing(d.Path, d.config())
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("open search index %s: %w", d.Path, drive.ErrSearchIndexBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("open search index %s: %w", d.Path, err)
	}
	v, err := bi.GetInternal(schemaKey)
	if err != nil || string(v) != schemaVersion {
		bi.Close()
		return nil, fmt.Errorf("open search index %s: schema %q, want %q", d.Path, v, schemaVersion)
	}
	return newIndex(bi, d), nil
}

// Build fills a new index in Path.new and, when fill succeeds, replaces the
// index at Path with it.
func (d Dir) Build(ctx context.Context, fill func(drive.SearchIndex) error) (drive.SearchIndex, error) {
	tmp := d.Path + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("build search index: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(tmp), 0o700); err != nil {
		return nil, fmt.Errorf("build search index: %w", err)
	}
	bi, err := bleve.NewUsing(tmp, newMapping(), bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, d.config())
	if err != nil {
		return nil, fmt.Errorf("build search index: %w", err)
	}
	if err := bi.SetInternal(schemaKey, []byte(schemaVersion)); err != nil {
		bi.Close()
		return nil, fmt.Errorf("build search index: %w", err)
	}
	idx := newIndex(bi, d)
	if err := fill(idx); err != nil {
		idx.Close()
		os.RemoveAll(tmp)
		return nil, err
	}
	// Merge the segments of the bulk load now, not while serving searches,
	// once they are all on disk, and wait for the merged index to be too.
	for _, step := range []func(context.Context) error{idx.persisted, idx.merge, idx.persisted} {
		if err := step(ctx); err != nil {
			idx.Close()
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("build search index: %w", err)
		}
	}
	if err := idx.Close(); err != nil {
		return nil, fmt.Errorf("build search index: close: %w", err)
	}
	old := d.Path + ".old"
	os.RemoveAll(old)
	if err := os.Rename(d.Path, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("build search index: set the old one aside: %w", err)
	}
	if err := os.Rename(tmp, d.Path); err != nil {
		return nil, fmt.Errorf("build search index: put the new one in place: %w", err)
	}
	os.RemoveAll(old)
	return d.Open()
}

// merge merges the index into as few segments of at most its segmentDocs
// documents as it can (Bleve's single-segment plan, capped).
func (x *Index) merge(ctx context.Context) error {
	adv, err := x.bi.Advanced()
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	if s, ok := adv.(*scorch.Scorch); ok {
		plan := mergeplan.SingleSegmentMergePlanOptions
		plan.MaxSegmentSize = x.segmentDocs
		if err := s.ForceMerge(ctx, &plan); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	return nil
}

// persisted returns once every batch applied so far is on disk: it applies
// an empty one and waits for it, the batches being written in order.
func (x *Index) persisted(ctx context.Context) error {
	b := x.bi.NewBatch()
	done := make(chan error, 1)
	b.SetPersistedCallback(func(err error) { done <- err })
	if err := x.bi.Batch(b); err != nil {
		return fmt.Errorf("write to disk: %w", err)
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("write to disk: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newMapping() mapping.IndexMapping {
	m := bleve.NewIndexMapping()
	// File names join words with dots, dashes and underscores: split there.
	if err := m.AddCustomCharFilter(punct, map[string]any{"type": regexp.Name, "regexp": `[._\-]+`, "replace": " "}); err != nil {
		panic(err) // a static definition
	}
	if err := m.AddCustomAnalyzer(folded, map[string]any{
		"type":          custom.Name,
		"char_filters":  []string{asciiFoldName, punct},
		"tokenizer":     unicode.Name,
		"token_filters": []string{lowercase.Name},
	}); err != nil {
		panic(err) // a static definition
	}
	// Text fields are also in the composite _all field, which the search
	// matches with one term lookup per word; the fields themselves serve the
	// name boost and the highlights.
	text := func(store bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = folded
		f.Store = store
		f.IncludeTermVectors = store
		f.IncludeInAll = true
		return f
	}
	kw := func(store bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Analyzer = keyword.Name
		f.Store = store
		f.IncludeInAll = false
		f.DocValues = true
		return f
	}
	num := bleve.NewNumericFieldMapping()
	num.Store, num.IncludeInAll = false, false
	boolean := bleve.NewBooleanFieldMapping()
	boolean.Store, boolean.IncludeInAll = false, false

	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("org_id", kw(false))
	doc.AddFieldMappingsAt("owner_id", kw(false))
	doc.AddFieldMappingsAt("owner_name", kw(false))
	doc.AddFieldMappingsAt("owner_name_key", kw(false))
	doc.AddFieldMappingsAt("folders", kw(false))
	doc.AddFieldMappingsAt("name", text(true))
	doc.AddFieldMappingsAt("name_sort", kw(false))
	doc.AddFieldMappingsAt("mime_type", kw(false))
	doc.AddFieldMappingsAt("mime_group", kw(false))
	doc.AddFieldMappingsAt("description", text(true))
	doc.AddFieldMappingsAt("tags", text(true))
	doc.AddFieldMappingsAt("content", text(true))
	doc.AddFieldMappingsAt("content_hash", kw(true))
	doc.AddFieldMappingsAt("is_folder", boolean)
	doc.AddFieldMappingsAt("folder_key", kw(false))
	doc.AddFieldMappingsAt("size_bytes", num)
	// A time is two fields (see timeKey): the whole second, a number for
	// ranges, and the millisecond, a keyword for sorting and for the edges of
	// a range.
	doc.AddFieldMappingsAt("created_at", kw(false))
	doc.AddFieldMappingsAt("created_s", num)
	doc.AddFieldMappingsAt("updated_at", kw(false))
	doc.AddFieldMappingsAt("updated_s", num)
	m.DefaultMapping = doc
	m.DefaultAnalyzer = folded
	m.StoreDynamic = false
	m.IndexDynamic = false
	return m
}

// Index is an open index.
type Index struct {
	bi bleve.Index
	// stop ends the release of the index's mapped pages; done is closed
	// when it has ended.
	stop, done chan struct{}
	stopOnce   sync.Once
	// release asks for a release of the mapped pages now (releaseAfter).
	release chan struct{}
	// scorch is bi's index, the key of openIndexes (nil if bi is not one).
	scorch *scorch.Scorch
	// unwritten is told, for each batch applied whose new segment is not
	// known to be on disk yet, when it is (oldest first; maxUnwritten).
	unwrittenMu sync.Mutex
	unwritten   []chan error
	// segmentDocs is the most documents a merge makes a segment of.
	segmentDocs int64
}

// The pages of the index's files that it read are released from the
// process's memory (releaseMapped) as soon as the work that read them is
// done, and every releaseEvery besides: what the process maps of the index at
// any moment is what the work under way read (a merge: its segments, at most
// maxSegmentDocs documents; a batch: a folio of each segment, the ids it
// replaces) and what searches read since the last release.
const releaseEvery = 250 * time.Millisecond

// releaseEvents is the name of the Bleve event callback (releaseAfter) that
// tells an open index that a batch, a merge or a write of its new segments
// has ended.
const releaseEvents = "atrium-release-mapped"

// openIndexes is the open indexes by their Bleve index (*scorch.Scorch), for
// releaseAfter.
var openIndexes sync.Map

func init() {
	scorch.RegistryEventCallbacks[releaseEvents] = releaseAfter
}

// releaseAfter asks the index of e to release its mapped pages once e's work
// is over: a batch applied (it read the ids it replaces in every segment), a
// merge introduced (it read the whole of its segments) or new segments
// written. Other events go on as Bleve would without a callback.
func releaseAfter(e scorch.Event) bool {
	switch e.Kind {
	case scorch.EventKindBatchIntroduction, scorch.EventKindMergeTaskIntroduction, scorch.EventKindPersisterProgress:
		if x, ok := openIndexes.Load(e.Scorch); ok {
			select {
			case x.(*Index).release <- struct{}{}:
			default: // a release is already due
			}
		}
	}
	return true
}

// newIndex returns the open index bi of d and starts the release of its
// mapped pages.
func newIndex(bi bleve.Index, d Dir) *Index {
	x := &Index{bi: bi, stop: make(chan struct{}), done: make(chan struct{}), release: make(chan struct{}, 1), segmentDocs: d.maxSegment()}
	every := d.releaseEvery
	if every <= 0 {
		every = releaseEvery
	}
	if adv, err := bi.Advanced(); err == nil {
		if s, ok := adv.(*scorch.Scorch); ok {
			x.scorch = s
			openIndexes.Store(s, x)
		}
	}
	go func() {
		defer close(x.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-x.stop:
				return
			case <-t.C:
			case <-x.release:
			}
			// An error is a mapping the kernel would not release (none is
			// expected): the next round tries again.
			_ = x.releaseMapped()
		}
	}()
	return x
}

var _ drive.SearchIndex = (*Index)(nil)

// document is what Bleve indexes of a drive.SearchDoc.
type document struct {
	OrgID        string   `json:"org_id"`
	OwnerID      string   `json:"owner_id"`
	OwnerName    string   `json:"owner_name"`
	OwnerNameKey string   `json:"owner_name_key"`
	Folders      []string `json:"folders"`
	Name         string   `json:"name"`
	NameSort     string   `json:"name_sort"`
	MimeType     string   `json:"mime_type"`
	MimeGroup    string   `json:"mime_group"`
	Description  string   `json:"description"`
	Tags         []string `json:"tags"`
	Content      string   `json:"content"`
	ContentHash  string   `json:"content_hash"`
	IsFolder     bool     `json:"is_folder"`
	FolderKey    string   `json:"folder_key"`
	SizeBytes    float64  `json:"size_bytes"`
	CreatedAt    string   `json:"created_at"`
	CreatedS     float64  `json:"created_s"`
	UpdatedAt    string   `json:"updated_at"`
	UpdatedS     float64  `json:"updated_s"`
}

func toDocument(d drive.SearchDoc) document {
	folders := d.Folders
	if folders == nil {
		folders = []string{}
	}
	return document{OrgID: d.OrgID, OwnerID: d.OwnerID, OwnerName: d.OwnerName, OwnerNameKey: strings.ToLower(d.OwnerName),
		Folders: folders, Name: d.Name, NameSort: strings.ToLower(d.Name), MimeType: d.MimeType, MimeGroup: d.MimeGroup,
		Description: d.Description, Tags: d.Tags, Content: d.Content, ContentHash: d.ContentHash, IsFolder: d.IsFolder,
		FolderKey: strconv.FormatBool(d.IsFolder), SizeBytes: float64(d.SizeBytes),
		CreatedAt: timeKey(d.CreatedAt.UnixMilli()), CreatedS: float64(floorDiv(d.CreatedAt.UnixMilli(), 1000)),
		UpdatedAt: timeKey(d.UpdatedAt.UnixMilli()), UpdatedS: float64(floorDiv(d.UpdatedAt.UnixMilli(), 1000))}
}

// Apply indexes docs, removes deletes and records cursor in one batch.
func (x *Index) Apply(ctx context.Context, docs []drive.SearchDoc, deletes []string, cursor int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b := x.bi.NewBatch()
	for _, id := range deletes {
		b.Delete(id)
	}
	for _, d := range docs {
		if err := b.Index(d.ID, toDocument(d)); err != nil {
			return fmt.Errorf("index %s: %w", d.ID, err)
		}
	}
	b.SetInternal(cursorKey, []byte(strconv.FormatInt(cursor, 10)))
	x.unwrittenMu.Lock()
	defer x.unwrittenMu.Unlock()
	if err := x.waitUnwritten(ctx, maxUnwritten-1); err != nil {
		return fmt.Errorf("index batch: %w", err)
	}
	written := make(chan error, 1)
	b.SetPersistedCallback(func(err error) { written <- err })
	if err := x.bi.Batch(b); err != nil {
		return fmt.Errorf("index batch: %w", err)
	}
	x.unwritten = append(x.unwritten, written)
	return nil
}

// waitUnwritten forgets the batches that are on disk and waits until at
// most n are not. The caller holds unwrittenMu.
func (x *Index) waitUnwritten(ctx context.Context, n int) error {
	for len(x.unwritten) > 0 {
		if len(x.unwritten) > n {
			select {
			case err := <-x.unwritten[0]:
				if err != nil {
					return fmt.Errorf("write an earlier batch: %w", err)
				}
			case <-ctx.Done():
				return ctx.Err()
			case <-x.stop:
				return errors.New("index closed")
			}
		} else {
			select {
			case err := <-x.unwritten[0]:
				if err != nil {
					return fmt.Errorf("write an earlier batch: %w", err)
				}
			default:
				return nil
			}
		}
		x.unwritten = x.unwritten[1:]
	}
	return nil
}

// Cursor returns the last event applied.
func (x *Index) Cursor() (int64, error) {
	v, err := x.bi.GetInternal(cursorKey)
	if err != nil {
		return 0, fmt.Errorf("index cursor: %w", err)
	}
	if len(v) == 0 {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("index cursor %q: %w", v, err)
	}
	return n, nil
}

// Count returns the number of documents.
func (x *Index) Count() (uint64, error) { return x.bi.DocCount() }

// Content returns the stored text of id and its content hash.
func (x *Index) Content(id string) (string, string, bool, error) {
	req := bleve.NewSearchRequestOptions(query.NewDocIDQuery([]string{id}), 1, 0, false)
	req.Fields = []string{"content", "content_hash"}
	res, err := x.bi.Search(req)
	if err != nil {
		return "", "", false, fmt.Errorf("index content: %w", err)
	}
	if len(res.Hits) == 0 {
		return "", "", false, nil
	}
	f := res.Hits[0].Fields
	hash, _ := f["content_hash"].(string)
	text, _ := f["content"].(string)
	return hash, text, true, nil
}

// OwnedBy returns the ids of at most limit documents of ownerID.
func (x *Index) OwnedBy(ctx context.Context, ownerID string, limit int) ([]string, error) {
	req := bleve.NewSearchRequestOptions(term("owner_id", ownerID), limit, 0, false)
	req.SortBy([]string{"_id"})
	res, err := x.bi.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("index owner's documents: %w", err)
	}
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids, nil
}

// releaseMapped releases the mapped pages (releasePages) of the segments of
// the index's current snapshot, which it holds open meanwhile, so that none
// of them is closed and unmapped under the release. The segments a merge is
// reading are among them until the merge's result replaces them; a search
// may still hold older ones, which it closes when it ends.
func (x *Index) releaseMapped() error {
	if x.scorch == nil {
		return nil
	}
	r, err := x.scorch.Reader()
	if err != nil {
		return fmt.Errorf("release the index's mapped pages: %w", err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil
	}
	var first error
	for _, ss := range snap.Segments() {
		// A segment on disk (zap's Segment) gives its mapping; one still
		// in memory has none.
		if seg, ok := ss.Segment().(interface{ Data() []byte }); ok {
			if err := releasePages(seg.Data()); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Close flushes and closes the index.
func (x *Index) Close() error {
	x.stopOnce.Do(func() {
		close(x.stop)
		if x.scorch != nil {
			openIndexes.Delete(x.scorch)
		}
	})
	<-x.done
	return x.bi.Close()
}

func term(field, v string) query.Query {
	q := query.NewTermQuery(v)
	q.SetField(field)
	return q
}

func anyTerm(field string, vs []string) query.Query {
	qs := make([]query.Query, 0, len(vs))
	for _, v := range vs {
		qs = append(qs, term(field, v))
	}
	return query.NewDisjunctionQuery(qs)
}

// textFields are the fields matched by text, with their weights for the
// highlights query.
var textFields = []struct {
	field string
	boost float64
}{{"name", 4}, {"tags", 2}, {"description", 1.5}, {"content", 1}}

// textQuery matches text: every word must be found in the name, the tags,
// the description or the content (the composite _all field), a match in the
// name scoring higher; the last word also matches as the beginning of a name
// word, so results come while typing. perField matches each field on its own
// instead of _all (for the highlights).
func textQuery(text string, perField bool) query.Query {
	fields := textFields
	if !perField {
		fields = []struct {
			field string
			boost float64
		}{{"name", 3}, {"_all", 1}}
	}
	words := strings.Fields(text)
	must := make([]query.Query, 0, len(words))
	for i, w := range words {
		var any []query.Query
		for _, f := range fields {
			m := query.NewMatchQuery(w)
			m.SetField(f.field)
			m.Analyzer = folded
			m.SetOperator(query.MatchQueryOperatorAnd)
			m.SetBoost(f.boost)
			any = append(any, m)
		}
		if prefix := strings.ToLower(asciiFold(w)); i == len(words)-1 && len([]rune(prefix)) >= 2 {
			p := query.NewPrefixQuery(prefix)
			p.SetField("name")
			p.SetBoost(2)
			any = append(any, p)
		}
		must = append(must, query.NewDisjunctionQuery(any))
	}
	return query.NewConjunctionQuery(must)
}

// A time is indexed as two fields (toDocument): the millisecond the store
// keeps, as a keyword whose order is the time's (timeKey), which sorting
// uses; and the whole second, as a number. Bleve indexes a number as 16 terms
// of decreasing precision, which is what makes a range fast; of a time in
// milliseconds (or nanoseconds, as its date fields keep) nearly every one of
// them is the document's own, and building their dictionaries was a large
// part of indexing a small file (BenchmarkIndexSmallFiles: some 15% more
// documents a second without them). Of the whole second, most are shared
// with the files written around it. A range stays exact to the millisecond:
// the whole seconds inside it match by number, the seconds at its edges by
// keyword, a term range over at most one second's files.

// timeKey is the keyword of a time in milliseconds since 1970: fixed-width
// decimal of the value with its sign bit flipped, so that the keywords sort
// as the times do, before 1970 too.
func timeKey(ms int64) string {
	u := strconv.FormatUint(uint64(ms)^(1<<63), 10)
	return strings.Repeat("0", 20-len(u)) + u
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// timeRange matches the documents whose time (keyField, secField) is within
// after and before, both included; a nil bound is no bound.
func timeRange(keyField, secField string, after, before *time.Time) query.Query {
	if after == nil && before == nil {
		return query.NewMatchAllQuery()
	}
	incl := true
	keys := func(lo, hi int64) query.Query {
		q := query.NewTermRangeInclusiveQuery(timeKey(lo), timeKey(hi), &incl, &incl)
		q.SetField(keyField)
		return q
	}
	var lo, hi int64
	var parts []query.Query
	var minS, maxS *float64
	if after != nil {
		// The first millisecond at or after the bound.
		lo = after.UnixMilli()
		if after.Nanosecond()%int(time.Millisecond) != 0 {
			lo++
		}
		s := floorDiv(lo, 1000)
		parts = append(parts, keys(lo, s*1000+999))
		next := float64(s + 1)
		minS = &next
	}
	if before != nil {
		hi = before.UnixMilli()
		s := floorDiv(hi, 1000)
		parts = append(parts, keys(s*1000, hi))
		prev := float64(s - 1)
		maxS = &prev
	}
	if after != nil && before != nil {
		if lo > hi {
			return query.NewMatchNoneQuery()
		}
		if floorDiv(lo, 1000) == floorDiv(hi, 1000) {
			return keys(lo, hi)
		}
	}
	if minS == nil || maxS == nil || *minS <= *maxS {
		q := query.NewNumericRangeInclusiveQuery(minS, maxS, &incl, &incl)
		q.SetField(secField)
		parts = append(parts, q)
	}
	return query.NewDisjunctionQuery(parts)
}

// build turns q into a Bleve query: the text and the filters, under the
// caller's visibility.
func build(q drive.SearchQuery) query.Query {
	visible := []query.Query{term("owner_id", q.OwnerID)}
	if len(q.SharedRoots) > 0 {
		// An item shared with the caller, and everything below a shared
		// folder: a term per folder, not per item (thousands of files
		// shared one by one are one id lookup each).
		visible = append(visible, query.NewDocIDQuery(q.SharedRoots))
	}
	if len(q.SharedFolders) > 0 {
		visible = append(visible, anyTerm("folders", q.SharedFolders))
	}
	// Owner and shared item ids belong to one organisation; the org term
	// keeps that true whatever the ids, at little cost once it is last.
	var must []query.Query
	if q.Text != "" {
		must = append(must, textQuery(q.Text, false))
	}
	if q.FolderID != "" {
		must = append(must, term("folders", q.FolderID))
	}
	if len(q.MimeTypes) > 0 {
		must = append(must, anyTerm("mime_type", q.MimeTypes))
	}
	if q.CreatedAfter != nil || q.CreatedBefore != nil {
		must = append(must, timeRange("created_at", "created_s", q.CreatedAfter, q.CreatedBefore))
	}
	if q.ModifiedAfter != nil || q.ModifiedBefore != nil {
		must = append(must, timeRange("updated_at", "updated_s", q.ModifiedAfter, q.ModifiedBefore))
	}
	if q.OwnerName != "" {
		must = append(must, term("owner_name_key", strings.ToLower(q.OwnerName)))
	}
	if q.IsFolder != nil {
		must = append(must, term("folder_key", strconv.FormatBool(*q.IsFolder)))
	}
	if q.MinSize != nil || q.MaxSize != nil {
		var lo, hi *float64
		if q.MinSize != nil {
			v := float64(*q.MinSize)
			lo = &v
		}
		if q.MaxSize != nil {
			v := float64(*q.MaxSize)
			hi = &v
		}
		incl := true
		r := query.NewNumericRangeInclusiveQuery(lo, hi, &incl, &incl)
		r.SetField("size_bytes")
		must = append(must, r)
	}
	must = append(must, query.NewDisjunctionQuery(visible), term("org_id", q.OrgID))
	return query.NewConjunctionQuery(must)
}

var sortFields = map[string]string{"name": "name_sort", "size_bytes": "size_bytes", "created_at": "created_at",
	"updated_at": "updated_at", "mime_type": "mime_type", "relevance": "_score"}

// Search runs q.
func (x *Index) Search(ctx context.Context, q drive.SearchQuery) (drive.IndexResult, error) {
	req := bleve.NewSearchRequestOptions(build(q), q.Limit, q.Offset, false)
	key := sortFields[q.SortBy]
	if key == "" {
		key = "_score"
	}
	if q.SortOrder == "desc" {
		key = "-" + key
	}
	// Ties: by name, then id, so pages are stable. Relevance needs none (equal
	// scores are rare, and reading a sort key of every match costs a quarter
	// of a search).
	if q.SortBy == "relevance" {
		req.SortBy([]string{key})
	} else {
		req.SortBy([]string{key, "name_sort", "_id"})
	}
	if q.Facets {
		req.AddFacet("mime_group", bleve.NewFacetRequest("mime_group", 20))
		req.AddFacet("owner_name", bleve.NewFacetRequest("owner_name", 50))
		req.AddFacet("is_folder", bleve.NewFacetRequest("folder_key", 2))
	}
	res, err := x.bi.SearchInContext(ctx, req)
	if err != nil {
		return drive.IndexResult{}, fmt.Errorf("index search: %w", err)
	}
	out := drive.IndexResult{Hits: make([]drive.IndexHit, 0, len(res.Hits)), Total: int(res.Total)}
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	hl, err := x.highlights(ctx, q.Text, ids)
	if err != nil {
		return drive.IndexResult{}, err
	}
	for _, id := range ids {
		out.Hits = append(out.Hits, drive.IndexHit{ID: id, Highlights: hl[id]})
	}
	if q.Facets {
		out.Facets = map[string]map[string]int{}
		for name, fr := range res.Facets {
			counts := map[string]int{}
			if fr.Terms != nil {
				for _, t := range fr.Terms.Terms() {
					counts[t.Term] = t.Count
				}
			}
			out.Facets[name] = counts
		}
	}
	return out, nil
}

// highlights returns the highlighted fragments of the hits ids by field:
// HTML, the text escaped and the matched words in <mark>. It is a second
// search over those few documents only, so that the main search does not read
// the word positions of every match.
func (x *Index) highlights(ctx context.Context, text string, ids []string) (map[string]map[string][]string, error) {
	out := map[string]map[string][]string{}
	if text == "" || len(ids) == 0 {
		return out, nil
	}
	req := bleve.NewSearchRequestOptions(query.NewConjunctionQuery([]query.Query{query.NewDocIDQuery(ids), textQuery(text, true)}), len(ids), 0, false)
	req.Highlight = bleve.NewHighlightWithStyle(html.Name)
	req.Highlight.Fields = []string{"name", "content", "description", "tags"}
	res, err := x.bi.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("index highlights: %w", err)
	}
	for _, h := range res.Hits {
		m := map[string][]string{}
		for field, frags := range h.Fragments {
			for _, f := range frags {
				if strings.Contains(f, "<mark>") {
					m[field] = append(m[field], f)
				}
			}
		}
		out[h.ID] = m
	}
	return out, nil
}
