package webdav

// What ownCloud and Nextcloud clients (desktop, mobile, their command-line
// forms, rclone's owncloud and nextcloud vendors) need of the mount beyond
// RFC 4918: their mount points (remote.php/webdav/ and
// remote.php/dav/files/<user>/, the user being the caller's id or e-mail
// address), the oc: and nc: properties they ask for, and entity tags for the
// root and the virtual folder Shared with me (clients read again only the
// folders whose tag changed).

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"atrium/app"
	"atrium/app/drive"
)

// The clients' mount points.
const (
	// RemotePrefix is ownCloud's original WebDAV path.
	RemotePrefix = "/remote.php/webdav"
	// RemoteFilesPrefix, followed by the caller's user id or e-mail
	// address, is the files tree of ownCloud's and Nextcloud's newer DAV
	// root.
	RemoteFilesPrefix = "/remote.php/dav/files/"
)

// nsNC is Nextcloud's namespace.
const nsNC = "http://nextcloud.org/ns"

// splitMount returns the mount point of path (as an href's escaped start)
// and the rest of it; false when path is not below a mount of p's drive.
func splitMount(p *app.Principal, path string) (prefix, rel string, ok bool) {
	for _, m := range []string{Prefix, AliasPrefix, RemotePrefix} {
		if path == m {
			return m, "/", true
		}
		if strings.HasPrefix(path, m+"/") {
			return m, path[len(m):], true
		}
	}
	rest, found := strings.CutPrefix(path, RemoteFilesPrefix)
	if !found {
		return "", "", false
	}
	user, rel, _ := strings.Cut(rest, "/")
	if !OwnUser(p, user) {
		return "", "", false
	}
	return RemoteFilesPrefix + escapeSegment(user), "/" + rel, true
}

// OwnUser reports whether name, the user segment of a DAV path, names p:
// their user id or, in any case, their e-mail address.
func OwnUser(p *app.Principal, name string) bool {
	return p != nil && name != "" && (name == p.UserID || (p.Email != "" && strings.EqualFold(name, p.Email)))
}

// ocProps are the properties of the clients answered on request only (not
// by allprop), like oc:checksums.
var ocProps = map[[2]string]bool{
	{nsOC, "id"}: true, {nsOC, "fileid"}: true, {nsOC, "permissions"}: true, {nsOC, "size"}: true,
	{nsOC, "share-types"}: true, {nsNC, "has-preview"}: true,
}

// ocValue returns the value of a client property of e; false when it has none.
func (q *request) ocValue(e *entry, space, local string) (string, bool) {
	if !ocProps[[2]string{space, local}] {
		return "", false
	}
	switch local {
	case "id", "fileid":
		switch e.kind {
		case kindRoot:
			return "root-" + q.p.UserID, true
		case kindShared:
			return "shared-" + q.p.UserID, true
		}
		return e.file.ID, true
	case "permissions":
		return permissions(e), true
	case "size":
		switch {
		case e.kind == kindItem && !e.file.IsFolder:
			return strconv.FormatInt(e.file.SizeBytes, 10), true
		case e.kind == kindItem && e.sized:
			return strconv.FormatInt(e.folderBytes, 10), true
		}
		return "", false
	case "share-types":
		var b strings.Builder
		for _, k := range e.shareKinds {
			b.WriteString("<share-type>")
			b.WriteString(strconv.Itoa(int(k)))
			b.WriteString("</share-type>")
		}
		return b.String(), true
	case "has-preview":
		if e.kind == kindItem && !e.file.IsFolder && strings.HasPrefix(e.file.MimeType, "image/") {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// permissions is oc:permissions, in the letters the clients read: S shared
// with the caller, R may be shared, G readable, D deletable, N renamable, V
// movable, W writable (a file), C and K may create files and folders in it
// (a folder). Below Shared with me everything is read-only here, whatever
// the share grants: clients then keep local changes there to themselves.
func permissions(e *entry) string {
	switch {
	case e.kind == kindRoot:
		return "RGDNVCK"
	case e.kind == kindShared:
		return "G"
	case e.shared:
		return "SG"
	case e.file.IsFolder:
		return "RGDNVCK"
	}
	return "RGDNVW"
}

// virtualTags loads the entity tags of the root and of Shared with me. The
// root's changes with the last change of the caller's drive and with Shared
// with me; Shared with me's with the names and tags of what it holds.
func (q *request) virtualTags() error {
	if q.sharedTag != "" {
		return nil
	}
	items, err := q.sharedItems()
	if err != nil {
		return err
	}
	slices.SortFunc(items, func(a, b sharedItem) int { return strings.Compare(a.name, b.name) })
	h := sha256.New()
	for _, it := range items {
		h.Write([]byte(it.name + "\x00" + etag(it.file) + "\x00"))
	}
	sum := hex.EncodeToString(h.Sum(nil))[:20]
	last, err := q.h.drive.LastChange(q.ctx, q.p)
	if err != nil {
		return err
	}
	q.sharedTag = `"shared-` + sum + `"`
	q.rootTag = `"root-` + strconv.FormatInt(last, 10) + "-" + sum + `"`
	return nil
}

// setFileHeaders sets the headers the clients read an item's id and entity
// tag from after a write.
func setFileHeaders(q *request, f drive.File) {
	tag := etag(f)
	q.w.Header().Set("ETag", tag)
	q.w.Header().Set("OC-ETag", tag)
	q.w.Header().Set("OC-FileId", f.ID)
}
