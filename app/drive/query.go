package drive

// Listing queries: filters, sorting and paging of folder listings, the
// trash, the shared-with-me list and the favourites.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"atrium/app"
)

// Listing kinds.
const (
	ListFolder = "folder"
	ListTrash  = "trash"
	ListShared = "shared"
	// ListFavorites is the owner's items marked favourite, from anywhere in
	// their drive (not trashed, confirmed).
	ListFavorites = "favorites"
)

// List limits (spec §8).
const (
	DefaultPerPage = 50
	MaxPerPage     = 500
)

// Filter is one parsed `field:op:value` expression; Value is a string, an
// int64, a bool or a time.Time by field.
type Filter struct {
	Field string
	Op    string
	Value any
}

// Query is a listing: a folder's children, the trash, what is shared with the
// caller or the owner's favourites.
type Query struct {
	Kind     string
	OrgID    string
	OwnerID  string // folder, trash, favorites
	ParentID string // folder; "" is the root
	UserID   string // shared: the caller
	Now      time.Time

	Q         string
	SortBy    string
	SortDesc  bool
	Offset    int
	Limit     int
	Filters   []Filter // ANDed
	OrFilters []Filter // ORed (at least one holds)
	MimeTypes []string
	MimeGroup string
	IsFolder  *bool
}

// ListParams are the list parameters of browse, trash, shared and favourites as a client sent them.
type ListParams struct {
	Q         string
	SortBy    string
	SortOrder string
	Page      int
	PerPage   int
	Limit     int // alternative to per_page
	Offset    int // alternative to page; -1 when absent
	Filter    []string
	OrFilter  []string
	MimeTypes []string
	MimeGroup string
	IsFolder  *bool
}

var filterFields = map[string]string{
	"name": "string", "mime_type": "string", "size_bytes": "int", "created_at": "time",
	"updated_at": "time", "is_favorite": "bool", "owner_id": "string",
}

var filterOps = map[string]bool{"eq": true, "ne": true, "gt": true, "gte": true, "lt": true, "lte": true, "contains": true, "prefix": true}

// SortFields are the accepted sort_by values.
var SortFields = []string{"name", "size_bytes", "created_at", "updated_at", "mime_type"}

// ParseFilter parses one `field:op:value` expression; location names it in errors.
func ParseFilter(location, expr string) (Filter, error) {
	parts := strings.SplitN(expr, ":", 3)
	if len(parts) != 3 {
		return Filter{}, app.Invalid(location, "A filter is field:op:value, e.g. size_bytes:gt:1024.", expr)
	}
	f := Filter{Field: parts[0], Op: parts[1]}
	kind, ok := filterFields[f.Field]
	if !ok {
		return f, app.Invalid(location, "Unknown filter field "+strconv.Quote(f.Field)+"; use name, mime_type, size_bytes, created_at, updated_at, is_favorite or owner_id.", expr)
	}
	if !filterOps[f.Op] {
		return f, app.Invalid(location, "Unknown filter operator "+strconv.Quote(f.Op)+"; use eq, ne, gt, gte, lt, lte, contains or prefix.", expr)
	}
	raw := parts[2]
	if (f.Op == "contains" || f.Op == "prefix") && kind != "string" {
		return f, app.Invalid(location, fmt.Sprintf("The operator %s applies to text fields only.", f.Op), expr)
	}
	switch kind {
	case "string":
		f.Value = raw
	case "int":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return f, app.Invalid(location, "The value of "+f.Field+" must be an integer.", expr)
		}
		f.Value = n
	case "bool":
		b, err := strconv.ParseBool(raw)
		if err != nil || (f.Op != "eq" && f.Op != "ne") {
			return f, app.Invalid(location, "is_favorite takes eq or ne with true or false.", expr)
		}
		f.Value = b
	case "time":
		t, err := parseTime(raw)
		if err != nil {
			return f, app.Invalid(location, "The value of "+f.Field+" must be an RFC 3339 date-time or a YYYY-MM-DD date.", expr)
		}
		f.Value = t
	}
	return f, nil
}

func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02", s)
}

// query validates list parameters into a Query of kind.
func (lp ListParams) query(kind string) (Query, error) {
	q := Query{Kind: kind, Q: strings.TrimSpace(lp.Q), MimeTypes: lp.MimeTypes, MimeGroup: lp.MimeGroup, IsFolder: lp.IsFolder}
	var v app.Validator
	switch lp.SortBy {
	case "":
		q.SortBy = "name"
	case "name", "size_bytes", "created_at", "updated_at", "mime_type":
		q.SortBy = lp.SortBy
	default:
		v.Add("query.sort_by", "Sort by name, size_bytes, created_at, updated_at or mime_type.", lp.SortBy)
	}
	switch strings.ToLower(lp.SortOrder) {
	case "", "desc":
		q.SortDesc = lp.SortOrder != "" || lp.SortBy != ""
		if lp.SortOrder == "" && q.SortBy == "name" && lp.SortBy == "" {
			q.SortDesc = false // no sort asked: names A→Z
		}
	case "asc":
	default:
		v.Add("query.sort_order", "Sort order is asc or desc.", lp.SortOrder)
	}
	if lp.MimeGroup != "" && !validGroup(lp.MimeGroup) {
		v.Add("query.mime_group", "Unknown mime group; use one of "+strings.Join(MimeGroups, ", ")+".", lp.MimeGroup)
	}
	for i, e := range lp.Filter {
		f, err := ParseFilter(fmt.Sprintf("query.filter[%d]", i), e)
		if err != nil {
			v.Add(fmt.Sprintf("query.filter[%d]", i), app.ErrorMessage(err), e)
			continue
		}
		q.Filters = append(q.Filters, f)
	}
	for i, e := range lp.OrFilter {
		f, err := ParseFilter(fmt.Sprintf("query.or_filter[%d]", i), e)
		if err != nil {
			v.Add(fmt.Sprintf("query.or_filter[%d]", i), app.ErrorMessage(err), e)
			continue
		}
		q.OrFilters = append(q.OrFilters, f)
	}
	per := lp.PerPage
	if lp.Limit > 0 {
		per = lp.Limit
	}
	if per == 0 {
		per = DefaultPerPage
	}
	v.Check(per >= 1 && per <= MaxPerPage, "query.per_page", fmt.Sprintf("per_page (or limit) is 1 to %d.", MaxPerPage), per)
	page := max(lp.Page, 1)
	q.Limit = per
	q.Offset = (page - 1) * per
	if lp.Offset > 0 {
		q.Offset = lp.Offset
	}
	v.Check(lp.Offset >= -1, "query.offset", "offset must be 0 or more.", lp.Offset)
	return q, v.Err()
}

func validGroup(g string) bool {
	for _, m := range MimeGroups {
		if m == g {
			return true
		}
	}
	return false
}

// Listing is one page of items (Paginated_FileItem_).
type Listing struct {
	Items      []File `json:"items"`
	Page       int    `json:"page"`
	PerPage    int    `json:"per_page"`
	Total      int    `json:"total"`
	TotalPages int    `json:"total_pages"`
	Offset     int    `json:"offset"`
}

// FolderContents is a folder's listing with where it is.
type FolderContents struct {
	Folder      *File        `json:"folder"`
	Breadcrumbs []Breadcrumb `json:"breadcrumbs"`
	Listing
}

func makeListing(items []File, total int, q Query) Listing {
	if items == nil {
		items = []File{}
	}
	pages := 0
	if q.Limit > 0 {
		pages = (total + q.Limit - 1) / q.Limit
	}
	return Listing{Items: items, Page: q.Offset/q.Limit + 1, PerPage: q.Limit, Total: total, TotalPages: pages, Offset: q.Offset}
}
