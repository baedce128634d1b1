package sqldb

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestJSONIDs: the id lists given to json_each decode to the ids, whatever
// they hold, and distinctJSONIDs drops repeats keeping the first order.
func TestJSONIDs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		ids      []string
		distinct []string
	}{
		{"none", nil, nil},
		{"plain", []string{"01a20fdc-4920-75e1-a952-4c0264a92ecf", "b"}, []string{"01a20fdc-4920-75e1-a952-4c0264a92ecf", "b"}},
		{"repeats", []string{"a", "b", "a", "c", "b"}, []string{"a", "b", "c"}},
		{"to escape", []string{`q"uote`, `back\slash`, "tab\there", "\x00", "Zoë", "<&>", "del\x7f"}, nil},
		{"empty id", []string{"", "x", ""}, []string{"", "x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			decode := func(s string) []string {
				t.Helper()
				var got []string
				if err := json.Unmarshal([]byte(s), &got); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				return got
			}
			if got := decode(jsonIDs(tt.ids)); !slices.Equal(got, tt.ids) && len(got)+len(tt.ids) > 0 {
				t.Errorf("jsonIDs: %q, want %q", got, tt.ids)
			}
			want := tt.distinct
			if want == nil {
				want = tt.ids
			}
			if got := decode(distinctJSONIDs(tt.ids)); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Errorf("distinctJSONIDs: %q, want %q", got, want)
			}
		})
	}
	if got := jsonIDs(nil); got != "[]" {
		t.Errorf("no ids: %s", got)
	}
}
