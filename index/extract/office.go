package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// xmlSpec says where the text is in one kind of XML part. Element names are
// matched by local name, whatever their namespace prefix.
type xmlSpec struct {
	// text lists the elements whose character data is text; nil means all
	// character data (inside body) is text.
	text map[string]bool
	// body, when set, restricts text to the content of this element.
	body string
	// skip lists elements whose whole content is ignored.
	skip map[string]bool
	// skipIf, when set, also ignores elements for which it returns true.
	skipIf func(xml.StartElement) bool
	// newline lists elements whose end breaks a line.
	newline map[string]bool
	// space lists elements whose start separates words.
	space map[string]bool
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

var (
	// docxSpec reads WordprocessingML (word/document.xml and notes). Text is
	// in w:t; field codes (w:instrText) and deleted text (w:delText) are not
	// text, and mc:Fallback repeats the content of mc:Choice.
	docxSpec = &xmlSpec{
		text:    set("t"),
		skip:    set("Fallback"),
		newline: set("p", "br", "cr"),
		space:   set("tab", "tc", "ptab"),
	}
	// xlsxStringsSpec reads the shared string table; phonetic runs (rPh)
	// repeat the text in another script.
	xlsxStringsSpec = &xmlSpec{
		text:    set("t"),
		skip:    set("rPh"),
		newline: set("si"),
	}
	// xlsxSheetSpec reads inline strings and values from a worksheet,
	// leaving out formulas and cells whose value is an index into the shared
	// string table (already read from there).
	xlsxSheetSpec = &xmlSpec{
		text:    set("t", "v"),
		skip:    set("f", "Fallback"),
		skipIf:  sharedStringCell,
		newline: set("row"),
		space:   set("c"),
	}
	// pptxSpec reads DrawingML text from a slide.
	pptxSpec = &xmlSpec{
		text:    set("t"),
		skip:    set("Fallback"),
		newline: set("p", "br"),
	}
	// odfSpec reads an OpenDocument content.xml: all character data inside
	// office:body except tracked (deleted) changes and annotation metadata.
	odfSpec = &xmlSpec{
		body:    "body",
		skip:    set("tracked-changes", "creator", "date", "note-citation"),
		newline: set("p", "h", "line-break", "table-row", "page", "list-item"),
		space:   set("tab", "s", "table-cell", "covered-table-cell", "frame", "annotation"),
	}
)

// sharedStringCell reports a worksheet cell (<c t="s">) whose value is an
// index into the shared string table.
func sharedStringCell(e xml.StartElement) bool {
	if e.Name.Local != "c" {
		return false
	}
	for _, a := range e.Attr {
		if a.Name.Local == "t" && a.Name.Space == "" {
			return a.Value == "s"
		}
	}
	return false
}

// part is one archive member to read.
type part struct {
	name string
	spec *xmlSpec
}

// archiveParts lists, in reading order, the members holding the text of an
// archive of kind k, and the member whose absence means it is not that kind
// at all.
func archiveParts(k kind, files map[string]*zip.File) (parts []part, required string) {
	switch k {
	case kindDOCX:
		return []part{
			{"word/document.xml", docxSpec},
			{"word/footnotes.xml", docxSpec},
			{"word/endnotes.xml", docxSpec},
		}, "word/document.xml"
	case kindXLSX:
		parts = []part{{"xl/sharedStrings.xml", xlsxStringsSpec}}
		for _, name := range numbered(files, "xl/worksheets/sheet", ".xml") {
			parts = append(parts, part{name, xlsxSheetSpec})
		}
		return parts, "xl/workbook.xml"
	case kindPPTX:
		for _, name := range numbered(files, "ppt/slides/slide", ".xml") {
			parts = append(parts, part{name, pptxSpec})
		}
		return parts, "ppt/presentation.xml"
	default: // OpenDocument
		return []part{{"content.xml", odfSpec}}, "content.xml"
	}
}

// numbered returns the names prefix+N+suffix in files, in the order of N.
func numbered(files map[string]*zip.File, prefix, suffix string) []string {
	type entry struct {
		name string
		n    int
	}
	var entries []entry
	for name := range files {
		digits, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		digits, ok = strings.CutSuffix(digits, suffix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n < 0 {
			continue
		}
		entries = append(entries, entry{name, n})
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].n != entries[j].n {
			return entries[i].n < entries[j].n
		}
		return entries[i].name < entries[j].name
	})
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.name
	}
	return names
}

// extractArchive reads the text of a zip-based document (DOCX, XLSX, PPTX,
// ODT, ODS or ODP).
func extractArchive(ctx context.Context, r io.Reader, size int64, k kind, w *textWriter) error {
	src, tooBig, err := openSource(ctx, r, size, maxArchiveSize)
	if err != nil {
		return err
	}
	if tooBig {
		return nil
	}
	defer src.close()
	zr, err := zip.NewReader(&ctxReaderAt{ctx: ctx, ra: src.ra}, src.size)
	if err != nil && !(errors.Is(err, zip.ErrInsecurePath) && zr != nil) {
		return fmt.Errorf("open zip: %w", err)
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		if _, dup := files[f.Name]; !dup {
			files[f.Name] = f
		}
	}
	parts, required := archiveParts(k, files)
	if files[required] == nil {
		return fmt.Errorf("missing %s: not a %s document", required, k)
	}
	budget := maxArchiveBytes
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := files[p.name]
		if f == nil {
			continue
		}
		err := readMember(ctx, f, p.spec, &budget, w)
		switch {
		case errors.Is(err, errFull):
			return err
		case errors.Is(err, errCapped):
			if budget <= 0 {
				return err
			}
		case err != nil:
			return fmt.Errorf("%s: %w", p.name, err)
		}
		w.newline()
	}
	return nil
}

// readMember reads the text of one XML member, decompressing at most
// maxMemberBytes of it and no more than the archive's remaining budget.
func readMember(ctx context.Context, f *zip.File, spec *xmlSpec, budget *int64, w *textWriter) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer rc.Close()
	member := maxMemberBytes
	return readXML(ctx, &runCapReader{r: multiCap(rc, &member, budget)}, spec, w)
}

// maxXMLRun caps the bytes between two '<' in an XML member. encoding/xml
// holds a whole text node (or attribute) in memory before returning it, so
// without a cap one huge node would take as much memory as the member cap.
const maxXMLRun = 8 << 20

// runCapReader fails with errCapped once more than maxXMLRun bytes go by
// without a '<'.
type runCapReader struct {
	r   io.Reader
	run int
}

func (c *runCapReader) Read(p []byte) (int, error) {
	if c.run > maxXMLRun {
		return 0, errCapped
	}
	n, err := c.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '<'); i >= 0 {
		c.run = n - i - 1
	} else {
		c.run += n
	}
	return n, err
}

// readXML streams the text of an XML document to w as spec directs.
func readXML(ctx context.Context, r io.Reader, spec *xmlSpec, w *textWriter) error {
	d := xml.NewDecoder(r)
	d.CharsetReader = func(label string, input io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return input, nil
		}
		return nil, fmt.Errorf("unsupported XML encoding %q", label)
	}
	var (
		depth  int
		skipAt = -1 // depth of the skipped element we are in
		textAt = -1 // depth of the text element we are in
		bodyAt = -1 // depth of the body element we are in
	)
	for i := 0; ; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("parse xml: %w", err)
		}
		inBody := spec.body == "" || bodyAt >= 0
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			local := t.Name.Local
			switch {
			case skipAt >= 0:
			case spec.skip[local] || spec.skipIf != nil && spec.skipIf(t):
				skipAt = depth
			case !inBody:
				if local == spec.body {
					bodyAt = depth
				}
			default:
				if textAt < 0 && spec.text[local] {
					textAt = depth
				}
				if spec.space[local] {
					w.space()
				}
			}
		case xml.EndElement:
			switch {
			case skipAt >= 0:
				if depth == skipAt {
					skipAt = -1
				}
			case inBody:
				if depth == textAt {
					textAt = -1
				}
				if depth == bodyAt {
					bodyAt = -1
				}
				if spec.newline[t.Name.Local] {
					w.newline()
				}
			}
			depth--
		case xml.CharData:
			if skipAt < 0 && inBody && (spec.text == nil || textAt >= 0) {
				if _, err := w.Write(t); err != nil {
					return err
				}
			}
		}
	}
}
