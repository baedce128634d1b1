package sqldb

import (
	"context"
)

// raiseTreeSeqQuery raises tree_seq of a folder and of every folder above
// it: the chain is walked up by primary key, one row a level, and only rows
// below the new value are written (no index holds tree_seq, so each is a
// row's page and nothing else). Plain SQL that PostgreSQL takes as well.
const raiseTreeSeqQuery = `WITH RECURSIVE up(id, depth) AS (
		SELECT id, 0 FROM drive_files WHERE id = ?
		UNION ALL SELECT f.parent_id, up.depth + 1 FROM drive_files f JOIN up ON f.id = up.id
			WHERE f.parent_id IS NOT NULL AND up.depth < 1000)
	UPDATE drive_files SET tree_seq = ? WHERE id IN (SELECT id FROM up) AND tree_seq < ?`

// RaiseTreeSeq raises the tree_seq of folder id and of every folder above
// it to seq where it is lower. The writer's folder cache keeps its rows
// through it (statementVerdict): they serve as the parents of writes, whose
// answers never show a folder's tree_seq.
func (s DriveStore) RaiseTreeSeq(ctx context.Context, id string, seq int64) error {
	if id == "" {
		return nil
	}
	_, err := s.write(ctx).ExecContext(ctx, raiseTreeSeqQuery, id, seq, seq)
	return mapErr(err, "drive folders")
}
