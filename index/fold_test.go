package index

import (
	"bytes"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
)

// The index's folding filter gives Bleve's asciifolding's output, in a slice
// of its own.
func TestASCIIFolder(t *testing.T) {
	t.Parallel()
	f := asciiFolder{asciifolding.New()}
	for _, in := range []string{
		"", "plain ascii text.txt", "Résumé", "Ébauche – naïve café", "Straße", "ﬁle", "日本語", "bad \xff utf-8", "tab\tand\nnewline",
	} {
		src := []byte(in)
		got := f.Filter(src)
		if want := asciifolding.New().Filter([]byte(in)); !bytes.Equal(got, want) {
			t.Errorf("Filter(%q) = %q, want %q", in, got, want)
		}
		if len(got) > 0 && &got[0] == &src[0] {
			t.Errorf("Filter(%q) returned its input", in)
		}
	}
	if got := asciiFold("Résumé.TXT"); got != "Resume.TXT" {
		t.Errorf("asciiFold = %q", got)
	}
}
