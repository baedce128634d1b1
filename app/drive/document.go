package drive

// New blank office documents (CreateDocument): the empty ODF/OOXML bodies
// and the rules for their names.

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"strings"
	"time"

	"atrium/app"
)

// DocumentTypes are the types create-document makes, with their mime types.
var DocumentTypes = map[string]string{
	"odt":  "application/vnd.oasis.opendocument.text",
	"ods":  "application/vnd.oasis.opendocument.spreadsheet",
	"odp":  "application/vnd.oasis.opendocument.presentation",
	"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}

// defaultDocumentNames name new documents when the request gives no name.
var defaultDocumentNames = map[string]string{
	"odt": "New document", "ods": "New spreadsheet", "odp": "New presentation", "docx": "New document",
}

// CreateDocumentRequest creates an empty office document (CreateDocumentRequest).
type CreateDocumentRequest struct {
	// Name of the file; its extension gives the type when Type is empty, and
	// the type's extension is added when it has none.
	Name string
	// Type is odt, ods, odp or docx.
	Type string
	// ParentID is the folder; "" is the caller's root.
	ParentID string
	EditRequest
}

// documentName settles the name and type of a new document.
func (r CreateDocumentRequest) documentName() (name, typ string, err error) {
	name, typ = strings.TrimSpace(r.Name), strings.ToLower(r.Type)
	ext := fileExt(name)
	if typ == "" {
		typ = ext
		if ext == "" {
			typ = "odt"
		}
	}
	if _, ok := DocumentTypes[typ]; !ok {
		if r.Type == "" {
			return "", "", app.Invalid("body.name", "Give a name ending in .odt, .ods, .odp or .docx, or a type.", r.Name)
		}
		return "", "", app.Invalid("body.type", "The type is odt, ods, odp or docx.", r.Type)
	}
	switch {
	case name == "":
		name = defaultDocumentNames[typ] + "." + typ
	case ext == "":
		name += "." + typ
	case ext != typ:
		if _, known := DocumentTypes[ext]; known {
			return "", "", app.Invalid("body.name", fmt.Sprintf("The name ends in .%s but the type is %s.", ext, typ), r.Name)
		}
		name += "." + typ
	}
	name, err = CleanName("body.name", name)
	if err != nil {
		return "", "", err
	}
	return name, typ, nil
}

// CreateDocument creates an empty document of the requested type in a folder
// the caller may add to (a free name: "name (1).odt" when taken), through the
// drive's write path, and opens an edit session of it. Without an editor, or
// one that cannot edit the type, nothing is created (editor_unavailable).
// Errors: insufficient_scope (no drive:write), no_bound_user,
// feature_not_in_plan, editor_unavailable (no editor, or one that cannot edit
// the type), validation_failed (the name, the type, the language or theme, a
// parent that is a file), unavailable (the editor's discovery cannot be had),
// not_found (no such parent folder, or not shared with the caller), forbidden
// (a parent shared for viewing), conflict (no free name), locked (a lock on the
// parent the caller does not hold), quota_exceeded.
func (e *Editing) CreateDocument(ctx context.Context, p *app.Principal, r CreateDocumentRequest) (EditSession, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return EditSession{}, err
	}
	if e.disc == nil {
		return EditSession{}, noEditor()
	}
	name, typ, err := r.documentName()
	if err != nil {
		return EditSession{}, err
	}
	if err := r.EditRequest.validate(); err != nil {
		return EditSession{}, err
	}
	disc, err := e.discovery(ctx)
	if err != nil {
		return EditSession{}, err
	}
	if disc.Action("edit", name, DocumentTypes[typ]) == "" {
		return EditSession{}, app.Errorf(app.EEditorUnavailable, "The online editor (%s) cannot edit .%s documents.", disc.Product, typ)
	}
	parent, err := e.core.parentFolder(ctx, p, r.ParentID, "body.parent_id")
	if err != nil {
		return EditSession{}, err
	}
	if name, err = e.core.freeName(ctx, e.core.owner(p, parent), r.ParentID, name); err != nil {
		return EditSession{}, err
	}
	blank, err := BlankDocument(typ)
	if err != nil {
		return EditSession{}, err
	}
	f, _, err := e.core.Put(ctx, p, PutRequest{ParentID: r.ParentID, Name: name, MimeType: DocumentTypes[typ], Size: int64(len(blank)),
		Body: bytes.NewReader(blank)})
	if err != nil {
		return EditSession{}, err
	}
	es, err := e.session(disc, f, editorClaims{UserID: p.UserID, OrgID: p.OrgID, Perm: PermEdit}, r.EditRequest)
	if err != nil {
		return EditSession{}, err
	}
	es.File = &f
	return es, nil
}

// blankTime stamps the entries of blank documents, so that every blank
// document of a type is the same bytes (one blob).
var blankTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	odfOffice = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ` +
		`xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ` +
		`xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" ` +
		`office:version="1.2"`
	xmlDecl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
)

var odfBodies = map[string]string{
	"odt": `<office:text><text:p/></office:text>`,
	"ods": `<office:spreadsheet><table:table table:name="Sheet1"><table:table-column/><table:table-row><table:table-cell/></table:table-row></table:table></office:spreadsheet>`,
	"odp": `<office:presentation><draw:page draw:name="page1" draw:master-page-name="Default"/></office:presentation>`,
}

// BlankDocument returns an empty document of type typ (odt, ods, odp, docx):
// for ODF a zip whose first entry is the stored (uncompressed) mimetype, then
// the manifest, content.xml and styles.xml; for DOCX [Content_Types].xml,
// _rels/.rels and word/document.xml.
func BlankDocument(typ string) ([]byte, error) {
	var files [][2]string
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	switch typ {
	case "odt", "ods", "odp":
		mt := DocumentTypes[typ]
		// Stored, with sizes and CRC in the local header: no data descriptor
		// and no extra field, as ODF wants of the first entry.
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "mimetype", Method: zip.Store, CRC32: crc32.ChecksumIEEE([]byte(mt)),
			CompressedSize64: uint64(len(mt)), UncompressedSize64: uint64(len(mt))})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(mt)); err != nil {
			return nil, err
		}
		styles := `<office:styles/>`
		if typ == "odp" {
			styles += `<office:automatic-styles><style:page-layout style:name="PM1"><style:page-layout-properties fo:page-width="28cm" ` +
				`fo:page-height="15.75cm" style:print-orientation="landscape"/></style:page-layout></office:automatic-styles>` +
				`<office:master-styles><style:master-page style:name="Default" style:page-layout-name="PM1"/></office:master-styles>`
		}
		files = [][2]string{
			{"META-INF/manifest.xml", xmlDecl + `<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">` +
				`<manifest:file-entry manifest:full-path="/" manifest:version="1.2" manifest:media-type="` + mt + `"/>` +
				`<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>` +
				`<manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/></manifest:manifest>`},
			{"content.xml", xmlDecl + `<office:document-content ` + odfOffice + `><office:body>` + odfBodies[typ] + `</office:body></office:document-content>`},
			{"styles.xml", xmlDecl + `<office:document-styles ` + odfOffice + `>` + styles + `</office:document-styles>`},
		}
	case "docx":
		files = [][2]string{
			{"[Content_Types].xml", xmlDecl + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
				`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
				`<Default Extension="xml" ContentType="application/xml"/>` +
				`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
			{"_rels/.rels", xmlDecl + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
				`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
			{"word/document.xml", xmlDecl + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p/></w:body></w:document>`},
		}
	default:
		return nil, fmt.Errorf("blank document: unknown type %q", typ)
	}
	for _, f := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f[0], Method: zip.Deflate, Modified: blankTime})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(f[1])); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
