package wopi

// WOPI proof keys, the wire side: the proof-key element of the discovery
// (modulus and exponent, or a CryptoAPI blob) and checking an X-WOPI-Proof
// signature. The rules (when a request must be signed, how old it may be)
// are app/drive's (wopiproof.go).

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"atrium/app/drive"
)

// proofKeys are an editor's current and previous public keys.
type proofKeys struct {
	current, old *rsa.PublicKey
}

// proofKeyXML is the proof-key element of a discovery.
type proofKeyXML struct {
	Value       string `xml:"value,attr"`
	Modulus     string `xml:"modulus,attr"`
	Exponent    string `xml:"exponent,attr"`
	OldValue    string `xml:"oldvalue,attr"`
	OldModulus  string `xml:"oldmodulus,attr"`
	OldExponent string `xml:"oldexponent,attr"`
}

// keys parses the element: modulus and exponent (base64, big-endian), or the
// value alone (a CryptoAPI public key blob). None: nil, no error.
func (p *proofKeyXML) keys() (*proofKeys, error) {
	if p == nil {
		return nil, nil
	}
	cur, err := rsaKey(p.Modulus, p.Exponent, p.Value)
	if err != nil || cur == nil {
		return nil, err
	}
	old, err := rsaKey(p.OldModulus, p.OldExponent, p.OldValue)
	if err != nil {
		return nil, fmt.Errorf("old proof key: %w", err)
	}
	return &proofKeys{current: cur, old: old}, nil
}

func rsaKey(modulus, exponent, blob string) (*rsa.PublicKey, error) {
	if modulus != "" && exponent != "" {
		n, err := base64.StdEncoding.DecodeString(modulus)
		if err != nil {
			return nil, fmt.Errorf("proof key modulus: %w", err)
		}
		e, err := base64.StdEncoding.DecodeString(exponent)
		if err != nil {
			return nil, fmt.Errorf("proof key exponent: %w", err)
		}
		return newRSAKey(n, e)
	}
	if blob == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(blob)
	if err != nil {
		return nil, fmt.Errorf("proof key value: %w", err)
	}
	// PUBLICKEYSTRUC (bType 6, bVersion 2, reserved, aiKeyAlg CALG_RSA_KEYX),
	// RSAPUBKEY ("RSA1", bit length, public exponent), then the modulus; all
	// little-endian.
	if len(b) < 20 || b[0] != 6 || string(b[8:12]) != "RSA1" {
		return nil, errors.New("proof key value: not a CryptoAPI RSA public key blob")
	}
	bits := binary.LittleEndian.Uint32(b[12:16])
	mod := b[20:]
	if bits == 0 || bits%8 != 0 || uint32(len(mod)) != bits/8 {
		return nil, errors.New("proof key value: the modulus length does not match")
	}
	e := b[16:20]
	return newRSAKey(reversed(mod), reversed(e))
}

func reversed(b []byte) []byte {
	r := make([]byte, len(b))
	for i, c := range b {
		r[len(b)-1-i] = c
	}
	return r
}

func newRSAKey(n, e []byte) (*rsa.PublicKey, error) {
	ee := new(big.Int).SetBytes(e)
	if len(n) < 128 || !ee.IsInt64() || ee.Int64() < 3 || ee.Int64() > 1<<31-1 {
		return nil, errors.New("proof key: not a usable RSA public key (at least 1024 bits)")
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(ee.Int64())}, nil
}

// Verify applies the WOPI rule: X-WOPI-Proof by the current key, or
// X-WOPI-ProofOld by the current key (the editor's key changed since the
// discovery was read), or X-WOPI-Proof by the old key (the other way round).
func (k *proofKeys) Verify(pr drive.WOPIProof, ticks int64) bool {
	for _, u := range pr.URLs {
		for _, msg := range proofMessages(pr.AccessToken, u, ticks) {
			if signedBy(k.current, msg, pr.Proof) || signedBy(k.current, msg, pr.ProofOld) || signedBy(k.old, msg, pr.Proof) {
				return true
			}
		}
	}
	return false
}

// proofMessages returns what the editor signs for a request: the URL in upper
// case, as the WOPI rule says — and as written, which is what Collabora
// Online signed before 6.4.
func proofMessages(token, url string, ticks int64) [][]byte {
	upper := asciiUpper(url)
	msgs := [][]byte{proofMessage(token, upper, ticks)}
	if upper != url {
		msgs = append(msgs, proofMessage(token, url, ticks))
	}
	return msgs
}

func proofMessage(token, url string, ticks int64) []byte {
	var b bytes.Buffer
	for _, part := range [][]byte{[]byte(token), []byte(url), binary.BigEndian.AppendUint64(nil, uint64(ticks))} {
		_ = binary.Write(&b, binary.BigEndian, int32(len(part)))
		b.Write(part)
	}
	return b.Bytes()
}

func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

func signedBy(key *rsa.PublicKey, msg []byte, sig string) bool {
	if key == nil || sig == "" {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
	if err != nil {
		return false
	}
	sum := sha256.Sum256(msg)
	return rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], raw) == nil
}
