package drive

// WOPI discovery: which editor action opens which file type, and the URL of
// the editor for a document.

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	proof *proofKeys
}

type discoveryXML struct {
	ProofKey *proofKeyXML `xml:"proof-key"`
	NetZones []struct {
		Name string `xml:"name,attr"`
		Apps []struct {
			Name    string `xml:"name,attr"`
			Actions []struct {
				Name   string `xml:"name,attr"`
				Ext    string `xml:"ext,attr"`
				URLSrc string `xml:"urlsrc,attr"`
			} `xml:"action"`
		} `xml:"app"`
	} `xml:"net-zone"`
}

// ParseDiscovery reads a WOPI discovery document. Actions of external net
// zones win over internal ones; within a zone the first action for an
// extension wins.
func ParseDiscovery(r io.Reader) (Discovery, error) {
	var doc discoveryXML
	dec := xml.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return Discovery{}, fmt.Errorf("parse WOPI discovery: %w", err)
	}
	d := Discovery{Product: "wopi", actions: map[string]map[string]string{}}
	// External zones (and unnamed ones) first, internal ones second.
	for pass := 0; pass < 2; pass++ {
		for _, z := range doc.NetZones {
			if strings.HasPrefix(z.Name, "internal") != (pass == 1) {
				continue
			}
			for _, a := range z.Apps {
				for _, act := range a.Actions {
					if act.Name == "" || act.URLSrc == "" {
						continue
					}
					key := strings.ToLower(strings.TrimPrefix(act.Ext, "."))
					if key == "" {
						// Collabora also lists apps named by mime type with ext="".
						key = strings.ToLower(a.Name)
						if !strings.Contains(key, "/") {
							continue
						}
					}
					m := d.actions[act.Name]
					if m == nil {
						m = map[string]string{}
						d.actions[act.Name] = m
					}
					if _, ok := m[key]; !ok {
						m[key] = act.URLSrc
					}
					if d.Product == "wopi" {
						d.Product = productOf(act.URLSrc)
					}
				}
			}
		}
	}
	if len(d.actions) == 0 {
		return Discovery{}, errors.New("parse WOPI discovery: no actions")
	}
	keys, err := doc.ProofKey.keys()
	if err != nil {
		return Discovery{}, fmt.Errorf("parse WOPI discovery: %w", err)
	}
	d.proof = keys
	return d, nil
}

func productOf(urlsrc string) string {
	u := strings.ToLower(urlsrc)
	switch {
	case strings.Contains(u, "/cool/") || strings.Contains(u, "cool.html") || strings.Contains(u, "loleaflet") || strings.Contains(u, "/browser/"):
		return "collabora"
	case strings.Contains(u, "/hosting/wopi/"):
		return "onlyoffice"
	}
	return "wopi"
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

// discoveryCache fetches and keeps the editor's discovery.
type discoveryCache struct {
	url     string
	client  *http.Client
	maxAge  time.Duration
	retryIn time.Duration

	mu      sync.Mutex
	doc     *Discovery
	fetched time.Time
	// failedAt is the time of the last failed fetch (no retry before retryIn).
	failedAt time.Time
	lastErr  error
}

// maxDiscoveryBytes caps the discovery document (Collabora's is about 100 KB).
const maxDiscoveryBytes = 4 << 20

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

func (c *discoveryCache) unavailable(err error) error {
	return &app.Error{Code: app.EUnavailable, RetryAfter: int(c.retryIn.Seconds()),
		Message: fmt.Sprintf("The online editor at %s did not answer its WOPI discovery: %v.", c.url, err)}
}

func (c *discoveryCache) fetch(ctx context.Context) (Discovery, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.url, "/")+"/hosting/discovery", nil)
	if err != nil {
		return Discovery{}, err
	}
	res, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Discovery{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return Discovery{}, fmt.Errorf("status %d", res.StatusCode)
	}
	return ParseDiscovery(io.LimitReader(res.Body, maxDiscoveryBytes))
}
