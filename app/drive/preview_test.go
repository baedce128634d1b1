package drive

import "testing"

func TestPreviewable(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	for in, want := range map[string]string{"photo.JPG": "photo.webp", "scan": "scan.webp", "a.b.png": "a.b.webp"} {
		if got := webpName(in); got != want {
			t.Errorf("webpName(%q) = %q, want %q", in, got, want)
		}
	}
}
