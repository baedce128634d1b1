package backup

import (
	"encoding/json"
	"fmt"
	"time"
)

// FormatVersion is the version of the backup layout this package writes and
// the newest it restores.
const FormatVersion = 1

// formatName marks a manifest as Atrium's.
const formatName = "atrium-backup"

// Manifest describes a backup; it is its manifest.json.
type Manifest struct {
	Format        string    `json:"format"`
	FormatVersion int       `json:"format_version"`
	CreatedAt     time.Time `json:"created_at"`
	AtriumVersion string    `json:"atrium_version"`
	// SchemaVersion is the migration version of the database copy.
	SchemaVersion int64 `json:"schema_version"`
	Database      File  `json:"database"`
	// Blobs are the blob store objects the database refers to.
	Blobs Count `json:"blobs"`
	// Archive are the compressed copies of archived files (bytes as stored).
	Archive Count `json:"archive"`
	// Uploads are the received parts of resumable uploads in progress.
	Uploads        Count `json:"uploads"`
	ConfigIncluded bool  `json:"config_included"`
	Config         *File `json:"config,omitempty"`
	// Snapshots is how many database snapshots the backup took: more than one
	// when the server deleted a blob a snapshot referred to before it was copied.
	Snapshots int `json:"snapshots"`
}

// File is a file of the backup and its SHA-256.
type File struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// Count is how many files of a kind a backup holds, and their bytes.
type Count struct {
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
}

func (c *Count) add(n int64) { c.Count++; c.Bytes += n }

// parseManifest reads and checks a manifest.
func parseManifest(b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("manifest.json: %w", err)
	}
	switch {
	case m.Format != formatName:
		return Manifest{}, fmt.Errorf("manifest.json: format %q is not %q", m.Format, formatName)
	case m.FormatVersion < 1 || m.FormatVersion > FormatVersion:
		return Manifest{}, fmt.Errorf("manifest.json: format version %d; this atrium reads versions 1 to %d", m.FormatVersion, FormatVersion)
	case m.Database.Name != nameDB || len(m.Database.SHA256) != 64:
		return Manifest{}, fmt.Errorf("manifest.json: no database checksum")
	case m.ConfigIncluded != (m.Config != nil):
		return Manifest{}, fmt.Errorf("manifest.json: config_included disagrees with config")
	}
	return m, nil
}
