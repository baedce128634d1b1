package calendar

import "testing"

// ExportFileName: the calendar's name with .ics; a blank name (a CalDAV
// calendar made without a display name) exports as calendar.ics.
func TestExportFileName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, want string }{
		{"Work", "Work.ics"},
		{"Été 2026", "Été 2026.ics"},
		{"", "calendar.ics"},
		{"  \t", "calendar.ics"},
	} {
		if got := ExportFileName(Calendar{Name: tt.name}); got != tt.want {
			t.Errorf("ExportFileName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
