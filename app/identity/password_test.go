package identity

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q", h)
	}
	h2, _ := HashPassword("correct horse battery")
	if h == h2 {
		t.Fatal("same hash twice: salt not random")
	}
	tests := []struct {
		name, hash, pw string
		ok             bool
	}{
		{"right password", h, "correct horse battery", true},
		{"wrong password", h, "correct horse battery!", false},
		{"empty hash", "", "correct horse battery", false},
		{"malformed hash", "$argon2id$v=19$garbage", "correct horse battery", false},
		{"other algorithm", strings.Replace(h, "argon2id", "argon2i", 1), "correct horse battery", false},
		// Made with the parameters of before (64 MiB, 3 passes, 2 lanes): hashes
		// keep theirs, so passwords set then still verify.
		{"older parameters", "$argon2id$v=19$m=65536,t=3,p=2$MDEyMzQ1Njc4OWFiY2RlZg$qoglYg7enBv91VctITWG2E/ZQv1U9p/3KxNV7gOMG9E", "correct horse battery", true},
	}
	for _, tt := range tests {
		if got := VerifyPassword(tt.hash, tt.pw); got != tt.ok {
			t.Errorf("%s: got %v", tt.name, got)
		}
	}
	if _, err := HashPassword("short"); err == nil {
		t.Fatal("short password accepted")
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer tha"},
		{"ééééé", 5, "éé"},
		{"a\xffb", 10, "ab"},
		{strings.Repeat("x", 1<<20), 256, strings.Repeat("x", 256)},
	} {
		if got := truncate(c.in, c.n); got != c.want {
			t.Errorf("truncate(%.20q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
