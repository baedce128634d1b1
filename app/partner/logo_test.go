package partner

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestValidLogo(t *testing.T) {
	t.Parallel()
	png := func(n int) string {
		b := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, n-8)...)
		return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
	}
	jpeg := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString([]byte("\xff\xd8\xff\xe0 a jpeg"))
	for _, c := range []struct {
		name, logo string
		ok         bool
	}{
		{"none", "", true},
		{"https", "https://cdn.example.com/logo.png", true},
		{"small png", png(300), true},
		{"png of exactly the limit", png(MaxLogoBytes), true},
		{"png one byte over", png(MaxLogoBytes + 1), false},
		{"jpeg", jpeg, true},
		{"jpeg declared as png", strings.Replace(jpeg, "image/jpeg", "image/png", 1), false},
		{"svg", "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte("<svg/>")), false},
		{"not base64", "data:image/png;base64,***", false},
		{"url-encoded data", "data:image/png,%89PNG", false},
		{"javascript", "javascript:alert(1)", false},
		{"relative", "/logo.png", false},
	} {
		if got := validLogo(c.logo); got != c.ok {
			t.Errorf("%s: validLogo = %v, want %v", c.name, got, c.ok)
		}
	}
}
