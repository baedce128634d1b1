package wopi

import (
	"strings"
	"testing"
)

const testDiscovery = `<?xml version="1.0" encoding="utf-8"?>
<wopi-discovery>
 <net-zone name="internal-http">
  <app name="writer"><action name="edit" ext="odt" urlsrc="http://internal/edit?"/></app>
 </net-zone>
 <net-zone name="external-https">
  <app name="writer">
   <action default="true" name="edit" ext="odt" urlsrc="https://office.example/browser/1a2b/cool.html?"/>
   <action name="view" ext="odt" urlsrc="https://office.example/view?&lt;ui=UI_LLCC&amp;&gt;&lt;rs=DC_LLCC&amp;&gt;&lt;thm=THEME_ID&amp;&gt;&lt;dchat=DISABLE_CHAT&amp;&gt;"/>
  </app>
  <app name="application/vnd.ms-excel"><action name="edit" ext="" urlsrc="https://office.example/browser/1a2b/cool.html?"/></app>
 </net-zone>
</wopi-discovery>`

func TestParseDiscovery(t *testing.T) {
	t.Parallel()
	d, err := ParseDiscovery(strings.NewReader(testDiscovery))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ action, name, mime, want string }{
		{"edit", "Report.ODT", "", "https://office.example/browser/1a2b/cool.html?"},
		{"view", "a.odt", "", "https://office.example/view?<ui=UI_LLCC&><rs=DC_LLCC&><thm=THEME_ID&><dchat=DISABLE_CHAT&>"},
		{"edit", "sheet", "application/vnd.ms-excel", "https://office.example/browser/1a2b/cool.html?"},
		{"edit", "a.zip", "application/zip", ""},
		{"convert", "a.odt", "", ""},
	}
	for _, tt := range tests {
		if got := d.Action(tt.action, tt.name, tt.mime); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.action, tt.name, got, tt.want)
		}
	}
	if d.Product != "collabora" {
		t.Errorf("product %q", d.Product)
	}
	for _, bad := range []string{"", "<html>", "<wopi-discovery/>"} {
		if _, err := ParseDiscovery(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
