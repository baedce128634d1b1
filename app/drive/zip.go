package drive

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"atrium/app"
)

// MaxZipEntries is how many items (files and folders below the folder) a
// folder ZIP holds at most; a bigger folder is refused before anything is
// sent.
const MaxZipEntries = 50_000

// zipEntryLimit is MaxZipEntries unless a test lowered it.
var zipEntryLimit atomic.Int64

func init() { zipEntryLimit.Store(MaxZipEntries) }

// SetZipEntryLimit changes the entry limit of folder ZIPs (tests use a small
// one) and returns the function that puts the previous one back.
func SetZipEntryLimit(n int) (restore func()) {
	old := zipEntryLimit.Swap(int64(n))
	return func() { zipEntryLimit.Store(old) }
}

// ArchivedNote is the name of the text file a folder ZIP gains, at the top of
// the folder, when archived files were left out: they are restored only by a
// download of each through the API, which the ZIP does not start.
const ArchivedNote = "ARCHIVED FILES NOT INCLUDED.txt"

// zipListPage is how many items of a folder one listing query reads.
const zipListPage = 500

// FolderZip is a folder ready to be streamed as a ZIP archive. Its items were
// listed (names and metadata, no content) when it was made; WriteTo reads the
// content file by file while it writes.
type FolderZip struct {
	// Name is the archive's file name: the folder's name and ".zip".
	Name string

	s        *Service
	entries  []zipEntry
	archived []string // paths of archived files left out
}

type zipEntry struct {
	path string // inside the archive; a folder ends with "/"
	f    File
}

// Entries is the number of entries of the archive (the folder itself
// included, the note about archived files not).
func (z *FolderZip) Entries() int { return len(z.entries) }

// DownloadFolderZip prepares the ZIP of a folder the caller may read (the
// access rule of a download: owner, or a user share of it or of a folder
// above). The archive holds the folder's live items under the folder's name;
// trashed and unconfirmed items are left out, and so are archived files (a
// note file lists them). More than MaxZipEntries items → validation_failed; a
// file, or a folder in the trash → conflict. Errors: insufficient_scope (no
// drive:read), no_bound_user, feature_not_in_plan, not_found (no such item, or
// not shared with the caller), conflict (a file, a folder in the trash),
// validation_failed (over MaxZipEntries items).
func (dv *DerivedData) DownloadFolderZip(ctx context.Context, p *app.Principal, id string) (*FolderZip, error) {
	if err := check(p, app.ScopeDriveRead); err != nil {
		return nil, err
	}
	f, err := dv.core.access(ctx, p, id, PermView)
	if err != nil {
		return nil, err
	}
	return dv.folderZip(ctx, f)
}

// LinkFolderZip prepares the ZIP of a folder shared by a link: the shared
// folder itself (folderID "") or a folder inside it, with the rules of
// DownloadFolderZip. Errors: not_found (an unknown, expired or revoked link, a
// folder outside the shared one), conflict (a file), validation_failed (over
// MaxZipEntries items).
func (lk *Links) LinkFolderZip(ctx context.Context, token, folderID string) (*FolderZip, error) {
	l, err := lk.link(ctx, token)
	if err != nil {
		return nil, err
	}
	f, err := lk.within(ctx, l, folderID)
	if err != nil {
		return nil, err
	}
	return lk.core.derived.folderZip(ctx, f)
}

// folderZip walks the live items below root, depth first by name, and
// refuses a folder with too many.
func (dv *DerivedData) folderZip(ctx context.Context, root File) (*FolderZip, error) {
	if !root.IsFolder {
		return nil, app.Errorf(app.EConflict, "%q is a file, not a folder; download it with GET /api/v1/drive/%s/download.", root.Name, root.ID)
	}
	if root.TrashedAt != nil {
		return nil, app.Errorf(app.EConflict, "%q is in the trash; restore it before downloading it.", root.Name)
	}
	limit := int(zipEntryLimit.Load())
	base := zipName(root.Name)
	root.Metadata = Metadata{}
	z := &FolderZip{Name: root.Name + ".zip", s: dv.core, entries: []zipEntry{{path: base + "/", f: root}}}
	items := 0
	var walk func(parentID, prefix string) error
	walk = func(parentID, prefix string) error {
		for off := 0; ; off += zipListPage {
			page, _, err := dv.core.store.List(ctx, Query{Kind: ListFolder, OrgID: root.OrgID, OwnerID: root.OwnerID,
				ParentID: parentID, Now: dv.core.clock.Now(), SortBy: "name", Limit: zipListPage, Offset: off})
			if err != nil {
				return fmt.Errorf("list folder %s for a zip: %w", parentID, err)
			}
			for _, it := range page {
				if items++; items > limit {
					return app.Errorf(app.EValidation, "%q holds more than %d files and folders, the most a ZIP download holds; download its subfolders one by one.", root.Name, limit)
				}
				it.Metadata = Metadata{}
				name := prefix + zipName(it.Name)
				switch {
				case it.IsFolder:
					z.entries = append(z.entries, zipEntry{path: name + "/", f: it})
					if err := walk(it.ID, name+"/"); err != nil {
						return err
					}
				case isCold(it):
					z.archived = append(z.archived, name)
				case it.Status == StatusActive:
					z.entries = append(z.entries, zipEntry{path: name, f: it})
				}
			}
			if len(page) < zipListPage {
				return nil
			}
		}
	}
	if err := walk(root.ID, base+"/"); err != nil {
		return nil, err
	}
	return z, nil
}

// zipName is an item name as a path segment of an archive: never a separator
// nor a parent reference, whatever an old row holds.
func zipName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 {
			return '_'
		}
		return r
	}, strings.ToValidUTF8(name, "_"))
	if name == "" || name == "." || name == ".." {
		return "_" + name
	}
	return name
}

// WriteTo writes the archive to w, reading each file's content as it goes:
// folders as directory entries, names in UTF-8 (flagged so), modification
// times, already compressed types stored and the others deflated (archive/zip
// switches to zip64 by itself past 4 GiB). A failure after the first byte
// leaves w with an archive without its central directory, which unzip tools
// refuse.
func (z *FolderZip) WriteTo(ctx context.Context, w io.Writer) error {
	zw := zip.NewWriter(w)
	for _, e := range z.entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		h := &zip.FileHeader{Name: e.path, Modified: zipTime(e.f)}
		if e.f.IsFolder {
			h.Method = zip.Store
			if _, err := zw.CreateHeader(h); err != nil {
				return fmt.Errorf("zip folder %s: %w", e.f.ID, err)
			}
			continue
		}
		h.Method = zip.Deflate
		if precompressed(e.f.Name, e.f.MimeType) {
			h.Method = zip.Store
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("zip file %s: %w", e.f.ID, err)
		}
		if e.f.SizeBytes == 0 {
			continue
		}
		if err := z.copyContent(ctx, fw, e.f); err != nil {
			return err
		}
	}
	if len(z.archived) > 0 {
		if err := z.writeNote(zw); err != nil {
			return err
		}
	}
	return zw.Close()
}

func (z *FolderZip) copyContent(ctx context.Context, w io.Writer, f File) error {
	_, rc, err := z.s.openFile(ctx, f)
	if err != nil {
		return fmt.Errorf("zip file %s: %w", f.ID, err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("zip file %s: %w", f.ID, err)
	}
	return nil
}

// writeNote adds the list of archived files left out, under a name no item
// of the folder's top level has.
func (z *FolderZip) writeNote(zw *zip.Writer) error {
	base := z.entries[0].path
	taken := map[string]bool{}
	for _, e := range z.entries {
		taken[strings.ToLower(strings.TrimSuffix(e.path, "/"))] = true
	}
	for _, a := range z.archived {
		taken[strings.ToLower(a)] = true
	}
	name := base + ArchivedNote
	for i := 1; taken[strings.ToLower(name)]; i++ {
		name = base + strings.TrimSuffix(ArchivedNote, ".txt") + fmt.Sprintf(" (%d).txt", i)
	}
	var b strings.Builder
	b.WriteString("These files are in the archive tier and are not in this ZIP.\r\n")
	b.WriteString("Download each of them once to restore it (the restore takes a while), then download the folder again.\r\n\r\n")
	for _, a := range z.archived {
		b.WriteString(strings.TrimPrefix(a, base) + "\r\n")
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: z.s.clock.Now()})
	if err != nil {
		return fmt.Errorf("zip note: %w", err)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// zipTime is an item's modification time for the archive.
func zipTime(f File) time.Time {
	if !f.ModifiedAt.IsZero() {
		return f.ModifiedAt.UTC()
	}
	return f.UpdatedAt.UTC()
}

// storedTypes are MIME types whose content is already compressed: deflating
// them again costs time and gains nothing.
var storedTypes = map[string]bool{
	"application/zip": true, "application/gzip": true, "application/x-gzip": true, "application/x-7z-compressed": true,
	"application/x-rar-compressed": true, "application/vnd.rar": true, "application/x-bzip2": true, "application/x-xz": true,
	"application/zstd": true, "application/pdf": true, "application/epub+zip": true, "application/java-archive": true,
	"image/svgz": true,
}

// storedExts are file extensions of already compressed content, for files
// stored with a generic type.
var storedExts = map[string]bool{
	".zip": true, ".gz": true, ".tgz": true, ".7z": true, ".rar": true, ".bz2": true, ".xz": true, ".zst": true,
	".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true, ".avif": true, ".heic": true,
	".mp4": true, ".m4v": true, ".mov": true, ".mkv": true, ".webm": true, ".avi": true,
	".mp3": true, ".m4a": true, ".aac": true, ".ogg": true, ".opus": true, ".flac": true,
	".pdf": true, ".docx": true, ".xlsx": true, ".pptx": true, ".odt": true, ".ods": true, ".odp": true, ".epub": true, ".jar": true,
}

// precompressed reports whether a file's content is already compressed.
func precompressed(name, mimeType string) bool {
	mt, _, _ := strings.Cut(strings.ToLower(mimeType), ";")
	mt = strings.TrimSpace(mt)
	switch {
	case storedTypes[mt], strings.HasPrefix(mt, "video/"),
		strings.HasPrefix(mt, "image/") && mt != "image/svg+xml" && mt != "image/bmp" && mt != "image/tiff" && mt != "image/x-icon",
		strings.HasPrefix(mt, "audio/") && mt != "audio/wav" && mt != "audio/x-wav" && mt != "audio/aiff",
		strings.HasPrefix(mt, "application/vnd.openxmlformats-officedocument."),
		strings.HasPrefix(mt, "application/vnd.oasis.opendocument."):
		return true
	}
	return storedExts[strings.ToLower(path.Ext(name))]
}
