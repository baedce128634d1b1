package identity

import (
	"bytes"
	"testing"
)

// An approved app password waits sealed to the flow's key: the sealed bytes
// do not hold it, the poll token opens them and another token does not.
func TestLoginSecretSealed(t *testing.T) {
	t.Parallel()
	const poll, secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "AbCdE-FgHiJ-KlMnO-PqRsT-UvWxY"
	key, err := loginFlowKey(poll)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := sealLoginSecret(key.PublicKey().Bytes(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte(secret)) {
		t.Fatal("the sealed bytes hold the app password")
	}
	if got, err := openLoginSecret(poll, sealed); err != nil || got != secret {
		t.Fatalf("opened with the poll token: %q %v", got, err)
	}
	if _, err := openLoginSecret(poll[1:]+"0", sealed); err == nil {
		t.Fatal("another token opened the sealed app password")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := openLoginSecret(poll, sealed); err == nil {
		t.Fatal("changed sealed bytes opened")
	}
}
