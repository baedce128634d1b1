package webdav

import (
	"strings"
	"testing"
	"time"
)

// Hostile XML bodies (XXE, entity expansion, deep nesting) are refused, or parsed
// without expanding entities and in bounded time.
func TestParseXMLHostileBodies(t *testing.T) {
	t.Parallel()
	for _, tt := range hostileXML() {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			n, err := parseXML(strings.NewReader(tt.body))
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
			if err != nil {
				return // refused
			}
			if !tt.mayParse {
				t.Fatalf("accepted")
			}
			if s := innerXML(n); strings.Contains(s, "root:") || strings.Contains(s, "lollol") {
				t.Fatalf("entity expanded: %.100q", s)
			}
		})
	}
}

type hostileBody struct {
	name     string
	body     string
	mayParse bool // a deep but well-formed body may be parsed
}

func hostileXML() []hostileBody {
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">`
	prev := "lol"
	for i := 1; i <= 9; i++ {
		name := "lol" + string(rune('0'+i))
		laughs += `<!ENTITY ` + name + ` "` + strings.Repeat("&"+prev+";", 10) + `">`
		prev = name
	}
	laughs += `]><D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&lol9;</D:displayname></D:prop></D:propfind>`
	deep := `<D:propfind xmlns:D="DAV:">` + strings.Repeat("<D:prop>", 10000) + strings.Repeat("</D:prop>", 10000) + `</D:propfind>`
	return []hostileBody{
		{name: "XXE", body: `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>` +
			`<D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&e;</D:displayname></D:prop></D:propfind>`},
		{name: "billion laughs", body: laughs},
		{name: "10000 deep", body: deep},
		{name: "65 deep", body: `<D:propfind xmlns:D="DAV:">` + strings.Repeat("<D:prop>", 64) + strings.Repeat("</D:prop>", 64) + `</D:propfind>`},
	}
}

// A body of maxXMLBody bytes nested as deep as it can (about 62,000 levels) is
// refused at once (parsed, it would cost a namespace scope per level), and a
// body exactly as deep as allowed is parsed.
func TestParseXMLMaxDepthBody(t *testing.T) {
	t.Parallel()
	n := (maxXMLBody - 100) / len("<D:prop></D:prop>")
	body := `<D:propfind xmlns:D="DAV:">` + strings.Repeat("<D:prop>", n) + strings.Repeat("</D:prop>", n) + `</D:propfind>`
	start := time.Now()
	if _, err := parseXML(strings.NewReader(body)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("a %d-deep body: %v", n, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("refusing a %d-deep body took %v", n, d)
	}
	ok := `<D:propfind xmlns:D="DAV:">` + strings.Repeat("<D:prop>", maxXMLDepth-1) + strings.Repeat("</D:prop>", maxXMLDepth-1) + `</D:propfind>`
	if _, err := parseXML(strings.NewReader(ok)); err != nil {
		t.Fatalf("a %d-deep body: %v", maxXMLDepth, err)
	}
}
