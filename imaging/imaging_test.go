package imaging

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"testing"

	"atrium/app/drive"
)

func TestFit(t *testing.T) {
	t.Parallel()
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

func TestCodec(t *testing.T) {
	t.Parallel()
	var src bytes.Buffer
	if err := png.Encode(&src, image.NewRGBA(image.Rect(0, 0, 600, 300))); err != nil {
		t.Fatal(err)
	}
	w, h, err := Codec{}.Size(bytes.NewReader(src.Bytes()))
	if err != nil || w != 600 || h != 300 {
		t.Fatalf("Size = %d×%d, %v; want 600×300", w, h, err)
	}
	out, err := Codec{}.Thumbnail(bytes.NewReader(src.Bytes()), 64, 80)
	if err != nil {
		t.Fatal(err)
	}
	img, format, err := image.Decode(bytes.NewReader(out))
	if err != nil || format != "webp" || img.Bounds().Size() != image.Pt(64, 32) {
		t.Fatalf("Thumbnail decodes as %q %v, %v; want a 64×32 webp", format, img.Bounds().Size(), err)
	}
	for _, call := range []func() error{
		func() error { _, _, err := Codec{}.Size(bytes.NewReader([]byte("not an image"))); return err },
		func() error { _, err := Codec{}.Thumbnail(bytes.NewReader(src.Bytes()[:60]), 64, 80); return err },
	} {
		if err := call(); !errors.Is(err, drive.ErrImageUnreadable) {
			t.Errorf("unreadable image: %v, want drive.ErrImageUnreadable", err)
		}
	}
}
