package identity

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"

	"atrium/app"
)

// Authentication cache: a bearer secret's principal is kept for a moment so a
// busy client does not cost a database query per request. Any change to who may
// do what (a status, a role, a deletion) bumps the generation and empties it at
// once; the short lifetime bounds what a change made by another process (the CLI,
// another node of a cluster) can miss. The contract gives such a change 2
// seconds to be refused everywhere; an entry's age counts from before its
// database read, and a request accepted on it at the end of its life still
// has to do its work: 1.5 seconds leaves that work half a second.
const (
	authCacheTTL  = 1500 * time.Millisecond
	authCacheSize = 10000
)

type authEntry struct {
	p   app.Principal
	at  time.Time
	gen uint64
}

type authCache struct {
	gen atomic.Uint64
	mu  sync.RWMutex
	m   map[[sha256.Size]byte]authEntry
}

// cacheKey is the cache's key of a bearer secret, or of an e-mail address and
// app password: their SHA-256. Secrets are long and random, so their plain
// hash names them; the database finds them by the pepper's HMAC (Service.hash),
// which costs about twice as much and is computed only when the cache misses.
func cacheKey(secret string) [sha256.Size]byte { return sha256.Sum256([]byte(secret)) }

// get returns the principal cached under key while it is valid.
func (c *authCache) get(key [sha256.Size]byte, now time.Time) (*app.Principal, bool) {
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || now.Sub(e.at) > authCacheTTL || now.Before(e.at) {
		return nil, false
	}
	p := e.p // a copy: callers may not change the cached one
	return &p, true
}

func (c *authCache) put(key [sha256.Size]byte, p *app.Principal, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= authCacheSize {
		c.m = make(map[[sha256.Size]byte]authEntry)
	}
	e := authEntry{p: *p, at: now, gen: gen}
	e.p.KeepScopeList() // every request's copy shares it
	c.m[key] = e
}

// CredentialsChanged empties the authentication cache; call it after any change
// to an organisation's or user's status, a role, or a deletion. Errors: none of
// its own.
func (s *Service) CredentialsChanged() { s.cache.gen.Add(1) }

// profile is a cached answer of Profile.
type profile struct {
	org       Organization
	user      *User
	twoFactor bool // for TwoFactorOn's entries
}

type profileEntry struct {
	p   profile
	at  time.Time
	gen uint64
}

// profileCache keeps profiles on the terms of authCache, whose generation it
// shares: CredentialsChanged empties both.
type profileCache struct {
	gen *atomic.Uint64
	mu  sync.RWMutex
	m   map[profileKey]profileEntry
}

// profileKey names a cached answer: a struct, so that a lookup builds no string.
type profileKey struct {
	twoFactor bool // TwoFactorOn's entry of user, else Profile's of org and user
	org, user string
}

func (c *profileCache) get(key profileKey, now time.Time) (profile, bool) {
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || now.Sub(e.at) > authCacheTTL || now.Before(e.at) {
		return profile{}, false
	}
	return e.p, true
}

func (c *profileCache) put(key profileKey, p profile, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= authCacheSize {
		c.m = make(map[profileKey]profileEntry)
	}
	c.m[key] = profileEntry{p: p, at: now, gen: gen}
}
