package wopi

import (
	"crypto/rsa"
	"strings"
	"testing"

	"atrium/app/drive"
)

// The published WOPI proof key test case (Microsoft's Office Online test
// tools, also in Collabora Online's unit tests): a host that verifies it
// builds the signed bytes as every editor does.
const (
	msToken    = "yZhdN1qgywcOQWhyEMVpB6NE3pvBksvcLXsrFKXNtBeDTPW%2fu62g2t%2fOCWSlb3jUGaz1zc%2fzOzbNgAredLdhQI1Q7sPPqUv2owO78olmN74DV%2fv52OZIkBG%2b8jqjwmUobcjXVIC1BG9g%2fynMN0itZklL2x27Z2imCF6xELcQUuGdkoXBj%2bI%2bTlKM"
	msURL      = "https://contoso.com/wopi/files/vHxYyRGM8VfmSGwGYDBMIQPzuE+sSC6kw+zWZw2Nyg?access_token=" + msToken
	msTicks    = int64(635655897610773532)
	msModulus  = "0HOWUPFFgmSYHbLZZzdWO/HUOr8YNfx5NAl7GUytooHZ7B9QxQKTJpj0NIJ4XEskQW8e4dLzRrPbNOOJ+KpWHttXz8HoQXkkZV/gYNxaNHJ8/pRXGMZzfVM5vchhx/2C7ULPTrpBsSpmfWQ6ShaVoQzfThFUd0MsBvIN7HVtqzPx9jbSV04wAqyNjcro7F3iu9w7AEsMejHbFlWoN+J05dP5ixryF7+2U5RVmjMt7/dYUdCoiXvCMt2CaVr0XEG6udHU4iDKVKZjmUBc7cTWRzhqEL7lZ1yQfylp38Nd2xxVJ0sSU7OkC1bBDlePcYGaF3JjJgsmp/H5BNnlW9gSxQ=="
	msExponent = "AQAB"
	msBlob     = "BgIAAACkAABSU0ExAAgAAAEAAQDFEthb5dkE+fGnJgsmY3IXmoFxj1cOwVYLpLNTEksnVRzbXcPfaSl/kFxn5b4QajhH1sTtXECZY6ZUyiDi1NG5ukFc9Fppgt0ywnuJqNBRWPfvLTOaVZRTtr8X8hqL+dPldOI3qFUW2zF6DEsAO9y74l3s6MqNjawCME5X0jb28TOrbXXsDfIGLEN3VBFO3wyhlRZKOmR9ZiqxQbpOz0Ltgv3HYci9OVN9c8YYV5T+fHI0Wtxg4F9lJHlB6MHPV9seVqr4ieM027NG89LhHm9BJEtceII09JgmkwLFUB/s2YGirUwZewk0efw1GL861PE7Vjdn2bIdmGSCRfFQlnPQ"
	msProof    = "IflL8OWCOCmws5qnDD5kYMraMGI3o+T+hojoDREbjZSkxbbx7XIS1Av85lohPKjyksocpeVwqEYm9nVWfnq05uhDNGp2MsNyhPO9unZ6w25Rjs1hDFM0dmvYx8wlQBNZ/CFPaz3inCMaaP4PtU85YepaDccAjNc1gikdy3kSMeG1XZuaDixHvMKzF/60DMfLMBIu5xP4Nt8i8Gi2oZs4REuxi6yxOv2vQJQ5+8Wu2Olm8qZvT4FEIQT9oZAXebn/CxyvyQv+RVpoU2gb4BreXAdfKthWF67GpJyhr+ibEVDoIIolUvviycyEtjsaEBpOf6Ne/OLRNu98un7WNDzMTQ=="
)

func TestWOPIProofKnownCase(t *testing.T) {
	t.Parallel()
	byModulus, err := (&proofKeyXML{Modulus: msModulus, Exponent: msExponent}).keys()
	if err != nil {
		t.Fatal(err)
	}
	byBlob, err := (&proofKeyXML{Value: msBlob}).keys()
	if err != nil {
		t.Fatal(err)
	}
	if byBlob.current.N.Cmp(byModulus.current.N) != 0 || byBlob.current.E != byModulus.current.E {
		t.Fatal("the CryptoAPI blob and the modulus and exponent are different keys")
	}
	other := strings.Replace(msURL, "contoso.com", "fabrikam.com", 1)
	for _, tc := range []struct {
		name  string
		keys  *proofKeys
		proof drive.WOPIProof
		ticks int64
		ok    bool
	}{
		{"the published case", byModulus, drive.WOPIProof{AccessToken: msToken, URLs: []string{msURL}, Proof: msProof}, msTicks, true},
		{"the key from the blob", byBlob, drive.WOPIProof{AccessToken: msToken, URLs: []string{other, msURL}, Proof: msProof}, msTicks, true},
		{"as ProofOld, by the current key", byModulus, drive.WOPIProof{AccessToken: msToken, URLs: []string{msURL}, Proof: "bm90IGl0", ProofOld: msProof}, msTicks, true},
		{"by the old key", &proofKeys{current: mustKey(t, otherModulus), old: byModulus.current}, drive.WOPIProof{AccessToken: msToken, URLs: []string{msURL}, Proof: msProof}, msTicks, true},
		{"another URL", byModulus, drive.WOPIProof{AccessToken: msToken, URLs: []string{other}, Proof: msProof}, msTicks, false},
		{"another token", byModulus, drive.WOPIProof{AccessToken: msToken + "x", URLs: []string{msURL}, Proof: msProof}, msTicks, false},
		{"another time", byModulus, drive.WOPIProof{AccessToken: msToken, URLs: []string{msURL}, Proof: msProof}, msTicks + 1, false},
		{"another key", &proofKeys{current: mustKey(t, otherModulus)}, drive.WOPIProof{AccessToken: msToken, URLs: []string{msURL}, Proof: msProof}, msTicks, false},
		{"no proof", byModulus, drive.WOPIProof{AccessToken: msToken, URLs: []string{msURL}}, msTicks, false},
		{"not base64", byModulus, drive.WOPIProof{AccessToken: msToken, URLs: []string{msURL}, Proof: "%%%"}, msTicks, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.keys.Verify(tc.proof, tc.ticks); got != tc.ok {
				t.Fatalf("verify = %v, want %v", got, tc.ok)
			}
		})
	}
}

// otherModulus is another 2048-bit modulus (the test key's, one digit changed).
var otherModulus = msModulus[:10] + "A" + msModulus[11:]

func mustKey(t *testing.T, modulus string) *rsa.PublicKey {
	t.Helper()
	k, err := (&proofKeyXML{Modulus: modulus, Exponent: msExponent}).keys()
	if err != nil {
		t.Fatal(err)
	}
	return k.current
}

func TestProofKeyParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		xml  *proofKeyXML
		ok   bool
	}{
		{"absent", nil, true},
		{"empty", &proofKeyXML{}, true},
		{"modulus not base64", &proofKeyXML{Modulus: "%%", Exponent: "AQAB"}, false},
		{"short modulus", &proofKeyXML{Modulus: "AQAB", Exponent: "AQAB"}, false},
		{"blob of another kind", &proofKeyXML{Value: "BwIAAACkAABSU0Ey"}, false},
		{"blob cut short", &proofKeyXML{Value: msBlob[:100]}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.xml.keys(); (err == nil) != tc.ok {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
		})
	}
}
