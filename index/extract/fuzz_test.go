package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// fuzzTypes are the declared types FuzzText presents its inputs as.
var fuzzTypes = []struct{ mime, name string }{
	{"text/plain", "f.txt"},
	{"text/html", "f.html"},
	{"application/pdf", "f.pdf"},
	{mimeDOCX, "f.docx"},
	{mimeXLSX, "f.xlsx"},
	{mimePPTX, "f.pptx"},
	{mimeODT, "f.odt"},
	{mimeODS, "f.ods"},
	{mimeODP, "f.odp"},
}

// stored rewrites a zip archive with its members stored uncompressed and
// without checksums, so that the fuzzer's mutations reach the XML parser.
func stored(t testing.TB, data []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: f.Name, Method: zip.Store,
			CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func FuzzText(f *testing.F) {
	seeds := []struct {
		typ  int
		data []byte
	}{
		{0, []byte("Hello\x00 wörld\r\n\ttab \xff")},
		{1, []byte(`<html><head><title>T</title><script>x="<p>"</script></head><body><p>Caf&eacute; <b>bo</b>ld</p><td>a</td></body></html>`)},
		{2, buildPDF(pdfText("zebracorn", "line two"), pdfText("page two"))},
		{2, buildPDFObjStm("compressed", "")},
		{2, assemblePDF(
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /X 6 0 R >> >> /Contents 4 0 R >>",
			pdfStream("BT /F1 12 Tf 1 0 0 1 72 700 Tm [(Ke) 30 (rned) -400 (words)] TJ T* <6865782074657874> Tj ET /X Do BI /W 1 /H 1 ID \x00 EI"),
			"<< /Type /Font /Subtype /Type0 /BaseFont /F /Encoding /Identity-H /ToUnicode 7 0 R >>",
			"<< /Type /XObject /Subtype /Form /Length 23 >>\nstream\nBT /F1 9 Tf (x) Tj ET\nendstream",
			pdfStream("/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange 1 beginbfchar <0001> <0041> endbfchar 1 beginbfrange <0002> <0004> <0042> endbfrange endcmap end end"))},
		{3, stored(f, buildDOCX(f, "The quokka project", "second paragraph"))},
		{4, stored(f, buildXLSX(f, "shared", "inline"))},
		{5, stored(f, buildPPTX(f, "slide one", "slide two"))},
		{6, stored(f, buildODT(f, "axolotl"))},
		{7, stored(f, buildODS(f, "pangolin"))},
		{8, stored(f, buildODP(f, "marmoset"))},
	}
	for _, s := range seeds {
		f.Add(s.data, uint8(s.typ), uint16(4096))
		f.Add(s.data, uint8(s.typ), uint16(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, typ uint8, max uint16) {
		ft := fuzzTypes[int(typ)%len(fuzzTypes)]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		s, ok, err := Text(ctx, bytes.NewReader(data), int64(len(data)), ft.mime, ft.name, int(max))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Text(%s) took %v", ft.name, d)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Text(%s) did not finish in 10s", ft.name)
		}
		if !ok {
			t.Fatalf("Text(%s) reports the type unsupported", ft.name)
		}
		if err != nil && s != "" {
			t.Fatalf("text %q returned with error %v", s, err)
		}
		checkNormalised(t, s, int(max))
	})
}
