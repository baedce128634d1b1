package app

import (
	"context"
	"time"
)

// Mail is an outgoing e-mail.
type Mail struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"-"`
	To        string    `json:"to"`
	Subject   string    `json:"subject"`
	Body      string    `json:"body"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

// Mailer queues e-mail in the caller's transaction; a sender delivers it later
// (through SMTP when configured, otherwise it stays in the outbox for
// `atrium mail list`). Queueing never blocks on the network.
type Mailer interface {
	Queue(ctx context.Context, m Mail) error
}
