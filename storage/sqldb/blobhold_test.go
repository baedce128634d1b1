package sqldb

import (
	"context"
	"testing"
	"time"
)

// TestBlobLockExcludesHolds: a write cannot hold a blob while a collector's
// transaction holds the blob's lock (it waits for it to end), on either
// engine; holds are found until they end and pruned after.
func TestBlobLockExcludesHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	s := DriveStore{DB: db}
	const h = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	locked, release := make(chan struct{}), make(chan struct{})
	collector := make(chan error, 1)
	go func() {
		collector <- db.InTx(ctx, func(ctx context.Context) error {
			if err := s.LockBlob(ctx, h); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	now := time.Now()
	held := make(chan error, 1)
	go func() {
		held <- db.InTx(ctx, func(ctx context.Context) error {
			if err := s.LockBlob(ctx, h); err != nil {
				return err
			}
			return s.HoldBlob(ctx, "w1", h, now.Add(time.Minute))
		})
	}()
	select {
	case err := <-held:
		t.Fatalf("the hold was taken while the collector held the blob's lock (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-collector; err != nil {
		t.Fatal(err)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if ok, err := s.BlobHeld(ctx, h, now); err != nil || !ok {
		t.Fatalf("held %v (%v), want true", ok, err)
	}
	if ok, err := s.BlobHeld(ctx, h, now.Add(2*time.Minute)); err != nil || ok {
		t.Fatalf("held after its end %v (%v), want false", ok, err)
	}
	var n int
	if err := db.InTx(ctx, func(ctx context.Context) (err error) {
		n, err = s.PruneBlobHolds(ctx, now.Add(2*time.Minute))
		return err
	}); err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want 1", n, err)
	}
}
