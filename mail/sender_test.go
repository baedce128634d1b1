package mail

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"atrium/app"
)

// fakeSMTP is a minimal SMTP server on loopback that records messages; while
// failing is set it answers the transaction with a temporary error.
type fakeSMTP struct {
	ln      net.Listener
	mu      sync.Mutex
	msgs    []string
	failing bool
}

func startSMTP(t *testing.T) *fakeSMTP {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMTP{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return f
}

func (f *fakeSMTP) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(s string) { c.Write([]byte(s + "\r\n")) }
	say("220 fake ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250-fake")
			say("250 8BITMIME")
		case strings.HasPrefix(cmd, "MAIL FROM"):
			f.mu.Lock()
			failing := f.failing
			f.mu.Unlock()
			if failing {
				say("451 try again later")
				continue
			}
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO"):
			say("250 ok")
		case cmd == "DATA":
			say("354 go ahead")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			f.mu.Lock()
			f.msgs = append(f.msgs, b.String())
			f.mu.Unlock()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

type memOutbox struct {
	mu       sync.Mutex
	mails    map[string]*app.Mail
	attempts map[string]int
	next     map[string]time.Time
}

func (o *memOutbox) Due(_ context.Context, now time.Time, _ int) ([]app.Mail, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []app.Mail
	for id, m := range o.mails {
		if m.Status == "queued" && !o.next[id].After(now) {
			out = append(out, *m)
		}
	}
	return out, nil
}
func (o *memOutbox) Claim(_ context.Context, id string, now, until time.Time) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mails[id].Status != "queued" || o.next[id].After(now) {
		return false, nil
	}
	o.next[id] = until
	return true, nil
}
func (o *memOutbox) MarkSent(_ context.Context, id string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mails[id].Status = "sent"
	o.attempts[id]++
	return nil
}
func (o *memOutbox) MarkFailed(_ context.Context, id, reason string, next *time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts[id]++
	if next == nil {
		o.mails[id].Status = "failed"
	} else {
		o.next[id] = *next
	}
	return nil
}
func (o *memOutbox) Attempts(_ context.Context, id string) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.attempts[id], nil
}

func TestSenderDeliversAndRetries(t *testing.T) {
	t.Parallel()
	srv := startSMTP(t)
	host, port, _ := net.SplitHostPort(srv.ln.Addr().String())
	p, _ := strconv.Atoi(port)
	now := time.Now()
	clock := func() time.Time { return now }
	ob := &memOutbox{mails: map[string]*app.Mail{
		"m1": {ID: "m1", To: "ada@example.test", Subject: "Invitation", Body: "Hello Ada\nhttp://x/invite/abc", Status: "queued"},
	}, attempts: map[string]int{}, next: map[string]time.Time{}}
	s := NewSender(Config{Host: host, Port: p, TLS: "none", From: "Atrium <atrium@example.test>"}, ob, slog.Default(), clock)

	// The server refuses: the mail stays queued with a later next attempt.
	srv.mu.Lock()
	srv.failing = true
	srv.mu.Unlock()
	s.RunOnce(context.Background())
	if ob.mails["m1"].Status != "queued" || ob.attempts["m1"] != 1 || !ob.next["m1"].Equal(now.Add(Backoff[0])) {
		t.Fatalf("after a failure: %+v attempts %d next %v", ob.mails["m1"], ob.attempts["m1"], ob.next["m1"])
	}
	s.RunOnce(context.Background()) // not due yet: nothing sent
	if len(srv.msgs) != 0 || ob.attempts["m1"] != 1 {
		t.Fatal("retried before it was due")
	}
	// Later the server accepts it.
	srv.mu.Lock()
	srv.failing = false
	srv.mu.Unlock()
	now = now.Add(Backoff[0])
	s.RunOnce(context.Background())
	if ob.mails["m1"].Status != "sent" || len(srv.msgs) != 1 {
		t.Fatalf("not delivered: %+v %d", ob.mails["m1"], len(srv.msgs))
	}
	msg := srv.msgs[0]
	for _, want := range []string{"To: <ada@example.test>", "Subject: Invitation", "Hello Ada"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

// A mail whose every attempt fails is given up after the backoff. Not
// parallel: the port it sends to is one freed just before, which a parallel
// test's listener could be given.
func TestSenderGivesUp(t *testing.T) {
	now := time.Now()
	ob := &memOutbox{mails: map[string]*app.Mail{"m": {ID: "m", To: "x@example.test", Status: "queued"}},
		attempts: map[string]int{}, next: map[string]time.Time{}}
	// Nothing listens on this port: every attempt fails.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	p, _ := strconv.Atoi(port)
	s := NewSender(Config{Host: "127.0.0.1", Port: p, TLS: "none", From: "a@example.test"}, ob, slog.Default(), func() time.Time { return now })
	for range len(Backoff) + 1 {
		s.RunOnce(context.Background())
		now = now.Add(13 * time.Hour)
	}
	if ob.mails["m"].Status != "failed" || ob.attempts["m"] != len(Backoff)+1 {
		t.Fatalf("status %s attempts %d", ob.mails["m"].Status, ob.attempts["m"])
	}
	if err := s.Shutdown(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
