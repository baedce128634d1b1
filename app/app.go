package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/google/uuid"
)

// TxRunner runs fn in one database transaction. The transaction travels in the
// context: every store call made with the context fn receives joins it, so a write,
// its audit entry and its events commit together or not at all. A nested call joins
// the outer transaction (on PostgreSQL as a savepoint: its writes are undone
// when it fails). fn may run more than once (PostgreSQL runs a transaction
// again after a serialization failure or a deadlock), so whatever it leaves
// outside the database — a result it appends to, a counter, a recorded
// response — it sets afresh at its start.
type TxRunner interface {
	InTx(ctx context.Context, fn func(ctx context.Context) error) error
}

// WriteStats is what a database's one writer did since it opened: the
// figures an operator reads to see how writes share commits and where the
// writer's time goes.
type WriteStats struct {
	// Transactions is how many write transactions ran; Commits, how many
	// commits held them (transactions that arrive together share one).
	Transactions, Commits uint64
	// Wait is the time transactions waited for the writer, summed over them;
	// Statements, the time the writer ran their statements; Commit, the time
	// it spent committing (writing the log and waiting for the disk).
	Wait, Statements, Commit time.Duration
}

// Clock returns the current time; injected so tests can move time.
type Clock func() time.Time

// Now returns the time of c, or the wall clock when c is nil.
func (c Clock) Now() time.Time {
	if c == nil {
		return time.Now().UTC()
	}
	return c().UTC()
}

// NewID returns a new identifier: a UUIDv7, so ids sort by creation time.
func NewID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// RandomHex returns n random bytes from the CSPRNG as lowercase hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}
