package tus

import (
	"context"
	"log/slog"
	"slices"

	xslog "golang.org/x/exp/slog"
)

// newTusdLogger gives tusd (which logs with golang.org/x/exp/slog) our logger,
// from warnings up: its per-request info lines would double the access log.
func newTusdLogger(l *slog.Logger) *xslog.Logger {
	return xslog.New(bridge{h: l.Handler()})
}

// bridge forwards x/exp/slog records to a log/slog handler. tusd makes a
// logger with the request's attributes for every request, and almost none of
// them logs anything (warnings and up only): the attributes and groups are
// kept as given and handed to the handler only when a record is handled.
type bridge struct {
	h   slog.Handler
	ops []func(slog.Handler) slog.Handler // WithAttrs and WithGroup, in order
}

func (b bridge) Enabled(ctx context.Context, l xslog.Level) bool {
	return l >= xslog.LevelWarn && b.h.Enabled(ctx, slog.Level(l))
}

func (b bridge) Handle(ctx context.Context, r xslog.Record) error {
	rec := slog.NewRecord(r.Time, slog.Level(r.Level), "tusd: "+r.Message, r.PC)
	r.Attrs(func(a xslog.Attr) bool {
		rec.AddAttrs(attr(a))
		return true
	})
	h := b.h
	for _, op := range b.ops {
		h = op(h)
	}
	return h.Handle(ctx, rec)
}

func (b bridge) WithAttrs(as []xslog.Attr) xslog.Handler {
	if len(as) == 0 {
		return b
	}
	return b.with(func(h slog.Handler) slog.Handler {
		out := make([]slog.Attr, len(as))
		for i, a := range as {
			out[i] = attr(a)
		}
		return h.WithAttrs(out)
	})
}

func (b bridge) WithGroup(name string) xslog.Handler {
	if name == "" {
		return b
	}
	return b.with(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (b bridge) with(op func(slog.Handler) slog.Handler) bridge {
	return bridge{h: b.h, ops: append(slices.Clip(b.ops), op)}
}

func attr(a xslog.Attr) slog.Attr { return slog.Any(a.Key, a.Value.Any()) }
