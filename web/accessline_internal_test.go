package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The access log's own lines are byte for byte what slog.TextHandler writes
// for the same record: every ASCII byte and a set of runes alone and within
// words, as values and as keys, numbers of both kinds, and times in three
// zones, at the edges of a millisecond and of a second, in and out of turn
// (the formatted second is kept from one line to the next).
func TestAccessLineAsSlog(t *testing.T) {
	t.Parallel()
	var strs []string
	for c := range 256 {
		strs = append(strs, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	strs = append(strs, "", "/api/v1/me", "/api/v1/drive/items/x/content", "é", "日本語", "\u00a0", "a\u2028b", "\u200b",
		"\ufeff", "\ufffd", "a\xffb", "\xe2\x82", "🙂", "a=b", `a"b`, `a\b`, "tab\there", "line\nbreak", "\x7f",
		"org_01HZ", strings.Repeat("x", 300))
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -8*3600), time.Local}
	base := time.Date(2026, 11, 29, 6, 30, 59, 0, time.UTC)
	times := []time.Time{
		base, base.Add(999 * time.Millisecond), base.Add(999999999), base.Add(time.Second), base.Add(time.Nanosecond),
		base.Add(-time.Nanosecond), base.Add(500500 * time.Microsecond), base, time.Now(), time.Now().Add(time.Minute),
	}
	type record struct {
		t     time.Time
		attrs []slog.Attr
	}
	var records []record
	for i, s := range strs {
		tm := times[i%len(times)].In(zones[i%len(zones)])
		records = append(records,
			record{tm, []slog.Attr{slog.String("path", s), slog.Int("status", 200)}},
			record{tm, []slog.Attr{slog.String(s, "v")}})
	}
	for _, z := range zones {
		for _, tm := range times {
			records = append(records, record{tm.In(z), []slog.Attr{
				slog.String("method", "GET"), slog.String("path", "/api/v1/me"), slog.Int("status", 404),
				slog.Float64("duration_ms", 0.123), slog.Int("bytes", 0), slog.Int64("neg", -17),
				slog.Float64("big", 1e21), slog.Float64("zero", 0), slog.Float64("frac", 12.5),
				slog.String("request_id", "Q2x3-_9.a"), slog.String("org", "o1"), slog.String("user", "u1"),
			}})
		}
	}
	for i, r := range records {
		var want bytes.Buffer
		rec := slog.NewRecord(r.t, slog.LevelInfo, "request", 0)
		rec.AddAttrs(r.attrs...)
		if err := slog.NewTextHandler(&want, nil).Handle(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		got, ok := appendTextLine(nil, r.t, slog.LevelInfo, "request", r.attrs)
		if !ok {
			t.Fatalf("record %d: not formatted", i)
		}
		if string(got) != want.String() {
			t.Fatalf("record %d:\n got %q\nwant %q", i, got, want.String())
		}
	}
}

// An attribute of a kind the line does not format leaves the record to slog.
func TestAccessLineOtherKinds(t *testing.T) {
	t.Parallel()
	for _, a := range []slog.Attr{slog.Bool("b", true), slog.Duration("d", time.Second), slog.Time("t", time.Now()),
		slog.Any("x", struct{}{}), slog.Group("g", slog.Int("i", 1)), slog.Uint64("u", 1)} {
		if _, ok := appendTextLine(nil, time.Now(), slog.LevelInfo, "request", []slog.Attr{slog.String("path", "/"), a}); ok {
			t.Errorf("%s (%s) was formatted", a.Key, a.Value.Kind())
		}
	}
}

// BenchmarkAccessLine is one request's access log line formatted by the access
// log (text) against a slog record through slog.TextHandler (slog), both into
// a writer that drops it.
func BenchmarkAccessLine(b *testing.B) {
	attrs := []slog.Attr{slog.String("method", "GET"), slog.String("path", "/api/v1/me"), slog.Int("status", 200),
		slog.Float64("duration_ms", 0.042), slog.Int("bytes", 1131), slog.String("request_id", "k3J9vQ2xLm8pR4tW"),
		slog.String("org", "org_01JD8Y2N6F4Q9X3M7K5T1V0W2Z"), slog.String("user", "usr_01JD8Y2N6F4Q9X3M7K5T1V0W3A")}
	b.Run("slog", func(b *testing.B) {
		h := slog.NewTextHandler(io.Discard, nil)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
			r.AddAttrs(attrs...)
			_ = h.Handle(ctx, r)
		}
	})
	b.Run("text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			writeTextLine(discardLines{}, time.Now(), attrs)
		}
	})
}

// discardLines takes text lines and drops them.
type discardLines struct{}

func (discardLines) WriteTextLine(line []byte) bool { _, _ = io.Discard.Write(line); return true }
