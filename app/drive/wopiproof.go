package drive

// WOPI proof keys: verifying that a WOPI request was signed by the editor
// the discovery names.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"atrium/app"
)

// WOPI proof keys: an editor that has a proof key (Collabora Online with
// /etc/coolwsd/proof_key, ONLYOFFICE Docs) publishes its public half in its
// discovery and signs every WOPI request it makes: X-WOPI-Proof is an
// RSA-SHA256 (PKCS #1 v1.5) signature of the access token, the request URL in
// upper case and X-WOPI-TimeStamp (.NET ticks), each preceded by its length.
// A WOPI host that checks it knows that the request comes from its editor,
// not from whoever else got hold of an access token.

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

// proofMaxAge is how old a signed request may be (the WOPI rule: 20 minutes).
const proofMaxAge = 20 * time.Minute

// dotNetEpoch is the Unix epoch in .NET ticks (100 ns since 0001-01-01).
const dotNetEpoch = 621355968000000000

// WOPIProof is the proof an editor sent with a WOPI request.
type WOPIProof struct {
	// AccessToken is the request's access token.
	AccessToken string
	// URLs are the request's absolute URL as the editor may have written it
	// (by the WOPI URL it was given, by the Host it sent).
	URLs []string
	// Timestamp, Proof and ProofOld are the X-WOPI-TimeStamp, X-WOPI-Proof
	// and X-WOPI-ProofOld headers.
	Timestamp, Proof, ProofOld string
}

// VerifyWOPIProof checks a WOPI request's proof against the proof key of the
// editor's discovery. An editor without a proof key signs nothing and is not
// checked. With one, a request that is unsigned, signed by another key, or
// signed more than 20 minutes ago is refused; when the signature does not
// match, the discovery is fetched again once (the editor's key may have been
// replaced) before refusing.
func (s *Service) VerifyWOPIProof(ctx context.Context, pr WOPIProof) error {
	if s.editor.disc == nil || s.opts.Editor.SkipProof {
		return nil
	}
	disc, err := s.discovery(ctx)
	if err != nil {
		return err
	}
	if disc.proof == nil {
		return nil
	}
	if pr.Proof == "" {
		return proofError("it has no X-WOPI-Proof, and the editor signs its requests")
	}
	ticks, err := strconv.ParseInt(strings.TrimSpace(pr.Timestamp), 10, 64)
	if err != nil {
		return proofError("its X-WOPI-TimeStamp is missing or not a number")
	}
	signed := time.Unix(0, 0).Add(time.Duration(ticks-dotNetEpoch) * 100)
	if age := s.clock.Now().Sub(signed); age > proofMaxAge || age < -proofMaxAge {
		return proofError(fmt.Sprintf("it was signed at %s, more than 20 minutes from now", signed.UTC().Format(time.RFC3339)))
	}
	if disc.proof.verify(pr, ticks) {
		return nil
	}
	if fresh, ok := s.editor.disc.refetch(ctx, s.clock.Now()); ok && fresh.proof != nil && fresh.proof.verify(pr, ticks) {
		return nil
	}
	return proofError("its X-WOPI-Proof does not match the editor's proof key")
}

func proofError(why string) error {
	return app.Errorf(app.EForbidden, "This WOPI request is refused: %s.", why)
}

// verify applies the WOPI rule: X-WOPI-Proof by the current key, or
// X-WOPI-ProofOld by the current key (the editor's key changed since the
// discovery was read), or X-WOPI-Proof by the old key (the other way round).
func (k *proofKeys) verify(pr WOPIProof, ticks int64) bool {
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
