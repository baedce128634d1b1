// Package mail delivers the e-mail outbox through SMTP (github.com/wneessen/go-mail).
// E-mail is queued in the database in the same transaction as the change that
// sends it; the sender delivers it in the background and retries, so an API call
// never waits on, or fails because of, the mail server.
package mail

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"

	"atrium/app"
)

// Outbox is the queue the sender works from.
type Outbox interface {
	Due(ctx context.Context, now time.Time, limit int) ([]app.Mail, error)
	// Claim takes a due mail for one attempt: it moves its next attempt to
	// until, unless another sender took it first (false). A sender that dies
	// mid-attempt leaves it to be tried again after until.
	Claim(ctx context.Context, id string, now, until time.Time) (bool, error)
	MarkSent(ctx context.Context, id string) error
	MarkFailed(ctx context.Context, id, reason string, next *time.Time) error
	Attempts(ctx context.Context, id string) (int, error)
}

// ClaimLease is how long a claimed mail is left to the sender that claimed it
// (well beyond one attempt's timeout) before another may try it.
const ClaimLease = 5 * time.Minute

// Config is the SMTP server.
type Config struct {
	Host     string
	Port     int
	TLS      string // starttls, tls or none
	Username string
	Password string
	From     string
}

// Backoff is the delay after each failed attempt; after the last the e-mail is failed.
var Backoff = []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// Sender delivers queued e-mail.
type Sender struct {
	cfg    Config
	outbox Outbox
	log    *slog.Logger
	clock  app.Clock
	poll   time.Duration

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewSender returns a sender; Start runs it.
func NewSender(cfg Config, outbox Outbox, log *slog.Logger, clock app.Clock) *Sender {
	return &Sender{cfg: cfg, outbox: outbox, log: log, clock: clock, poll: 2 * time.Second}
}

// Start runs the delivery loop until Shutdown.
func (s *Sender) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.poll)
		defer t.Stop()
		for {
			s.RunOnce(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Shutdown stops the loop and waits for the attempt in progress.
func (s *Sender) Shutdown(ctx context.Context) error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RunOnce delivers what is due now.
func (s *Sender) RunOnce(ctx context.Context) {
	due, err := s.outbox.Due(ctx, s.clock.Now(), 50)
	if err != nil {
		s.log.Error("mail outbox", "err", err)
		return
	}
	for _, m := range due {
		if ctx.Err() != nil {
			return
		}
		claimed, err := s.outbox.Claim(ctx, m.ID, s.clock.Now(), s.clock.Now().Add(ClaimLease))
		if err != nil {
			s.log.Error("mail outbox", "err", err)
			return
		}
		if !claimed {
			continue // another node's sender has it
		}
		if err := s.send(ctx, m); err != nil {
			n, _ := s.outbox.Attempts(ctx, m.ID)
			var next *time.Time
			if n < len(Backoff) {
				t := s.clock.Now().Add(Backoff[n])
				next = &t
			}
			s.log.Warn("mail not sent", "id", m.ID, "attempt", n+1, "err", err)
			if err := s.outbox.MarkFailed(ctx, m.ID, err.Error(), next); err != nil {
				s.log.Error("mail outbox", "err", err)
			}
			continue
		}
		if err := s.outbox.MarkSent(ctx, m.ID); err != nil {
			s.log.Error("mail outbox", "err", err)
		}
	}
}

func (s *Sender) send(ctx context.Context, m app.Mail) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.cfg.From); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("to: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(gomail.TypeTextPlain, m.Body)
	msg.SetMessageIDWithValue(m.ID + "@atrium")
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(20 * time.Second)}
	switch s.cfg.TLS {
	case "tls":
		opts = append(opts, gomail.WithSSL())
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	c, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	return c.DialAndSendWithContext(ctx, msg)
}
