package drive

// Converting office documents to ODF: SaveAsODF writes the converted copy
// beside the original through the content-write path (write.go); the
// Converter is an adapter.

import (
	"context"
	"errors"
	"io"
	"strings"

	"atrium/app"
)

// Converter converts office documents to another format (LibreOffice, in an
// adapter package).
type Converter interface {
	// Convert converts src, the content of a file named name, to format ext
	// (odt, ods, odp) and calls fn with the result and its size; it returns
	// fn's error as is. ErrNoConverter: the converter is not installed;
	// ErrConvertFailed: it could not convert the document; a context error:
	// it took too long.
	Convert(ctx context.Context, name string, src io.Reader, ext string, fn func(r io.Reader, size int64) error) error
}

// Converter errors.
var (
	ErrNoConverter   = errors.New("no document converter is installed")
	ErrConvertFailed = errors.New("the document could not be converted")
)

// WithConverter returns o with the document converter save-as-odf uses.
func (o Options) WithConverter(c Converter) Options {
	o.Converter = c
	return o
}

// odfTargets maps office formats to their open-document equivalents.
var odfTargets = map[string]string{
	"docx": "odt", "doc": "odt", "docm": "odt", "dotx": "odt", "rtf": "odt",
	"xlsx": "ods", "xls": "ods", "xlsm": "ods",
	"pptx": "odp", "ppt": "odp", "pptm": "odp",
}

// odfByMime gives the source format of files whose name has no extension.
var odfByMime = map[string]string{
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
	"application/msword": "doc",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
	"application/vnd.ms-excel": "xls",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
	"application/vnd.ms-powerpoint":                                             "ppt",
}

// ODFTarget returns the open-document format a file converts to ("" when none).
func ODFTarget(name, mimeType string) string {
	if t := odfTargets[fileExt(name)]; t != "" {
		return t
	}
	return odfTargets[odfByMime[strings.ToLower(mimeType)]]
}

// SaveAsODF converts an office document the caller may read (docx, doc,
// xlsx, xls, pptx, ppt, …) to its open-document equivalent and stores it as a
// new file beside the original (in the caller's root when they may not add to
// that folder), named like the original with the new extension (numbered when
// taken), through the drive's write path. Already ODF or another type →
// validation_failed; no converter → editor_unavailable. Errors:
// insufficient_scope (no drive:write), no_bound_user, feature_not_in_plan,
// not_found (no such item, or not shared with the caller), validation_failed (a
// folder, a type that does not convert, a document LibreOffice could not
// convert), conflict (an item in the trash, a pending upload, an archived file,
// no free name), editor_unavailable (no converter), unavailable (a conversion
// that took too long), locked (a lock on the folder the caller does not hold),
// quota_exceeded.
func (e *Editing) SaveAsODF(ctx context.Context, p *app.Principal, id string) (File, error) {
	if err := check(p, app.ScopeDriveWrite); err != nil {
		return File{}, err
	}
	f, err := e.core.access(ctx, p, id, PermView)
	if err != nil {
		return File{}, err
	}
	if f.IsFolder {
		return File{}, app.Invalid("path.file_id", "A folder cannot be converted; pick an office document.", id)
	}
	to := ODFTarget(f.Name, f.MimeType)
	if to == "" {
		why := "Only Word, Excel and PowerPoint documents (docx, doc, xlsx, xls, pptx, ppt) convert to ODF."
		if strings.HasPrefix(f.MimeType, "application/vnd.oasis.opendocument.") {
			why = "The file is already an open document."
		}
		return File{}, app.Invalid("path.file_id", why, f.Name)
	}
	if err := editable(f); err != nil {
		return File{}, err
	}
	if e.core.opts.Converter == nil {
		return File{}, noConverter()
	}
	parentID := e.besideFolder(ctx, p, f)
	var parent *File
	if parentID != "" {
		if parent, err = e.core.parentFolder(ctx, p, parentID, "parent_id"); err != nil {
			return File{}, err
		}
	}
	name := f.Name
	if ext := fileExt(name); ext != "" {
		name = strings.TrimSuffix(name, name[len(name)-len(ext)-1:])
	}
	name, err = e.core.freeName(ctx, e.core.owner(p, parent), parentID, name+"."+to)
	if err != nil {
		return File{}, err
	}
	_, rc, err := e.core.openFile(ctx, f)
	if err != nil {
		return File{}, err
	}
	defer rc.Close()
	var out File
	stored := false
	err = e.core.opts.Converter.Convert(ctx, f.Name, rc, to, func(r io.Reader, size int64) error {
		var err error
		out, _, err = e.core.Put(ctx, p, PutRequest{ParentID: parentID, Name: name, MimeType: DocumentTypes[to], Size: size, Body: r})
		stored = err == nil
		return err
	})
	switch {
	case err == nil && stored:
		return out, nil
	case err == nil:
		return File{}, app.Errorf(app.EInternal, "The converter produced no document.")
	case errors.Is(err, ErrNoConverter):
		return File{}, noConverter()
	case errors.Is(err, ErrConvertFailed):
		return File{}, app.Invalid("path.file_id", "LibreOffice could not convert the document ("+err.Error()+").", f.Name)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return File{}, &app.Error{Code: app.EUnavailable, RetryAfter: 60, Message: "The conversion took too long and was stopped; try again later."}
	}
	return File{}, err
}

func noConverter() error {
	return app.Errorf(app.EEditorUnavailable, "Converting to ODF needs LibreOffice (soffice), which is not installed on this server: install it or set [editor] soffice_path.")
}
