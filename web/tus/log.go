package tus

import (
	"context"
	"log/slog"

	xslog "golang.org/x/exp/slog"
)

// newTusdLogger gives tusd (which logs with golang.org/x/exp/slog) our logger,
// from warnings up: its per-request info lines would double the access log.
func newTusdLogger(l *slog.Logger) *xslog.Logger {
	return xslog.New(bridge{h: l.Handler()})
}

// bridge forwards x/exp/slog records to a log/slog handler.
type bridge struct{ h slog.Handler }

func (b bridge) Enabled(ctx context.Context, l xslog.Level) bool {
	return l >= xslog.LevelWarn && b.h.Enabled(ctx, slog.Level(l))
}

func (b bridge) Handle(ctx context.Context, r xslog.Record) error {
	rec := slog.NewRecord(r.Time, slog.Level(r.Level), "tusd: "+r.Message, r.PC)
	r.Attrs(func(a xslog.Attr) bool {
		rec.AddAttrs(attr(a))
		return true
	})
	return b.h.Handle(ctx, rec)
}

func (b bridge) WithAttrs(as []xslog.Attr) xslog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = attr(a)
	}
	return bridge{h: b.h.WithAttrs(out)}
}

func (b bridge) WithGroup(name string) xslog.Handler { return bridge{h: b.h.WithGroup(name)} }

func attr(a xslog.Attr) slog.Attr { return slog.Any(a.Key, a.Value.Any()) }
