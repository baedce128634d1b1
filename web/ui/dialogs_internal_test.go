package ui

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestDialogActionsEndWithCancel: in every dialog of the web app the button
// that acts comes first and the one that closes the dialog ([data-close]:
// Cancel, Close, Done) last, on every page alike.
func TestDialogActionsEndWithCancel(t *testing.T) {
	t.Parallel()
	actions := regexp.MustCompile(`(?s)<div class="(?:dlg-buttons|dialog-actions)[^"]*">(.*?)</div>`)
	button := regexp.MustCompile(`<button[^>]*>`)
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, name := range names {
		b, err := templateFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range actions.FindAllStringSubmatch(string(b), -1) {
			blocks++
			buttons := button.FindAllString(m[1], -1)
			for i, tag := range buttons {
				if strings.Contains(tag, "data-close") && i != len(buttons)-1 {
					t.Errorf("%s: %s comes before %s", name, tag, buttons[len(buttons)-1])
				}
			}
		}
	}
	if blocks < 15 {
		t.Fatalf("found %d dialog button rows; the pattern no longer matches the templates", blocks)
	}
}
