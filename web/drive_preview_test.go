package web_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/image/webp"

	"atrium/app/drive"
	"atrium/storage/sqldb"
	"atrium/webtest"
	"atrium/wire"
)

// testImage is a w×h gradient with a seed-dependent tint.
func testImage(w, h, seed int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := img.PixOffset(x, y)
			copy(img.Pix[i:i+4], []uint8{uint8(x * 255 / w), uint8(y * 255 / h), uint8(seed * 40), 255})
		}
	}
	// Distinct seeds give distinct content.
	img.Set(0, 0, color.RGBA{uint8(seed), uint8(seed >> 8), uint8(seed >> 16), 255})
	return img
}

func jpegOf(t testing.TB, w, h, seed int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(w, h, seed), &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func pngOf(t testing.TB, w, h, seed int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h, seed)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bombPNG is a tiny PNG whose header claims w×h pixels.
func bombPNG(t testing.TB, w, h uint32) []byte {
	b := pngOf(t, 1, 1, 0)
	// Signature (8), IHDR length (4), "IHDR" (4), width (4), height (4), …, CRC.
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

type thumbURL struct {
	URL       string    `json:"url"`
	Size      int       `json:"size"`
	ExpiresAt time.Time `json:"expires_at"`
}

var blobHash = regexp.MustCompile(`[0-9a-f]{64}`)

// fetchWebP downloads a presigned URL and decodes it as WebP.
func fetchWebP(t testing.TB, u string) image.Image {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/webp" {
		t.Fatalf("GET %s: %d %s %.100q", u, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	img, err := webp.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not WebP: %v", err)
	}
	return img
}

func (c driveClient) thumb(id string, size int) thumbURL {
	c.t.Helper()
	var th thumbURL
	c.ok(200, "GET", fmt.Sprintf("/api/v1/drive/%s/thumbnail?size=%d", id, size), nil, &th)
	return th
}

func TestDrivePreviewThumbnails(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	ctx := context.Background()
	store := sqldb.DriveStore{DB: s.Main.DB}
	big := c.upload("photo.jpg", "", "image/jpeg", jpegOf(t, 4000, 3000, 1))

	for _, size := range []int{256, 512} {
		th := c.thumb(big.ID, size)
		img := fetchWebP(t, th.URL)
		if b := img.Bounds(); b.Dx() != size || b.Dy() != size*3/4 || th.Size != size {
			t.Errorf("size %d: thumbnail %v, size %d; want %d×%d", size, b, th.Size, size, size*3/4)
		}
	}
	// Cached by content hash: the second request serves the same blob, and
	// only records the use.
	d1, err := store.Derived(ctx, big.ContentHash, drive.KindThumb, 512)
	if err != nil {
		t.Fatal(err)
	}
	s.Clock.Advance(time.Minute)
	again := c.thumb(big.ID, 512)
	d2, err := store.Derived(ctx, big.ContentHash, drive.KindThumb, 512)
	if err != nil {
		t.Fatal(err)
	}
	if blobHash.FindString(again.URL) != blobName(d1.Hash) || d2.Hash != d1.Hash || !d2.CreatedAt.Equal(d1.CreatedAt) || !d2.LastUsedAt.After(d1.LastUsedAt) {
		t.Errorf("second request: url %s, row %+v then %+v; want the cached blob, its use recorded", again.URL, d1, d2)
	}
	var def thumbURL
	c.ok(200, "GET", "/api/v1/drive/"+big.ID+"/thumbnail", nil, &def)
	if b := fetchWebP(t, def.URL).Bounds(); def.Size != 256 || b.Dx() != 256 {
		t.Errorf("default size: %d, %v", def.Size, b)
	}

	// Other formats; small images are not enlarged.
	pic := c.upload("pic.png", "", "image/png", pngOf(t, 300, 600, 2))
	if b := fetchWebP(t, c.thumb(pic.ID, 128).URL).Bounds(); b.Dx() != 64 || b.Dy() != 128 {
		t.Errorf("png thumbnail %v, want 64×128", b)
	}
	var gb bytes.Buffer
	if err := gif.Encode(&gb, testImage(100, 50, 3), nil); err != nil {
		t.Fatal(err)
	}
	anim := c.upload("anim.gif", "", "image/gif", gb.Bytes())
	if b := fetchWebP(t, c.thumb(anim.ID, 512).URL).Bounds(); b.Dx() != 100 || b.Dy() != 50 {
		t.Errorf("gif thumbnail %v, want 100×50 (not enlarged)", b)
	}

	text := c.upload("notes.txt", "", "text/plain", []byte("hello"))
	pdf := c.upload("doc.pdf", "", "application/pdf", []byte("%PDF-1.4\n"))
	fake := c.upload("fake.png", "", "image/png", []byte("not a png at all"))
	folder := c.folder("Pictures", "")
	bomb := c.upload("bomb.png", "", "image/png", bombPNG(t, 60000, 60000))
	otherTok := s.Bootstrap("Other Org", "bob@example.test", "admin").Token
	thumb := func(id, q string) string { return "/api/v1/drive/" + id + "/thumbnail" + q }
	s.Run(t, []webtest.Scenario{
		{Name: "size 63", Request: webtest.Request{Method: "GET", Path: thumb(big.ID, "?size=63"), Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "size 513", Request: webtest.Request{Method: "GET", Path: thumb(big.ID, "?size=513"), Token: c.tok}, Status: 422, Problem: "validation_failed"},
		{Name: "text", Request: webtest.Request{Method: "GET", Path: thumb(text.ID, ""), Token: c.tok}, Status: 404, Problem: "no_preview"},
		{Name: "pdf", Request: webtest.Request{Method: "GET", Path: thumb(pdf.ID, ""), Token: c.tok}, Status: 404, Problem: "no_preview"},
		{Name: "not an image", Request: webtest.Request{Method: "GET", Path: thumb(fake.ID, ""), Token: c.tok}, Status: 404, Problem: "no_preview"},
		{Name: "folder", Request: webtest.Request{Method: "GET", Path: thumb(folder.ID, ""), Token: c.tok}, Status: 404, Problem: "no_preview"},
		{Name: "bomb", Request: webtest.Request{Method: "GET", Path: thumb(bomb.ID, ""), Token: c.tok}, Status: 422, Problem: "validation_failed",
			Contains: []string{"60000×60000"}},
		{Name: "another user's file", Request: webtest.Request{Method: "GET", Path: thumb(big.ID, ""), Token: otherTok}, Status: 404, Problem: "not_found"},
		{Name: "no token", Request: webtest.Request{Method: "GET", Path: thumb(big.ID, "")}, Status: 401},
	})
}

func blobName(h string) string { return h[len("sha256:"):] }

func TestDrivePreviewToken(t *testing.T) {
	t.Parallel()
	s, c := newDrive(t)
	photo := c.upload("photo.jpg", "", "image/jpeg", jpegOf(t, 2000, 1000, 1))
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	type ticket struct {
		Token      string    `json:"token"`
		ExpiresAt  time.Time `json:"expires_at"`
		PreviewURL string    `json:"preview_url"`
	}
	newTicket := func() ticket {
		var tk ticket
		c.ok(200, "POST", "/api/v1/drive/"+photo.ID+"/preview-token", nil, &tk)
		return tk
	}
	open := func(tk ticket) *http.Response {
		t.Helper()
		u, err := url.Parse(tk.PreviewURL)
		if err != nil {
			t.Fatal(err)
		}
		res, err := noRedirect.Get(s.URL + u.RequestURI())
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}

	tk := newTicket()
	if d := time.Until(tk.ExpiresAt); tk.Token == "" || d < 4*time.Minute || d > 5*time.Minute+time.Second {
		t.Errorf("ticket %+v: want a token expiring in 5 minutes", tk)
	}
	res := open(tk)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("preview: %d, want 302", res.StatusCode)
	}
	if b := fetchWebP(t, res.Header.Get("Location")).Bounds(); b.Dx() != drive.PreviewSize || b.Dy() != drive.PreviewSize/2 {
		t.Errorf("preview %v, want %d×%d", b, drive.PreviewSize, drive.PreviewSize/2)
	}
	if res := open(tk); res.StatusCode != http.StatusNotFound {
		t.Errorf("reused token: %d, want 404", res.StatusCode)
	}
	late := newTicket()
	s.Clock.Advance(6 * time.Minute)
	if res := open(late); res.StatusCode != http.StatusNotFound {
		t.Errorf("expired token: %d, want 404", res.StatusCode)
	}
	// A token works for its file only.
	other := c.upload("other.png", "", "image/png", pngOf(t, 10, 10, 4))
	wrong := newTicket()
	wrong.PreviewURL = "/api/v1/drive/" + other.ID + "/preview?token=" + url.QueryEscape(wrong.Token)
	if res := open(wrong); res.StatusCode != http.StatusNotFound {
		t.Errorf("token of another file: %d, want 404", res.StatusCode)
	}
	text := c.upload("notes.txt", "", "text/plain", []byte("hello"))
	otherTok := s.Bootstrap("Other Org", "bob@example.test", "admin").Token
	s.Run(t, []webtest.Scenario{
		{Name: "not an image", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + text.ID + "/preview-token", Token: c.tok}, Status: 404, Problem: "no_preview"},
		{Name: "another user's file", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/" + photo.ID + "/preview-token", Token: otherTok}, Status: 404, Problem: "not_found"},
		{Name: "no token", Request: webtest.Request{Method: "GET", Path: "/api/v1/drive/" + photo.ID + "/preview"}, Status: 404, Problem: "not_found"},
	})
}

// TestDrivePreviewEviction: the cache of derived images stays under its cap,
// evicting the least recently used, whose blobs the collector then deletes.
func TestDrivePreviewEviction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	images := [][]byte{jpegOf(t, 800, 600, 1), jpegOf(t, 800, 600, 2), jpegOf(t, 800, 600, 3)}
	// The sizes of the three thumbnails, from a server with the default cap.
	s0, c0 := newDrive(t)
	var sizes []int64
	for i, img := range images {
		f := c0.upload(fmt.Sprintf("%d.jpg", i), "", "image/jpeg", img)
		c0.thumb(f.ID, 64)
		d, err := sqldb.DriveStore{DB: s0.Main.DB}.Derived(ctx, f.ContentHash, drive.KindThumb, 64)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, d.Bytes)
	}
	limit := sizes[0] + max(sizes[1], sizes[2])

	s := webtest.New(t, func(c *wire.Config) { c.Drive.PreviewCacheBytes = limit })
	c := driveClient{t: t, s: s, tok: s.Bootstrap("Drive Org", "ann@example.test", "admin").Token}
	store := sqldb.DriveStore{DB: s.Main.DB}
	var files []driveFile
	for i, img := range images {
		files = append(files, c.upload(fmt.Sprintf("%d.jpg", i), "", "image/jpeg", img))
	}
	c.thumb(files[0].ID, 64)
	s.Clock.Advance(time.Second)
	c.thumb(files[1].ID, 64)
	s.Clock.Advance(time.Second)
	c.thumb(files[0].ID, 64) // the first is now the most recently used
	s.Clock.Advance(time.Second)
	third := c.thumb(files[2].ID, 64)
	for i, want := range []bool{true, false, true} {
		_, err := store.Derived(ctx, files[i].ContentHash, drive.KindThumb, 64)
		if (err == nil) != want {
			t.Errorf("thumbnail %d cached: %v, want %v", i, err == nil, want)
		}
	}
	if n, _ := store.DerivedBytes(ctx); n > limit {
		t.Errorf("cache holds %d bytes, cap %d", n, limit)
	}
	// The evicted blob goes after the grace period; the cached ones stay.
	s.Clock.Advance(2 * time.Hour)
	done, err := s.Main.Drive.Maintain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if done["blobs_deleted"] != 1 {
		t.Errorf("maintenance %v: want the evicted thumbnail's blob deleted", done)
	}
	fetchWebP(t, c.thumb(files[2].ID, 64).URL)
	if c.thumb(files[2].ID, 64).URL == "" || blobHash.FindString(third.URL) == "" {
		t.Error("cached thumbnail lost")
	}
	// A permanently deleted source takes its thumbnails with it.
	c.ok(204, "DELETE", "/api/v1/drive/"+files[2].ID, nil, nil)
	s.Clock.Advance(time.Minute)
	done, err = s.Main.Drive.Maintain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Derived(ctx, files[2].ContentHash, drive.KindThumb, 64); err == nil || done["previews_evicted"] != 1 {
		t.Errorf("maintenance %v: the deleted file's thumbnail is still cached", done)
	}
}

// BenchmarkDriveThumbnail: the first thumbnail of a 2048×1536 JPEG (decode,
// scale, WebP encode, store).
func BenchmarkDriveThumbnail(b *testing.B) { benchThumbnail(b, 2048, 1536, 0) }

// BenchmarkDriveThumbnail12MP: the first thumbnail of a 4000×3000 photo-like
// JPEG (noise on a gradient, quality 85): < 400 ms and < 150 MiB peak memory
// (reported as the peak Go heap, sampled every 2 ms).
func BenchmarkDriveThumbnail12MP(b *testing.B) { benchThumbnail(b, 4000, 3000, 16) }

func benchThumbnail(b *testing.B, w, h, noise int) {
	s := webtest.New(b)
	c := driveClient{t: b, s: s, tok: s.Bootstrap("Bench Org", "ann@example.test", "admin").Token}
	var ids []string
	for i := 0; i < b.N; i++ {
		img := testImage(w, h, i)
		r := rand.New(rand.NewPCG(uint64(i), 1))
		for p := range img.Pix {
			if noise > 0 && p%4 != 3 {
				img.Pix[p] = uint8(int(img.Pix[p]) + r.IntN(noise) - noise/2)
			}
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, c.upload(fmt.Sprintf("%d.jpg", i), "", "image/jpeg", buf.Bytes()).ID)
	}
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	b.ResetTimer()
	for _, id := range ids {
		c.thumb(id, 256)
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}
