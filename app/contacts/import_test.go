package contacts

import (
	"strings"
	"testing"

	"atrium/app"
)

func TestSplitCards(t *testing.T) {
	t.Parallel()
	c := func(body string) string { return "BEGIN:VCARD\r\nVERSION:4.0\r\n" + body + "\r\nEND:VCARD\r\n" }
	agent := "BEGIN:VCARD\nVERSION:2.1\nFN:Boss\nAGENT:\nBEGIN:VCARD\nVERSION:2.1\nFN:Assistant\nEND:VCARD\nEND:VCARD\n"
	tests := []struct {
		name  string
		in    string
		cards []string // each card's FN lines
		err   string
	}{
		{"one", c("FN:A"), []string{"FN:A"}, ""},
		{"several, CRLF and LF, blank lines between", c("FN:A") + "\n\n" + strings.ReplaceAll(c("FN:B"), "\r\n", "\n"), []string{"FN:A", "FN:B"}, ""},
		{"byte order mark and lower case", "\uFEFFbegin:vcard\nVERSION:3.0\nFN:A\nend:vcard\n", []string{"FN:A"}, ""},
		{"an embedded AGENT card stays in its card", agent + c("FN:C"), []string{"FN:Boss", "FN:C"}, ""},
		{"a last card without END is kept (its parse fails)", c("FN:A") + "BEGIN:VCARD\nFN:B\n", []string{"FN:A", "FN:B"}, ""},
		{"empty", "", nil, "not a vCard file"},
		{"blank", "\r\n  \n", nil, "not a vCard file"},
		{"text", "hello\nBEGIN:VCARD\nEND:VCARD\n", nil, "not a vCard file"},
		{"iCalendar", "BEGIN:VCALENDAR\nEND:VCALENDAR\n", nil, "not a vCard file"},
		{"too many", strings.Repeat(c("FN:A"), MaxImportCards+1), nil, "at most 10000 cards"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cards, err := splitCards([]byte(tt.in))
			if tt.err != "" {
				if app.ErrorCode(err) != app.EValidation || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want validation naming %q", err, tt.err)
				}
				return
			}
			if err != nil || len(cards) != len(tt.cards) {
				t.Fatalf("%d cards, err %v; want %d", len(cards), err, len(tt.cards))
			}
			for i, want := range tt.cards {
				if !strings.Contains(string(cards[i]), want) {
					t.Fatalf("card %d = %q, want it to hold %q", i, cards[i], want)
				}
			}
		})
	}
}
