package app

import (
	"context"
	"time"
)

// Event is a domain event, written to the outbox in the same transaction as the
// change that caused it. Its ID is stable across webhook retries and replays.
type Event struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	CreatedAt time.Time      `json:"created_at"`
	OrgID     string         `json:"organization_id"`
	Data      map[string]any `json:"data"`
}

// Outbox stores events in the caller's transaction.
type Outbox interface {
	// Emit records e; it must be called inside a TxRunner transaction.
	Emit(ctx context.Context, e Event) error
}

// AuditEntry is one row of an organisation's audit log.
type AuditEntry struct {
	ID            string    `json:"id"`
	Module        string    `json:"module"`
	Action        string    `json:"action"`
	ActorID       string    `json:"actor_id"`
	TargetType    string    `json:"target_type"`
	TargetID      string    `json:"target_id"`
	OrgID         string    `json:"organization_id"`
	ChangedFields []string  `json:"changed_fields"`
	CreatedAt     time.Time `json:"created_at"`
}

// Auditor records audit entries in the caller's transaction and lists them.
type Auditor interface {
	Record(ctx context.Context, e AuditEntry) error
	List(ctx context.Context, orgID string, after string, limit int) ([]AuditEntry, error)
}
