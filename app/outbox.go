package app

import (
	"context"
	"time"
)

// EventsMaxAge is how long outbox events are kept once every reader of the
// outbox has applied them. (Webhook deliveries carry their own copy of the
// event; the search index is the reader that needs the events themselves.)
const EventsMaxAge = 7 * 24 * time.Hour

// OutboxPruneStore deletes old outbox events.
type OutboxPruneStore interface {
	// PruneEvents deletes at most limit events up to seq upTo created before
	// t, oldest first, and returns how many went.
	PruneEvents(ctx context.Context, upTo int64, t time.Time, limit int) (int, error)
}

// OutboxPruner deletes the outbox events older than EventsMaxAge that every
// reader has applied. It is the application's, not a module's: the outbox
// holds the events of every module.
type OutboxPruner struct {
	Store OutboxPruneStore
	// Applied, when set, returns the last event the outbox's reader (the
	// drive's search index) has applied; ok false: none may go yet (the index
	// is being built, or is not open).
	Applied func() (seq int64, ok bool)
}

const (
	// pruneBatch is how many events one delete removes.
	pruneBatch = 1000
	// pruneBudget bounds one Prune; the rest goes next time.
	pruneBudget = 10 * time.Second
)

// Prune deletes, in batches, the events created before now - EventsMaxAge
// that the reader has applied, and returns how many went.
func (o OutboxPruner) Prune(ctx context.Context, now time.Time) (int, error) {
	upTo := int64(1<<63 - 1)
	if o.Applied != nil {
		seq, ok := o.Applied()
		if !ok {
			return 0, nil
		}
		upTo = seq
	}
	total := 0
	for deadline := time.Now().Add(pruneBudget); time.Now().Before(deadline); {
		n, err := o.Store.PruneEvents(ctx, upTo, now.Add(-EventsMaxAge), pruneBatch)
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
	return total, nil
}
