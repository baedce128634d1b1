package sqldb

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"atrium/app"
)

// TestMailClaim: of senders that claim one due e-mail at once (two nodes
// around a change of leader), one gets it; it is due again once the claim's
// lease ran out, not before.
func TestMailClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t)
	ob := MailOutbox{DB: db, Deliver: true}
	if err := ob.Queue(ctx, app.Mail{ID: "m1", To: "ada@example.test", Subject: "s", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(time.Minute)
	until := now.Add(5 * time.Minute)
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := ob.Claim(ctx, "m1", now, until)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d senders claimed the e-mail, want 1", won.Load())
	}
	if due, err := ob.Due(ctx, now, 10); err != nil || len(due) != 0 {
		t.Fatalf("claimed e-mail still due: %v %v", due, err)
	}
	if due, err := ob.Due(ctx, until, 10); err != nil || len(due) != 1 {
		t.Fatalf("e-mail not due after the lease: %v %v", due, err)
	}
}
