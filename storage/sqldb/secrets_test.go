package sqldb

import (
	"bytes"
	"context"
	"crypto/rand"
	"sync"
	"testing"
)

// TestSecretMadeOnce: nodes starting together on an empty database each ask
// for the server's secrets at once; every one gets the same value, made once
// (on PostgreSQL the losers' inserts conflict and run again, then read the
// winner's).
func TestSecretMadeOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	ids := IdentityStore{DB: db}
	const callers = 8
	got := make([][]byte, callers)
	errs := make([]error, callers)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range callers {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			got[i], errs[i] = ids.Secret(ctx, "race_key", func() ([]byte, error) {
				b := make([]byte, 32)
				_, err := rand.Read(b)
				return b, err
			})
		}()
	}
	start.Done()
	done.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if len(got[i]) != 32 || !bytes.Equal(got[i], got[0]) {
			t.Fatalf("caller %d got %x, caller 0 %x: want one secret for all", i, got[i], got[0])
		}
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM server_secrets WHERE name = 'race_key'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows of the secret (%v), want 1", n, err)
	}
}
