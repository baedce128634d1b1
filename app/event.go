package app

import (
	"context"
	"strings"
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
	// Find lists an organisation's entries matching f, newest first, before
	// position after.
	Find(ctx context.Context, orgID string, f AuditFilter, after string, limit int) ([]AuditEntry, error)
}

// AuditModules are the modules that write audit entries.
var AuditModules = []string{"admin", "calendar", "contacts", "developer", "drive", "identity", "partner", "webhooks"}

// AuditFilter narrows an audit log listing; a zero field matches every entry.
type AuditFilter struct {
	Module  string
	ActorID string
	// Since and Until bound the entries' time: at or after Since, before Until.
	Since, Until time.Time
}

// ParseAuditFilter checks the filter of an audit log listing: module one of
// AuditModules, actor an id (a user's, or sp:<id> for a service principal),
// since and until RFC 3339 times with since before until. Its locations are
// the query parameters module, actor_id, since and until.
func ParseAuditFilter(module, actor, since, until string) (AuditFilter, error) {
	var f AuditFilter
	v := &Validator{}
	if module != "" {
		known := false
		for _, m := range AuditModules {
			known = known || m == module
		}
		if !known {
			v.Add("query.module", "must be one of "+strings.Join(AuditModules, ", "), module)
		}
		f.Module = module
	}
	if len(actor) > 100 || strings.ContainsFunc(actor, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		v.Add("query.actor_id", "must be a user id or sp:<service principal id> of at most 100 characters", actor)
	}
	f.ActorID = actor
	for _, t := range []struct {
		loc, val string
		to       *time.Time
	}{{"query.since", since, &f.Since}, {"query.until", until, &f.Until}} {
		if t.val == "" {
			continue
		}
		tm, err := time.Parse(time.RFC3339, t.val)
		if err != nil {
			v.Add(t.loc, "must be an RFC 3339 time such as 2026-01-31T00:00:00Z", t.val)
			continue
		}
		*t.to = tm
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		v.Add("query.until", "must be after since", until)
	}
	return f, v.Err()
}
