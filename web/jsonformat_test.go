package web

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"atrium/app/calendar"
	"atrium/app/drive"
	"atrium/app/identity"
)

// The REST answers' encoder writes what encoding/json writes (huma's default
// encoder, with HTML left unescaped), byte for byte, for the shapes the API
// answers with: structs with omitempty, pointers, times, maps (keys sorted),
// floats, HTML and invalid UTF-8 in strings, nil and empty slices. One
// difference, which no answer meets (none holds raw JSON or a type with a
// MarshalJSON of its own but time.Time): the bytes of a json.Marshaler are
// written as they are, where encoding/json compacts them.
func TestJSONFormatMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 19, 4, 5, 123000000, time.UTC)
	later := at.Add(90 * time.Minute).In(time.FixedZone("X", 3600))
	desc := "a <b>bold</b> & \"quoted\" folder\u2028 \xff end"
	cases := []struct {
		name string
		v    any
	}{
		{"a drive file", drive.File{ID: "f1", OrgID: "o1", OwnerID: "u1", Name: desc, MimeType: "text/plain", SizeBytes: 1 << 40,
			Metadata:  drive.Metadata{Description: desc, Tags: []string{"b", "a"}, Custom: map[string]string{"z": "1", "a": "<2>"}},
			CreatedAt: at, UpdatedAt: later, ModifiedAt: at, TrashedAt: &later}},
		{"a file without metadata", drive.File{ID: "f2"}},
		{"a user", identity.User{ID: "u1", Email: "a@b.test", FirstName: desc, CreatedAt: at}},
		{"a calendar", calendar.Calendar{ID: "c1", Name: desc, Timezone: "Europe/Paris", CreatedAt: at, UpdatedAt: later}},
		{"a map of any", map[string]any{"b": 1.5, "a": []any{nil, true, "x", 1e21, 1e-7, math.MaxInt64, -0.0},
			"raw": json.RawMessage(`{"k":[1,2]}`), "empty": []string{}, "nil": []string(nil)}},
		{"a problem", map[string]any{"type": "https://atrium.example/problems/invalid", "status": 422,
			"errors": []map[string]any{{"location": "body.name", "message": desc, "value": desc}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(c.v); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			if err := jsonFormat.Marshal(&got, c.v); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("encoded\n%s\nwant (encoding/json)\n%s", got.String(), want.String())
			}
		})
	}
	t.Run("raw JSON is written as it is", func(t *testing.T) {
		t.Parallel()
		var got strings.Builder
		if err := jsonFormat.Marshal(&got, map[string]any{"raw": json.RawMessage(`{"k": [1, 2]}`)}); err != nil {
			t.Fatal(err)
		}
		if got.String() != "{\"raw\":{\"k\": [1, 2]}}\n" {
			t.Errorf("encoded %q", got.String())
		}
	})
}
