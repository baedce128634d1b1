package wopi

// WOPI discovery, the wire side: fetching {editor}/hosting/discovery and
// parsing its XML (the actions and the proof key) into a drive.Discovery.

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"atrium/app/drive"
)

// DiscoveryClient fetches an editor's WOPI discovery (drive.DiscoveryFetcher).
type DiscoveryClient struct {
	// URL is the editor's base URL.
	URL string
	// Client makes the request.
	Client *http.Client
}

var _ drive.DiscoveryFetcher = DiscoveryClient{}

// NewDiscoveryClient returns the discovery client of the editor at url, with
// requests bounded by timeout.
func NewDiscoveryClient(url string, timeout time.Duration) DiscoveryClient {
	return DiscoveryClient{URL: url, Client: &http.Client{Timeout: timeout}}
}

// maxDiscoveryBytes caps the discovery document (Collabora's is about 100 KB).
const maxDiscoveryBytes = 4 << 20

// FetchDiscovery fetches and parses the discovery.
func (c DiscoveryClient) FetchDiscovery(ctx context.Context) (drive.Discovery, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.URL, "/")+"/hosting/discovery", nil)
	if err != nil {
		return drive.Discovery{}, err
	}
	res, err := c.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return drive.Discovery{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return drive.Discovery{}, fmt.Errorf("status %d", res.StatusCode)
	}
	return ParseDiscovery(io.LimitReader(res.Body, maxDiscoveryBytes))
}

// discoveryXML is a WOPI discovery document.
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
// ParseDiscovery reads a WOPI discovery document. Actions of external net
// zones win over internal ones; within a zone the first action for an
// extension wins.
func ParseDiscovery(r io.Reader) (drive.Discovery, error) {
	var doc discoveryXML
	dec := xml.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		return drive.Discovery{}, fmt.Errorf("parse WOPI discovery: %w", err)
	}
	product, actions := "wopi", map[string]map[string]string{}
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
					m := actions[act.Name]
					if m == nil {
						m = map[string]string{}
						actions[act.Name] = m
					}
					if _, ok := m[key]; !ok {
						m[key] = act.URLSrc
					}
					if product == "wopi" {
						product = productOf(act.URLSrc)
					}
				}
			}
		}
	}
	if len(actions) == 0 {
		return drive.Discovery{}, errors.New("parse WOPI discovery: no actions")
	}
	keys, err := doc.ProofKey.keys()
	if err != nil {
		return drive.Discovery{}, fmt.Errorf("parse WOPI discovery: %w", err)
	}
	if keys == nil {
		return drive.NewDiscovery(product, actions, nil), nil
	}
	return drive.NewDiscovery(product, actions, keys), nil
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
