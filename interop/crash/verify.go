package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// verify checks, after a restart, what the journal promises: TUS uploads
// resume from the server's offset and finish; every acknowledged write is
// present with the acknowledged content (or a later one that was tried);
// every write that was tried but not acknowledged is absent or whole; every
// file downloads (REST and WebDAV) with its hash; the search index finds what
// SQLite holds. Writes of the last round are all checked, older ones by
// sample (all of them with -full).
func verify(ctx context.Context, full bool) error {
	j, st, err := loadJournal()
	if err != nil {
		return err
	}
	defer j.Close()
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Round)|1<<32))
	scope := map[string]bool{}
	for _, k := range st.Order {
		o := st.Objs[k]
		scope[k] = full || o.LastRound >= cfg.Round-1 || rng.IntN(5) == 0
	}

	// 1. TUS uploads that were not finished resume where the server says.
	for _, k := range st.Order {
		o := st.Objs[k]
		if o.Kind != "file" || o.Via != "tus" || o.Acked || o.URL == "" {
			continue
		}
		resumeTus(ctx, j, o)
	}
	recs, err := readJournal(journalPath()) // with the resumed uploads
	if err != nil {
		return err
	}
	st = fold(recs)

	// 2. Files.
	items, err := listing(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	checkFile := func(o *Obj, it fileItem) {
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		want := strings.TrimPrefix(it.ContentHash, "sha256:")
		got, n, err := downloadREST(ctx, it.ID)
		switch {
		case err != nil:
			fail("files", "%s (%s): REST download: %v", o.Key, it.ID, err)
		case got != want || n != it.Size:
			fail("files", "%s (%s): REST download has sha256 %s (%d bytes), the listing says %s (%d bytes)", o.Key, it.ID, got, n, want, it.Size)
		}
		counted("files", 1)
		p := "/api/v1/webdav/" + o.Key
		if o.Parent != "" {
			p = "/api/v1/webdav/" + o.Parent + "/" + o.Key
		}
		r, err := do(ctx, call{Method: "GET", Path: p, Basic: true})
		switch {
		case err != nil:
			fail("webdav", "GET %s: %v", p, err)
		case r.Status != 200:
			fail("webdav", "GET %s: %s", p, r)
		case sum(r.Body) != want:
			fail("webdav", "GET %s: sha256 %s (%d bytes), the listing says %s", p, sum(r.Body), len(r.Body), want)
		}
		counted("webdav", 1)
	}
	seen := map[string]bool{}
	for _, k := range st.Order {
		o := st.Objs[k]
		if o.Kind != "file" {
			continue
		}
		it, ok := items[o.Parent+"/"+o.Key]
		seen[o.Parent+"/"+o.Key] = true
		h := strings.TrimPrefix(it.ContentHash, "sha256:")
		switch {
		case o.Acked && !ok:
			fail("files", "%s: acknowledged (%s, round %d) but not in the drive listing", o.Key, o.Via, o.AckRound)
		case o.Acked && !o.Allowed[h]:
			fail("files", "%s: content_hash %s is neither the acknowledged %s nor one tried after it", o.Key, h, o.AckHash)
		case !o.Acked && ok && !o.Tried[h]:
			fail("files", "%s: never acknowledged, listed with content_hash %s that was never sent", o.Key, h)
		case o.Acked && o.ID != "" && ok && it.ID != o.ID:
			fail("files", "%s: acknowledged as file %s, listed as %s", o.Key, o.ID, it.ID)
		}
		if ok && (scope[k] || !o.Acked) {
			wg.Add(1)
			go checkFile(o, it)
		}
	}
	for name, it := range items {
		if !seen[name] && strings.HasPrefix(it.Name, "crash-") {
			fail("files", "%s (%s) is in the drive but the driver never sent it", name, it.ID)
		}
	}
	wg.Wait()

	// 3. Contacts and events.
	verifyContacts(ctx, st, scope)
	verifyEvents(ctx, st, scope)

	// 4. Search.
	verifySearch(ctx, st, items, scope)
	return nil
}

func resumeTus(ctx context.Context, j *Journal, o *Obj) {
	counted("tus", 1)
	auth := map[string]string{"Authorization": "Bearer " + cfg.Token, "Tus-Resumable": "1.0.0"}
	r, err := do(ctx, call{Method: "HEAD", Path: o.URL, Raw: true, Header: auth})
	if err != nil {
		fail("tus", "HEAD %s (%s): %v", o.URL, o.Key, err)
		return
	}
	if r.Status != 200 {
		fail("tus", "HEAD %s (%s): %d; the upload was acknowledged up to %d bytes", o.URL, o.Key, r.Status, o.AckOffset)
		return
	}
	off, err := strconv.ParseInt(r.Header.Get("Upload-Offset"), 10, 64)
	if err != nil || off < o.AckOffset || off > o.Size {
		fail("tus", "HEAD %s (%s): Upload-Offset %q, acknowledged %d of %d", o.URL, o.Key, r.Header.Get("Upload-Offset"), o.AckOffset, o.Size)
		return
	}
	if l := r.Header.Get("Upload-Length"); l != strconv.FormatInt(o.Size, 10) {
		fail("tus", "HEAD %s (%s): Upload-Length %q, want %d", o.URL, o.Key, l, o.Size)
	}
	h := ""
	for k := range o.Tried {
		h = k
	}
	if off == o.Size {
		id := r.Header.Get("Atrium-File-Id")
		if r.Header.Get("Atrium-Upload-Status") != "done" || id == "" {
			fail("tus", "HEAD %s (%s): complete but status %q file %q", o.URL, o.Key, r.Header.Get("Atrium-Upload-Status"), id)
			return
		}
		j.Add(Rec{Op: "ack", Kind: "file", Key: o.Key, Via: "tus", ID: id, Hash: h, Round: cfg.Round})
		return
	}
	if _, err := tusPatch(ctx, j, o.Key, o.URL, tusContent(o.Seed, o.Size), h, off, 0); err != nil {
		fail("tus", "resume %s (%s) at %d: %v", o.URL, o.Key, off, err)
	}
}

type fileItem struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	IsFolder    bool   `json:"is_folder"`
	Size        int64  `json:"size_bytes"`
	ContentHash string `json:"content_hash"`
	Status      string `json:"status"`
}

// listing returns the files of the root and of the WebDAV folder by
// "folder/name" ("" for the root).
func listing(ctx context.Context) (map[string]fileItem, error) {
	out := map[string]fileItem{}
	var davID string
	for _, folder := range []string{"", davFolder} {
		if folder != "" && davID == "" {
			return nil, fmt.Errorf("no folder %q in the drive", folder)
		}
		for page := 1; ; page++ {
			p := "/api/v1/drive/browse?per_page=500&page=" + strconv.Itoa(page)
			if folder != "" {
				p = "/api/v1/drive/browse/" + davID + "?per_page=500&page=" + strconv.Itoa(page)
			}
			r, err := do(ctx, call{Method: "GET", Path: p})
			if err != nil || r.Status != 200 {
				return nil, fmt.Errorf("browse %s: %v %v", p, r, err)
			}
			var fc struct {
				Items      []fileItem `json:"items"`
				TotalPages int        `json:"total_pages"`
			}
			if err := r.decode(&fc); err != nil {
				return nil, err
			}
			for _, it := range fc.Items {
				if it.IsFolder {
					if folder == "" && it.Name == davFolder {
						davID = it.ID
					}
					continue
				}
				out[folder+"/"+it.Name] = it
			}
			if page >= fc.TotalPages {
				break
			}
		}
	}
	return out, nil
}

func downloadREST(ctx context.Context, id string) (string, int64, error) {
	r, err := do(ctx, call{Method: "GET", Path: "/api/v1/drive/" + id + "/download"})
	if err != nil {
		return "", 0, err
	}
	if r.Status != 200 {
		return "", 0, fmt.Errorf("download: %s", r)
	}
	var l struct {
		URL string `json:"url"`
	}
	if err := r.decode(&l); err != nil {
		return "", 0, err
	}
	if !strings.HasPrefix(l.URL, "http") {
		l.URL = cfg.URL + l.URL
	}
	r, err = do(ctx, call{Method: "GET", Path: l.URL, Raw: true})
	if err != nil {
		return "", 0, err
	}
	if r.Status != 200 {
		return "", 0, fmt.Errorf("GET presigned URL: %s", r)
	}
	return sum(r.Body), int64(len(r.Body)), nil
}

func verifyContacts(ctx context.Context, st *State, scope map[string]bool) {
	byFirst := map[string][]string{}
	var book string
	for _, k := range st.Order {
		if o := st.Objs[k]; o.Kind == "contact" {
			book = o.Parent
			break
		}
	}
	if book == "" {
		return
	}
	r, err := do(ctx, call{Method: "GET", Path: "/api/v1/contacts/books/" + book})
	if err != nil || r.Status != 200 {
		fail("contacts", "list book %s: %v %v", book, r, err)
		return
	}
	var list []struct {
		ID        string `json:"id"`
		FirstName string `json:"first_name"`
	}
	if err := r.decode(&list); err != nil {
		fail("contacts", "%v", err)
		return
	}
	for _, c := range list {
		byFirst[c.FirstName] = append(byFirst[c.FirstName], c.ID)
	}
	for _, k := range st.Order {
		o := st.Objs[k]
		if o.Kind != "contact" {
			continue
		}
		ids := byFirst["crash-"+o.Key]
		switch {
		case len(ids) > 1:
			fail("contacts", "%s: %d contacts (%v), one was sent", o.Key, len(ids), ids)
			continue
		case o.Acked && len(ids) == 0:
			fail("contacts", "%s (%s): acknowledged in round %d, not in the address book", o.Key, o.ID, o.AckRound)
			continue
		case len(ids) == 0:
			continue
		case o.Acked && ids[0] != o.ID:
			fail("contacts", "%s: acknowledged as %s, listed as %s", o.Key, o.ID, ids[0])
		}
		if !scope[k] && o.Acked {
			continue
		}
		counted("contacts", 1)
		r, err := do(ctx, call{Method: "GET", Path: "/api/v1/contacts/books/" + book + "/" + ids[0]})
		if err != nil || r.Status != 200 {
			fail("contacts", "%s: GET: %v %v", o.Key, r, err)
			continue
		}
		var c contactDetail
		if err := r.decode(&c); err != nil {
			fail("contacts", "%s: %v", o.Key, err)
			continue
		}
		h := contactPrint(c.FirstName, c.LastName, c.Notes)
		if !o.Allowed[h] && !(!o.Acked && o.Tried[h]) {
			fail("contacts", "%s: holds %s (notes %d bytes), neither the acknowledged version nor one tried after it", o.Key, c.LastName, len(c.Notes))
		}
		if r.Header.Get("ETag") == "" || r.Header.Get("ETag") != c.ETag {
			fail("contacts", "%s: ETag header %q, body etag %q", o.Key, r.Header.Get("ETag"), c.ETag)
		}
	}
}

func verifyEvents(ctx context.Context, st *State, scope map[string]bool) {
	var cal string
	for _, k := range st.Order {
		if o := st.Objs[k]; o.Kind == "event" {
			cal = o.Parent
			break
		}
	}
	if cal == "" {
		return
	}
	q := url.Values{"start": {eventBase.Add(-time.Hour).Format(time.RFC3339)}, "end": {eventBase.Add(300 * 24 * time.Hour).Format(time.RFC3339)}}
	r, err := do(ctx, call{Method: "GET", Path: "/api/v1/calendar/calendars/" + cal + "/events?" + q.Encode()})
	if err != nil || r.Status != 200 {
		fail("events", "list calendar %s: %v %v", cal, r, err)
		return
	}
	var list []struct {
		UID   string `json:"uid"`
		Title string `json:"title"`
	}
	if err := r.decode(&list); err != nil {
		fail("events", "%v", err)
		return
	}
	byTitle := map[string][]string{}
	for _, e := range list {
		byTitle[e.Title] = append(byTitle[e.Title], e.UID)
	}
	for _, k := range st.Order {
		o := st.Objs[k]
		if o.Kind != "event" {
			continue
		}
		uids := byTitle["crash-"+o.Key]
		switch {
		case len(uids) > 1:
			fail("events", "%s: %d events (%v), one was sent", o.Key, len(uids), uids)
			continue
		case o.Acked && len(uids) == 0:
			fail("events", "%s (%s): acknowledged in round %d, not in the calendar", o.Key, o.ID, o.AckRound)
			continue
		case len(uids) == 0:
			continue
		case o.Acked && uids[0] != o.ID:
			fail("events", "%s: acknowledged as %s, listed as %s", o.Key, o.ID, uids[0])
		}
		if !scope[k] && o.Acked {
			continue
		}
		counted("events", 1)
		r, err := do(ctx, call{Method: "GET", Path: "/api/v1/calendar/calendars/" + cal + "/events/" + uids[0]})
		if err != nil || r.Status != 200 {
			fail("events", "%s: GET: %v %v", o.Key, r, err)
			continue
		}
		var e struct {
			Title       string    `json:"title"`
			Start       time.Time `json:"start"`
			End         time.Time `json:"end"`
			Description string    `json:"description"`
		}
		if err := r.decode(&e); err != nil {
			fail("events", "%s: %v", o.Key, err)
			continue
		}
		if h := eventPrint(e.Title, e.Start, e.End, e.Description); !o.Tried[h] {
			fail("events", "%s: holds %q %s–%s (description %d bytes), not what was sent", o.Key, e.Title, e.Start, e.End, len(e.Description))
		}
	}
}

type searchResult struct {
	Hits []struct {
		ID string `json:"id"`
	} `json:"hits"`
	TotalHits int `json:"total_hits"`
}

func search(ctx context.Context, q string) (searchResult, int, error) {
	var res searchResult
	r, err := do(ctx, call{Method: "GET", Path: "/api/v1/drive/search?limit=100&q=" + url.QueryEscape(q)})
	if err != nil {
		return res, 0, err
	}
	if r.Status == 200 {
		err = r.decode(&res)
	}
	return res, r.Status, err
}

// verifySearch: the index finds each file of the last round (and a sample of
// older ones) by its unique name word, and as many files named crash-* as the
// drive lists. The index may lag or rebuild (503) for a while after a start.
func verifySearch(ctx context.Context, st *State, items map[string]fileItem, scope map[string]bool) {
	deadline := time.Now().Add(20 * time.Second)
	retry := func(check func() string) {
		for {
			msg := check()
			if msg == "" {
				return
			}
			if time.Now().After(deadline) {
				fail("search", "%s (after 20 s)", msg)
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	want := 0
	for _, it := range items {
		if strings.HasPrefix(it.Name, "crash-") {
			want++
		}
	}
	counted("search", 1)
	retry(func() string {
		res, status, err := search(ctx, "crash")
		if err != nil || status != 200 {
			return fmt.Sprintf("search crash: %d %v", status, err)
		}
		if res.TotalHits != want {
			return fmt.Sprintf("search crash: %d hits, the drive lists %d files named crash-*", res.TotalHits, want)
		}
		return ""
	})
	for _, k := range st.Order {
		o := st.Objs[k]
		it, ok := items[o.Parent+"/"+o.Key]
		if o.Kind != "file" || !ok || !scope[k] {
			continue
		}
		counted("search", 1)
		word := strings.TrimSuffix(strings.TrimPrefix(o.Key, "crash-"), ".bin")
		retry(func() string {
			res, status, err := search(ctx, word)
			if err != nil || status != 200 {
				return fmt.Sprintf("search %s: %d %v", word, status, err)
			}
			for _, h := range res.Hits {
				if h.ID == it.ID {
					return ""
				}
			}
			return fmt.Sprintf("search %s: %d hits, not file %s", word, len(res.Hits), it.ID)
		})
	}
}
