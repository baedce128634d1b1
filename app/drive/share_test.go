package drive

import (
	"regexp"
	"testing"
)

func TestNewLinkToken(t *testing.T) {
	t.Parallel()
	urlSafe := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	seen := map[string]bool{}
	for range 1000 {
		tok, err := newLinkToken()
		if err != nil {
			t.Fatal(err)
		}
		// 24 random bytes: 192 bits, 32 characters of base64url.
		if len(tok) != 32 || !urlSafe.MatchString(tok) {
			t.Fatalf("token %q is not 32 URL-safe characters", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q repeated", tok)
		}
		seen[tok] = true
	}
}

func TestShareLinkURL(t *testing.T) {
	t.Parallel()
	s := NewService(nil, nil, nil, nil, nil, nil, nil, Options{}.WithPublicURL("https://atrium.example/"))
	if got := s.ShareLink("abc"); got != "https://atrium.example/s/abc" {
		t.Fatalf("share link %q", got)
	}
}
