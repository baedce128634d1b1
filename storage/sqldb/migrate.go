package sqldb

import (
	"io/fs"
	"strconv"
	"strings"
)

func fsSub() (fs.FS, error) { return fs.Sub(migrations, "migrations") }

// migrationsList returns the highest version among the embedded migration files.
func migrationsList(fsys fs.FS) (int64, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return 0, err
	}
	var top int64
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok {
			continue
		}
		if v, err := strconv.ParseInt(num, 10, 64); err == nil && v > top {
			top = v
		}
	}
	return top, nil
}
