package drive

// Names and types: what a valid item name is, name keys for uniqueness,
// numbered free names, MIME detection and groups, content hash format.

import (
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"atrium/app"
)

// MaxNameBytes is the longest item name, in bytes of UTF-8.
const MaxNameBytes = 255

// CleanName is the one rule for item names, applied by every door (REST,
// WebDAV, TUS, WOPI): it returns name in Unicode NFC — the form names are
// stored and compared in, so that "café" composed (NFC) and decomposed (NFD,
// as macOS sends it) are the same name — or a validation error at location.
func CleanName(location, name string) (string, error) {
	reason := ""
	if utf8.ValidString(name) {
		name = norm.NFC.String(name)
	}
	switch {
	case name == "":
		reason = "must not be empty"
	case !utf8.ValidString(name):
		reason = "must be valid UTF-8"
	case len(name) > MaxNameBytes:
		reason = fmt.Sprintf("must be at most %d bytes of UTF-8 (is %d)", MaxNameBytes, len(name))
	case name == "." || name == "..":
		reason = `must not be "." or ".."`
	case strings.ContainsRune(name, '/'):
		reason = `must not contain "/"`
	case strings.ContainsRune(name, 0):
		reason = "must not contain NUL"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		reason = "must not contain control characters"
	case bidiControl(name) != 0:
		r := bidiControl(name)
		reason = fmt.Sprintf("must not contain the bidirectional control character U+%04X (%s): it can make a name display as another", r, bidiControls[r])
	case strings.TrimSpace(name) == "":
		reason = "must not be only spaces"
	}
	if reason != "" {
		return "", app.Invalid(location, "The name "+reason+".", name)
	}
	return name, nil
}

// bidiControls are the invisible characters that change the display order of
// text around them (Unicode Bidi_Control), refused in names.
var bidiControls = map[rune]string{
	0x061C: "ARABIC LETTER MARK",
	0x200E: "LEFT-TO-RIGHT MARK",
	0x200F: "RIGHT-TO-LEFT MARK",
	0x202A: "LEFT-TO-RIGHT EMBEDDING",
	0x202B: "RIGHT-TO-LEFT EMBEDDING",
	0x202C: "POP DIRECTIONAL FORMATTING",
	0x202D: "LEFT-TO-RIGHT OVERRIDE",
	0x202E: "RIGHT-TO-LEFT OVERRIDE",
	0x2066: "LEFT-TO-RIGHT ISOLATE",
	0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE",
	0x2069: "POP DIRECTIONAL ISOLATE",
}

// bidiControl returns the first bidirectional control character of name, or 0.
func bidiControl(name string) rune {
	for _, r := range name {
		if _, ok := bidiControls[r]; ok {
			return r
		}
	}
	return 0
}

// NameKey folds a name for comparison: NFC, then case-insensitive. Lookups by
// name (a WebDAV path, a sibling's name) compare keys, so a name found in either
// normalisation form finds the item.
func NameKey(name string) string { return strings.ToLower(norm.NFC.String(name)) }

// NumberedName returns the n-th alternative of name: "report (n).pdf".
func NumberedName(name string, n int) string {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	if base == "" { // ".bashrc": the whole name is the base
		base, ext = name, ""
	}
	alt := fmt.Sprintf("%s (%d)%s", base, n, ext)
	for len(alt) > MaxNameBytes && len(base) > 0 {
		_, size := utf8.DecodeLastRuneInString(base)
		base = base[:len(base)-size]
		alt = fmt.Sprintf("%s (%d)%s", base, n, ext)
	}
	return alt
}

// Mime groups (CONTRACT §4).
var MimeGroups = []string{"image", "video", "audio", "document", "spreadsheet", "presentation", "pdf", "archive", "text", "other"}

// DetectMime returns declared (without parameters) when it is a specific,
// well-formed media type,
// else the type the name's extension suggests, else application/octet-stream.
func DetectMime(name, declared string) string {
	if declared != "" {
		if mt, _, err := mime.ParseMediaType(declared); err == nil && mt != "application/octet-stream" {
			return mt
		}
	}
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		mt, _, err := mime.ParseMediaType(t)
		if err == nil {
			return mt
		}
	}
	if extra, ok := extraTypes[strings.ToLower(path.Ext(name))]; ok {
		return extra
	}
	return "application/octet-stream"
}

// extraTypes covers extensions the platform's mime table may lack.
var extraTypes = map[string]string{
	".md":   "text/markdown",
	".odt":  "application/vnd.oasis.opendocument.text",
	".ods":  "application/vnd.oasis.opendocument.spreadsheet",
	".odp":  "application/vnd.oasis.opendocument.presentation",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".heic": "image/heic",
	".webp": "image/webp",
	".7z":   "application/x-7z-compressed",
	".zst":  "application/zstd",
}

// MimeGroup returns the category of a mime type.
func MimeGroup(mimeType string) string {
	mt, _, _ := strings.Cut(strings.ToLower(mimeType), ";")
	mt = strings.TrimSpace(mt)
	major, minor, _ := strings.Cut(mt, "/")
	switch {
	case mt == FolderMime:
		return "other"
	case mt == "application/pdf":
		return "pdf"
	case major == "image", major == "video", major == "audio":
		return major
	case strings.Contains(minor, "spreadsheet") || strings.Contains(minor, "excel") || mt == "text/csv" || strings.Contains(minor, "numbers"):
		return "spreadsheet"
	case strings.Contains(minor, "presentation") || strings.Contains(minor, "powerpoint") || strings.Contains(minor, "keynote"):
		return "presentation"
	case strings.Contains(minor, "wordprocessing") || strings.Contains(minor, "opendocument.text") || minor == "msword" ||
		minor == "rtf" || strings.Contains(minor, "pages"):
		return "document"
	case strings.Contains(minor, "zip") || strings.Contains(minor, "tar") || strings.Contains(minor, "compressed") ||
		strings.Contains(minor, "rar") || minor == "gzip" || minor == "x-bzip2" || minor == "x-xz" || minor == "zstd":
		return "archive"
	case major == "text", minor == "json", minor == "xml", minor == "javascript", minor == "x-yaml", minor == "yaml":
		return "text"
	}
	return "other"
}

// InlineSafe reports whether a browser may be shown content of mimeType inline
// from our origin: images other than SVG, audio, video, PDF and plain text.
// Anything that a browser would run (HTML, SVG, XML) is served as an attachment.
func InlineSafe(mimeType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(mimeType), ";")
	mt = strings.TrimSpace(mt)
	switch {
	case mt == "image/svg+xml":
		return false
	case strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"):
		return true
	case mt == "application/pdf", mt == "text/plain", mt == "text/markdown", mt == "text/csv":
		return true
	}
	return false
}

// IsText reports whether a mime type is text a person can read and edit as a string.
func IsText(mimeType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(mimeType), ";")
	mt = strings.TrimSpace(mt)
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" ||
		mt == "application/x-yaml" || mt == "application/yaml" || mt == "application/javascript"
}

// FormatHash returns the API form of a hex SHA-256.
func FormatHash(hex string) string {
	if hex == "" {
		return ""
	}
	return "sha256:" + hex
}

func blobName(h string) string { return strings.TrimPrefix(h, "sha256:") }
