package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Resolver looks up the addresses of a host name (the wiring gives
// net.DefaultResolver; tests inject their own).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// blockedPrefixes are address ranges a webhook may not reach unless private
// targets are allowed: loopback, private, link-local (cloud metadata lives at
// 169.254.169.254 and fd00:ec2::254), shared CGNAT space, and the unspecified,
// broadcast, multicast, documentation and reserved ranges.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// metadataHosts are names of cloud metadata services, refused by name as well.
var metadataHosts = []string{"metadata.google.internal", "metadata", "instance-data", "metadata.azure.internal"}

// PublicAddr reports whether a is an address a webhook may reach when private
// targets are not allowed.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// checkURL validates a subscription URL: absolute http(s), a host, no
// credentials or fragment, and — unless allowPrivate — a host whose every address
// is public. It returns the message of a validation error, or "".
func checkURL(ctx context.Context, raw string, allowPrivate bool, r Resolver) string {
	if raw == "" {
		return "must not be empty"
	}
	if len(raw) > MaxURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "is not a valid URL"
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL"
	case u.Host == "" || u.Hostname() == "":
		return "must name a host"
	case u.User != nil:
		return "must not contain credentials"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not contain a fragment"
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return "has an invalid port"
		}
	}
	if allowPrivate {
		return ""
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || strings.HasSuffix(host, ".internal") || strings.HasSuffix(host, ".local") {
		return "must not point to a local, private or metadata address"
	}
	for _, m := range metadataHosts {
		if host == m {
			return "must not point to a local, private or metadata address"
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !PublicAddr(a) {
			return "must not point to a loopback, private, link-local or metadata address"
		}
		return ""
	}
	if r == nil {
		return "host name does not resolve (no resolver is configured)"
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return "host name does not resolve"
	}
	for _, a := range addrs {
		if !PublicAddr(a) {
			return "host resolves to a loopback, private, link-local or metadata address"
		}
	}
	return ""
}

func parsePort(p string) (int, error) {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, errors.New("out of range")
		}
	}
	return n, nil
}
