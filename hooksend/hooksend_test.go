package hooksend

import (
	"errors"
	"testing"
	"time"

	"atrium/app/webhooks"
)

func TestDialControlRefusesPrivate(t *testing.T) {
	t.Parallel()
	if err := dialControl("tcp4", "127.0.0.1:80", nil); !errors.Is(err, errPrivateTarget) {
		t.Fatalf("loopback: %v", err)
	}
	if err := dialControl("tcp6", "[fd00::1]:443", nil); !errors.Is(err, errPrivateTarget) {
		t.Fatalf("ULA: %v", err)
	}
	if err := dialControl("tcp4", "93.184.215.14:443", nil); err != nil {
		t.Fatalf("public: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"120": 2 * time.Minute, "": 0, "soon": 0, "-5": 0, "999999999": webhooks.MaxRetryAfter,
		now.Add(10 * time.Minute).Format("Mon, 02 Jan 2006 15:04:05 GMT"): 10 * time.Minute,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}
