// Package hooksend posts webhook deliveries over HTTP (webhooks.Poster): a
// transport that never goes through a proxy and, unless private targets are
// allowed, refuses at connect time any address that is not public (a host
// that resolved to a public address when the subscription was saved may
// resolve elsewhere later: DNS rebinding). Redirects are not followed.
package hooksend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"atrium/app/webhooks"
)

// Options tune the client.
type Options struct {
	// Timeout bounds one attempt: connect, TLS, headers and body.
	Timeout time.Duration
	// AllowPrivateTargets lets connections reach loopback and private addresses.
	AllowPrivateTargets bool
	// Conns is how many attempts may be in flight (idle connections kept).
	Conns int
	// Transport overrides the HTTP transport (tests); its dialer must apply the
	// private-target check itself.
	Transport http.RoundTripper
	// Now is the clock a Retry-After date is read against (default time.Now).
	Now func() time.Time
}

// Client is the webhook poster over HTTP.
type Client struct {
	http    *http.Client
	timeout time.Duration
	now     func() time.Time
}

var _ webhooks.Poster = (*Client)(nil)

// New returns a client.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Conns <= 0 {
		o.Conns = 128
	}
	tr := o.Transport
	if tr == nil {
		d := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
		if !o.AllowPrivateTargets {
			d.Control = dialControl
		}
		tr = &http.Transport{
			Proxy:                 nil, // never through a proxy: the address check applies to the receiver
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          o.Conns * 2,
			MaxIdleConnsPerHost:   o.Conns, // subscriptions may share a host
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   o.Timeout,
			ResponseHeaderTimeout: o.Timeout,
		}
	}
	return &Client{timeout: o.Timeout, now: o.Now, http: &http.Client{
		Transport:     tr,
		Timeout:       o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Post sends p and reads at most webhooks.ResponseBodyLimit bytes of the
// answer. An error says, for the integrator, why no answer came.
func (c *Client) Post(ctx context.Context, p webhooks.Post) (webhooks.Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		return webhooks.Reply{}, fmt.Errorf("invalid target URL: %w", err)
	}
	for k, vs := range p.Header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	res, err := c.http.Do(req)
	if err != nil {
		return webhooks.Reply{}, errors.New(describe(err, c.timeout))
	}
	body, rerr := io.ReadAll(io.LimitReader(res.Body, webhooks.ResponseBodyLimit))
	// Drain a little more so the connection can be reused, then close.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	r := webhooks.Reply{Status: res.StatusCode, Header: res.Header, Body: body,
		RetryAfter: retryAfter(res.Header.Get("Retry-After"), c.now())}
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		r.ReadError = "reading the response: " + describe(rerr, c.timeout)
	}
	return r, nil
}

// describe turns a transport error into a message for the integrator.
func describe(err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, errPrivateTarget):
		return errPrivateTarget.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("no answer within %s", timeout)
	case errors.Is(err, context.Canceled):
		return "attempt interrupted by shutdown"
	}
	return err.Error()
}

// retryAfter reads a Retry-After header (seconds or an HTTP date) as a delay
// from now, capped at webhooks.MaxRetryAfter; 0 when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), webhooks.MaxRetryAfter)
}

// errPrivateTarget is returned when a connection would reach a refused address.
var errPrivateTarget = errors.New("target address is loopback, private, link-local or reserved (refused; set webhooks.allow_private_targets to allow)")

// dialControl refuses, at connect time, addresses that are not public.
func dialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, errPrivateTarget)
	}
	if !webhooks.PublicAddr(ap.Addr()) {
		return fmt.Errorf("dial %s: %w", ap.Addr(), errPrivateTarget)
	}
	return nil
}
