package ui

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
	"atrium/web/presign"
)

// The drive's pages: a folder (/drive is the root, /drive/{id} a folder),
// what others share with the person (/drive/shared), their favourites
// (/drive/favorites), their trash (/drive/trash) and search results
// (/drive/search?q=). The lists are rendered here from the drive service's
// Browse, SharedWithMe, Favorites, TrashList and Search —
// the methods the REST operations call — one page of items at a time, so a
// folder of any size answers fast. Changes (upload over tus, new folder,
// rename, move, copy, share, trash) are made by the page's scripts
// (assets/drive.js and the drive_*.js it names, one per feature) through the
// REST API and tus, which then re-read the page's list.

// drivePerPage is the default number of items per page of a list.
const drivePerPage = 100

// driveData is a drive page.
type driveData struct {
	// View is folder, shared, favorites, trash or search.
	View string
	// FolderID is the folder shown ("" for the root and the other views).
	FolderID string
	// Heading is the page's h1.
	Heading string
	Crumbs  []crumb
	// CanWrite says whether the person may add to the folder shown.
	CanWrite bool
	Items    []driveItem
	Total    int
	Page     int
	Pages    int
	PrevURL  string
	NextURL  string
	// Columns are the sortable column headings.
	Columns []sortColumn
	Usage   driveUsage
	Query   string
	Facets  []facetGroup
	// SearchNote explains a search that could not run (e.g. the index is rebuilt).
	SearchNote string
}

// driveItem is a row of a list.
type driveItem struct {
	drive.File
	Size     string
	Modified time.Time
	// Href opens a folder or downloads a file.
	Href string
	// Snippets are the search highlights (search view only).
	Snippets [][]textPart
	// Editable: the online editor opens the file ("Open in editor").
	Editable bool
}

// crumb is a folder of the breadcrumbs; Current is the folder shown.
type crumb struct {
	ID, Name string
	Current  bool
}

// textPart is a piece of a search highlight: text, marked or not.
type textPart struct {
	Text string
	Mark bool
}

type facetGroup struct {
	Name   string
	Values []facetValue
}

type facetValue struct {
	Label string
	Count int
}

type sortColumn struct {
	Key, Label string
	Href       string
	// Sort is the column's aria-sort: ascending, descending or "".
	Sort string
}

type driveUsage struct {
	Used, Quota string
	// Percent is used of the quota (0–100); Limited is false when no quota.
	Percent int
	Limited bool
}

// driveSorts maps the page's sort keys to the service's sort fields and
// their default order.
var driveSorts = map[string]struct{ field, order string }{
	"name":     {"name", "asc"},
	"size":     {"size_bytes", "desc"},
	"modified": {"updated_at", "desc"},
}

// listParams reads the list parameters of a drive page: sort (name, size,
// modified), order (asc, desc), page and per_page. Values out of range fall
// back to the defaults: a page always answers.
func listParams(q url.Values) (drive.ListParams, string, string) {
	sort := q.Get("sort")
	s, ok := driveSorts[sort]
	if !ok {
		sort, s = "name", driveSorts["name"]
	}
	order := q.Get("order")
	if order != "asc" && order != "desc" {
		order = s.order
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per < 1 || per > drive.MaxPerPage {
		per = drivePerPage
	}
	return drive.ListParams{SortBy: s.field, SortOrder: order, Page: page, PerPage: per, Offset: -1}, sort, order
}

// withQuery returns path with q's parameters and the given ones set.
func withQuery(path string, q url.Values, set ...string) string {
	c := url.Values{}
	for k, v := range q {
		c[k] = v
	}
	for i := 0; i+1 < len(set); i += 2 {
		if set[i+1] == "" {
			c.Del(set[i])
		} else {
			c.Set(set[i], set[i+1])
		}
	}
	if len(c) == 0 {
		return path
	}
	return path + "?" + c.Encode()
}

func (u *UI) driveRoot(w http.ResponseWriter, r *http.Request, v *viewer) {
	u.driveFolder(w, r, v, "")
}

func (u *UI) driveFolderPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	u.driveFolder(w, r, v, r.PathValue("id"))
}

func (u *UI) driveFolder(w http.ResponseWriter, r *http.Request, v *viewer, id string) {
	lp, sort, order := listParams(r.URL.Query())
	fc, err := u.cfg.Drive.Browse(r.Context(), v.P, id, lp)
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	d := driveData{View: "folder", FolderID: id, Heading: "My files", CanWrite: true}
	for i, b := range fc.Breadcrumbs {
		d.Crumbs = append(d.Crumbs, crumb{ID: b.ID, Name: b.Name, Current: i == len(fc.Breadcrumbs)-1})
	}
	if fc.Folder != nil {
		d.Heading = fc.Folder.Name
		d.CanWrite = fc.Folder.Permission == drive.PermOwner || fc.Folder.Permission == drive.PermEdit
	}
	u.showDrive(w, r, v, d, fc.Listing, sort, order)
}

// driveListView serves a list view of the drive other than a folder: view
// names it in the page, heading titles it, list is the drive service's
// listing (SharedWithMe, Favorites, TrashList).
func (u *UI) driveListView(view, heading string, list func(ctx context.Context, p *app.Principal, lp drive.ListParams) (drive.Listing, error)) func(http.ResponseWriter, *http.Request, *viewer) {
	return func(w http.ResponseWriter, r *http.Request, v *viewer) {
		lp, sort, order := listParams(r.URL.Query())
		l, err := list(r.Context(), v.P, lp)
		if err != nil {
			u.fail(w, r, v, err)
			return
		}
		u.showDrive(w, r, v, driveData{View: view, Heading: heading}, l, sort, order)
	}
}

// driveSearch shows the results of the drive's full-text search (the
// service's Search, as GET /api/v1/drive/search) with their highlights and
// facets. A search the index cannot answer now shows why, with 200.
func (u *UI) driveSearch(w http.ResponseWriter, r *http.Request, v *viewer) {
	q := r.URL.Query()
	text := strings.TrimSpace(q.Get("q"))
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	const per = 50
	d := driveData{View: "search", Heading: "Search", Query: text, Page: page}
	if text != "" {
		d.Heading = "Results for “" + text + "”"
	}
	d.Usage = u.driveUsage(r, v)
	if text == "" {
		u.render(w, r, http.StatusOK, "drive", page2(v, d))
		return
	}
	offset := min((page-1)*per, 10000-per)
	res, err := u.cfg.Drive.DerivedData().Search(r.Context(), v.P, drive.SearchParams{Q: text, Limit: per, Offset: offset, Facets: true})
	if err != nil {
		code := app.ErrorCode(err)
		if code == app.EInternal || code == "" {
			u.fail(w, r, v, err)
			return
		}
		d.SearchNote = message(err)
		u.render(w, r, http.StatusOK, "drive", page2(v, d))
		return
	}
	d.Total = res.TotalHits
	d.Pages = (min(res.TotalHits, 10000) + per - 1) / per
	for _, h := range res.Hits {
		it := makeItem(h.File)
		for _, field := range []string{"name", "content", "description", "tags"} {
			for _, f := range h.Highlights[field] {
				it.Snippets = append(it.Snippets, highlightParts(f))
			}
		}
		d.Items = append(d.Items, it)
	}
	u.markEditable(r, d.Items)
	d.Facets = facetGroups(res.FacetDistribution)
	if page > 1 {
		d.PrevURL = withQuery("/drive/search", q, "page", strconv.Itoa(page-1))
	}
	if page < d.Pages {
		d.NextURL = withQuery("/drive/search", q, "page", strconv.Itoa(page+1))
	}
	u.render(w, r, http.StatusOK, "drive", page2(v, d))
}

// driveDownload sends the browser to a fresh presigned URL of the file (the
// service's DownloadOrRestore, as the REST download). An archived file is
// restored in the background: the page says when to try again.
func (u *UI) driveDownload(w http.ResponseWriter, r *http.Request, v *viewer) {
	l, info, err := u.cfg.Drive.Archiving().DownloadOrRestore(r.Context(), v.P, r.PathValue("id"))
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	if info != nil {
		u.render(w, r, http.StatusOK, "message", page{Title: "Restoring the file", V: v,
			Flash: fmt.Sprintf("The file is archived and is being restored. Try the download again in about %d seconds.", info.RetryAfterSeconds)})
		return
	}
	http.Redirect(w, r, l.URL, http.StatusSeeOther)
}

// driveZip streams a folder as a ZIP archive (the service's
// DownloadFolderZip, as the REST download.zip); a refusal (too many items, not
// a folder) is a page saying why, sent before any byte of the archive.
func (u *UI) driveZip(w http.ResponseWriter, r *http.Request, v *viewer) {
	z, err := u.cfg.Drive.DerivedData().DownloadFolderZip(r.Context(), v.P, r.PathValue("id"))
	if err != nil {
		u.fail(w, r, v, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", presign.ContentDisposition(z.Name, false))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := z.WriteTo(r.Context(), w); err != nil {
		if r.Context().Err() == nil {
			u.log.Error("folder zip cut short", "path", r.URL.Path, "err", err)
		}
		// A truncated archive must not pass for a whole one.
		panic(http.ErrAbortHandler)
	}
}

func page2(v *viewer, d driveData) page {
	title := d.Heading
	if d.View == "folder" && d.FolderID == "" {
		title = "Files"
	}
	return page{Title: title, V: v, Data: d}
}

// showDrive renders a list view.
func (u *UI) showDrive(w http.ResponseWriter, r *http.Request, v *viewer, d driveData, l drive.Listing, sort, order string) {
	q := r.URL.Query()
	path := r.URL.Path
	d.Total, d.Page, d.Pages = l.Total, l.Page, l.TotalPages
	for _, f := range l.Items {
		d.Items = append(d.Items, makeItem(f))
	}
	if d.View != "trash" {
		u.markEditable(r, d.Items)
	}
	if d.Page > 1 {
		d.PrevURL = withQuery(path, q, "page", strconv.Itoa(d.Page-1))
	}
	if d.Page < d.Pages {
		d.NextURL = withQuery(path, q, "page", strconv.Itoa(d.Page+1))
	}
	for _, c := range []struct{ key, label string }{{"name", "Name"}, {"size", "Size"}, {"modified", "Modified"}} {
		col := sortColumn{Key: c.key, Label: c.label}
		if c.key == "modified" && d.View == "trash" {
			col.Label = "Deleted"
		}
		next := driveSorts[c.key].order
		if c.key == sort {
			col.Sort = map[string]string{"asc": "ascending", "desc": "descending"}[order]
			next = map[string]string{"asc": "desc", "desc": "asc"}[order]
		}
		col.Href = withQuery(path, q, "sort", c.key, "order", next, "page", "")
		d.Columns = append(d.Columns, col)
	}
	d.Usage = u.driveUsage(r, v)
	u.render(w, r, http.StatusOK, "drive", page2(v, d))
}

func (u *UI) driveUsage(r *http.Request, v *viewer) driveUsage {
	us, err := u.cfg.Drive.Storage(r.Context(), v.P)
	if err != nil {
		return driveUsage{}
	}
	out := driveUsage{Used: humanBytes(us.UsedBytes), Quota: humanBytes(us.QuotaBytes), Limited: us.QuotaBytes > 0}
	if out.Limited {
		out.Percent = int(min(100, us.UsedBytes*100/us.QuotaBytes))
	}
	return out
}

func makeItem(f drive.File) driveItem {
	it := driveItem{File: f, Modified: f.UpdatedAt}
	if f.IsFolder {
		it.Href = "/drive/" + url.PathEscape(f.ID)
	} else {
		it.Size = humanBytes(f.SizeBytes)
		it.Href = "/drive/" + url.PathEscape(f.ID) + "/download"
	}
	return it
}

// highlightParts splits a search highlight (HTML: escaped text with the
// matched words in <mark>) into text pieces, so that the page shows it as
// text and never as markup.
func highlightParts(frag string) []textPart {
	var out []textPart
	for frag != "" {
		i := strings.Index(frag, "<mark>")
		if i < 0 {
			out = append(out, textPart{Text: html.UnescapeString(frag)})
			break
		}
		if i > 0 {
			out = append(out, textPart{Text: html.UnescapeString(frag[:i])})
		}
		frag = frag[i+len("<mark>"):]
		j := strings.Index(frag, "</mark>")
		if j < 0 {
			j = len(frag)
		}
		out = append(out, textPart{Text: html.UnescapeString(frag[:j]), Mark: true})
		frag = strings.TrimPrefix(frag[j:], "</mark>")
	}
	return out
}

var facetNames = map[string]string{"mime_group": "Type", "owner_name": "Owner", "is_folder": "Kind"}

func facetGroups(dist map[string]map[string]int) []facetGroup {
	var out []facetGroup
	for _, key := range []string{"mime_group", "is_folder", "owner_name"} {
		vals := dist[key]
		if len(vals) == 0 {
			continue
		}
		g := facetGroup{Name: facetNames[key]}
		for label, n := range vals {
			if key == "is_folder" {
				label = map[string]string{"true": "Folders", "false": "Files"}[label]
			}
			g.Values = append(g.Values, facetValue{Label: label, Count: n})
		}
		sortFacets(g.Values)
		out = append(out, g)
	}
	return out
}

func sortFacets(vs []facetValue) {
	slices.SortFunc(vs, func(a, b facetValue) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Label, b.Label)
	})
}

// humanBytes formats a size for people: 0 B, 999 B, 1.5 KB, 12 MB, 1.2 GB.
func humanBytes(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, unit := range []string{"KB", "MB", "GB", "TB", "PB"} {
		f /= 1000
		if f < 1000 || unit == "PB" {
			if f < 10 {
				return strconv.FormatFloat(f, 'f', 1, 64) + " " + unit
			}
			return strconv.FormatFloat(f, 'f', 0, 64) + " " + unit
		}
	}
	return ""
}
