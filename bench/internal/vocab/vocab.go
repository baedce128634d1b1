// Package vocab makes the made-up text the benchmarks' files hold: words
// that search finds, the same on every run.
package vocab

import (
	"bytes"
	"math/rand/v2"
	"strings"
)

// Words returns n made-up words of three to four syllables, the same every
// time.
func Words(n int) []string {
	cons, vow := "bdfgklmnprstvz", "aeiou"
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		for range 3 + rng.IntN(2) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vow[rng.IntN(len(vow))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Text returns file i's content: size bytes of words, the same for the same
// i every time.
func Text(i int, words []string, size int) []byte {
	rng := rand.New(rand.NewPCG(uint64(i), 49))
	var b bytes.Buffer
	for b.Len() < size {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.Bytes()[:size]
}
