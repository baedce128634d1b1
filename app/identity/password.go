package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Account password hashing: argon2id with 19 MiB memory, 2 passes, 1 lane —
// OWASP's recommended minimum, about 50 ms of one core here. Account passwords
// are for people (sign-in, invitation acceptance and password reset); DAV
// clients use app passwords instead. Hashes keep their own parameters, so
// those made with others (64 MiB, 3 passes, 2 lanes before) still verify.
// At most hashSlots hashes run at once: each holds its memory while it runs,
// and a burst of sign-ins must not take the memory of a small machine.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	// MinPasswordLength is the shortest account password accepted.
	MinPasswordLength = 10
)

var hashSlots = make(chan struct{}, 2)

// idKey is argon2.IDKey in one of the hash slots.
func idKey(password, salt []byte, t, mem uint32, p uint8, keyLen uint32) []byte {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey(password, salt, t, mem, p, keyLen)
}

// dummyHash is verified against when the address is unknown, so that an
// unknown address costs the same time as a wrong password. Made on first use
// (not at start: every command would pay for it).
var dummyHash = sync.OnceValue(func() string {
	h, _ := HashPassword("not-a-password-of-anyone")
	return h
})

// CheckPasswordRules checks what an account password must be (its length),
// without the cost of hashing it.
func CheckPasswordRules(password string) error {
	if len(password) < MinPasswordLength {
		return fmt.Errorf("password must be at least %d characters", MinPasswordLength)
	}
	if len(password) > 1024 {
		return errors.New("password must be at most 1024 characters")
	}
	return nil
}

// HashPassword returns the PHC-formatted argon2id hash of password.
func HashPassword(password string) (string, error) {
	if err := CheckPasswordRules(password); err != nil {
		return "", err
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := idKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// VerifyPassword reports whether password matches a hash made by HashPassword,
// comparing in constant time. An empty or malformed hash never matches.
func VerifyPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var mem uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil || mem > 1<<20 || t > 10 || p == 0 {
		return false
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false
	}
	got := idKey([]byte(password), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
