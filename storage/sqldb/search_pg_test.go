package sqldb

import (
	"strings"
	"testing"
)

// The PostgreSQL index's highlights: the words of the search, compared
// without case or accents (the last also as a prefix in the name), marked
// in the text, which is escaped; long texts give fragments around matches.
func TestMarkFragments(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("filler words here ", 30) + "the Zoë report" + strings.Repeat(" more filler", 30)
	for _, c := range []struct {
		name, text string
		keys       []string
		prefix     bool
		want       []string
	}{
		{"accents and case", "Zoë's <Report>", []string{"zoe"}, false, []string{"<mark>Zoë</mark>&#39;s &lt;Report&gt;"}},
		{"every word", "annual report 2026", []string{"annual", "2026"}, false, []string{"<mark>annual</mark> report <mark>2026</mark>"}},
		{"the last word as a prefix", "quarterly.pdf", []string{"quar"}, true, []string{"<mark>quarterly</mark>.pdf"}},
		{"no prefix outside the name", "quarterly", []string{"quar"}, false, nil},
		{"no match", "nothing here", []string{"zebra"}, false, nil},
		{"a fragment of a long text", long, []string{"zoe"}, false, nil},
	} {
		got := markFragments(c.text, c.keys, c.prefix)
		if c.name == "a fragment of a long text" {
			if len(got) != 1 || !strings.Contains(got[0], "the <mark>Zoë</mark> report") || len(got[0]) > highlightFragment+20 {
				t.Errorf("%s: %q", c.name, got)
			}
			continue
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := tsQuery([]string{"Annual", "rep"}); got != "'annual' & ('rep' | 'rep':*A)" {
		t.Errorf("tsQuery: %s", got)
	}
}
