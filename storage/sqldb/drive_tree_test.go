package sqldb

import "testing"

// The statement that raises folders' tree_seq keeps the writer's folder
// cache (it decides no lookup): a small file's write raises its folders on
// every PUT, and forgetting the cache each time would cost the next write
// of the same folder its reads.
func TestRaiseTreeSeqKeepsFolderCache(t *testing.T) {
	t.Parallel()
	if v := statementVerdict(raiseTreeSeqQuery); v != keepItems {
		t.Fatalf("verdict %d, want keepItems", v)
	}
}
