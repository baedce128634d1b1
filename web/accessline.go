package web

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// The access log's lines, formatted here rather than by slog.
//
// Every request but the probes writes one line, and a slog record of it cost
// about a tenth of a small REST request's CPU (the handler's attribute walk,
// its time formatting, its buffer pool and lock). When the server's log
// handler says it writes slog.TextHandler's format with no options and nothing
// added (textLineWriter), the access log formats the same line itself and
// hands it over whole; TestAccessLineAsSlog holds the two formats to each other.

// textLineWriter is a log handler that also takes whole lines already in
// slog.TextHandler's format. WriteTextLine reports false when the handler does
// not write that format (then the caller logs a record).
type textLineWriter interface {
	WriteTextLine(line []byte) bool
}

// linePool holds line buffers (pointers, so that Put does not allocate); one
// grown past maxPooledLine by a long path is not kept.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

const maxPooledLine = 16 << 10

// writeTextLine formats an access log line of attrs at t in a pooled buffer
// and hands it to lw; false when either declines (the caller logs a record).
func writeTextLine(lw textLineWriter, t time.Time, attrs []slog.Attr) bool {
	buf := linePool.Get().(*[]byte)
	line, ok := appendTextLine((*buf)[:0], t, slog.LevelInfo, "request", attrs)
	ok = ok && lw.WriteTextLine(line)
	if cap(line) <= maxPooledLine {
		*buf = line
		linePool.Put(buf)
	}
	return ok
}

// appendTextLine appends the line slog.TextHandler (no options) writes for a
// record of level, msg and attrs at t; ok is false when an attribute's kind is
// not one it formats (string, int64, float64).
func appendTextLine(b []byte, t time.Time, level slog.Level, msg string, attrs []slog.Attr) (_ []byte, ok bool) {
	b = append(b, "time="...)
	b = appendLineTime(b, t)
	b = append(b, " level="...)
	b = appendTextString(b, level.String())
	b = append(b, " msg="...)
	b = appendTextString(b, msg)
	for _, a := range attrs {
		b = append(b, ' ')
		b = appendTextString(b, a.Key)
		b = append(b, '=')
		switch a.Value.Kind() {
		case slog.KindString:
			b = appendTextString(b, a.Value.String())
		case slog.KindInt64:
			b = strconv.AppendInt(b, a.Value.Int64(), 10)
		case slog.KindFloat64:
			b = strconv.AppendFloat(b, a.Value.Float64(), 'g', -1, 64)
		default:
			return b, false
		}
	}
	return append(b, '\n'), true
}

// appendTextString appends s as slog's text format does: as it is, or quoted
// when it is empty or holds a space, '=', '"', a control character, invalid
// UTF-8 or a rune that is a space or not printable.
func appendTextString(b []byte, s string) []byte {
	if textNeedsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func textNeedsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// lineSecond is a second's formatted time up to its fraction, and its zone.
type lineSecond struct {
	unix         int64
	loc          *time.Location
	prefix, zone []byte // "2006-01-02T15:04:05." and "Z07:00"
}

var lastLineSecond atomic.Pointer[lineSecond]

// appendLineTime appends t as slog's text format does (RFC 3339 with
// milliseconds, in t's zone), formatting each second once.
func appendLineTime(b []byte, t time.Time) []byte {
	sec := t.Unix()
	ls := lastLineSecond.Load()
	if ls == nil || ls.unix != sec || ls.loc != t.Location() {
		whole := t.Truncate(time.Second)
		ls = &lineSecond{unix: sec, loc: t.Location(), prefix: whole.AppendFormat(nil, "2006-01-02T15:04:05."), zone: whole.AppendFormat(nil, "Z07:00")}
		lastLineSecond.Store(ls)
	}
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, ls.prefix...)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, ls.zone...)
}
