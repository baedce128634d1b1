package webdav

import (
	"bufio"
	"encoding/xml"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

const nsMS = "urn:schemas-microsoft-com:"

// nsOC is ownCloud's namespace: its checksums property carries the SHA-1 and
// MD5 of a file's content (rclone's owncloud and nextcloud vendors compare
// them).
const nsOC = "http://owncloud.org/ns"

// maxPropfindProps is the most properties one PROPFIND may name. Clients
// name a dozen or two (Finder, Windows, rclone, Nextcloud and DAVx⁵ stay
// under 30); each named property is answered for every member of a
// listing, so a long list would multiply the answer.
const maxPropfindProps = 256

// Live properties of every resource, in allprop order.
var liveProps = []xml.Name{
	{Space: nsDAV, Local: "resourcetype"}, {Space: nsDAV, Local: "displayname"},
	{Space: nsDAV, Local: "getlastmodified"}, {Space: nsDAV, Local: "creationdate"},
	{Space: nsDAV, Local: "getetag"}, {Space: nsDAV, Local: "getcontentlength"},
	{Space: nsDAV, Local: "getcontenttype"}, {Space: nsDAV, Local: "supportedlock"},
	{Space: nsDAV, Local: "lockdiscovery"},
}

// quotaProps (RFC 4331) are answered on request only.
var quotaProps = []xml.Name{{Space: nsDAV, Local: "quota-available-bytes"}, {Space: nsDAV, Local: "quota-used-bytes"}}

// protectedProps cannot be set by PROPPATCH.
var protectedProps = map[string]bool{"resourcetype": true, "getetag": true, "getcontentlength": true,
	"getcontenttype": true, "supportedlock": true, "lockdiscovery": true, "creationdate": true,
	"quota-available-bytes": true, "quota-used-bytes": true}

// propQuery is what a PROPFIND asks for.
type propQuery struct {
	allprop, propname bool
	names             []xml.Name // prop, or allprop's include
	// allLive is what allprop lists of a resource without dead properties
	// (allNames), made once per request.
	allLive []xml.Name
}

func (pq propQuery) wants(space, local string) bool {
	if pq.allprop || pq.propname {
		return true
	}
	return slices.Contains(pq.names, xml.Name{Space: space, Local: local})
}

func (pq propQuery) wantsDead() bool {
	if pq.allprop || pq.propname {
		return true
	}
	for _, n := range pq.names {
		if ocProps[[2]string{n.Space, n.Local}] || n == (xml.Name{Space: nsOC, Local: "checksums"}) {
			continue
		}
		if n.Space != nsDAV || !slices.Contains(liveProps, n) && !slices.Contains(quotaProps, n) {
			return true
		}
	}
	return false
}

func parsePropfind(q *request) (propQuery, error) {
	root, err := parseXML(q.r.Body)
	if errors.Is(err, errNoBody) {
		pq := propQuery{allprop: true}
		pq.allLive = pq.allNames(nil)
		return pq, nil
	}
	if err != nil {
		return propQuery{}, app.Errorf(app.EBadRequest, "The PROPFIND body is not valid XML: %v.", err)
	}
	if !root.is(nsDAV, "propfind") {
		return propQuery{}, app.Errorf(app.EBadRequest, "The PROPFIND body must be a DAV:propfind element.")
	}
	var pq propQuery
	for _, c := range root.Children {
		switch {
		case c.is(nsDAV, "allprop"):
			pq.allprop = true
		case c.is(nsDAV, "propname"):
			pq.propname = true
		case c.is(nsDAV, "prop"), c.is(nsDAV, "include"):
			for _, p := range c.Children {
				if !slices.Contains(pq.names, p.Name) {
					if len(pq.names) == maxPropfindProps {
						return propQuery{}, app.Errorf(app.EBadRequest,
							"A PROPFIND names at most %d properties; this one names more. Ask for fewer, or for allprop.", maxPropfindProps)
					}
					pq.names = append(pq.names, p.Name)
				}
			}
		}
	}
	if !pq.allprop && !pq.propname && pq.names == nil {
		return propQuery{}, app.Errorf(app.EBadRequest, "The PROPFIND body names no properties (prop, allprop or propname).")
	}
	if pq.allprop && pq.propname {
		return propQuery{}, app.Errorf(app.EBadRequest, "allprop and propname exclude each other.")
	}
	if pq.allprop {
		pq.allLive = pq.allNames(nil)
	}
	return pq, nil
}

// entry is one resource of a multistatus answer.
type entry struct {
	segs []string
	// href, when set, is the entry's href (a listing makes its children's
	// from the folder's, escaped once); else it is made from segs.
	href  string
	kind  int
	file  drive.File
	dead  []drive.DeadProp
	locks []drive.Lock
	// digests are the content's SHA-1 and MD5 when asked for and known.
	digests *drive.Digests
	// chain and chainAt locate lock roots (see resource).
	chain   []drive.File
	chainAt int
	// shared: the entry is below Shared with me (read-only).
	shared bool
	// shareKinds are the kinds of the caller's shares of the item, when
	// oc:share-types is asked for.
	shareKinds []drive.ShareKind
	// folderBytes, of a folder when oc:size is asked for, is the bytes of
	// the files below it; sized says it is known.
	folderBytes int64
	sized       bool
}

func (e *entry) collection() bool { return e.kind != kindItem || e.file.IsFolder }

// wantsChecksums reports whether the query names oc:checksums (on request
// only, like the quota).
func (pq propQuery) wantsChecksums() bool {
	return !pq.allprop && !pq.propname && slices.Contains(pq.names, xml.Name{Space: nsOC, Local: "checksums"})
}

// digestsOf returns the digests of the files' contents when the query asks
// for them.
func (q *request) digestsOf(pq propQuery, files []drive.File) (map[string]drive.Digests, error) {
	if !pq.wantsChecksums() {
		return nil, nil
	}
	return q.h.drive.DerivedData().ContentDigests(q.ctx, q.p, files)
}

func digestsFor(m map[string]drive.Digests, f drive.File) *drive.Digests {
	if d, ok := m[f.ContentHash]; ok && !f.IsFolder {
		return &d
	}
	return nil
}

// propfind answers PROPFIND with Depth 0 or 1.
func (q *request) propfind() error {
	depth := strings.ToLower(strings.TrimSpace(q.r.Header.Get("Depth")))
	if depth != "0" && depth != "1" {
		q.w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		q.w.WriteHeader(http.StatusForbidden)
		_, err := q.w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?>` + "\n" +
			`<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>` + "\n"))
		return err
	}
	pq, err := parsePropfind(q)
	if err != nil {
		return err
	}
	res := q.res
	if !res.exists {
		return app.Errorf(app.ENotFound, "Nothing is at %s.", q.r.URL.Path)
	}
	self := &entry{segs: res.segs, kind: res.kind, file: res.file, chain: res.chain, chainAt: res.chainAt, shared: res.shared && res.kind == kindItem}
	var parentLocks []drive.Lock
	if res.kind == kindItem {
		if pq.wants(nsDAV, "lockdiscovery") || pq.wants(nsDAV, "supportedlock") {
			if self.locks, err = q.h.drive.Locks(q.ctx, q.p, res.file.ID); err != nil {
				return err
			}
			for _, l := range self.locks {
				if l.Deep {
					parentLocks = append(parentLocks, l)
				}
			}
		}
		if pq.wantsDead() {
			dead, err := q.h.drive.DeadProps(q.ctx, q.p, []string{res.file.ID})
			if err != nil {
				return err
			}
			self.dead = dead[res.file.ID]
		}
		digests, err := q.digestsOf(pq, []drive.File{res.file})
		if err != nil {
			return err
		}
		self.digests = digestsFor(digests, res.file)
		kinds, err := q.shareKindsOf(pq, []string{res.file.ID})
		if err != nil {
			return err
		}
		self.shareKinds = kinds[res.file.ID]
		sizes, err := q.folderSizesOf(pq, []drive.File{res.file})
		if err != nil {
			return err
		}
		self.folderBytes, self.sized = sizes[res.file.ID]
	}
	if res.kind == kindShared || (depth == "1" && res.kind == kindRoot) {
		if err := q.loadSharedTime(); err != nil {
			return err
		}
	}
	if res.kind != kindItem && pq.wants(nsDAV, "getetag") {
		if err := q.virtualTags(); err != nil {
			return err
		}
	}
	var usage *drive.Usage
	if res.isCollection() && (pq.wants(nsDAV, "quota-available-bytes") || pq.wants(nsDAV, "quota-used-bytes")) && !pq.allprop && !pq.propname {
		u, err := q.h.drive.Storage(q.ctx, q.p)
		if err != nil {
			return err
		}
		usage = &u
	}
	q.w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	q.w.WriteHeader(http.StatusMultiStatus)
	bw := bufio.NewWriterSize(q.w, 64<<10)
	bw.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<D:multistatus xmlns:D="DAV:">`)
	now := time.Now()
	q.writeEntry(bw, self, pq, usage, now)
	if depth == "1" && res.isCollection() {
		folderHref := strings.TrimSuffix(q.href(res.segs, true), "/") // escaped once
		var ids []string
		var files, folders []drive.File
		checksums := pq.wantsChecksums()
		err = q.childPages(func(page []child) error {
			ids, files, folders = ids[:0], files[:0], folders[:0]
			for _, c := range page {
				if c.kind == kindItem {
					ids = append(ids, c.file.ID)
					if checksums {
						files = append(files, c.file)
					}
					if c.file.IsFolder {
						folders = append(folders, c.file)
					}
				}
			}
			sizes, err := q.folderSizesOf(pq, folders)
			if err != nil {
				return err
			}
			digests, err := q.digestsOf(pq, files)
			if err != nil {
				return err
			}
			var dead map[string][]drive.DeadProp
			var locks map[string][]drive.Lock
			if pq.wantsDead() {
				if dead, err = q.h.drive.DeadProps(q.ctx, q.p, ids); err != nil {
					return err
				}
			}
			if pq.wants(nsDAV, "lockdiscovery") {
				if locks, err = q.h.drive.LocksOnItems(q.ctx, q.p, ids); err != nil {
					return err
				}
			}
			kinds, err := q.shareKindsOf(pq, ids)
			if err != nil {
				return err
			}
			segs := append(res.segs[:len(res.segs):len(res.segs)], "")
			for _, c := range page {
				segs[len(segs)-1] = c.name
				e := entry{segs: segs, kind: c.kind, file: c.file, chainAt: res.chainAt, shared: res.shared && c.kind == kindItem}
				e.href = folderHref + "/" + escapeSegment(c.name)
				if e.collection() {
					e.href += "/"
				}
				if c.kind == kindItem {
					e.dead = dead[c.file.ID]
					e.locks = append(locks[c.file.ID], parentLocks...)
					e.digests = digestsFor(digests, c.file)
					e.shareKinds = kinds[c.file.ID]
					e.folderBytes, e.sized = sizes[c.file.ID]
				}
				if len(e.locks) > 0 { // lock roots are found along the chain
					e.chain = append(res.chain[:len(res.chain):len(res.chain)], c.file)
					if res.kind == kindShared {
						e.chain, e.chainAt = []drive.File{c.file}, 1
					}
				}
				q.writeEntry(bw, &e, pq, nil, now)
			}
			return nil
		})
		if err != nil {
			// The status is sent: end the document with what is known and log.
			q.h.log.Error("webdav propfind listing", "path", q.r.URL.Path, "err", err)
		}
	}
	bw.WriteString("</D:multistatus>\n")
	return bw.Flush()
}

// child is one item of a collection listing under its name in the mount.
type child struct {
	name string
	kind int
	file drive.File
}

// childPages calls fn with the children of the request's collection, a page
// at a time; the pages share one array, so fn must not keep its slice.
func (q *request) childPages(fn func([]child) error) error {
	res := q.res
	switch res.kind {
	case kindShared:
		shared, err := q.sharedItems()
		if err != nil {
			return err
		}
		page := make([]child, 0, len(shared))
		for _, s := range shared {
			page = append(page, child{name: s.name, kind: kindItem, file: s.file})
		}
		return fn(page)
	case kindRoot:
		name, err := q.sharedName()
		if err != nil {
			return err
		}
		if err := fn([]child{{name: name, kind: kindShared}}); err != nil {
			return err
		}
	}
	folder := ""
	if res.kind == kindItem {
		folder = res.file.ID
	}
	var out []child // one array for every page, as the service's
	return q.h.drive.Children(q.ctx, q.p, folder, func(items []drive.File) error {
		out = slices.Grow(out[:0], len(items))
		for _, f := range items {
			out = append(out, child{name: f.Name, kind: kindItem, file: f})
		}
		return fn(out)
	})
}

// children calls fn for each child of the request's collection.
func (q *request) children(fn func(child) error) error {
	return q.childPages(func(page []child) error {
		for _, c := range page {
			if err := fn(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeEntry writes one response element.
func (q *request) writeEntry(w *bufio.Writer, e *entry, pq propQuery, usage *drive.Usage, now time.Time) {
	w.WriteString("<D:response><D:href>")
	if e.href != "" {
		escapeTo(w, e.href)
	} else {
		escapeTo(w, q.href(e.segs, e.collection()))
	}
	w.WriteString("</D:href>")
	var missing []xml.Name
	w.WriteString("<D:propstat><D:prop>")
	if pq.propname {
		for _, n := range liveProps {
			if _, ok := q.liveValue(e, n.Local, now); ok {
				propElement(w, n, "")
			}
		}
		for _, d := range e.dead {
			if d.Space != nsDAV || !slices.Contains(liveProps, xml.Name{Space: d.Space, Local: d.Name}) {
				propElement(w, xml.Name{Space: d.Space, Local: d.Name}, "")
			}
		}
	} else {
		names := pq.names
		if pq.allprop {
			names = pq.allNames(e.dead)
		}
		for _, n := range names {
			if v, ok := q.propValue(e, n, usage, now); ok {
				propElement(w, n, v)
			} else if !pq.allprop || slices.Contains(pq.names, n) {
				missing = append(missing, n)
			}
		}
	}
	w.WriteString("</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>")
	if len(missing) > 0 {
		w.WriteString("<D:propstat><D:prop>")
		for _, n := range missing {
			propElement(w, n, "")
		}
		w.WriteString("</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>")
	}
	w.WriteString("</D:response>\n")
}

// allNames are the properties an allprop answer lists for a resource with
// dead properties dead: the live ones, those the include element names and
// the dead ones, each once. Without dead properties it is the same list for
// every resource, made once.
func (pq propQuery) allNames(dead []drive.DeadProp) []xml.Name {
	if len(dead) == 0 && pq.allLive != nil {
		return pq.allLive
	}
	names := slices.Clone(liveProps)
	add := func(n xml.Name) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, n := range pq.names {
		add(n)
	}
	for _, d := range dead {
		add(xml.Name{Space: d.Space, Local: d.Name})
	}
	return names
}

// propValue returns the XML value of a property; false when the resource has none.
func (q *request) propValue(e *entry, n xml.Name, usage *drive.Usage, now time.Time) (string, bool) {
	if n.Space == nsDAV {
		if v, ok := q.liveValue(e, n.Local, now); ok {
			return v, true
		}
		if usage != nil {
			switch n.Local {
			case "quota-available-bytes":
				if usage.QuotaBytes <= 0 {
					return strconv.FormatInt(1<<50, 10), true
				}
				return strconv.FormatInt(usage.AvailableBytes, 10), true
			case "quota-used-bytes":
				return strconv.FormatInt(usage.UserUsedBytes, 10), true
			}
		}
	}
	if v, ok := q.ocValue(e, n.Space, n.Local); ok {
		return v, true
	}
	if n.Space == nsOC && n.Local == "checksums" {
		if e.digests != nil {
			return "<checksum>SHA1:" + e.digests.SHA1 + " MD5:" + e.digests.MD5 + "</checksum>", true
		}
		return "", false
	}
	for _, d := range e.dead {
		if d.Space == n.Space && d.Name == n.Local {
			return d.Value, true
		}
	}
	return "", false
}

// folderSizesOf counts the bytes below those of items that are folders when
// the query names oc:size (on request only).
func (q *request) folderSizesOf(pq propQuery, items []drive.File) (map[string]int64, error) {
	if pq.allprop || pq.propname || !slices.Contains(pq.names, xml.Name{Space: nsOC, Local: "size"}) {
		return nil, nil
	}
	var folders []drive.File
	for _, f := range items {
		if f.IsFolder {
			folders = append(folders, f)
		}
	}
	if len(folders) == 0 {
		return nil, nil
	}
	return q.h.drive.FolderSizes(q.ctx, q.p, folders)
}

// shareKindsOf loads the kinds of the caller's shares of ids when the query
// names oc:share-types (on request only).
func (q *request) shareKindsOf(pq propQuery, ids []string) (map[string][]drive.ShareKind, error) {
	if len(ids) == 0 || pq.allprop || pq.propname || !slices.Contains(pq.names, xml.Name{Space: nsOC, Local: "share-types"}) {
		return nil, nil
	}
	return q.h.drive.ShareKinds(q.ctx, q.p, ids)
}

// loadSharedTime loads the modification time of the virtual folder Shared
// with me.
func (q *request) loadSharedTime() error {
	if !q.sharedAt.IsZero() {
		return nil
	}
	t, err := q.h.drive.SharedFolderTime(q.ctx, q.p)
	if err != nil {
		return err
	}
	q.sharedAt = t
	return nil
}

// supportedLock is the value of supportedlock.
const supportedLock = "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>" +
	"<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"

// liveValue returns a live property's XML value; false when not defined here.
func (q *request) liveValue(e *entry, local string, now time.Time) (string, bool) {
	item := e.kind == kindItem
	switch local {
	case "resourcetype":
		if e.collection() {
			return "<D:collection/>", true
		}
		return "", true
	case "displayname":
		if len(e.segs) == 0 {
			return "", true
		}
		return escape(e.segs[len(e.segs)-1]), true
	case "getlastmodified":
		if item {
			return httpTime(modTime(e.file)), true
		}
		if e.kind == kindShared && !q.sharedAt.IsZero() {
			return httpTime(q.sharedAt), true
		}
	case "creationdate":
		if item {
			return e.file.CreatedAt.UTC().Format(time.RFC3339), true
		}
		if e.kind == kindShared && !q.sharedAt.IsZero() {
			return q.sharedAt.UTC().Format(time.RFC3339), true
		}
	case "getetag":
		switch {
		case item:
			return escape(etag(e.file)), true
		case e.kind == kindRoot && q.rootTag != "":
			return escape(q.rootTag), true
		case e.kind == kindShared && q.sharedTag != "":
			return escape(q.sharedTag), true
		}
	case "getcontentlength":
		if item && !e.file.IsFolder {
			return strconv.FormatInt(e.file.SizeBytes, 10), true
		}
	case "getcontenttype":
		if item && !e.file.IsFolder {
			return escape(e.file.MimeType), true
		}
	case "supportedlock":
		if item {
			return supportedLock, true
		}
	case "lockdiscovery":
		if item {
			var b strings.Builder
			for _, l := range e.locks {
				q.activeLock(&b, l, q.lockRoot(l, e), now)
			}
			return b.String(), true
		}
	}
	return "", false
}

// lockRoot returns the href of the item a lock covering e was taken on.
func (q *request) lockRoot(l drive.Lock, e *entry) string {
	for i, f := range e.chain {
		if f.ID == l.FileID {
			n := e.chainAt + i + 1
			return q.href(e.segs[:n], f.IsFolder)
		}
	}
	return q.href(e.segs, e.collection())
}

// activeLock writes a DAV:activelock element.
func (q *request) activeLock(w stringWriter, l drive.Lock, root string, now time.Time) {
	scope, depth := "exclusive", "0"
	if l.Shared {
		scope = "shared"
	}
	if l.Deep {
		depth = "infinity"
	}
	secs := int64(l.ExpiresAt.Sub(now).Seconds() + 0.999)
	w.WriteString("<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:" + scope + "/></D:lockscope><D:depth>" + depth + "</D:depth>")
	switch {
	case l.Kind == drive.LockKindEditor:
		// The editor's lock id is not XML and not for WebDAV clients.
		w.WriteString("<D:owner>online editor</D:owner>")
	case l.OwnerInfo != "":
		w.WriteString("<D:owner>" + l.OwnerInfo + "</D:owner>")
	}
	w.WriteString("<D:timeout>Second-" + strconv.FormatInt(max(secs, 0), 10) + "</D:timeout><D:locktoken><D:href>")
	escapeTo(w, l.Token)
	w.WriteString("</D:href></D:locktoken><D:lockroot><D:href>")
	escapeTo(w, root)
	w.WriteString("</D:href></D:lockroot></D:activelock>")
}

// proppatch stores dead properties and honours modification times.
func (q *request) proppatch() error {
	res := q.res
	if !res.exists {
		return app.Errorf(app.ENotFound, "Nothing is at %s.", q.r.URL.Path)
	}
	if err := res.writable(); err != nil {
		return err
	}
	root, err := parseXML(q.r.Body)
	if err != nil {
		return app.Errorf(app.EBadRequest, "The PROPPATCH body is not valid XML: %v.", err)
	}
	if !root.is(nsDAV, "propertyupdate") {
		return app.Errorf(app.EBadRequest, "The PROPPATCH body must be a DAV:propertyupdate element.")
	}
	type op struct {
		name   xml.Name
		remove bool
		value  string
		status int
	}
	var ops []*op
	final := map[xml.Name]*op{}
	var modified *time.Time
	failed := false
	for _, c := range root.Children {
		remove := c.is(nsDAV, "remove")
		if !remove && !c.is(nsDAV, "set") {
			continue
		}
		for _, pr := range c.Children {
			if !pr.is(nsDAV, "prop") {
				continue
			}
			for _, p := range pr.Children {
				o := &op{name: p.Name, remove: remove, value: innerXML(p), status: http.StatusOK}
				switch {
				case p.Name.Space == nsDAV && protectedProps[p.Name.Local]:
					o.status, failed = http.StatusForbidden, true
				case !remove && isModTimeProp(p.Name):
					t, err := parseModTime(p.text())
					if err != nil || drive.CheckModifiedTime("modified", t) != nil {
						o.status, failed = http.StatusConflict, true
					} else {
						modified = &t
					}
				case p.Name.Space == nsOC && p.Name.Local == "checksums":
					// Computed from the content: a value sent (rclone sends
					// its own with a modification time) is acknowledged, not kept.
				}
				ops = append(ops, o)
				final[o.name] = o
			}
		}
	}
	if !failed {
		var set, del []drive.DeadProp
		for _, o := range ops {
			if final[o.name] != o || (o.name.Space == nsDAV && isModTimeProp(o.name)) ||
				(o.name.Space == nsOC && o.name.Local == "checksums") {
				continue
			}
			d := drive.DeadProp{Space: o.name.Space, Name: o.name.Local, Value: o.value}
			if o.remove {
				del = append(del, d)
			} else {
				set = append(set, d)
			}
		}
		if err := q.h.drive.PropPatch(q.ctx, q.p, res.file.ID, set, del); err != nil {
			return err
		}
		if modified != nil {
			if _, err := q.h.drive.SetModified(q.ctx, q.p, res.file.ID, *modified); err != nil {
				return err
			}
		}
	}
	q.w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	q.w.WriteHeader(http.StatusMultiStatus)
	bw := bufio.NewWriter(q.w)
	bw.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<D:multistatus xmlns:D="DAV:"><D:response><D:href>`)
	escapeTo(bw, q.href(res.segs, res.isCollection()))
	bw.WriteString("</D:href>")
	for _, o := range ops {
		st := o.status
		if failed && st == http.StatusOK {
			st = http.StatusFailedDependency
		}
		bw.WriteString("<D:propstat><D:prop>")
		propElement(bw, o.name, "")
		bw.WriteString("</D:prop><D:status>HTTP/1.1 " + strconv.Itoa(st) + " " + http.StatusText(st) + "</D:status></D:propstat>")
	}
	bw.WriteString("</D:response></D:multistatus>\n")
	return bw.Flush()
}

// isModTimeProp reports whether a PROPPATCH of the property sets the
// modification time: DAV:getlastmodified (an HTTP date), DAV:lastmodified
// (Unix seconds, as ownCloud takes it and rclone sends it) or Windows'
// Win32LastModifiedTime.
func isModTimeProp(n xml.Name) bool {
	return (n.Space == nsDAV && (n.Local == "getlastmodified" || n.Local == "lastmodified")) ||
		(n.Space == nsMS && n.Local == "Win32LastModifiedTime")
}

// parseModTime parses a modification time: Unix seconds (with an optional
// fraction) or an HTTP date.
func parseModTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, ok := unixSeconds(v); ok {
		return t, nil
	}
	return http.ParseTime(v)
}

// unixSeconds parses decimal Unix seconds with an optional fraction.
func unixSeconds(v string) (time.Time, bool) {
	whole, frac, _ := strings.Cut(v, ".")
	digits := strings.TrimPrefix(whole, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" || len(digits) > 12 {
		return time.Time{}, false
	}
	secs, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	var nanos int64
	if frac != "" {
		frac = (frac + "000000000")[:9]
		nanos, _ = strconv.ParseInt(frac, 10, 64)
		if secs < 0 || strings.HasPrefix(whole, "-") {
			nanos = -nanos
		}
	}
	return time.Unix(secs, nanos).UTC(), true
}
