// Package extract turns the content of uploaded files into plain text for the
// drive's full-text search index.
//
// It handles plain text and other text/* types, Markdown, HTML, PDF, the
// Office Open XML formats (DOCX, XLSX, PPTX) and the OpenDocument formats
// (ODT, ODS, ODP), in pure Go.
//
// Input is untrusted, so every format is read with hard limits: at most
// 64 MiB is decompressed from one archive member (256 MiB from one archive),
// PDFs larger than 128 MiB and archives larger than 1 GiB are not opened,
// text inputs are read for at most 64 MiB, and reading stops as soon as the
// requested amount of text has been collected. Malformed input yields an
// error, never a panic. Output is valid UTF-8 with control characters
// replaced by spaces and runs of whitespace collapsed to a single space or
// newline.
//
// PDFs are parsed with github.com/ledongthuc/pdf, which trusts the numbers
// in a file. Before handing it a file, the package checks the structures
// that would make the library allocate without bound (which kills the
// process) or loop forever, and refuses such files; page content is
// interpreted by this package's own bounded lexer rather than the
// library's. As a last resort the library runs in its own goroutine: Text
// returns when ctx is done even if the library is stuck, and a bounded
// number of such goroutines (half the CPUs, at least one) may run at once,
// so PDF extractions wait for each other. Callers should give ctx a
// deadline.
package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
)

// Limits applied to zip archives; variables so that tests can lower them.
var (
	// maxMemberBytes caps the decompressed bytes read from one zip member.
	maxMemberBytes int64 = 64 << 20
	// maxArchiveBytes caps the decompressed bytes read from all the
	// members of one zip archive together.
	maxArchiveBytes int64 = 256 << 20
)

// Limits applied to untrusted input.
const (
	// maxArchiveSize is the largest zip container that is opened at all.
	maxArchiveSize = 1 << 30
	// maxPDFSize is the largest PDF that is opened at all.
	maxPDFSize = 128 << 20
	// maxTextInput caps the bytes read from text and HTML inputs.
	maxTextInput = 64 << 20
)

// kind is a content format that Text knows how to read.
type kind int

const (
	kindNone kind = iota
	kindPlain
	kindHTML
	kindPDF
	kindDOCX
	kindXLSX
	kindPPTX
	kindODT
	kindODS
	kindODP
)

var kindNames = [...]string{
	kindNone:  "unsupported",
	kindPlain: "text",
	kindHTML:  "html",
	kindPDF:   "pdf",
	kindDOCX:  "docx",
	kindXLSX:  "xlsx",
	kindPPTX:  "pptx",
	kindODT:   "odt",
	kindODS:   "ods",
	kindODP:   "odp",
}

func (k kind) String() string { return kindNames[k] }

// mimeKinds maps specific (non text/*) media types to formats.
var mimeKinds = map[string]kind{
	"text/html":             kindHTML,
	"application/xhtml+xml": kindHTML,
	"application/pdf":       kindPDF,
	"application/x-pdf":     kindPDF,

	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   kindDOCX,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.template":   kindDOCX,
	"application/vnd.ms-word.document.macroenabled.12":                          kindDOCX,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         kindXLSX,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.template":      kindXLSX,
	"application/vnd.ms-excel.sheet.macroenabled.12":                            kindXLSX,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": kindPPTX,
	"application/vnd.openxmlformats-officedocument.presentationml.slideshow":    kindPPTX,
	"application/vnd.ms-powerpoint.presentation.macroenabled.12":                kindPPTX,
	"application/vnd.oasis.opendocument.text":                                   kindODT,
	"application/vnd.oasis.opendocument.spreadsheet":                            kindODS,
	"application/vnd.oasis.opendocument.presentation":                           kindODP,

	"application/json":         kindPlain,
	"application/ld+json":      kindPlain,
	"application/xml":          kindPlain,
	"application/yaml":         kindPlain,
	"application/x-yaml":       kindPlain,
	"application/toml":         kindPlain,
	"application/javascript":   kindPlain,
	"application/x-javascript": kindPlain,
	"application/sql":          kindPlain,
	"application/x-sh":         kindPlain,
	"application/x-tex":        kindPlain,
	"application/x-subrip":     kindPlain,
}

// notPlainText lists text/* types whose raw content is markup rather than
// readable text.
var notPlainText = map[string]bool{"text/rtf": true, "text/richtext": true}

// genericMIME lists declared types that say nothing about the content, so
// the file name's extension decides instead.
var genericMIME = map[string]bool{
	"":                             true,
	"application/octet-stream":     true,
	"binary/octet-stream":          true,
	"application/binary":           true,
	"application/unknown":          true,
	"application/x-unknown":        true,
	"application/download":         true,
	"application/x-download":       true,
	"application/force-download":   true,
	"application/zip":              true, // browsers send it for DOCX and ODT
	"application/x-zip-compressed": true,
	"application/x-zip":            true,
}

// extKinds maps lower-case file extensions to formats.
var extKinds = map[string]kind{
	".txt": kindPlain, ".text": kindPlain, ".md": kindPlain, ".markdown": kindPlain,
	".csv": kindPlain, ".tsv": kindPlain, ".log": kindPlain, ".json": kindPlain,
	".xml": kindPlain, ".yaml": kindPlain, ".yml": kindPlain, ".toml": kindPlain,
	".ini": kindPlain, ".cfg": kindPlain, ".conf": kindPlain, ".rst": kindPlain,
	".tex": kindPlain, ".srt": kindPlain, ".vtt": kindPlain, ".ics": kindPlain,
	".vcf": kindPlain, ".sql": kindPlain, ".sh": kindPlain, ".go": kindPlain,
	".py": kindPlain, ".js": kindPlain, ".ts": kindPlain, ".java": kindPlain,
	".c": kindPlain, ".h": kindPlain, ".cpp": kindPlain, ".rs": kindPlain,
	".rb": kindPlain, ".php": kindPlain, ".css": kindPlain,

	".html": kindHTML, ".htm": kindHTML, ".xhtml": kindHTML,
	".pdf":  kindPDF,
	".docx": kindDOCX, ".docm": kindDOCX, ".dotx": kindDOCX,
	".xlsx": kindXLSX, ".xlsm": kindXLSX, ".xltx": kindXLSX,
	".pptx": kindPPTX, ".pptm": kindPPTX, ".ppsx": kindPPTX,
	".odt": kindODT, ".ods": kindODS, ".odp": kindODP,
}

// mediaType returns the lower-case media type and its charset parameter.
func mediaType(mimeType string) (typ, charset string) {
	mimeType = strings.TrimSpace(mimeType)
	if mt, params, err := mime.ParseMediaType(mimeType); err == nil {
		return mt, strings.ToLower(params["charset"])
	}
	typ, _, _ = strings.Cut(mimeType, ";")
	return strings.ToLower(strings.TrimSpace(typ)), ""
}

// detect picks the format from the declared type, falling back to the
// extension of name when the type is generic.
func detect(mimeType, name string) kind {
	typ, _ := mediaType(mimeType)
	if !genericMIME[typ] {
		if k, ok := mimeKinds[typ]; ok {
			return k
		}
		if strings.HasPrefix(typ, "text/") && !notPlainText[typ] {
			return kindPlain
		}
		return kindNone
	}
	return extKinds[strings.ToLower(path.Ext(name))]
}

// Supported reports whether Text can extract text from content of the given
// declared media type and file name. It does no I/O.
func Supported(mimeType, name string) bool {
	return detect(mimeType, name) != kindNone
}

// errFull is returned by producers once the text buffer is full; Text
// treats it as success.
var errFull = errors.New("extract: text limit reached")

// errCapped is returned by capped readers once an input limit is reached;
// Text treats it as success with the text collected so far.
var errCapped = errors.New("extract: input limit reached")

// Text returns the plain text of a file's content for indexing: at most max
// bytes of valid UTF-8, cut on a rune boundary, and whether the type is
// supported at all.
//
// r is the content and size its length (negative if unknown). When r
// implements io.ReaderAt (an *os.File does) and size is known, formats that
// need random access (zip-based ones and PDF) read it in place; otherwise the
// content is spooled to memory or to a temporary file. mimeType and name are
// the file's declared media type and name; the name's extension is used when
// the type is generic, such as application/octet-stream.
//
// Unsupported types return ("", false, nil) without reading r. Content
// beyond the input limits is ignored; a PDF or archive too large to open
// yields ("", true, nil). Malformed content and cancellation of ctx return an
// error and no text.
func Text(ctx context.Context, r io.Reader, size int64, mimeType, name string, max int) (text string, supported bool, err error) {
	k := detect(mimeType, name)
	if k == kindNone {
		return "", false, nil
	}
	if max <= 0 {
		return "", true, nil
	}
	if r == nil {
		return "", true, fmt.Errorf("extract %s %q: nil reader", k, name)
	}
	if err := ctx.Err(); err != nil {
		return "", true, fmt.Errorf("extract %s %q: %w", k, name, err)
	}
	w := newTextWriter(max, size)
	_, charset := mediaType(mimeType)
	switch k {
	case kindPlain:
		err = extractPlain(ctx, r, size, charset, w)
	case kindHTML:
		err = extractHTML(ctx, r, size, charset, w)
	case kindPDF:
		err = extractPDF(ctx, r, size, w)
	default:
		err = extractArchive(ctx, r, size, k, w)
	}
	if err != nil && !errors.Is(err, errFull) && !errors.Is(err, errCapped) {
		return "", true, fmt.Errorf("extract %s %q: %w", k, name, err)
	}
	return w.String(), true, nil
}
