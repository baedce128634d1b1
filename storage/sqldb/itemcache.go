package sqldb

import (
	"context"
	"maps"
	"slices"
	"strings"

	"atrium/app/drive"
)

// The writer's folder cache. A write of a new file reads its folder in its
// transaction: by path (a WebDAV PUT: LiveItemAt, one indexed lookup a name
// and the last item's whole row) or by id (File: a REST or TUS upload's
// parent). Through the driver that row costs about 30 us of the one writer's
// time, every client of a group commit waits for the group's statements,
// and writes that arrive together mostly go to the same folder (a sync
// client uploading a tree). So the writer keeps the folders LiveItemAt and
// File found, by owner and path and by id, across transactions, and forgets
// them whenever a statement it runs could have changed what the lookup would
// find:
//
//   - a read, transaction control that keeps changes (BEGIN, SAVEPOINT,
//     RELEASE, COMMIT) and a PRAGMA keep the cache;
//   - an INSERT keeps it, save into the tables drive_files references
//     (organizations, users) or a drive_files insert that could replace or
//     update a row: a new live item cannot take a cached path (the unique
//     index drive_files_live_name), and no trigger writes drive_files
//     (TestItemCacheNoTriggerWritesDriveFiles);
//   - UPDATE drive_files ... WHERE id = ? (UpdateFile) forgets the paths that
//     go through that item; other UPDATEs and DELETEs of drive_files,
//     organizations or users (a cascade, an owner's name) forget everything;
//     those of other tables keep it;
//   - raiseTreeSeqQuery keeps it: it writes folders' tree_seq alone, which
//     decides no lookup (the kept rows' TreeSeq may be behind; see
//     RaiseTreeSeq);
//   - ROLLBACK (to a savepoint too), anything else, a statement of a group
//     that failed, work on the connection outside a transaction (onConn), and
//     a commit by another connection forget everything. The last is told by
//     the pager's data version (SQLITE_FCNTL_DATA_VERSION), read when a
//     group begins: SQLite counts there every change of the database, by
//     this connection's commits and by those of others it finds when a
//     transaction begins, so the cache reads it again after each commit of
//     its own (committed). It is a file control, not a statement: PRAGMA
//     data_version, which counts only the commits of others, cost about
//     24 us of the writer's time a commit through the driver.
//
// Only the committer's goroutine uses it: jobs and their statements run there.
type itemCache struct {
	items    map[string]cachedItem // by pathKey and idKey
	verdicts map[string]verdict    // by statement text
	version  uint32                // the pager's data version when last read
	// dataVersion reads the pager's data version of the writer's
	// connection; nil: nothing is kept.
	dataVersion func() (uint32, error)
}

// cachedItem is a folder LiveItemAt or File found, and the ids of the
// folders on its path (its own last; File's: its own alone).
type cachedItem struct {
	file  drive.File
	chain []string
}

// maxCachedItems bounds the cache; past it, it starts empty again.
const maxCachedItems = 1024

// verdict is what a statement does to the cache.
type verdict uint8

const (
	keepItems   verdict = iota + 1
	forgetItem          // UPDATE drive_files ... WHERE id = ?: the paths through that id
	forgetItems         // everything
)

// pathKey is the key of the folder at nameKeys in ownerID's drive, idKey
// that of the folder id.
func pathKey(ownerID string, nameKeys []string) string {
	return "p\x00" + ownerID + "\x00" + strings.Join(nameKeys, "\x00")
}

func idKey(id string) string { return "i\x00" + id }

// get returns a copy of the folder kept under key, if any.
func (c *itemCache) get(key string) (drive.File, bool) {
	if c == nil {
		return drive.File{}, false
	}
	it, ok := c.items[key]
	if !ok {
		return drive.File{}, false
	}
	return cloneFile(it.file), true
}

// put keeps f under key, found through the folders chain (f's id last), by
// the writer in a transaction. Into an empty cache it first reads the
// database's version, which each group then compares (begun).
func (c *itemCache) put(key string, f drive.File, chain []string) {
	if c.dataVersion == nil {
		return
	}
	if len(c.items) == 0 {
		v, err := c.dataVersion()
		if err != nil {
			return
		}
		c.version = v
	}
	if c.items == nil || len(c.items) >= maxCachedItems {
		c.items = make(map[string]cachedItem)
	}
	c.items[key] = cachedItem{file: cloneFile(f), chain: chain}
}

// forget empties the cache.
func (c *itemCache) forget() {
	if len(c.items) > 0 {
		clear(c.items)
	}
}

// statement is told of every statement the writer runs, before it runs.
func (c *itemCache) statement(query string, args []any) {
	if len(c.items) == 0 {
		return
	}
	v, ok := c.verdicts[query]
	if !ok {
		v = statementVerdict(query)
		if c.verdicts == nil || len(c.verdicts) >= maxCachedStatements {
			c.verdicts = make(map[string]verdict)
		}
		c.verdicts[query] = v
	}
	switch v {
	case keepItems:
	case forgetItem:
		var id string
		if len(args) > 0 {
			id, _ = args[len(args)-1].(string)
		}
		if id == "" {
			c.forget()
			return
		}
		maps.DeleteFunc(c.items, func(_ string, it cachedItem) bool { return slices.Contains(it.chain, id) })
	default:
		c.forget()
	}
}

// begun is told that the writer began a transaction: when the database
// changed since the cache's version was read, which at this point can only
// be another connection's commit, it forgets everything. An empty cache
// reads nothing.
func (c *itemCache) begun() {
	if len(c.items) == 0 {
		return
	}
	if v, err := c.dataVersion(); err != nil || v != c.version {
		c.forget()
	}
}

// committed is told that the writer's transaction committed: the data
// version counts that commit too, and the cache follows what it changed
// (statement), so it takes the new version as its own.
func (c *itemCache) committed() {
	if len(c.items) == 0 {
		return
	}
	v, err := c.dataVersion()
	if err != nil {
		c.forget()
		return
	}
	c.version = v
}

// statementVerdict reads what query may change (see itemCache).
func statementVerdict(query string) verdict {
	if query == raiseTreeSeqQuery {
		return keepItems // tree_seq only: see RaiseTreeSeq
	}
	lower := strings.ToLower(query)
	words := strings.Fields(lower)
	if len(words) == 0 {
		return forgetItems
	}
	switch words[0] {
	case "select", "begin", "savepoint", "release", "commit", "pragma":
		return keepItems
	case "insert":
		i := 1
		if len(words) > 2 && words[1] == "or" {
			if words[2] == "replace" {
				return forgetItems // a replaced row is deleted first
			}
			i = 3
		}
		if len(words) <= i+1 || words[i] != "into" {
			return forgetItems
		}
		switch tableName(words[i+1]) {
		case "drive_files", "organizations", "users":
			if strings.Contains(lower, "on conflict") {
				return forgetItems // an upsert updates
			}
		}
		return keepItems
	case "update":
		if len(words) < 2 || words[1] == "or" {
			return forgetItems
		}
		switch tableName(words[1]) {
		case "drive_files":
			if n := len(words); n >= 4 && slices.Equal(words[n-4:], []string{"where", "id", "=", "?"}) {
				return forgetItem
			}
			return forgetItems
		case "organizations", "users":
			return forgetItems
		default:
			return keepItems
		}
	case "delete":
		if len(words) < 3 || words[1] != "from" {
			return forgetItems
		}
		switch tableName(words[2]) {
		case "drive_files", "organizations", "users":
			return forgetItems
		default:
			return keepItems
		}
	default:
		return forgetItems
	}
}

// tableName is the table a statement's word names: without a column list
// glued to it ("drive_seq(owner_id,"), quotes or a schema ("main.").
func tableName(word string) string {
	if i := strings.IndexByte(word, '('); i >= 0 {
		word = word[:i]
	}
	word = strings.ReplaceAll(strings.ReplaceAll(word, `"`, ""), "`", "")
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		word = word[i+1:]
	}
	return word
}

// cloneFile copies f with nothing shared: the cache's copy must not change
// when a caller changes its own.
func cloneFile(f drive.File) drive.File {
	if f.ParentID != nil {
		p := *f.ParentID
		f.ParentID = &p
	}
	if f.TrashedAt != nil {
		t := *f.TrashedAt
		f.TrashedAt = &t
	}
	if f.LastAccessAt != nil {
		t := *f.LastAccessAt
		f.LastAccessAt = &t
	}
	f.Metadata.Tags = slices.Clone(f.Metadata.Tags)
	f.Metadata.Custom = maps.Clone(f.Metadata.Custom)
	return f
}

// writerItems returns the writer's folder cache when ctx carries a write
// transaction, else nil.
func writerItems(ctx context.Context) *itemCache {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		return &st.w.items
	}
	return nil
}
