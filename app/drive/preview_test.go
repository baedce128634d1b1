package drive

import (
	"image"
	"testing"
)

func TestFit(t *testing.T) {
	for _, c := range []struct {
		w, h, size int
		want       image.Point
	}{
		{4000, 3000, 512, image.Pt(512, 384)},
		{3000, 4000, 256, image.Pt(192, 256)},
		{600, 300, 512, image.Pt(512, 256)},
		{100, 50, 512, image.Pt(100, 50)},
		{10000, 10, 64, image.Pt(64, 1)},
	} {
		got := Fit(image.NewRGBA(image.Rect(0, 0, c.w, c.h)), c.size).Bounds().Size()
		if got != c.want {
			t.Errorf("Fit %d×%d into %d: %v, want %v", c.w, c.h, c.size, got, c.want)
		}
	}
}

func TestPreviewable(t *testing.T) {
	for mime, want := range map[string]bool{
		"image/jpeg": true, "IMAGE/PNG; charset=binary": true, "image/gif": true, "image/webp": true, "image/tiff": true,
		"image/bmp": true, "image/heic": false, "application/pdf": false, "image/svg+xml": false, "text/plain": false,
	} {
		if Previewable(mime) != want {
			t.Errorf("Previewable(%q) = %v, want %v", mime, !want, want)
		}
	}
}

func TestWebpName(t *testing.T) {
	for in, want := range map[string]string{"photo.JPG": "photo.webp", "scan": "scan.webp", "a.b.png": "a.b.webp"} {
		if got := webpName(in); got != want {
			t.Errorf("webpName(%q) = %q, want %q", in, got, want)
		}
	}
}
