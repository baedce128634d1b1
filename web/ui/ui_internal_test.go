package ui

import "testing"

func TestLocalPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"/settings", "/settings"},
		{"/drive/0190?x=1#y", "/drive/0190?x=1#y"},
		{"/%2F%2Fevil.example", "/%2F%2Fevil.example"}, // a path here, not a host
		{"", ""},
		{"settings", ""},
		{"//evil.example", ""},
		{"///evil.example", ""},
		{"/\\evil.example", ""},
		{"/x\\y", ""},
		{"https://evil.example/", ""},
		{"javascript:alert(1)", ""},
		{"/\t/evil.example", ""},
		{"/a\r\nSet-Cookie: x=y", ""},
		{"/signin?next=/x", ""},
		{"/signout", ""},
	} {
		if got := localPath(c.in); got != c.want {
			t.Errorf("localPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
