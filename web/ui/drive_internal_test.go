package ui

import (
	"net/url"
	"reflect"
	"testing"
)

func TestHighlightParts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []textPart
	}{
		{"plain", []textPart{{Text: "plain"}}},
		{"a <mark>b</mark> c", []textPart{{Text: "a "}, {Text: "b", Mark: true}, {Text: " c"}}},
		{"&lt;img src=x <mark>onerror</mark>=alert(1)&gt;", []textPart{{Text: "<img src=x "}, {Text: "onerror", Mark: true}, {Text: "=alert(1)>"}}},
		{"<mark>x</mark><mark>y</mark>", []textPart{{Text: "x", Mark: true}, {Text: "y", Mark: true}}},
		{"open <mark>end", []textPart{{Text: "open "}, {Text: "end", Mark: true}}},
		{"", nil},
	} {
		if got := highlightParts(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("highlightParts(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 KB", 1500: "1.5 KB", 307226: "307 KB", 12_000_000: "12 MB", 1_100_000_000_000: "1.1 TB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestListParams(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		q                 string
		field, order      string
		page, per         int
		sortKey, sortDirn string
	}{
		{"", "name", "asc", 1, drivePerPage, "name", "asc"},
		{"sort=size", "size_bytes", "desc", 1, drivePerPage, "size", "desc"},
		{"sort=modified&order=asc&page=3&per_page=20", "updated_at", "asc", 3, 20, "modified", "asc"},
		{"sort=evil&order=up&page=-1&per_page=9999", "name", "asc", 1, drivePerPage, "name", "asc"},
	} {
		v, _ := url.ParseQuery(c.q)
		lp, key, dir := listParams(v)
		if lp.SortBy != c.field || lp.SortOrder != c.order || lp.Page != c.page || lp.PerPage != c.per || key != c.sortKey || dir != c.sortDirn {
			t.Errorf("%q: %+v %s %s", c.q, lp, key, dir)
		}
	}
}
