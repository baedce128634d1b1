package drive

// WOPI proof keys, the rules: which requests must be signed, how old a
// signature may be, and fetching the discovery again once when a signature
// does not match. Parsing the keys and checking a signature is web/wopi's
// (proof.go).

import (
	"context"
	"fmt"
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
// replaced) before refusing. Errors: editor_unavailable (no access-token key),
// unavailable (the editor's discovery cannot be had), forbidden (an unsigned
// request, a bad or stale signature).
func (e *Editing) VerifyWOPIProof(ctx context.Context, pr WOPIProof) error {
	if e.disc == nil || e.core.opts.Editor.SkipProof {
		return nil
	}
	disc, err := e.discovery(ctx)
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
	if age := e.core.clock.Now().Sub(signed); age > proofMaxAge || age < -proofMaxAge {
		return proofError(fmt.Sprintf("it was signed at %s, more than 20 minutes from now", signed.UTC().Format(time.RFC3339)))
	}
	if disc.proof.Verify(pr, ticks) {
		return nil
	}
	if fresh, ok := e.disc.refetch(ctx, e.core.clock.Now()); ok && fresh.proof != nil && fresh.proof.Verify(pr, ticks) {
		return nil
	}
	return proofError("its X-WOPI-Proof does not match the editor's proof key")
}

func proofError(why string) error {
	return app.Errorf(app.EForbidden, "This WOPI request is refused: %s.", why)
}
