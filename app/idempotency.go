package app

import (
	"context"
	"time"
)

// Idempotency-Key handling (spec §7–8): keys are kept 24 hours per organisation,
// and a key belongs to the caller (user or service principal) that first sent it.
const (
	IdempotencyRetention = 24 * time.Hour
	// IdempotencyLease bounds how long a claimed key stays "in flight" when the
	// process handling it died before finishing.
	IdempotencyLease = time.Minute
)

// IdempotencyRecord is a stored key: its request fingerprint and, once finished,
// the response to replay.
type IdempotencyRecord struct {
	// Principal is the caller that claimed the key (IdempotencyPrincipal); a
	// record is only ever replayed to that caller.
	Principal   string
	RequestHash []byte
	InFlight    bool
	Status      int
	Header      map[string][]string
	Body        []byte
}

// IdempotencyPrincipal names the caller an Idempotency-Key record belongs to:
// the service principal when p acts as one, else the user.
func IdempotencyPrincipal(p *Principal) string {
	if p.ServicePrincipalID != "" {
		return "sp:" + p.ServicePrincipalID
	}
	return "user:" + p.UserID
}

// IdempotencyStore keeps Idempotency-Key records.
type IdempotencyStore interface {
	// Claim marks key in flight for org and principal unless a live record
	// exists: it returns (nil, nil) when the caller now owns the key, else the
	// existing record (which may belong to another principal).
	Claim(ctx context.Context, orgID, key, principal string, requestHash []byte) (*IdempotencyRecord, error)
	// Complete stores the response of a claimed key (inside the handler's
	// transaction, so the resource and its replay commit together).
	Complete(ctx context.Context, orgID, key string, status int, header map[string][]string, body []byte) error
	// Release forgets a claimed key whose request failed (4xx and 5xx are not kept).
	Release(ctx context.Context, orgID, key string) error
}
