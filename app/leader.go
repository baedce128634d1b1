package app

import (
	"context"
	"log/slog"
	"sync"
)

// Leader elects the one node of a cluster that runs the work that must run
// once (the drive's maintenance, housekeeping, mail sending). Nodes that share
// one database compete for it; a single process is always its own leader.
type Leader interface {
	// Lead waits until this node leads, or ctx ends (then it returns ctx's
	// error). It returns a context that ends when this node stops leading
	// (ctx ends, or the claim is lost: the database no longer holds it for
	// this node) and release, which gives the claim back. Until release is
	// called no other node leads, unless the claim was lost.
	Lead(ctx context.Context) (leading context.Context, release func(), err error)
}

// soleLeader is a Leader that can say it has no one to compete with (a
// single process on the embedded database): RunAsLeader then does not
// announce that it leads, which would speak of a cluster there is not.
type soleLeader interface{ Sole() bool }

// RunAsLeader runs jobs, each in a goroutine of its own, while this node
// leads: when leadership ends it waits for every job to return, gives the
// claim back and competes again, until ctx ends. It returns once ctx ended
// and the jobs returned.
func RunAsLeader(ctx context.Context, l Leader, log *slog.Logger, jobs ...func(context.Context)) {
	for {
		leading, release, err := l.Lead(ctx)
		if err != nil {
			return // ctx ended
		}
		if sl, ok := l.(soleLeader); !ok || !sl.Sole() {
			log.InfoContext(ctx, "leading: this node runs the cluster's background work")
		}
		var wg sync.WaitGroup
		for _, job := range jobs {
			wg.Go(func() { job(leading) })
		}
		<-leading.Done()
		wg.Wait()
		release()
		if ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "leadership lost: the background work stopped here; competing again")
	}
}
