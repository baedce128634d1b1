package webdav

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

// Kinds of resources.
const (
	kindRoot   = iota // the caller's drive
	kindShared        // the virtual "Shared with me" folder
	kindItem          // a drive item (existing or not)
)

// resource is a path of the mount resolved to what it names.
type resource struct {
	segs []string
	kind int
	// exists is false for a path whose last segment names nothing.
	exists bool
	// file is the item (kindItem and exists).
	file drive.File
	// chain are the items from the first real one down to file (or to the
	// parent of a missing item); chainAt is the number of segments before
	// chain[0] (1 under Shared with me, else 0).
	chain   []drive.File
	chainAt int
	// parentOK: the parent exists and is a folder; parentID is that folder
	// ("" is the caller's root; under Shared with me only when parentOK and
	// the parent is a real folder).
	parentOK bool
	parentID string
	// shared: the path is Shared with me or below it (read-only).
	shared bool
}

func (r *resource) isCollection() bool {
	return r.kind != kindItem || (r.exists && r.file.IsFolder)
}

func (r *resource) name() string {
	if len(r.segs) == 0 {
		return ""
	}
	return r.segs[len(r.segs)-1]
}

// writable refuses writes to the root's virtual parts and below Shared with me.
func (r *resource) writable() error {
	if r.shared {
		return readOnly()
	}
	if r.kind == kindRoot {
		return app.Errorf(app.EForbidden, "The root of the drive cannot be changed this way.")
	}
	return nil
}

// resolve resolves path segments below the mount.
func (q *request) resolve(segs []string) (*resource, error) {
	res := &resource{segs: segs, kind: kindItem}
	if len(segs) == 0 {
		// The service's checks (scope, a bound user, the plan) apply to the
		// root too, which needs no item.
		if _, err := q.h.drive.ResolvePath(q.ctx, q.p, "", nil); err != nil {
			return nil, err
		}
		res.kind, res.exists = kindRoot, true
		return res, nil
	}
	shared, err := q.isSharedFolder(segs[0])
	if err != nil {
		return nil, err
	}
	if shared {
		res.shared = true
		if len(segs) == 1 {
			res.kind, res.exists = kindShared, true
			return res, nil
		}
		items, err := q.sharedItems()
		if err != nil {
			return nil, err
		}
		var top *drive.File
		for i := range items {
			if drive.NameKey(items[i].name) == drive.NameKey(segs[1]) {
				top = &items[i].file
				break
			}
		}
		res.chainAt = 1
		if top == nil {
			res.parentOK = len(segs) == 2
			return res, nil
		}
		res.chain = []drive.File{*top}
		if len(segs) > 2 {
			if !top.IsFolder {
				return res, nil
			}
			below, err := q.h.drive.ResolvePath(q.ctx, q.p, top.ID, segs[2:])
			if err != nil {
				return nil, err
			}
			res.chain = append(res.chain, below...)
		}
		return res.finish(), nil
	}
	items, err := q.h.drive.ResolvePath(q.ctx, q.p, "", segs)
	if err != nil {
		return nil, err
	}
	res.chain = items
	return res.finish(), nil
}

// finish sets exists, file and the parent from the chain.
func (r *resource) finish() *resource {
	found := r.chainAt + len(r.chain)
	switch {
	case found == len(r.segs):
		r.exists, r.file = true, r.chain[len(r.chain)-1]
		r.parentOK = true
		if len(r.chain) > 1 {
			r.parentID = r.chain[len(r.chain)-2].ID
		}
	case found == len(r.segs)-1:
		if len(r.chain) == 0 {
			r.parentOK = r.chainAt == 0 // the caller's root
		} else if last := r.chain[len(r.chain)-1]; last.IsFolder {
			r.parentOK, r.parentID = true, last.ID
		}
	}
	return r
}

// sharedName returns the name of the virtual folder Shared with me in this
// request: SharedFolder, or when a real item at the root has that name
// (made before the name was shown here, or over another door) the first
// numbered form of it no real item has — the virtual folder never hides a
// real item.
func (q *request) sharedName() (string, error) {
	if q.shared != "" {
		return q.shared, nil
	}
	name := SharedFolder
	for n := 1; ; n++ {
		items, err := q.h.drive.ResolvePath(q.ctx, q.p, "", []string{name})
		if err != nil {
			return "", err
		}
		if len(items) == 0 {
			q.shared = name
			return name, nil
		}
		name = drive.NumberedName(SharedFolder, n)
	}
}

// maybeShared reports whether seg, the first segment of a path, may name
// the virtual folder Shared with me, or a numbered form of its name (see
// sharedName); no other can.
func maybeShared(seg string) bool {
	return strings.HasPrefix(drive.NameKey(seg), drive.NameKey(SharedFolder))
}

// isSharedFolder reports whether seg, the first segment of a path, names the
// virtual folder Shared with me.
func (q *request) isSharedFolder(seg string) (bool, error) {
	if !maybeShared(seg) {
		return false, nil
	}
	name, err := q.sharedName()
	if err != nil {
		return false, err
	}
	return drive.NameKey(seg) == drive.NameKey(name), nil
}

// sharedItem is an item of Shared with me under its name there (names
// shared by different owners are numbered apart).
type sharedItem struct {
	name string
	file drive.File
}

// sharedItems lists everything shared with the caller.
func (q *request) sharedItems() ([]sharedItem, error) {
	var out []sharedItem
	taken := map[string]bool{}
	for page := 1; ; page++ {
		l, err := q.h.drive.SharedWithMe(q.ctx, q.p, drive.ListParams{Page: page, PerPage: drive.MaxPerPage, Offset: -1})
		if err != nil {
			return nil, err
		}
		for _, f := range l.Items {
			name := f.Name
			for n := 1; taken[drive.NameKey(name)]; n++ {
				name = drive.NumberedName(f.Name, n)
			}
			taken[drive.NameKey(name)] = true
			out = append(out, sharedItem{name: name, file: f})
		}
		if page >= l.TotalPages {
			return out, nil
		}
	}
}

// etag is the entity tag of an item: a file's content hash (SHA-256 in
// unpadded base64url, 43 characters: clients such as litmus build If headers
// with two entity tags and a lock token in 200 bytes), a folder's id and
// the last change of it or anything below it (drive.TreeTag).
func etag(f drive.File) string {
	if f.IsFolder {
		id, seq := drive.TreeTag(f)
		return `"` + id + "-" + strconv.FormatInt(seq, 10) + `"`
	}
	if sum, err := hex.DecodeString(f.Hash()); err == nil {
		return `"` + base64.RawURLEncoding.EncodeToString(sum) + `"`
	}
	return `"` + f.Hash() + `"`
}

func httpTime(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// modTime is the modification time the mount shows of an item: the one its
// writer reported, else its last change.
func modTime(f drive.File) time.Time {
	if f.ModifiedAt.IsZero() {
		return f.UpdatedAt
	}
	return f.ModifiedAt
}
