package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The workload: one goroutine per door, each writing as fast as a short pause
// allows, until SIGTERM or until the server stops answering (it was killed).

const davFolder = "dav"

// eventBase is where the test's events live in time.
var eventBase = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func setup(ctx context.Context) error {
	j, err := openJournal(journalPath())
	if err != nil {
		return err
	}
	defer j.Close()
	r, err := do(ctx, call{Method: "MKCOL", Path: "/api/v1/webdav/" + davFolder + "/", Basic: true})
	if err != nil || r.Status != 201 {
		return fmt.Errorf("MKCOL %s: %v %v", davFolder, r, err)
	}
	r, err = do(ctx, call{Method: "POST", Path: "/api/v1/webhooks/subscriptions", Body: map[string]any{
		"url": "http://127.0.0.1:" + cfg.HookPort + "/hook", "description": "crash test receiver (down until the end)", "events": []string{},
	}})
	if err != nil || r.Status != 201 {
		return fmt.Errorf("create subscription: %v %v", r, err)
	}
	var sub struct {
		ID     string `json:"id"`
		Secret string `json:"signing_secret"`
	}
	if err := r.decode(&sub); err != nil {
		return err
	}
	j.Add(Rec{Op: "sub", Kind: "webhook", Key: "sub", ID: sub.ID, Secret: sub.Secret, Round: cfg.Round})
	return nil
}

// down reports an error that means the server is gone.
func down(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

type worker struct {
	j     *Journal
	rng   *rand.Rand
	n     int
	book  string
	cal   string
	fresh []string // keys acknowledged, for updates
	last  []byte   // the last bytes written (WebDAV), written again now and then
}

func (w *worker) key(prefix string) string {
	w.n++
	return fmt.Sprintf("%s%02dn%03d", prefix, cfg.Round, w.n)
}

// unexpected records an answer no crash explains (the server was up and said no).
func unexpected(what string, r resp) {
	fail("errors", "%s: unexpected answer %s", what, r)
}

func work(ctx context.Context) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	j, st, err := loadJournal()
	if err != nil {
		return err
	}
	defer j.Close()
	book, err := defaultBook(ctx)
	if err != nil {
		return err
	}
	cal, err := defaultCalendar(ctx)
	if err != nil {
		return err
	}
	doors := []func(context.Context, *worker) error{presignedOnce, tusOnce, tusOnce, webdavOnce, contactOnce, eventOnce}
	var wg sync.WaitGroup
	for i, once := range doors {
		w := &worker{j: j, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Round)<<8|uint64(i))), book: book, cal: cal, n: i * 100}
		// Writes of earlier rounds are updated too.
		for _, k := range st.Order {
			o := st.Objs[k]
			switch {
			case i == 3 && o.Kind == "file" && o.Via == "webdav" && o.Acked:
				w.fresh = append(w.fresh, o.Key)
			case i == 4 && o.Kind == "contact" && o.Acked && o.ID != "":
				w.fresh = append(w.fresh, o.Key+" "+o.ID)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := once(ctx, w); err != nil {
					if ctx.Err() == nil && !down(err) {
						fail("errors", "worker %d: %v", i, err)
					}
					return // the server is gone (or we were told to stop)
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(80+w.rng.IntN(120)) * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := rng.Uint64()
		for k := 0; k < 8 && i+k < n; k++ {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	return b
}

// presignedOnce: the three-step upload (announce, PUT the bytes, confirm).
func presignedOnce(ctx context.Context, w *worker) error {
	name := "crash-" + w.key("p") + ".bin"
	data := randomBytes(w.rng, 1+w.rng.IntN(256<<10))
	h := sum(data)
	w.j.Add(Rec{Op: "try", Kind: "file", Key: name, Via: "presigned", Hash: h, Size: int64(len(data)), Round: cfg.Round})
	r, err := do(ctx, call{Method: "POST", Path: "/api/v1/drive/upload", Body: map[string]any{
		"name": name, "mime_type": "application/octet-stream", "size": len(data)}})
	if err != nil {
		return err
	}
	if r.Status != 201 {
		unexpected("upload "+name, r)
		return nil
	}
	var up struct {
		URL  string `json:"upload_url"`
		File struct {
			ID string `json:"id"`
		} `json:"file"`
	}
	if err := r.decode(&up); err != nil {
		return err
	}
	r, err = do(ctx, call{Method: "PUT", Path: up.URL, Raw: true, Body: data, Header: map[string]string{"Content-Type": "application/octet-stream"}})
	if err != nil {
		return err
	}
	if !r.ok() {
		unexpected("presigned PUT "+name, r)
		return nil
	}
	r, err = do(ctx, call{Method: "POST", Path: "/api/v1/drive/" + up.File.ID + "/confirm"})
	if err != nil {
		return err
	}
	if r.Status != 200 {
		unexpected("confirm "+name, r)
		return nil
	}
	w.j.Add(Rec{Op: "ack", Kind: "file", Key: name, Via: "presigned", ID: up.File.ID, Hash: h, Round: cfg.Round})
	return nil
}

// tusContent is the content of a TUS upload: it can be made again from its
// seed, so a later process can resume the upload.
func tusContent(seed uint64, size int64) []byte {
	var s [32]byte
	for i := range 4 {
		for k := range 8 {
			s[i*8+k] = byte((seed + uint64(i)) >> (8 * k))
		}
	}
	b := make([]byte, size)
	_, _ = rand.NewChaCha8(s).Read(b)
	return b
}

const tusChunk = 128 << 10

func tusOnce(ctx context.Context, w *worker) error {
	name := "crash-" + w.key("t") + ".bin"
	size := int64(256<<10 + w.rng.IntN(1792<<10))
	if w.rng.IntN(4) == 0 {
		size = int64(1 + w.rng.IntN(64<<10)) // small: kept in the database when completed
	}
	seed := w.rng.Uint64() | 1
	data := tusContent(seed, size)
	h := sum(data)
	w.j.Add(Rec{Op: "try", Kind: "file", Key: name, Via: "tus", Hash: h, Size: size, Seed: seed, Round: cfg.Round})
	meta := "filename " + base64.StdEncoding.EncodeToString([]byte(name)) + ",filetype " + base64.StdEncoding.EncodeToString([]byte("application/octet-stream"))
	if size <= 64<<10 && w.rng.IntN(2) == 0 {
		// As the web app sends a small file: its bytes with the creation
		// (creation-with-upload), created complete in one write.
		r, err := do(ctx, call{Method: "POST", Path: "/api/v1/drive/tus/", Body: data, Header: map[string]string{
			"Tus-Resumable": "1.0.0", "Upload-Length": strconv.FormatInt(size, 10), "Upload-Metadata": meta,
			"Content-Type": "application/offset+octet-stream"}})
		if err != nil {
			return err
		}
		if r.Status != 201 {
			unexpected("tus create with the content "+name, r)
			return nil
		}
		id := r.Header.Get("Atrium-File-Id")
		if st := r.Header.Get("Atrium-Upload-Status"); st != "done" || id == "" || r.Header.Get("Upload-Offset") != strconv.FormatInt(size, 10) {
			fail("tus", "creation of %s with its content: status %q, file %q, offset %q", name, st, id, r.Header.Get("Upload-Offset"))
			return nil
		}
		w.j.Add(Rec{Op: "ack", Kind: "file", Key: name, Via: "tus", ID: id, Hash: h, Round: cfg.Round})
		return nil
	}
	r, err := do(ctx, call{Method: "POST", Path: "/api/v1/drive/tus/", Header: map[string]string{
		"Tus-Resumable": "1.0.0", "Upload-Length": strconv.FormatInt(size, 10), "Upload-Metadata": meta}})
	if err != nil {
		return err
	}
	if r.Status != 201 {
		unexpected("tus create "+name, r)
		return nil
	}
	loc := r.Header.Get("Location")
	if !strings.HasPrefix(loc, "http") {
		loc = cfg.URL + loc
	}
	w.j.Add(Rec{Op: "tus", Kind: "file", Key: name, Via: "tus", URL: loc, Round: cfg.Round})
	// Paced like a client on a slow link: an upload is then under way for
	// most of the worker's time, so that kills find uploads to resume (on a
	// fast server, unpaced ones were done too soon and a run could check none).
	_, err = tusPatch(ctx, w.j, name, loc, data, h, 0, time.Duration(30+w.rng.IntN(50))*time.Millisecond)
	return err
}

// tusPatch sends data from offset in chunks, pause apart, journalling each
// acknowledged offset, and the file once the upload is done. It returns the
// file id.
func tusPatch(ctx context.Context, j *Journal, name, loc string, data []byte, h string, offset int64, pause time.Duration) (string, error) {
	size := int64(len(data))
	for first := true; offset < size; first = false {
		if !first && pause > 0 {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(pause):
			}
		}
		end := min(offset+tusChunk, size)
		r, err := do(ctx, call{Method: "PATCH", Path: loc, Raw: true, Body: data[offset:end], Header: map[string]string{
			"Authorization": "Bearer " + cfg.Token, "Tus-Resumable": "1.0.0",
			"Upload-Offset": strconv.FormatInt(offset, 10), "Content-Type": "application/offset+octet-stream"}})
		if err != nil {
			return "", err
		}
		if r.Status != 204 {
			unexpected(fmt.Sprintf("tus PATCH %s at %d", name, offset), r)
			return "", nil
		}
		got, err := strconv.ParseInt(r.Header.Get("Upload-Offset"), 10, 64)
		if err != nil || got != end {
			fail("tus", "PATCH %s [%d,%d) answered Upload-Offset %q", name, offset, end, r.Header.Get("Upload-Offset"))
			return "", nil
		}
		offset = end
		j.Add(Rec{Op: "tus", Kind: "file", Key: name, Via: "tus", URL: loc, Offset: offset, Round: cfg.Round})
		if offset == size {
			id := r.Header.Get("Atrium-File-Id")
			if st := r.Header.Get("Atrium-Upload-Status"); st != "done" || id == "" {
				fail("tus", "last PATCH of %s: status %q file %q", name, st, id)
				return "", nil
			}
			j.Add(Rec{Op: "ack", Kind: "file", Key: name, Via: "tus", ID: id, Hash: h, Round: cfg.Round})
			return id, nil
		}
	}
	return "", nil
}

// webdavOnce PUTs a new file into the WebDAV folder, or overwrites one.
func webdavOnce(ctx context.Context, w *worker) error {
	var name string
	if len(w.fresh) > 0 && w.rng.IntN(10) < 3 {
		name = w.fresh[w.rng.IntN(len(w.fresh))]
	} else {
		name = "crash-" + w.key("w") + ".bin"
	}
	data := randomBytes(w.rng, 1+w.rng.IntN(256<<10))
	if w.last != nil && w.rng.IntN(5) == 0 {
		data = w.last // the same bytes under another name: one blob, two references
	}
	w.last = data
	h := sum(data)
	w.j.Add(Rec{Op: "try", Kind: "file", Key: name, Via: "webdav", Parent: davFolder, Hash: h, Size: int64(len(data)), Round: cfg.Round})
	r, err := do(ctx, call{Method: "PUT", Path: "/api/v1/webdav/" + davFolder + "/" + name, Basic: true, Body: data,
		Header: map[string]string{"Content-Type": "application/octet-stream"}})
	if err != nil {
		return err
	}
	if r.Status != 201 && r.Status != 204 {
		unexpected("WebDAV PUT "+name, r)
		return nil
	}
	w.j.Add(Rec{Op: "ack", Kind: "file", Key: name, Via: "webdav", Parent: davFolder, Hash: h, Round: cfg.Round})
	if !contains(w.fresh, name) {
		w.fresh = append(w.fresh, name)
	}
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// contactFields is version v of contact key: every field depends on both,
// so a half-applied write cannot pass for a whole one.
func contactFields(key string, v int) (first, last, notes string) {
	return "crash-" + key, fmt.Sprintf("v%04d", v), strings.Repeat(fmt.Sprintf("%s/v%d;", key, v), 40+v%60)
}

func contactPrint(first, last, notes string) string { return printString(first, last, notes) }

type contactDetail struct {
	ID        string `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Notes     string `json:"notes"`
	ETag      string `json:"etag"`
}

// contactOnce creates a contact (30%) or updates one with If-Match (70%).
func contactOnce(ctx context.Context, w *worker) error {
	if len(w.fresh) == 0 || w.rng.IntN(10) < 3 {
		key := w.key("c")
		first, last, notes := contactFields(key, 1)
		h := contactPrint(first, last, notes)
		w.j.Add(Rec{Op: "try", Kind: "contact", Key: key, Parent: w.book, Hash: h, Round: cfg.Round})
		r, err := do(ctx, call{Method: "POST", Path: "/api/v1/contacts/books/" + w.book, Body: map[string]any{
			"first_name": first, "last_name": last, "notes": notes,
			"emails": []map[string]string{{"type": "work", "value": key + "@crash.example"}}}})
		if err != nil {
			return err
		}
		if r.Status != 201 {
			unexpected("create contact "+key, r)
			return nil
		}
		var c struct {
			ID string `json:"id"`
		}
		if err := r.decode(&c); err != nil {
			return err
		}
		w.j.Add(Rec{Op: "ack", Kind: "contact", Key: key, Parent: w.book, ID: c.ID, Hash: h, Round: cfg.Round})
		w.fresh = append(w.fresh, key+" "+c.ID)
		return nil
	}
	key, id, _ := strings.Cut(w.fresh[w.rng.IntN(len(w.fresh))], " ")
	path := "/api/v1/contacts/books/" + w.book + "/" + id
	r, err := do(ctx, call{Method: "GET", Path: path})
	if err != nil {
		return err
	}
	if r.Status != 200 {
		unexpected("get contact "+key, r)
		return nil
	}
	var cur contactDetail
	if err := r.decode(&cur); err != nil {
		return err
	}
	v, _ := strconv.Atoi(strings.TrimPrefix(cur.LastName, "v"))
	first, last, notes := contactFields(key, v+1)
	h := contactPrint(first, last, notes)
	w.j.Add(Rec{Op: "try", Kind: "contact", Key: key, Parent: w.book, ID: id, Hash: h, Round: cfg.Round})
	r, err = do(ctx, call{Method: "PUT", Path: path, Header: map[string]string{"If-Match": r.Header.Get("ETag")},
		Body: map[string]any{"last_name": last, "notes": notes}})
	if err != nil {
		return err
	}
	if r.Status != 200 {
		unexpected("update contact "+key, r)
		return nil
	}
	w.j.Add(Rec{Op: "ack", Kind: "contact", Key: key, Parent: w.book, ID: id, Hash: h, Round: cfg.Round})
	return nil
}

func eventFields(key string, n int) (title string, start, end time.Time, desc string) {
	start = eventBase.Add(time.Duration(n) * time.Hour)
	return "crash-" + key, start, start.Add(30 * time.Minute), strings.Repeat(key+" is an event of the crash test. ", 20+n%50)
}

func eventPrint(title string, start, end time.Time, desc string) string {
	return printString(title, strconv.FormatInt(start.Unix(), 10), strconv.FormatInt(end.Unix(), 10), desc)
}

func eventOnce(ctx context.Context, w *worker) error {
	key := w.key("e")
	n := cfg.Round*100 + (w.n-500)%100 // hours after eventBase: 21 rounds fit in 100 days
	title, start, end, desc := eventFields(key, n)
	h := eventPrint(title, start, end, desc)
	w.j.Add(Rec{Op: "try", Kind: "event", Key: key, Parent: w.cal, Hash: h, Size: int64(n), Round: cfg.Round})
	r, err := do(ctx, call{Method: "POST", Path: "/api/v1/calendar/calendars/" + w.cal + "/events", Body: map[string]any{
		"title": title, "start": start.Format(time.RFC3339), "end": end.Format(time.RFC3339), "timezone": "UTC", "description": desc}})
	if err != nil {
		return err
	}
	if r.Status != 201 {
		unexpected("create event "+key, r)
		return nil
	}
	var e struct {
		UID string `json:"uid"`
	}
	if err := r.decode(&e); err != nil {
		return err
	}
	w.j.Add(Rec{Op: "ack", Kind: "event", Key: key, Parent: w.cal, ID: e.UID, Hash: h, Round: cfg.Round})
	return nil
}
