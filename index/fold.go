package index

import (
	"bytes"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/registry"
)

// asciiFoldName is the char filter that folds accents to ASCII in the text
// analyzer: Bleve's asciifolding, except that text with nothing to fold (only
// ASCII bytes) is copied as it is. Bleve's filter turns every text into runes
// and makes room for four runes per rune, some 20 bytes of garbage per byte
// of text, which was a sixth of what indexing a burst of small files
// allocated. Indexes made before it keep Bleve's filter by name in their
// stored mapping; the terms are the same.
const asciiFoldName = "atrium_asciifolding"

type asciiFolder struct {
	fold *asciifolding.AsciiFoldingFilter
}

// Filter returns the folded text in a slice of its own (the token filters
// that follow may change their terms in place).
func (f asciiFolder) Filter(in []byte) []byte {
	for _, c := range in {
		if c >= utf8.RuneSelf {
			return f.fold.Filter(in)
		}
	}
	return bytes.Clone(in)
}

func init() {
	if err := registry.RegisterCharFilter(asciiFoldName, func(map[string]any, *registry.Cache) (analysis.CharFilter, error) {
		return asciiFolder{asciifolding.New()}, nil
	}); err != nil {
		panic(err) // registered once, by this package
	}
}

// asciiFold folds text as the index's analyzer does.
func asciiFold(s string) string {
	return string(asciiFolder{asciifolding.New()}.Filter([]byte(s)))
}
