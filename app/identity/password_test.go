package identity

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=2$") {
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
