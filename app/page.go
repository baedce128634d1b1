package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// Limits of cursor pagination (spec §8).
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
	CursorValidity   = 24 * time.Hour
)

// Page is one page of a cursor-paginated list (the spec's CursorPage).
type Page[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
	Limit      int     `json:"limit"`
}

// PageRequest is what a caller asks of a cursor list: the position after which to
// continue ("" for the first page) and the page size.
type PageRequest struct {
	After string
	Limit int
}

// Cursors encodes and decodes opaque, tamper-evident cursors. A cursor names the
// list it belongs to, the position of the last item returned and its issue time.
type Cursors struct {
	Key   []byte
	Clock Clock
}

type cursorBody struct {
	List  string `json:"l"`
	After string `json:"a"`
	At    int64  `json:"t"`
}

// Encode returns a cursor for list continuing after position.
func (c *Cursors) Encode(list, after string) string {
	body, _ := json.Marshal(cursorBody{List: list, After: after, At: c.Clock.Now().Unix()})
	p := base64.RawURLEncoding.EncodeToString(body)
	return p + "." + base64.RawURLEncoding.EncodeToString(c.mac(p))
}

// Decode returns the position a cursor of list continues after. An unreadable,
// tampered or foreign cursor is invalid_cursor; one older than 24 hours is
// cursor_expired.
func (c *Cursors) Decode(list, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	p, sig, ok := strings.Cut(cursor, ".")
	invalid := Errorf(EInvalidCursor, "The pagination cursor is not valid; restart from the first page.")
	if !ok {
		return "", invalid
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, c.mac(p)) {
		return "", invalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return "", invalid
	}
	var b cursorBody
	if err := json.Unmarshal(raw, &b); err != nil || b.List != list {
		return "", invalid
	}
	if c.Clock.Now().Sub(time.Unix(b.At, 0)) > CursorValidity {
		return "", Errorf(ECursorExpired, "The pagination cursor has expired (cursors are valid 24 hours); restart from the first page.")
	}
	return b.After, nil
}

func (c *Cursors) mac(payload string) []byte {
	m := hmac.New(sha256.New, c.Key)
	m.Write([]byte("cursor\x00" + payload))
	return m.Sum(nil)
}

// Request turns a cursor and a limit into a PageRequest for list.
func (c *Cursors) Request(list, cursor string, limit int) (PageRequest, error) {
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if limit < 1 || limit > MaxPageLimit {
		return PageRequest{}, Invalid("query.limit", "must be between 1 and 100", limit)
	}
	after, err := c.Decode(list, cursor)
	if err != nil {
		return PageRequest{}, err
	}
	return PageRequest{After: after, Limit: limit}, nil
}

// MakePage builds a page from up to limit+1 items fetched after the position: the
// extra item only tells whether there is more. key returns an item's position.
func MakePage[T any](c *Cursors, list string, items []T, limit int, key func(T) string) Page[T] {
	pg := Page[T]{Items: items, Limit: limit}
	if len(items) > limit {
		pg.Items = items[:limit]
		pg.HasMore = true
		next := c.Encode(list, key(pg.Items[limit-1]))
		pg.NextCursor = &next
	}
	if pg.Items == nil {
		pg.Items = []T{}
	}
	return pg
}
