package drive

// WOPI discovery: which editor action opens which file type, and the URL of
// the editor for a document.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"atrium/app"
)

// WOPI discovery: the online editor (Collabora Online, ONLYOFFICE Docs)
// publishes at {url}/hosting/discovery which actions (edit, view, …) it has
// for which file extensions, each with the URL (urlsrc) a browser opens.

// Discovery is a parsed WOPI discovery document.
type Discovery struct {
	// Product names the editor: collabora, onlyoffice or wopi (unknown).
	Product string
	// actions maps an action name to a key (a lower-case extension without
	// the dot, or a mime type) to the action's urlsrc.
	actions map[string]map[string]string
	// proof holds the editor's proof keys; nil when it signs nothing.
	proof ProofKeys
}

// NewDiscovery returns the discovery of editor product: actions maps an
// action name (edit, view, …) to a key (a lower-case extension without the
// dot, or a lower-case mime type) to the action's urlsrc; proof is nil when
// the editor signs nothing.
func NewDiscovery(product string, actions map[string]map[string]string, proof ProofKeys) Discovery {
	return Discovery{Product: product, actions: actions, proof: proof}
}

// DiscoveryFetcher fetches and parses the editor's WOPI discovery (an
// adapter: web/wopi.DiscoveryClient).
type DiscoveryFetcher interface {
	FetchDiscovery(ctx context.Context) (Discovery, error)
}

// ProofKeys are an editor's proof keys (web/wopi parses them from the
// discovery): Verify reports whether pr is signed by them at ticks (.NET
// ticks of X-WOPI-TimeStamp).
type ProofKeys interface {
	Verify(pr WOPIProof, ticks int64) bool
}

// Action returns the urlsrc of action (edit, view) for a file named name of
// mimeType: by extension first, then by mime type; "" when none.
func (d Discovery) Action(action, name, mimeType string) string {
	m := d.actions[action]
	if m == nil {
		return ""
	}
	if ext := fileExt(name); ext != "" {
		if u := m[ext]; u != "" {
			return u
		}
	}
	return m[strings.ToLower(mimeType)]
}

// fileExt returns the lower-case extension of name without the dot.
func fileExt(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return ""
	}
	return strings.ToLower(name[i+1:])
}

// placeholder is an optional query parameter group of a urlsrc: <name=VALUE&>.
var placeholder = regexp.MustCompile(`<([^<>=]*)=([A-Z_]+)&?>`)

// EditorURL builds the URL a browser opens from an action's urlsrc: the
// <name=PLACEHOLDER&> groups are filled where Atrium knows the value (UI_LLCC
// and DC_LLCC from lang, THEME_ID from theme light/dark) and dropped
// otherwise, then WOPISrc (the file's WOPI URL), and lang and theme when given
// and not yet placed, are appended.
func EditorURL(urlsrc, wopiSrc, lang, theme string) string {
	usedLang, usedTheme := false, false
	u := placeholder.ReplaceAllStringFunc(urlsrc, func(g string) string {
		m := placeholder.FindStringSubmatch(g)
		name, val := m[1], ""
		switch m[2] {
		case "UI_LLCC", "DC_LLCC":
			val, usedLang = lang, usedLang || lang != ""
		case "THEME_ID":
			switch theme {
			case "light":
				val = "1"
			case "dark":
				val = "2"
			}
			usedTheme = usedTheme || val != ""
		}
		if val == "" || name == "" {
			return ""
		}
		return url.QueryEscape(name) + "=" + url.QueryEscape(val) + "&"
	})
	u = strings.ReplaceAll(u, "\n", "")
	switch {
	case !strings.Contains(u, "?"):
		u += "?"
	case !strings.HasSuffix(u, "?") && !strings.HasSuffix(u, "&"):
		u += "&"
	}
	u += "WOPISrc=" + url.QueryEscape(wopiSrc)
	if lang != "" && !usedLang {
		u += "&lang=" + url.QueryEscape(lang)
	}
	if theme != "" && !usedTheme {
		u += "&theme=" + url.QueryEscape(theme)
	}
	return u
}

// discoveryCache fetches (by its DiscoveryFetcher) and keeps the editor's
// discovery.
type discoveryCache struct {
	url     string
	fetcher DiscoveryFetcher
	maxAge  time.Duration
	retryIn time.Duration

	mu      sync.Mutex
	doc     *Discovery
	fetched time.Time
	// failedAt is the time of the last failed fetch (no retry before retryIn).
	failedAt time.Time
	lastErr  error
}

// get returns the discovery, fetching it when none is cached, when the cached
// one is older than maxAge or (after retryIn) when the last fetch failed. A
// failed refresh keeps serving the cached one.
func (c *discoveryCache) get(ctx context.Context, now time.Time) (Discovery, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := c.doc != nil && now.Sub(c.fetched) < c.maxAge
	if fresh || (!c.failedAt.IsZero() && now.Sub(c.failedAt) < c.retryIn) {
		if c.doc != nil {
			return *c.doc, nil
		}
		return Discovery{}, c.unavailable(c.lastErr)
	}
	d, err := c.fetch(ctx)
	if err != nil {
		c.failedAt, c.lastErr = now, err
		if c.doc != nil {
			return *c.doc, nil
		}
		return Discovery{}, c.unavailable(err)
	}
	c.doc, c.fetched, c.failedAt, c.lastErr = &d, now, time.Time{}, nil
	return d, nil
}

// refetch fetches the discovery again when the last fetch is older than
// retryIn, and returns it; ok is false when it was not fetched or failed.
func (c *discoveryCache) refetch(ctx context.Context, now time.Time) (Discovery, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.fetched) < c.retryIn || (!c.failedAt.IsZero() && now.Sub(c.failedAt) < c.retryIn) {
		return Discovery{}, false
	}
	d, err := c.fetch(ctx)
	if err != nil {
		c.failedAt, c.lastErr = now, err
		return Discovery{}, false
	}
	c.doc, c.fetched, c.failedAt, c.lastErr = &d, now, time.Time{}, nil
	return d, true
}

func (c *discoveryCache) fetch(ctx context.Context) (Discovery, error) {
	if c.fetcher == nil {
		return Discovery{}, errors.New("no discovery client is configured")
	}
	return c.fetcher.FetchDiscovery(ctx)
}

func (c *discoveryCache) unavailable(err error) error {
	return &app.Error{Code: app.EUnavailable, RetryAfter: int(c.retryIn.Seconds()),
		Message: fmt.Sprintf("The online editor at %s did not answer its WOPI discovery: %v.", c.url, err)}
}
