package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The drive's usage counters (drive_usage, one row per organisation, owner
// and mime group, and drive_org_usage, each organisation's totals, which
// triggers keep) change with nearly every write: a new file adds its bytes
// and one to its owner's counter. In a transaction of the writer the change
// is not written at once but kept (pendingUsage) and written once for the
// whole group commit, just before its COMMIT: the writes that arrive
// together mostly count into the same counter, and every client of a group
// waits for all of its statements (an upsert and its trigger were about
// 14 us of a new file's 150 us on the writer). What the transaction sees
// stays exact:
//   - OrgUsage, every write's quota check, adds the pending changes of the
//     organisation to what it reads;
//   - any other statement of the transaction that names drive_usage or
//     drive_org_usage (an owner's drive deleted, a report) first writes the
//     pending changes (writerConn.onStatement);
//   - a write of the group that fails is rolled back to its savepoint with
//     the changes it kept, and any it wrote meanwhile are kept again;
//   - outside a transaction, AddUsage writes at once.

const (
	addUsageQuery = `INSERT INTO drive_usage (organization_id, owner_id, mime_group, bytes, file_count)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (organization_id, owner_id, mime_group) DO UPDATE SET bytes = drive_usage.bytes + excluded.bytes,
		file_count = drive_usage.file_count + excluded.file_count`
	orgUsageQuery = `SELECT bytes, file_count FROM drive_org_usage WHERE organization_id = ?`
)

// usageKey is one counter of drive_usage.
type usageKey struct{ org, owner, group string }

// usageDelta is a change of one counter.
type usageDelta struct {
	key          usageKey
	bytes, count int64
}

// pendingUsage is what the writer's transaction changed of the counters and
// has not written yet: one sum a counter, in the order the counters were
// first changed (a transaction changes a few counters, however many files).
type pendingUsage struct {
	sums     []usageDelta
	flushing bool // its own statements run: they do not flush again
}

// add keeps a change.
func (p *pendingUsage) add(d usageDelta) {
	if i := slices.IndexFunc(p.sums, func(s usageDelta) bool { return s.key == d.key }); i >= 0 {
		p.sums[i].bytes += d.bytes
		p.sums[i].count += d.count
		return
	}
	p.sums = append(p.sums, d)
}

// org returns the pending changes of an organisation's totals.
func (p *pendingUsage) org(orgID string) (bytes, count int64) {
	for _, d := range p.sums {
		if d.key.org == orgID {
			bytes += d.bytes
			count += d.count
		}
	}
	return bytes, count
}

// mark returns what is pending now, for restore: a write of the group begins.
func (p *pendingUsage) mark() []usageDelta { return slices.Clone(p.sums) }

// restore makes pending what mark returned: the write was rolled back to its
// savepoint, and with it whatever it added or wrote.
func (p *pendingUsage) restore(m []usageDelta) {
	p.sums = append(p.sums[:0], m...)
}

// discard forgets what is pending: the transaction was rolled back.
func (p *pendingUsage) discard() {
	p.sums = p.sums[:0]
}

// flush writes what is pending through w, one upsert a counter (a sum of
// zero writes nothing).
func (p *pendingUsage) flush(ctx context.Context, w *stmtDB) error {
	if len(p.sums) == 0 {
		return nil
	}
	p.flushing = true
	defer func() { p.flushing = false }()
	for i, d := range p.sums {
		if d.bytes == 0 && d.count == 0 {
			continue
		}
		if _, err := w.ExecContext(ctx, addUsageQuery, d.key.org, d.key.owner, d.key.group, d.bytes, d.count); err != nil {
			// What was written is in the transaction; what was not stays
			// pending.
			p.sums = append(p.sums[:0], p.sums[i:]...)
			return mapErr(err, "drive usage")
		}
	}
	p.sums = p.sums[:0]
	return nil
}

// namesUsage reports whether query reads or writes the usage counters other
// than as AddUsage and OrgUsage do.
func namesUsage(query string) bool {
	return (strings.Contains(query, "drive_usage") || strings.Contains(query, "drive_org_usage")) &&
		query != addUsageQuery && query != orgUsageQuery
}

// AddUsage adjusts the counters of an owner's mime group: in a transaction
// when the transaction commits (pendingUsage), outside one at once.
func (s DriveStore) AddUsage(ctx context.Context, orgID, ownerID, group string, bytes, count int64) error {
	if bytes == 0 && count == 0 {
		return nil
	}
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		st.w.usage.add(usageDelta{key: usageKey{orgID, ownerID, group}, bytes: bytes, count: count})
		return nil
	}
	_, err := s.write(ctx).ExecContext(ctx, addUsageQuery, orgID, ownerID, group, bytes, count)
	return mapErr(err, "drive usage")
}

// OrgUsage returns the organisation's stored bytes and file count: its row
// of drive_org_usage, which triggers keep equal to the sum of its drive_usage
// counters (migration 00025), and in a transaction the changes it has not
// written yet. Every write's quota check reads it.
func (s DriveStore) OrgUsage(ctx context.Context, orgID string) (int64, int64, error) {
	var b, c int64
	err := s.read(ctx).QueryRowContext(ctx, orgUsageQuery, orgID).Scan(&b, &c)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, mapErr(err, "drive usage")
	}
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		pb, pc := st.w.usage.org(orgID)
		b, c = b+pb, c+pc
	}
	return b, c, nil
}

// flushUsageFirst is the writer's statement hook for the counters: a
// statement that names them, other than AddUsage's and OrgUsage's, finds
// the pending changes written.
func (w *writerConn) flushUsageFirst(query string) {
	if len(w.usage.sums) == 0 || w.usage.flushing || !namesUsage(query) {
		return
	}
	if err := w.usage.flush(context.Background(), w.stmts); err != nil {
		// The statement runs on what was written; the transaction does not
		// commit.
		w.fail(fmt.Errorf("write the usage counters before %.40q: %w", query, err))
	}
}
