package extract

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"fmt"
	"html"
	"strings"
	"testing"

	"atrium/index/extract/extracttest"
)

// assemblePDF builds a PDF of the given object bodies (extracttest.AssemblePDF).
func assemblePDF(objs ...string) []byte { return extracttest.AssemblePDF(objs...) }

// pdfStream returns the body of a stream object holding data.
func pdfStream(data string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data)
}

// pdfFlateStream returns the body of a FlateDecode stream object holding
// data.
func pdfFlateStream(data []byte) string {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes())
}

// buildPDF builds a PDF with one page per content stream; the pages share a
// Helvetica font resource /F1.
func buildPDF(contents ...string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"", // page tree, filled in below
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var kids []string
	for _, c := range contents {
		page := len(objs) + 1
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", page+1),
			pdfStream(c))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(contents))
	return assemblePDF(objs...)
}

// pdfText returns a content stream showing each line with Helvetica.
func pdfText(lines ...string) string {
	var b strings.Builder
	b.WriteString("BT\n/F1 12 Tf\n72 720 Td\n14 TL\n")
	for i, l := range lines {
		if i > 0 {
			b.WriteString("T*\n")
		}
		fmt.Fprintf(&b, "(%s) Tj\n", strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l))
	}
	b.WriteString("ET")
	return b.String()
}

// zipFile is one member of a test archive.
type zipFile struct {
	name, body string
}

// buildZip builds a zip archive of the given members, deflated.
func buildZip(t testing.TB, files ...zipFile) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const xmlHeader = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"

func esc(s string) string { return html.EscapeString(s) }

// buildDOCX builds a minimal Word document with one paragraph per string.
func buildDOCX(t testing.TB, paragraphs ...string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<w:p><w:pPr><w:pStyle w:val="Normal"/></w:pPr><w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, esc(p))
	}
	doc := xmlHeader + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:body>` +
		body.String() +
		`<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> HYPERLINK "http://fieldcodeurl.example" </w:instrText></w:r><w:r><w:t>link</w:t></w:r><w:r><w:t>ed</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t>tab</w:t></w:r><w:r><w:tab/><w:t>separated</w:t><w:br/><w:t>broken</w:t></w:r></w:p>` +
		`<w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:body></w:document>`
	return buildZip(t,
		zipFile{"[Content_Types].xml", xmlHeader + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		zipFile{"_rels/.rels", xmlHeader + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		zipFile{"word/document.xml", doc},
	)
}

// buildXLSX builds a minimal workbook: the shared strings, and one sheet
// using a shared string, an inline string, a number and a formula.
func buildXLSX(t testing.TB, shared, inline string) []byte {
	return buildZip(t,
		zipFile{"[Content_Types].xml", xmlHeader + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`},
		zipFile{"xl/workbook.xml", xmlHeader + `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/><sheet name="Sheet2" sheetId="2" r:id="rId2"/></sheets></workbook>`},
		zipFile{"xl/sharedStrings.xml", xmlHeader + `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>` + esc(shared) + `</t></si><si><r><rPr><b/></rPr><t>rich</t></r><r><t xml:space="preserve"> text</t></r><rPh sb="0" eb="1"><t>phonetic</t></rPh></si></sst>`},
		zipFile{"xl/worksheets/sheet10.xml", xmlHeader + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>10</v></c></row></sheetData></worksheet>`},
		zipFile{"xl/worksheets/sheet2.xml", xmlHeader + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1"><v>2</v></c></row></sheetData></worksheet>`},
		zipFile{"xl/worksheets/sheet1.xml", xmlHeader + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` +
			`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>` + esc(inline) + `</t></is></c></row>` +
			`<row r="2"><c r="A2"><v>3.25</v></c><c r="B2"><f>SUM(A2:A9)</f><v>42</v></c><c r="C2" t="str"><f>CONCAT("a","b")</f><v>ab</v></c></row>` +
			`</sheetData></worksheet>`},
	)
}

// buildPPTX builds a minimal presentation with one slide per string; the
// members are stored out of order to check slide ordering.
func buildPPTX(t testing.TB, slides ...string) []byte {
	files := []zipFile{
		{"[Content_Types].xml", xmlHeader + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`},
		{"ppt/presentation.xml", xmlHeader + `<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"/>`},
	}
	for i := len(slides) - 1; i >= 0; i-- {
		files = append(files, zipFile{fmt.Sprintf("ppt/slides/slide%d.xml", i+1), xmlHeader +
			`<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree>` +
			`<p:nvGrpSpPr><p:cNvPr id="1" name="Title 1"/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>` +
			`<p:sp><p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US"/><a:t>` + esc(slides[i]) + `</a:t></a:r></a:p><a:p><a:r><a:t>second</a:t></a:r><a:br/><a:r><a:t>line</a:t></a:r></a:p></p:txBody></p:sp>` +
			`</p:spTree></p:cSld></p:sld>`})
	}
	return buildZip(t, files...)
}

// buildODF builds a minimal OpenDocument file of the given media type with
// the given office:body content.
func buildODF(t testing.TB, mimeType, body string) []byte {
	return buildZip(t,
		zipFile{"mimetype", mimeType},
		zipFile{"META-INF/manifest.xml", xmlHeader + `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="` + mimeType + `"/></manifest:manifest>`},
		zipFile{"content.xml", xmlHeader + `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.2">` +
			`<office:automatic-styles><style:style xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" style:name="P1" style:family="paragraph"/></office:automatic-styles>` +
			`<office:body>` + body + `</office:body></office:document-content>`},
	)
}

func buildODT(t testing.TB, word string) []byte {
	return buildODF(t, "application/vnd.oasis.opendocument.text",
		`<office:text><text:h text:outline-level="1">Heading</text:h><text:p text:style-name="P1">`+esc(word)+` and<text:s/>more<text:tab/>text<text:line-break/>next</text:p>`+
			`<text:tracked-changes><text:changed-region text:id="c1"><text:deletion><text:p>deletedword</text:p></text:deletion></text:changed-region></text:tracked-changes>`+
			`<text:p>annotated<office:annotation><dc:creator>authorname</dc:creator><dc:date>2024-01-01</dc:date><text:p>comment</text:p></office:annotation></text:p></office:text>`)
}

func buildODS(t testing.TB, word string) []byte {
	return buildODF(t, "application/vnd.oasis.opendocument.spreadsheet",
		`<office:spreadsheet><table:table table:name="Sheet1"><table:table-row><table:table-cell office:value-type="string"><text:p>`+esc(word)+`</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="12.5"><text:p>12.5</text:p></table:table-cell></table:table-row>`+
			`<table:table-row><table:table-cell><text:p>second</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`)
}

func buildODP(t testing.TB, word string) []byte {
	return buildODF(t, "application/vnd.oasis.opendocument.presentation",
		`<office:presentation><draw:page draw:name="page1"><draw:frame><draw:text-box><text:p>`+esc(word)+`</text:p></draw:text-box></draw:frame></draw:page>`+
			`<draw:page draw:name="page2"><draw:frame><draw:text-box><text:p>slide two</text:p></draw:text-box></draw:frame></draw:page></office:presentation>`)
}

// buildPDFObjStm builds a PDF 1.5 file with a cross-reference stream whose
// page tree and page live in a compressed object stream; tail is appended to
// the object stream's data.
func buildPDFObjStm(word, tail string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	offsets := map[int]int{}
	obj := func(n int, body string) {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	obj(4, pdfStream(pdfText(word)))
	objs := []string{
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >> /Contents 4 0 R >>",
	}
	header := fmt.Sprintf("2 0 3 %d ", len(objs[0])+1)
	data := header + objs[0] + "\n" + objs[1] + "\n" + tail
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(data))
	zw.Close()
	obj(5, fmt.Sprintf("<< /Type /ObjStm /N 2 /First %d /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(header), z.Len(), z.Bytes()))
	obj(6, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	xrefOff := b.Len()
	var entries bytes.Buffer
	entry := func(typ byte, f2 int, f3 int) {
		entries.Write([]byte{typ, byte(f2 >> 24), byte(f2 >> 16), byte(f2 >> 8), byte(f2), byte(f3 >> 8), byte(f3)})
	}
	entry(0, 0, 65535)
	entry(1, offsets[1], 0)
	entry(2, 5, 0)
	entry(2, 5, 1)
	entry(1, offsets[4], 0)
	entry(1, offsets[5], 0)
	entry(1, offsets[6], 0)
	entry(1, xrefOff, 0)
	fmt.Fprintf(&b, "7 0 obj\n<< /Type /XRef /Size 8 /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n%s\nendstream\nendobj\n", entries.Len(), entries.Bytes())
	fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", xrefOff)
	return b.Bytes()
}
