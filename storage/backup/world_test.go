package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
	"atrium/wire"
)

// privateHooks lets webhook subscriptions point at loopback.
func privateHooks(c *wire.Config) { c.Webhooks.AllowPrivateTargets = true }

// client drives the REST API for one user.
type client struct {
	t   testing.TB
	s   *webtest.Server
	tok string
}

// call sends a request, wants status and decodes the answer into out (when
// not nil); it returns the body.
func (c client) call(status int, method, path string, body, out any) []byte {
	c.t.Helper()
	res := c.s.Do(webtest.Request{Method: method, Path: path, Token: c.tok, Body: body})
	if res.StatusCode != status {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, res.StatusCode, res.Body, status)
	}
	if out != nil {
		res.Decode(c.t, out)
	}
	return res.Body
}

type item struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	IsFolder bool   `json:"is_folder"`
	Status   string `json:"status"`
}

func (c client) folder(name, parent string) string {
	c.t.Helper()
	var f item
	c.call(201, "POST", "/api/v1/drive/folders", map[string]any{"name": name, "parent_id": parent}, &f)
	return f.ID
}

// upload runs the three-step upload and returns the file's id.
func (c client) upload(name, parent string, content []byte) string {
	c.t.Helper()
	id, err := upload(c.s.URL, c.tok, name, parent, content)
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// download returns a file's bytes; an archived file is restored first.
func (c client) download(id string) []byte {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := c.s.Do(webtest.Request{Method: "GET", Path: "/api/v1/drive/" + id + "/download", Token: c.tok})
		switch res.StatusCode {
		case 200:
			var l struct{ URL string }
			res.Decode(c.t, &l)
			b, err := get(l.URL)
			if err != nil {
				c.t.Fatal(err)
			}
			return b
		case 202: // restoring from the archive
			if time.Now().After(deadline) {
				c.t.Fatalf("restore of %s did not finish", id)
			}
			time.Sleep(20 * time.Millisecond)
		default:
			c.t.Fatalf("download %s: %d %s", id, res.StatusCode, res.Body)
		}
	}
}

// upload, get and createContact use plain HTTP, so the writer goroutine can
// use them too.
func upload(base, tok, name, parent string, content []byte) (string, error) {
	var tk struct {
		UploadURL string `json:"upload_url"`
		File      item   `json:"file"`
	}
	if err := send(base, tok, "POST", "/api/v1/drive/upload", map[string]any{"name": name, "parent_id": parent,
		"mime_type": "application/octet-stream", "size": len(content)}, 201, &tk); err != nil {
		return "", err
	}
	req, _ := http.NewRequest("PUT", tk.UploadURL, bytes.NewReader(content))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		return "", fmt.Errorf("PUT upload of %s: %d", name, res.StatusCode)
	}
	return tk.File.ID, send(base, tok, "POST", "/api/v1/drive/"+tk.File.ID+"/confirm", nil, 200, nil)
}

func get(u string) ([]byte, error) {
	res, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return b, err
}

func send(base, tok, method, path string, body any, status int, out any) error {
	var r io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, base+path, r)
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		return fmt.Errorf("%s %s: %d %s, want %d", method, path, res.StatusCode, b, status)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// world is an organisation with data in every module.
type world struct {
	ann, bob client
	carol    client // the writer: her data is left out of views
	bobPW    string // bob's app password
	book     string // ann's default address book
	cal      string // ann's default calendar
	noise    string // carol's folder and address book the writer fills
	noiseBk  string
	files    map[string][]byte // live file id → content
	archived string            // an archived file's id
	linkTok  string            // a shared link's token
	docs     string            // a folder shared with bob
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// seed fills s with contacts, events, drive files (a version, a folder, a
// share, a link, a trashed and an archived file), a webhook subscription and
// a partner customer.
func seed(t *testing.T, s *webtest.Server) *world {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	annCr := s.Bootstrap("Backup Org", "ann@backup.test", "admin")
	bobCr := s.Bootstrap("Backup Org", "bob@backup.test", "member")
	carolCr := s.Bootstrap("Backup Org", "carol@backup.test", "member")
	w := &world{ann: client{t, s, annCr.Token}, bob: client{t, s, bobCr.Token}, carol: client{t, s, carolCr.Token},
		bobPW: bobCr.AppPassword, files: map[string][]byte{}}

	var books []struct {
		ID        string `json:"id"`
		IsDefault bool   `json:"is_default"`
	}
	w.ann.call(200, "GET", "/api/v1/contacts/books", nil, &books)
	w.book = books[0].ID
	for _, n := range []string{"Ada Lovelace", "Grace Hopper", "Zoë Müller"} {
		first, last, _ := strings.Cut(n, " ")
		w.ann.call(201, "POST", "/api/v1/contacts/books/"+w.book, map[string]any{"first_name": first, "last_name": last,
			"emails": []map[string]string{{"type": "work", "value": strings.ToLower(first) + "@example.test"}}, "notes": "seeded"}, nil)
	}
	var bk struct{ ID string }
	w.carol.call(201, "POST", "/api/v1/contacts/books", map[string]any{"name": "Noise"}, &bk)
	w.noiseBk = bk.ID

	var cals []struct{ ID string }
	w.ann.call(200, "GET", "/api/v1/calendar/calendars", nil, &cals)
	w.cal = cals[0].ID
	w.ann.call(201, "POST", "/api/v1/calendar/calendars/"+w.cal+"/events", map[string]any{"title": "Standup",
		"start": "2026-03-02T09:00:00Z", "end": "2026-03-02T09:15:00Z", "timezone": "Europe/Berlin", "rrule": "FREQ=WEEKLY;COUNT=5"}, nil)
	w.ann.call(201, "POST", "/api/v1/calendar/calendars/"+w.cal+"/events", map[string]any{"title": "Review",
		"start": "2026-03-04T14:00:00Z", "end": "2026-03-04T15:00:00Z", "location": "Room 1"}, nil)

	w.docs = w.ann.folder("Docs", "")
	a := randomBytes(r, 70_000)
	w.files[w.ann.upload("a.bin", w.docs, a)] = a
	b1, b2 := randomBytes(r, 200_000), randomBytes(r, 150_000)
	bID := w.ann.upload("b.bin", "", b1)
	if id := w.ann.upload("b.bin", "", b2); id != bID {
		t.Fatalf("second upload of b.bin made file %s, not a version of %s", id, bID)
	}
	w.files[bID] = b2
	w.files[w.ann.upload("same.bin", "", a)] = a // same content as a.bin: one blob
	note := []byte("a small file: its bytes are in the database, not in the blob store")
	w.files[w.ann.upload("note.txt", w.docs, note)] = note
	trashed := w.ann.upload("trashed.txt", "", []byte("in the trash"))
	w.ann.call(204, "POST", "/api/v1/drive/"+trashed+"/trash", nil, nil)
	cold := randomBytes(r, 90_000)
	w.archived = w.ann.upload("cold.bin", "", cold)
	w.files[w.archived] = cold
	if _, err := s.Main.Drive.Archiving().ArchiveFile(context.Background(), w.archived); err != nil {
		t.Fatal(err)
	}
	w.ann.call(201, "POST", "/api/v1/drive/"+w.docs+"/shares", map[string]any{"email": "bob@backup.test", "permission": "edit"}, nil)
	var link struct {
		ShareLink string `json:"share_link"`
	}
	w.ann.call(201, "POST", "/api/v1/drive/"+bID+"/shares", map[string]any{"create_link": true}, &link)
	w.linkTok = link.ShareLink[strings.LastIndex(link.ShareLink, "/")+1:]
	w.noise = w.carol.folder("Noise", "")

	w.ann.call(201, "POST", "/api/v1/webhooks/subscriptions", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"drive.file.created"}}, nil)
	w.ann.call(201, "POST", "/api/v1/partner/orgs", map[string]any{"name": "Customer Co", "plan_slug": "business", "admin_email": "boss@customer.test"}, nil)
	return w
}

// views are the API answers that must be the same after a restore, with the
// server's own URL taken out.
func (w *world) views(t *testing.T, s *webtest.Server) map[string]string {
	t.Helper()
	ann, bob := client{t, s, w.ann.tok}, client{t, s, w.bob.tok}
	out := map[string]string{}
	anon := client{t, s, ""}
	who := map[string]string{ann.tok: "ann", bob.tok: "bob", "": "anonymous"}
	for _, v := range []struct {
		c    client
		path string
	}{
		{ann, "/api/v1/me"},
		{bob, "/api/v1/me"},
		{ann, "/api/v1/contacts/books"},
		{ann, "/api/v1/contacts/books/" + w.book},
		{ann, "/api/v1/calendar/calendars"},
		{ann, "/api/v1/calendar/events?" + url.Values{"start": {"2026-01-01T00:00:00Z"}, "end": {"2027-01-01T00:00:00Z"}}.Encode()},
		{ann, "/api/v1/drive/browse"},
		{ann, "/api/v1/drive/browse/" + w.docs},
		{ann, "/api/v1/drive/trash"},
		{ann, "/api/v1/drive/" + w.docs + "/shares"},
		{bob, "/api/v1/drive/shared"},
		{ann, "/api/v1/webhooks/subscriptions"},
		{ann, "/api/v1/partner/orgs"},
		{anon, "/api/v1/drive/shared-link/" + w.linkTok},
	} {
		b := v.c.call(200, "GET", v.path, nil, nil)
		out[v.path+" as "+who[v.c.tok]] = strings.ReplaceAll(string(b), s.URL, "{public_url}")
	}
	for id := range w.files {
		if id == w.archived {
			continue // downloading it would restore it
		}
		for _, f := range []string{"detail", "versions"} {
			out[id+"/"+f] = string(ann.call(200, "GET", "/api/v1/drive/"+id+"/"+f, nil, nil))
		}
	}
	return out
}

// writer keeps writing through the API until ctx ends: contacts into the
// noise book, files into the noise folder, and permanent deletes of every
// other file it wrote. It returns how many contacts it created.
func (w *world) writer(ctx context.Context, base string) (created int, err error) {
	r := rand.New(rand.NewPCG(3, 4))
	var last string
	for i := 0; ctx.Err() == nil; i++ {
		if err := send(base, w.carol.tok, "POST", "/api/v1/contacts/books/"+w.noiseBk, map[string]any{"first_name": fmt.Sprintf("noise%04d", i)}, 201, nil); err != nil {
			return i, err
		}
		created = i + 1
		id, err := upload(base, w.carol.tok, fmt.Sprintf("noise%04d.bin", i), w.noise, noiseContent(r, i))
		if err != nil {
			return created, err
		}
		if i%2 == 1 {
			if err := send(base, w.carol.tok, "DELETE", "/api/v1/drive/"+last, nil, 204, nil); err != nil {
				return created, err
			}
		}
		last = id
	}
	return created, nil
}

// noiseContent is the content of the writer's i-th file: its number, then
// random bytes (so that blobs differ).
func noiseContent(r *rand.Rand, i int) []byte {
	return append([]byte(fmt.Sprintf("noise%04d:", i)), randomBytes(r, 2000+r.IntN(20_000))...)
}

func sha256hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
