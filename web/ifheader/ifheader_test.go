package ifheader

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tok := "opaquelocktoken:01a20257-01ed-76db-8876-597ca579ff84"
	tests := []struct {
		in   string
		want []List
		bad  bool
	}{
		{in: "(<" + tok + ">)", want: []List{{Conds: []Cond{{Token: tok}}}}},
		{in: `(<` + tok + `> ["abc"]) (Not <DAV:no-lock> ["abc"])`, want: []List{
			{Conds: []Cond{{Token: tok}, {ETag: `"abc"`}}},
			{Conds: []Cond{{Not: true, Token: "DAV:no-lock"}, {ETag: `"abc"`}}}}},
		{in: `<http://h/api/v1/webdav/a> (<` + tok + `>) <http://h/api/v1/webdav/b> ([W/"x"])`, want: []List{
			{Tag: "http://h/api/v1/webdav/a", Conds: []Cond{{Token: tok}}},
			{Tag: "http://h/api/v1/webdav/b", Conds: []Cond{{ETag: `W/"x"`}}}}},
		{in: "", bad: true},
		{in: "(<" + tok, bad: true},
		{in: "()", bad: true},
		{in: "(<a> [b)", bad: true},
		{in: "token", bad: true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// FuzzParse checks that parsing an arbitrary If header never panics and that
// a header it accepts has at least one list.
func FuzzParse(f *testing.F) {
	tok := "opaquelocktoken:01a20257-01ed-76db-8876-597ca579ff84"
	for _, s := range []string{
		"(<" + tok + ">)",
		`(<` + tok + `> ["abc"]) (Not <DAV:no-lock> ["abc"])`,
		`<http://h/api/v1/webdav/a> (<` + tok + `>) <http://h/api/v1/webdav/b> ([W/"x"])`,
		"", "(<" + tok, "()", "(<a> [b)", "token", "(Not)", "(Not Not <a>)", "<>", "([)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		lists, err := Parse(h)
		if err == nil && len(lists) == 0 {
			t.Fatalf("Parse(%q) accepted a header without lists", h)
		}
	})
}
