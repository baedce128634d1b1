package webdav

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"atrium/app"
	"atrium/app/drive"
)

// lock serves LOCK: a new lock (on an unmapped URL it first creates an empty
// file), or with an empty body the refresh of the lock named in the If header.
func (q *request) lock() error {
	res := q.res
	ttl := parseTimeout(q.r.Header.Get("Timeout"))
	root, err := parseXML(q.r.Body)
	if errors.Is(err, errNoBody) {
		return q.refresh(ttl)
	}
	if err != nil {
		return app.Errorf(app.EBadRequest, "The LOCK body is not valid XML: %v.", err)
	}
	if !root.is(nsDAV, "lockinfo") {
		return app.Errorf(app.EBadRequest, "The LOCK body must be a DAV:lockinfo element.")
	}
	req := drive.LockRequest{Kind: drive.LockKindWebDAV, TTL: ttl, Deep: true}
	scope, typ := root.child(nsDAV, "lockscope"), root.child(nsDAV, "locktype")
	switch {
	case scope == nil || typ == nil || typ.child(nsDAV, "write") == nil:
		return app.Errorf(app.EBadRequest, "A lock names its lockscope and the write locktype.")
	case scope.child(nsDAV, "shared") != nil:
		req.Shared = true
	case scope.child(nsDAV, "exclusive") == nil:
		return app.Errorf(app.EBadRequest, "The lockscope is exclusive or shared.")
	}
	if o := root.child(nsDAV, "owner"); o != nil {
		req.OwnerInfo = innerXML(o)
		if len(req.OwnerInfo) > 4096 {
			return app.Errorf(app.EPayloadTooLarge, "The lock owner is at most 4 KiB.")
		}
	}
	switch strings.ToLower(strings.TrimSpace(q.r.Header.Get("Depth"))) {
	case "", "infinity":
	case "0":
		req.Deep = false
	default:
		return app.Errorf(app.EBadRequest, "A lock's Depth is 0 or infinity.")
	}
	if err := res.writable(); err != nil {
		return err
	}
	if len(q.ifLists) > 0 {
		if err := q.checkIf(); err != nil {
			return err
		}
	}
	status := http.StatusOK
	var l drive.Lock
	if res.exists {
		if l, err = q.h.drive.LockWith(q.ctx, q.p, res.file.ID, req); err != nil {
			return err
		}
	} else {
		if !res.parentOK {
			return app.Errorf(app.EConflict, "The folder to lock %q in does not exist.", res.name())
		}
		// One service call: the empty file and its lock, or neither.
		f, lk, created, err := q.h.drive.PutLocked(q.ctx, q.p, drive.PutRequest{ParentID: res.parentID, Name: res.name()}, req)
		if err != nil {
			return err
		}
		res.exists, res.file, res.chain, l = true, f, append(res.chain, f), lk
		if created {
			status = http.StatusCreated
		}
	}
	q.w.Header().Set("Lock-Token", "<"+l.Token+">")
	return q.writeLock(status, l)
}

// refresh extends the lock whose token the If header carries.
func (q *request) refresh(ttl time.Duration) error {
	if !q.res.exists {
		return app.Errorf(app.ENotFound, "Nothing is at %s.", q.r.URL.Path)
	}
	if len(q.tokens) == 0 {
		return app.Errorf(app.EBadRequest, "A LOCK without a body refreshes a lock: send its token in the If header.")
	}
	var err error
	for _, t := range q.tokens {
		var l drive.Lock
		if l, err = q.h.drive.RefreshLock(q.ctx, q.p, t, ttl); err == nil {
			return q.writeLock(http.StatusOK, l)
		}
	}
	return err
}

func (q *request) writeLock(status int, l drive.Lock) error {
	e := &entry{segs: q.res.segs, kind: q.res.kind, file: q.res.file, chain: q.res.chain, chainAt: q.res.chainAt}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n" + `<D:prop xmlns:D="DAV:"><D:lockdiscovery>`)
	q.activeLock(&b, l, q.lockRoot(l, e), time.Now())
	b.WriteString("</D:lockdiscovery></D:prop>\n")
	q.w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	q.w.WriteHeader(status)
	_, err := q.w.Write([]byte(b.String()))
	return err
}

// unlock serves UNLOCK with the Lock-Token header.
func (q *request) unlock() error {
	tok := strings.TrimSpace(q.r.Header.Get("Lock-Token"))
	if len(tok) < 2 || tok[0] != '<' || tok[len(tok)-1] != '>' {
		return app.Errorf(app.EBadRequest, "UNLOCK needs the Lock-Token header: <token>.")
	}
	if !q.res.exists || q.res.kind != kindItem {
		return app.Errorf(app.EConflict, "There is no lock at %s.", q.r.URL.Path)
	}
	if err := q.h.drive.Unlock(q.ctx, q.p, q.res.file.ID, tok[1:len(tok)-1]); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// parseTimeout reads a Timeout header (RFC 4918 §10.7); the service caps it.
func parseTimeout(h string) time.Duration {
	for _, v := range strings.Split(h, ",") {
		v = strings.TrimSpace(v)
		if n, ok := strings.CutPrefix(v, "Second-"); ok {
			if s, err := strconv.ParseInt(n, 10, 64); err == nil && s > 0 {
				return time.Duration(min(s, 1<<30)) * time.Second
			}
		}
	}
	return drive.DefaultLockTTL
}

// ifState is what If conditions are evaluated against.
type ifState struct {
	exists bool
	etag   string
	tokens []string
}

// state returns the entity tag and the tokens of the locks covering res (for
// a missing item, the deep locks of its folder).
func (q *request) state(res *resource) (ifState, error) {
	st := ifState{}
	switch {
	case res.exists && res.kind == kindItem:
		st.exists, st.etag = true, etag(res.file)
		ls, err := q.h.drive.Locks(q.ctx, q.p, res.file.ID)
		if err != nil {
			return st, err
		}
		for _, l := range ls {
			st.tokens = append(st.tokens, l.Token)
		}
	case !res.exists && res.parentOK && res.parentID != "":
		ls, err := q.h.drive.Locks(q.ctx, q.p, res.parentID)
		if err != nil {
			return st, err
		}
		for _, l := range ls {
			if l.Deep {
				st.tokens = append(st.tokens, l.Token)
			}
		}
	case res.exists:
		st.exists = true
	}
	return st, nil
}

// evalIf reports whether the If header holds: any of its lists is true.
func (q *request) evalIf() (bool, error) {
	states := map[string]ifState{}
	for _, l := range q.ifLists {
		st, ok := states[l.Tag]
		if !ok {
			res := q.res
			if l.Tag != "" {
				res = nil
				if u, err := url.Parse(l.Tag); err == nil {
					if _, rel, in := splitMount(q.p, u.Path); in {
						if segs, err := segments(rel); err == nil {
							if res, err = q.resolve(segs); err != nil {
								return false, err
							}
						}
					}
				}
			}
			if res == nil {
				states[l.Tag] = ifState{}
				continue
			}
			var err error
			if st, err = q.state(res); err != nil {
				return false, err
			}
			states[l.Tag] = st
		}
		all := true
		for _, c := range l.Conds {
			var match bool
			if c.Token != "" {
				match = slices.Contains(st.tokens, c.Token)
			} else {
				match = st.exists && strings.TrimPrefix(c.ETag, "W/") == st.etag
			}
			if match == c.Not {
				all = false
				break
			}
		}
		if all {
			return true, nil
		}
	}
	return false, nil
}

// checkIf fails the request when the If header does not hold: 423 when a
// write meets a lock whose token it did not submit, else 412.
func (q *request) checkIf() error {
	ok, err := q.evalIf()
	if err != nil || ok {
		return err
	}
	write := q.r.Method != http.MethodGet && q.r.Method != http.MethodHead && q.r.Method != "PROPFIND"
	if write && q.res.exists && q.res.kind == kindItem {
		ls, err := q.h.drive.Locks(q.ctx, q.p, q.res.file.ID)
		if err != nil {
			return err
		}
		// The client presented lock tokens, none of them the lock's.
		triedLock := slices.ContainsFunc(q.tokens, drive.IsLockToken)
		for _, l := range ls {
			if triedLock && !slices.Contains(q.tokens, l.Token) {
				return app.Errorf(app.ELocked, "%q is locked; submit the lock's token in the If header.", q.res.file.Name)
			}
		}
	}
	return app.Errorf(app.EPreconditionFailed, "The If header's conditions do not hold.")
}
