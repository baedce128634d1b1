package wopi

import "testing"

func TestUTF7(t *testing.T) {
	t.Parallel()
	tests := []struct{ plain, enc string }{
		{"report.odt", "report.odt"},
		{"été.odt", "+AOk-t+AOk-.odt"},
		{"a+b.odt", "a+-b.odt"},
		{"日本語.docx", "+ZeVnLIqe-.docx"},
		{"😀.odt", "+2D3eAA-.odt"},
	}
	for _, tt := range tests {
		if got := EncodeUTF7(tt.plain); got != tt.enc {
			t.Errorf("encode %q: %q, want %q", tt.plain, got, tt.enc)
		}
		if got, err := DecodeUTF7(tt.enc); err != nil || got != tt.plain {
			t.Errorf("decode %q: %q %v", tt.enc, got, err)
		}
	}
	// A run may also end at a character outside base64.
	if got, _ := DecodeUTF7("+AOk.odt"); got != "é.odt" {
		t.Errorf("unterminated run: %q", got)
	}
	// Editors that send UTF-8 as is.
	if got, _ := DecodeUTF7("été.odt"); got != "été.odt" {
		t.Errorf("UTF-8: %q", got)
	}
	for _, bad := range []string{"+", "a+", "\xff.odt"} {
		if _, err := DecodeUTF7(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}
