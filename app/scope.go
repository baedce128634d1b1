package app

import (
	"sort"
	"strings"
)

// Scopes of the public API (CONTRACT §3).
const (
	ScopeContactsRead   = "contacts:read"
	ScopeContactsWrite  = "contacts:write"
	ScopeCalendarRead   = "calendar:read"
	ScopeCalendarWrite  = "calendar:write"
	ScopeDriveRead      = "drive:read"
	ScopeDriveWrite     = "drive:write"
	ScopeWebhooksManage = "webhooks:manage"
	ScopeDeveloper      = "developer:manage"
	ScopeAdmin          = "admin:access"
	// ScopeCredentials lets a token list, make and revoke its user's app
	// passwords, tokens and web sessions (a web session may without it).
	ScopeCredentials = "credentials:manage"

	ScopePartnerOrgsRead    = "partner:orgs:read"
	ScopePartnerOrgsWrite   = "partner:orgs:write"
	ScopePartnerOrgsManage  = "partner:orgs:manage"
	ScopePartnerUsersRead   = "partner:users:read"
	ScopePartnerUsersWrite  = "partner:users:write"
	ScopePartnerUsersManage = "partner:users:manage"
	ScopePartnerTeamsRead   = "partner:teams:read"
	ScopePartnerTeamsWrite  = "partner:teams:write"
	ScopePartnerTeamsManage = "partner:teams:manage"
	ScopePartnerPlansRead   = "partner:plans:read"
	ScopePartnerPlansWrite  = "partner:plans:write"
	ScopePartnerBillingRead = "partner:billing:read"
)

// Roles of users in an organisation.
const (
	RoleAdmin  = "admin"
	RoleMember = "member"
)

var memberScopes = []string{
	ScopeContactsWrite, ScopeContactsRead, ScopeCalendarWrite, ScopeCalendarRead,
	ScopeDriveWrite, ScopeDriveRead, ScopeCredentials,
}

var adminOnlyScopes = []string{
	ScopeWebhooksManage, ScopeDeveloper, ScopeAdmin,
}

var partnerScopes = []string{
	ScopePartnerOrgsManage, ScopePartnerOrgsWrite, ScopePartnerOrgsRead,
	ScopePartnerUsersManage, ScopePartnerUsersWrite, ScopePartnerUsersRead,
	ScopePartnerTeamsManage, ScopePartnerTeamsWrite, ScopePartnerTeamsRead,
	ScopePartnerPlansWrite, ScopePartnerPlansRead, ScopePartnerBillingRead,
}

// AllScopes lists every scope Atrium knows, sorted, for documentation and
// validation.
func AllScopes() []string { return append([]string(nil), knownScopes...) }

// knownScopes is every scope Atrium knows, sorted.
var knownScopes = func() []string {
	out := append(append(append([]string{}, memberScopes...), adminOnlyScopes...), partnerScopes...)
	sort.Strings(out)
	return out
}()

// KnownScope reports whether s is a scope Atrium knows.
func KnownScope(s string) bool {
	_, ok := sort.Find(len(knownScopes), func(i int) int { return strings.Compare(s, knownScopes[i]) })
	return ok
}

// RoleScopes returns every scope a user of the role may hold; partner scopes only
// when the user's organisation is a reseller.
func RoleScopes(role string, reseller bool) []string {
	out := append([]string{}, memberScopes...)
	if role == RoleAdmin {
		out = append(out, adminOnlyScopes...)
		if reseller {
			out = append(out, partnerScopes...)
		}
	}
	sort.Strings(out)
	return out
}

// Scopes is a set of granted scopes. A `:write` scope implies its `:read`; a
// partner `:manage` implies `:write` and `:read` of the same resource.
type Scopes map[string]struct{}

// NewScopes builds a set from a list.
func NewScopes(list ...string) Scopes {
	s := make(Scopes, len(list))
	for _, v := range list {
		if v = strings.TrimSpace(v); v != "" {
			s[v] = struct{}{}
		}
	}
	return s
}

// ParseScopes builds a set from a space- or comma-separated string.
func ParseScopes(text string) Scopes {
	return NewScopes(strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' })...)
}

// Has reports whether the set grants the required scope, directly or by implication.
func (s Scopes) Has(required string) bool {
	if _, ok := s[required]; ok {
		return true
	}
	i := strings.LastIndexByte(required, ':')
	if i < 0 {
		return false
	}
	resource, level := required[:i], required[i+1:]
	switch level {
	case "read":
		return s.has(resource+":write") || s.has(resource+":manage")
	case "write":
		return s.has(resource + ":manage")
	}
	return false
}

func (s Scopes) has(v string) bool { _, ok := s[v]; return ok }

// List returns the scopes sorted. It picks them from the sorted list of
// known scopes (every /me lists them), and sorts only a set holding others.
func (s Scopes) List() []string {
	out := make([]string, 0, len(s))
	for _, k := range knownScopes {
		if _, ok := s[k]; ok {
			out = append(out, k)
		}
	}
	if len(out) == len(s) {
		return out
	}
	out = out[:0]
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// String returns the scopes space separated, as in a JWT `scope` claim.
func (s Scopes) String() string { return strings.Join(s.List(), " ") }

// Intersect returns the scopes of s that other grants.
func (s Scopes) Intersect(other Scopes) Scopes {
	out := Scopes{}
	for k := range s {
		if other.Has(k) {
			out[k] = struct{}{}
		}
	}
	return out
}
