// Package imaging decodes and encodes images for the drive's thumbnails and
// previews (the adapter behind drive.Imaging): it reads GIF, JPEG, PNG, BMP,
// TIFF and WebP and writes lossy WebP.
package imaging

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	_ "image/gif"  // GIF sources
	_ "image/jpeg" // JPEG sources
	_ "image/png"  // PNG sources
	"io"

	"github.com/deepteams/webp"
	_ "golang.org/x/image/bmp" // BMP sources
	"golang.org/x/image/draw"
	_ "golang.org/x/image/tiff" // TIFF sources
	_ "golang.org/x/image/webp" // WebP sources

	"atrium/app/drive"
)

// Codec is the drive.Imaging of the formats above.
type Codec struct{}

var _ drive.Imaging = Codec{}

// Size reads an image's dimensions from its header, without decoding it.
func (Codec) Size(r io.Reader) (width, height int, err error) {
	cfg, _, err := image.DecodeConfig(bufio.NewReader(r))
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", drive.ErrImageUnreadable, err)
	}
	return cfg.Width, cfg.Height, nil
}

// Thumbnail decodes r and returns it as a lossy WebP of quality (0–100)
// fitting a size×size square.
func (Codec) Thumbnail(r io.Reader, size, quality int) ([]byte, error) {
	img, _, err := image.Decode(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", drive.ErrImageUnreadable, err)
	}
	var buf bytes.Buffer
	opts := webp.DefaultOptions()
	opts.Quality = float32(quality)
	if err := webp.Encode(&buf, Fit(img, size), opts); err != nil {
		return nil, fmt.Errorf("encode webp: %w", err)
	}
	return buf.Bytes(), nil
}

// Fit scales img down to fit a size×size square, keeping its aspect ratio;
// smaller images keep their size.
func Fit(img image.Image, size int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= size && h <= size {
		return img
	}
	nw, nh := size, max(1, h*size/w)
	if h > w {
		nw, nh = max(1, w*size/h), size
	}
	src, sb := img, b
	// Large reductions: a cheap bilinear pass to twice the target first, so
	// the Catmull-Rom pass reads few source pixels.
	if w > 4*nw {
		mid := image.NewRGBA(image.Rect(0, 0, 2*nw, 2*nh))
		draw.ApproxBiLinear.Scale(mid, mid.Bounds(), img, b, draw.Src, nil)
		src, sb = mid, mid.Bounds()
	}
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, sb, draw.Src, nil)
	return dst
}
