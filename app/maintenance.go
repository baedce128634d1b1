package app

import (
	"context"
	"log/slog"
	"time"
)

// RunMaintenance runs step at once and then every interval until ctx ends.
// step returns how many rows or items each of its parts handled; the parts
// that did something are logged, and so is a failure (as "<what> maintenance").
func RunMaintenance(ctx context.Context, interval time.Duration, log *slog.Logger, what string,
	step func(context.Context) (map[string]int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		done, err := step(ctx)
		if err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, what+" maintenance failed", "err", err)
		}
		for k, n := range done {
			if n > 0 {
				log.InfoContext(ctx, what+" maintenance", "step", k, "count", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
