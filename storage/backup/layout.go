// Package backup takes consistent copies of an Atrium data directory while a
// server may be running on it, and restores them into an empty data directory.
//
// A backup holds the database as of one commit (SQLite's VACUUM INTO), exactly
// the stored bytes that copy refers to (blob store objects, archive copies and
// the received part of resumable uploads), the configuration file when one is
// given, and a manifest.json. Every object's hash is verified while it is
// copied and again when it is restored. A backup is either a directory laid
// out like a data directory or the same files as a zstd-compressed tar; it is
// written under a temporary name and renamed into place when complete, and a
// restore is assembled beside its data directory and renamed into place only
// once everything checked out.
//
// The package reads a data directory through the layouts of storage/sqldb and
// storage/blob without opening their stores: it is an operator's tool that
// composes the two adapters, not a part of the server.
package backup

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"atrium/storage/blob"
)

// The names of a backup's files, relative to its root, with slashes. Blobs,
// archive copies and uploads keep their data-directory paths.
const (
	nameDB       = "atrium.db"
	nameManifest = "manifest.json"
	nameConfig   = "config.toml"
	dirBlobs     = "blobs"
	dirArchive   = "archive"
	dirTus       = "tus"
)

// kind is what a backup entry is.
type kind int

const (
	kindDB kind = iota + 1
	kindManifest
	kindConfig
	kindBlob    // a blob store object
	kindArchive // an archive copy (zstd)
	kindTus     // the received bytes of a resumable upload
)

var (
	reBlob    = regexp.MustCompile(`^blobs/objects/([0-9a-f]{2})/([0-9a-f]{2})/([0-9a-f]{64})$`)
	reArchive = regexp.MustCompile(`^archive/([0-9a-f]{2})/([0-9a-f]{64})\.zst$`)
	reTus     = regexp.MustCompile(`^tus/([A-Za-z0-9_-]{1,128})$`)
	reDir     = regexp.MustCompile(`^(blobs|blobs/objects|blobs/objects/[0-9a-f]{2}|blobs/objects/[0-9a-f]{2}/[0-9a-f]{2}|archive|archive/[0-9a-f]{2}|tus)$`)
)

func blobEntry(hash string) string    { return dirBlobs + "/" + blob.ObjectName(hash) }
func archiveEntry(hash string) string { return dirArchive + "/" + blob.ArchiveName(hash) }
func tusEntry(id string) string       { return dirTus + "/" + id }

// cleanName checks the name of an entry of a backup (tar or directory) and
// returns it normalised (no "./" prefix, no trailing slash): relative, no "..",
// nothing that path cleaning would change.
func cleanName(name string) (string, error) {
	n := strings.TrimPrefix(name, "./")
	n = strings.TrimSuffix(n, "/")
	switch {
	case n == "" || n == ".":
		return ".", nil
	case strings.HasPrefix(n, "/") || strings.Contains(n, `\`) || strings.ContainsRune(n, 0):
		return "", fmt.Errorf("backup entry %q: not a plain relative path", name)
	case path.Clean(n) != n:
		return "", fmt.Errorf("backup entry %q: not a clean path", name)
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." {
			return "", fmt.Errorf("backup entry %q: leaves the backup", name)
		}
	}
	return n, nil
}

// classify returns what the file entry name (cleaned) is and, for blobs and
// archive copies, the hash its name claims; names outside the layout are
// refused.
func classify(name string) (kind, string, error) {
	switch name {
	case nameDB:
		return kindDB, "", nil
	case nameManifest:
		return kindManifest, "", nil
	case nameConfig:
		return kindConfig, "", nil
	}
	if m := reBlob.FindStringSubmatch(name); m != nil {
		if m[3][:2] != m[1] || m[3][2:4] != m[2] {
			return 0, "", fmt.Errorf("backup entry %q: object in the wrong directory", name)
		}
		return kindBlob, m[3], nil
	}
	if m := reArchive.FindStringSubmatch(name); m != nil {
		if m[2][:2] != m[1] {
			return 0, "", fmt.Errorf("backup entry %q: archive copy in the wrong directory", name)
		}
		return kindArchive, m[2], nil
	}
	if m := reTus.FindStringSubmatch(name); m != nil {
		return kindTus, m[1], nil
	}
	return 0, "", fmt.Errorf("backup entry %q: not part of an Atrium backup", name)
}

// knownDir reports whether the directory entry name (cleaned) belongs to the layout.
func knownDir(name string) bool { return name == "." || reDir.MatchString(name) }
