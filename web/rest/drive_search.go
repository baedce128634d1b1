package rest

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"atrium/app"
	"atrium/app/drive"
)

// SearchQuery are the query parameters of drive search (spec §4.3).
type SearchQuery struct {
	Q              string   `query:"q" maxLength:"500" doc:"Words to find in names, tags, descriptions and the text of documents (text, Markdown, HTML, PDF, DOCX, ODT, XLSX, ODS, PPTX). Accents and case are ignored; the last word also matches the beginning of a name word. Empty: every file, newest first."`
	Limit          int      `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Hits per page."`
	Offset         int      `query:"offset" minimum:"0" default:"0" doc:"Hits to skip (offset + limit ≤ 10,000)."`
	MimeTypes      []string `query:"mime_types,explode" doc:"Only these mime types."`
	Facets         bool     `query:"facets" default:"false" doc:"Also count the matches by mime_group, owner_name and is_folder (facet_distribution)."`
	CreatedAfter   string   `query:"created_after" maxLength:"40" doc:"Created at or after: YYYY-MM-DD (midnight UTC) or an RFC 3339 time."`
	CreatedBefore  string   `query:"created_before" maxLength:"40" doc:"Created at or before (same formats)."`
	ModifiedAfter  string   `query:"modified_after" maxLength:"40" doc:"Modified at or after (same formats)."`
	ModifiedBefore string   `query:"modified_before" maxLength:"40" doc:"Modified at or before (same formats)."`
	OwnerName      string   `query:"owner_name" maxLength:"255" doc:"Only items of the owner with this display name (case-insensitive, whole name)."`
	FolderID       string   `query:"folder_id" maxLength:"200" doc:"Only items below this folder (any depth). An Atrium extension."`
	IsFolder       string   `query:"is_folder" enum:"true,false" doc:"Only folders (true) or only files (false)."`
	MinSize        int64    `query:"min_size" minimum:"0" doc:"Only items of at least this many bytes."`
	MaxSize        int64    `query:"max_size" minimum:"0" doc:"Only items of at most this many bytes."`
	SortBy         string   `query:"sort_by" enum:"relevance,name,size_bytes,created_at,updated_at,mime_type" doc:"Default relevance when q is given, else updated_at."`
	SortOrder      string   `query:"sort_order" enum:"asc,desc" doc:"Default desc (asc for name and mime_type)."`

	maxSet bool
}

// Resolve notes whether max_size was given (0 is a real bound).
func (q *SearchQuery) Resolve(ctx huma.Context) []error {
	q.maxSet = ctx.Query("max_size") != ""
	return nil
}

func (q SearchQuery) params() drive.SearchParams {
	sp := drive.SearchParams{Q: q.Q, Limit: q.Limit, Offset: q.Offset, MimeTypes: q.MimeTypes, Facets: q.Facets,
		CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore, ModifiedAfter: q.ModifiedAfter,
		ModifiedBefore: q.ModifiedBefore, OwnerName: q.OwnerName, FolderID: q.FolderID, SortBy: q.SortBy, SortOrder: q.SortOrder}
	if q.IsFolder != "" {
		b := q.IsFolder == "true"
		sp.IsFolder = &b
	}
	if q.MinSize > 0 {
		sp.MinSize = &q.MinSize
	}
	if q.maxSet {
		sp.MaxSize = &q.MaxSize
	}
	return sp
}

func registerDriveSearch(api huma.API, d Deps) {
	s := d.Drive
	o := status(op(http.MethodGet, "/drive/search", "searchDrive", "Search the drive", "Drive", app.ScopeDriveRead), http.StatusOK)
	o.Description = "Finds the caller's files and folders and those shared with them, by name, tags, description and the text of " +
		"documents, with filters, sorting and optional facets. Hits are FileItems with `highlights`: per field, fragments of " +
		"HTML with the matched words in `<mark>`. A change is searchable as soon as it is committed. While the index is " +
		"rebuilt (first start, after a restore, or when it was found damaged) → 503 `index_rebuilding` with `Retry-After`."
	huma.Register(api, errs(o, http.StatusNotFound, http.StatusServiceUnavailable), func(ctx context.Context, in *SearchQuery) (*body[drive.SearchResult], error) {
		r, err := s.DerivedData().Search(ctx, principal(ctx), in.params())
		return out(r), err
	})
}
