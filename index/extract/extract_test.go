package extract

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const (
	mimeDOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	mimePPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	mimeODT  = "application/vnd.oasis.opendocument.text"
	mimeODS  = "application/vnd.oasis.opendocument.spreadsheet"
	mimeODP  = "application/vnd.oasis.opendocument.presentation"
)

// text runs Text on data with a deadline that fails the test on a hang.
func text(t testing.TB, data []byte, mimeType, name string, max int) (string, bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, ok, err := Text(ctx, bytes.NewReader(data), int64(len(data)), mimeType, name, max)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Text(%s) did not finish", name)
	}
	checkNormalised(t, s, max)
	return s, ok, err
}

// checkNormalised checks the output invariants of Text.
func checkNormalised(t testing.TB, s string, max int) {
	t.Helper()
	if len(s) > max && max >= 0 {
		t.Fatalf("text is %d bytes, over max %d", len(s), max)
	}
	if !utf8.ValidString(s) {
		t.Fatalf("text is not valid UTF-8: %q", s)
	}
	for _, r := range s {
		if r < ' ' && r != '\n' || r == 0x7f {
			t.Fatalf("text holds control character %U: %q", r, s)
		}
	}
	if strings.Contains(s, "  ") || strings.Contains(s, "\n\n") || strings.Contains(s, " \n") || strings.Contains(s, "\n ") {
		t.Fatalf("whitespace not collapsed: %q", s)
	}
	if strings.TrimSpace(s) != s {
		t.Fatalf("whitespace not trimmed: %q", s)
	}
}

func TestSupported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mime, name string
		want       bool
	}{
		{"text/plain", "a.txt", true},
		{"text/plain; charset=utf-8", "a", true},
		{"text/csv", "a.csv", true},
		{"text/markdown", "README", true},
		{"TEXT/HTML; charset=UTF-8", "x", true},
		{"application/pdf", "x", true},
		{mimeDOCX, "x", true},
		{mimeXLSX, "x", true},
		{mimePPTX, "x", true},
		{mimeODT, "x", true},
		{mimeODS, "x", true},
		{mimeODP, "x", true},
		{"application/json", "x", true},
		{"application/octet-stream", "Report.PDF", true},
		{"application/octet-stream", "notes.md", true},
		{"application/zip", "letter.docx", true},
		{"", "sheet.xlsx", true},
		{"application/octet-stream", "archive.zip", false},
		{"application/zip", "archive.zip", false},
		{"application/octet-stream", "noext", false},
		{"image/png", "a.png", false},
		{"image/png", "a.txt", false}, // a specific type wins over the name
		{"video/mp4", "a.mp4", false},
		{"application/msword", "a.doc", false},
		{"text/rtf", "a.rtf", false},
	} {
		if got := Supported(tc.mime, tc.name); got != tc.want {
			t.Errorf("Supported(%q, %q) = %v, want %v", tc.mime, tc.name, got, tc.want)
		}
	}
}

func TestTextFormats(t *testing.T) {
	t.Parallel()
	utf16le := []byte{0xFF, 0xFE}
	for _, r := range "UTF-16 wombat text" {
		utf16le = append(utf16le, byte(r), 0)
	}
	for _, tc := range []struct {
		name, mime, file string
		data             []byte
		want             []string // substrings of the text
		not              []string // must not appear
	}{
		{name: "plain", mime: "text/plain", file: "a.txt",
			data: []byte("Hello\x00 world,\r\n\r\nthe aardvark\tsleeps \xff here"),
			want: []string{"Hello world,\nthe aardvark sleeps \uFFFD here"}},
		{name: "markdown", mime: "text/markdown", file: "a.md",
			data: []byte("# Title\n\nSome *emphasised* capybara text.\n"),
			want: []string{"# Title\nSome *emphasised* capybara text."}},
		{name: "csv by extension", mime: "application/octet-stream", file: "data.csv",
			data: []byte("name,animal\nann,\"okapi\"\n"), want: []string{"ann,\"okapi\""}},
		{name: "utf-8 bom", mime: "text/plain", file: "a.txt",
			data: []byte("\xEF\xBB\xBFbom narwhal"), want: []string{"bom narwhal"}, not: []string{"\uFEFF"}},
		{name: "utf-16 bom", mime: "text/plain", file: "a.txt", data: utf16le, want: []string{"UTF-16 wombat text"}},
		{name: "latin-1 charset", mime: "text/plain; charset=ISO-8859-1", file: "a.txt",
			data: []byte("caf\xe9 \x80uro"), want: []string{"café €uro"}},
		{name: "html", mime: "text/html; charset=utf-8", file: "p.html",
			data: []byte(`<!DOCTYPE html><html><head><title>Page title</title><style>.x{color:red}</style>` +
				`<script>var secretscript = "<p>no</p>";</script></head><body><h1>Heading</h1>` +
				`<p>Caf&eacute; &amp; <b>bo</b>ld &lt;tag&gt; &#x263A;</p><div>one</div><div>two</div>` +
				`<table><tr><td>cell1</td><td>cell2</td></tr></table><noscript>enable js</noscript>` +
				`<template><p>templated</p></template><!-- a comment --></body></html>`),
			want: []string{"Page title\nHeading\nCafé & bold <tag> ☺\none\ntwo\ncell1 cell2"},
			not:  []string{"secretscript", "color", "enable js", "templated", "comment"}},
		{name: "html by extension", mime: "application/octet-stream", file: "p.HTM",
			data: []byte("<p>hedgehog</p><script>alert(1)</script>"), want: []string{"hedgehog"}, not: []string{"alert"}},
		{name: "pdf", mime: "application/pdf", file: "a.pdf",
			data: buildPDF(pdfText("Annual report of the zebracorn", "second line")),
			want: []string{"Annual report of the zebracorn\nsecond line"}},
		{name: "pdf pages in order", mime: "application/octet-stream", file: "a.pdf",
			data: buildPDF(pdfText("first page"), pdfText("second page"), pdfText("third page")),
			want: []string{"first page\nsecond page\nthird page"}},
		{name: "pdf object stream", mime: "application/pdf", file: "a.pdf",
			data: buildPDFObjStm("compressedword", ""), want: []string{"compressedword"}},
		{name: "pdf flate and TJ", mime: "application/pdf", file: "a.pdf",
			data: assemblePDF(
				"<< /Type /Catalog /Pages 2 0 R >>",
				"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
				"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
				pdfFlateStream([]byte("BT /F1 12 Tf 72 700 Td [(Ke) 30 (rned) -400 (words)] TJ ET\nBI /W 2 /H 2 /BPC 8 /CS /G ID \x00(Tj) EI\nBT /F1 12 Tf 1 0 0 1 72 600 Tm <6865782074657874> Tj ET")),
				"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"),
			want: []string{"Kerned words\nhex text"}},
		{name: "pdf form xobject", mime: "application/pdf", file: "a.pdf",
			data: assemblePDF(
				"<< /Type /Catalog /Pages 2 0 R >>",
				"<< /Type /Pages /Kids [3 0 R] /Count 1 /Resources << /Font << /F1 5 0 R >> >> >>",
				"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /Fm1 6 0 R >> >> /Contents 4 0 R >>",
				pdfStream("q /Fm1 Do Q BT /F1 9 Tf (after) Tj ET"),
				"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
				"<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Length 30 >>\nstream\nBT /F1 9 Tf (inform) Tj ET   \nendstream"),
			want: []string{"inform\nafter"}},
		{name: "docx", mime: mimeDOCX, file: "a.docx",
			data: buildDOCX(t, "The quokka project", "starts in March & ends <soon>"),
			want: []string{"The quokka project\nstarts in March & ends <soon>\nlinked\ntab separated\nbroken"},
			not:  []string{"fieldcodeurl", "HYPERLINK", "Normal", "11906"}},
		{name: "docx as zip", mime: "application/zip", file: "Letter.DOCX",
			data: buildDOCX(t, "ocelot keeper"), want: []string{"ocelot keeper"}},
		{name: "xlsx", mime: mimeXLSX, file: "a.xlsx",
			data: buildXLSX(t, "sharedcapybara", "inlinegiraffe"),
			want: []string{"sharedcapybara\nrich text", "inlinegiraffe\n3.25 42 ab\n2\n10"},
			not:  []string{"SUM", "CONCAT", "phonetic"}},
		{name: "pptx", mime: mimePPTX, file: "a.pptx",
			data: buildPPTX(t, "slide one narwhal", "slide two", "slide three"),
			want: []string{"slide one narwhal\nsecond\nline\nslide two\nsecond\nline\nslide three"}},
		{name: "odt", mime: mimeODT, file: "a.odt", data: buildODT(t, "axolotl"),
			want: []string{"Heading\naxolotl and more text\nnext\nannotated comment"},
			not:  []string{"deletedword", "authorname", "2024"}},
		{name: "ods", mime: "application/octet-stream", file: "a.ods", data: buildODS(t, "pangolin"),
			want: []string{"pangolin\n12.5\nsecond"}},
		{name: "odp", mime: mimeODP, file: "a.odp", data: buildODP(t, "marmoset"),
			want: []string{"marmoset\nslide two"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := text(t, tc.data, tc.mime, tc.file, 1<<20)
			if err != nil || !ok {
				t.Fatalf("Text = %q, %v, %v", got, ok, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text %q does not contain %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("text %q contains %q", got, n)
				}
			}
		})
	}
}

func TestTextMax(t *testing.T) {
	t.Parallel()
	// "ü" and "€" are 2 and 3 bytes long: every cut point is tried.
	words := strings.Repeat("grüße an €uro ", 40)
	for _, tc := range []struct {
		name, mime string
		data       []byte
	}{
		{"text/plain", "text/plain", []byte(words)},
		{"html", "text/html", []byte("<p>" + words + "</p>")},
		{"docx", mimeDOCX, buildDOCX(t, words)},
		{"pdf", "application/pdf", buildPDF(pdfText(strings.NewReplacer("ü", "\xfc", "ß", "\xdf", "€", "\x80").Replace(words)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, _, err := text(t, tc.data, tc.mime, "f", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(full, "grüße an €uro grüße") {
				t.Fatalf("full text = %q", full)
			}
			for max := 0; max < 60; max++ {
				got, ok, err := text(t, tc.data, tc.mime, "f", max)
				if err != nil || !ok {
					t.Fatalf("max %d: %v %v", max, ok, err)
				}
				if !strings.HasPrefix(full, got) {
					t.Fatalf("max %d: %q is not a prefix of the full text", max, got)
				}
				// The cut drops at most one rune plus its separator.
				if len(got) < max-utf8.UTFMax-1 {
					t.Fatalf("max %d: only %d bytes: %q", max, len(got), got)
				}
			}
		})
	}
}

func TestUnsupported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mime, name string }{
		{"image/png", "a.png"},
		{"application/octet-stream", "a.bin"},
		{"application/zip", "a.zip"},
		{"application/msword", "a.doc"},
	} {
		s, ok, err := Text(context.Background(), failingReader{t}, 10, tc.mime, tc.name, 100)
		if s != "" || ok || err != nil {
			t.Errorf("Text(%q, %q) = %q, %v, %v; want \"\", false, nil", tc.mime, tc.name, s, ok, err)
		}
	}
}

// failingReader fails the test when read.
type failingReader struct{ t *testing.T }

func (f failingReader) Read([]byte) (int, error) {
	f.t.Error("unexpected read")
	return 0, io.EOF
}

func (f failingReader) ReadAt([]byte, int64) (int, error) {
	f.t.Error("unexpected read")
	return 0, io.EOF
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	// Declared sizes over the limits are not read at all.
	for _, tc := range []struct {
		mime string
		size int64
	}{
		{"application/pdf", maxPDFSize + 1},
		{mimeDOCX, maxArchiveSize + 1},
	} {
		s, ok, err := Text(context.Background(), failingReader{t}, tc.size, tc.mime, "big", 100)
		if s != "" || !ok || err != nil {
			t.Errorf("%s: Text = %q, %v, %v; want \"\", true, nil", tc.mime, s, ok, err)
		}
	}
	if s, ok, err := Text(context.Background(), failingReader{t}, 10, "text/plain", "a", 0); s != "" || !ok || err != nil {
		t.Errorf("max 0: Text = %q, %v, %v", s, ok, err)
	}
}

// onlyReader hides every method but Read, so that Text has to spool.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestSpool(t *testing.T) {
	t.Parallel()
	// Over memSpool, so spooled to a temporary file.
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, `<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>spooledword</w:t></w:r></w:p><w:p><w:r><w:t>%s</w:t></w:r></w:p></w:body></w:document>`,
		strings.Repeat("padding ", memSpool/8+1000))
	zw.Close()
	big := b.Bytes()
	small := buildPDF(pdfText("smallspooled"))
	for _, tc := range []struct {
		mime string
		data []byte
		size int64
		want string
	}{
		{mimeDOCX, big, int64(len(big)), "spooledword"},
		{mimeDOCX, big, -1, "spooledword"},
		{"application/pdf", small, -1, "smallspooled"},
		{"application/pdf", small, int64(len(small)), "smallspooled"},
	} {
		s, ok, err := Text(context.Background(), onlyReader{bytes.NewReader(tc.data)}, tc.size, tc.mime, "f", 100)
		if !ok || err != nil || !strings.HasPrefix(s, tc.want) {
			t.Errorf("%s size %d: Text = %q, %v, %v", tc.mime, tc.size, s, ok, err)
		}
	}
}

// deflated returns a raw deflate stream of prefix, then fill repeated up to
// about n bytes in all, then suffix; and the zip header describing it. It deflates
// one mebibyte of fill and repeats its encoding, so that hundreds of
// mebibytes cost next to nothing to build.
func deflated(t testing.TB, prefix, fill string, n int, suffix string) ([]byte, zip.FileHeader) {
	t.Helper()
	chunk := bytes.Repeat([]byte(fill), (1<<20)/len(fill))
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	crc := crc32.NewIEEE()
	write := func(p []byte) []byte {
		buf.Reset()
		fw.Write(p)
		fw.Flush()
		crc.Write(p)
		return bytes.Clone(buf.Bytes())
	}
	fills := (n - len(prefix) - len(suffix)) / len(chunk)
	out := write([]byte(prefix))
	out = append(out, write(chunk)...) // fills the window with fill bytes
	unit := write(chunk)
	if again := write(chunk); !bytes.Equal(unit, again) {
		t.Fatal("deflate output of a repeated chunk is not stable")
	}
	out = append(out, unit...)
	out = append(out, unit...)
	for i := 3; i < fills; i++ {
		out = append(out, unit...)
		crc.Write(chunk)
	}
	buf.Reset()
	fw.Write([]byte(suffix))
	crc.Write([]byte(suffix))
	fw.Close()
	out = append(out, buf.Bytes()...)
	return out, zip.FileHeader{Method: zip.Deflate, CRC32: crc.Sum32(), CompressedSize64: uint64(len(out)),
		UncompressedSize64: uint64(len(prefix) + fills*len(chunk) + len(suffix))}
}

// rawZip builds an archive whose members hold the same pre-deflated data.
func rawZip(t testing.TB, data []byte, fh zip.FileHeader, names ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range names {
		h := fh
		h.Name = name
		w, err := zw.CreateRaw(&h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	return b.Bytes()
}

func TestZipBomb(t *testing.T) {
	t.Parallel()
	const (
		size   = 400 << 20 // decompressed, about 400 KiB deflated
		prefix = `<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>bombword</w:t></w:r></w:p>`
		suffix = `<w:p><w:r><w:t>pastthecap</w:t></w:r></w:p></w:body></w:document>`
	)
	spaces, sfh := deflated(t, prefix, " ", size, suffix)
	zeros, zfh := deflated(t, prefix, "\x00", size, suffix)
	paras, pfh := deflated(t, prefix, "<w:p/>"+strings.Repeat(" ", 1018), size, suffix)

	t.Run("check the fixture", func(t *testing.T) {
		zr, err := zip.NewReader(bytes.NewReader(rawZip(t, spaces, sfh, "m")), int64(len(spaces)+200))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, rc)
		if err != nil || n != int64(sfh.UncompressedSize64) || n < size-2<<20 {
			t.Fatalf("member decompresses to %d bytes, %v", n, err)
		}
	})
	for _, tc := range []struct {
		name    string
		data    []byte
		fh      zip.FileHeader
		wantErr bool // else the text before the cap, "bombword"
	}{
		{"paragraphs stop at the member cap", paras, pfh, false},
		{"spaces stop at the text node cap", spaces, sfh, false},
		{"zeros stop at the text node cap with an XML error", zeros, zfh, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			s, ok, err := text(t, rawZip(t, tc.data, tc.fh, "word/document.xml"), mimeDOCX, "bomb.docx", 1000)
			t.Logf("%v: %q, %v, %v", time.Since(start), s, ok, err)
			switch {
			case tc.wantErr && (err == nil || !strings.Contains(err.Error(), "word/document.xml")):
				t.Errorf("err = %v, want an error naming the member", err)
			case !tc.wantErr && (err != nil || s != "bombword"):
				t.Errorf("Text = %q, %v, %v; want the text before the cap and no error", s, ok, err)
			}
		})
	}
}

// The archive budget stops the next members. Not parallel: it lowers the
// package's limits, which every parallel test reads.
func TestZipArchiveBudget(t *testing.T) {
	const (
		size   = 400 << 20
		prefix = `<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>bombword</w:t></w:r></w:p>`
		suffix = `<w:p><w:r><w:t>pastthecap</w:t></w:r></w:p></w:body></w:document>`
	)
	paras, pfh := deflated(t, prefix, "<w:p/>"+strings.Repeat(" ", 1018), size, suffix)
	defer func(m, a int64) { maxMemberBytes, maxArchiveBytes = m, a }(maxMemberBytes, maxArchiveBytes)
	maxMemberBytes, maxArchiveBytes = 1<<20, 3<<20
	slides := rawZip(t, paras, pfh, "ppt/presentation.xml", "ppt/slides/slide1.xml", "ppt/slides/slide2.xml",
		"ppt/slides/slide3.xml", "ppt/slides/slide4.xml", "ppt/slides/slide5.xml")
	s, ok, err := text(t, slides, mimePPTX, "bomb.pptx", 1000)
	if err != nil || s != "bombword\nbombword\nbombword" {
		t.Errorf("Text = %q, %v, %v; want three slides' text", s, ok, err)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	good := buildPDF(pdfText("goodword"))
	// replace edits the xref table or trailer of a PDF (after the objects,
	// so that their offsets stay right).
	replace := func(b []byte, old, new string) []byte {
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("fixture lacks %q", old)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
	// onePage builds a one-page PDF from the page tree, page, content and
	// font objects.
	onePage := func(pages, page, content, font string) []byte {
		return assemblePDF("<< /Type /Catalog /Pages 2 0 R >>", pages, page, content, font)
	}
	const (
		pages = "<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
		page  = "<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
		font  = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
	)
	content := pdfStream(pdfText("visible"))
	for _, tc := range []struct {
		name, mime string
		data       []byte
		wantErr    bool
	}{
		{"garbage pdf", "application/pdf", []byte("this is not a PDF at all, just some words"), true},
		{"empty pdf", "application/pdf", nil, true},
		{"pdf header only", "application/pdf", []byte("%PDF-1.4\n" + strings.Repeat("x", 200) + "\n%%EOF\n"), true},
		{"truncated pdf", "application/pdf", good[:len(good)/2], true},
		{"pdf without its end", "application/pdf", good[:len(good)-20], true},
		{"pdf with huge object numbers", "application/pdf", replace(good, "xref\n0 ", "xref\n1099511627776 "), true},
		{"pdf with a /Prev loop", "application/pdf",
			replace(good, "/Root 1 0 R >>", fmt.Sprintf("/Root 1 0 R /Prev %d >>", bytes.LastIndex(good, []byte("\nxref\n"))+1)), true},
		{"pdf with an unterminated hex string in an object stream", "application/pdf", buildPDFObjStm("hidden", "<41"), true},
		{"pdf with a hostile cmap", "application/pdf", assemblePDF("<< /Type /Catalog /Pages 2 0 R >>", pages, page, content,
			"<< /Type /Font /Subtype /Type0 /BaseFont /Helvetica /Encoding /Identity-H /ToUnicode 6 0 R >>",
			pdfStream("/CIDInit /ProcSet findresource begin 1 begincodespacerange <00> <FF> endcodespacerange <41")), false},
		{"pdf with a cmap count loop", "application/pdf", assemblePDF("<< /Type /Catalog /Pages 2 0 R >>", pages, page, content,
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
			pdfStream("1 begincodespacerange <00> <FF> endcodespacerange 999999999999 beginbfchar endbfchar")), false},
		{"pdf with huge predictor columns", "application/pdf", onePage(pages, page,
			"<< /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 1099511627776 >> /Length 0 >>\nstream\n\nendstream", font), true},
		{"pdf with an unknown filter", "application/pdf", onePage(pages, page, "<< /Filter /LZWDecode /Length 4 >>\nstream\nabcd\nendstream", font), true},
		{"pdf with a page tree loop", "application/pdf", onePage("<< /Type /Pages /Kids [2 0 R 3 0 R 2 0 R] /Count 3 >>", page, content, font), false},
		{"pdf with a resources loop", "application/pdf", onePage(pages, "<< /Type /Page /Parent 3 0 R /Contents 4 0 R >>", content, font), false},
		{"pdf with a flate bomb page", "application/pdf", onePage(pages, page,
			pdfFlateStream(append([]byte("BT /F1 9 Tf (bombpage) Tj ET "), bytes.Repeat([]byte{' '}, 100<<20)...)), font), false},
		{"garbage docx", mimeDOCX, []byte("PK\x03\x04 this is not really a zip file"), true},
		{"empty docx", mimeDOCX, nil, true},
		{"docx without document", mimeDOCX, buildZip(t, zipFile{"word/other.xml", "<a/>"}), true},
		{"docx with broken xml", mimeDOCX, buildZip(t, zipFile{"word/document.xml", "<w:document><w:t>unclosed & bad</w:document>"}), true},
		{"docx with utf-16 xml", mimeDOCX, buildZip(t, zipFile{"word/document.xml", `<?xml version="1.0" encoding="UTF-16"?><a/>`}), true},
		{"truncated docx", mimeDOCX, buildDOCX(t, "words")[:300], true},
		{"xlsx that is a docx", mimeXLSX, buildDOCX(t, "words"), true},
		{"html soup", "text/html", []byte("<p <b>></script><style>x</p>&#xFFFFFFFF;&bogus; <![CDATA["), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok, err := text(t, tc.data, tc.mime, "f", 1000)
			t.Logf("Text = %q, %v, %v", s, ok, err)
			if !ok {
				t.Errorf("supported = false")
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want error: %v", err, tc.wantErr)
			}
			if err != nil && s != "" {
				t.Errorf("text %q returned with an error", s)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		mime string
		data []byte
	}{
		{"text/plain", []byte("words")},
		{"text/html", []byte("<p>words</p>")},
		{"application/pdf", buildPDF(pdfText("words"))},
		{mimeDOCX, buildDOCX(t, "words")},
	} {
		s, ok, err := Text(ctx, bytes.NewReader(tc.data), int64(len(tc.data)), tc.mime, "f", 100)
		if !errors.Is(err, context.Canceled) || !ok || s != "" {
			t.Errorf("%s: Text = %q, %v, %v; want context.Canceled", tc.mime, s, ok, err)
		}
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"  lead and trail  \n", 100, "lead and trail"},
		{"a\x00b\x01c\x7fd\u0085e", 100, "a b c d e"},
		{"a \t \r\n \n b", 100, "a\nb"},
		{"a\u00a0b\u2028c", 100, "a b\nc"},
		{"bad \xc3\x28 utf8", 100, "bad \uFFFD( utf8"},
		{"abc def", 3, "abc"},
		{"abc def", 4, "abc"},
		{"abc def", 5, "abc d"},
		{"€€", 5, "€"},
		{"€€", 6, "€€"},
	} {
		w := newTextWriter(tc.max, -1)
		w.WriteString(tc.in)
		if got := w.String(); got != tc.want {
			t.Errorf("write %q max %d = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func BenchmarkText(b *testing.B) {
	// About 100 KB of DOCX: varied words so that it compresses like prose.
	vocab := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their can has been if more when will would who so no")
	var paras []string
	seed := uint32(1)
	for len(paras) < 1400 {
		var p []string
		for i := 0; i < 40; i++ {
			seed = seed*1664525 + 1013904223
			w := vocab[seed>>16%uint32(len(vocab))]
			if seed%7 == 0 {
				w = fmt.Sprintf("%s%d", w, seed%100000)
			}
			p = append(p, w)
		}
		paras = append(paras, strings.Join(p, " "))
	}
	docx := buildDOCX(b, paras...)
	b.Logf("DOCX is %d bytes", len(docx))
	b.SetBytes(int64(len(docx)))
	b.ReportAllocs()
	for b.Loop() {
		s, _, err := Text(context.Background(), bytes.NewReader(docx), int64(len(docx)), mimeDOCX, "b.docx", 1<<20)
		if err != nil || len(s) < 100_000 {
			b.Fatalf("Text = %d bytes, %v", len(s), err)
		}
	}
}
