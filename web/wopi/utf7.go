package wopi

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// WOPI sends and expects file names in X-WOPI-SuggestedTarget,
// X-WOPI-RelativeTarget and X-WOPI-ValidRelativeTarget as UTF-7 (RFC 2152):
// ASCII as is, other characters as "+" base64(UTF-16BE) "-", and "+-" for "+".

var b64 = base64.RawStdEncoding

var errUTF7 = errors.New("invalid UTF-7")

// DecodeUTF7 decodes RFC 2152 UTF-7; bytes outside ASCII pass unchanged
// (editors that send UTF-8) when they are valid UTF-8.
func DecodeUTF7(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", errUTF7
	}
	if !strings.Contains(s, "+") {
		return s, nil
	}
	var out strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '+' {
			out.WriteByte(c)
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isB64(s[j]) {
			j++
		}
		if j == i+1 {
			if j < len(s) && s[j] == '-' {
				out.WriteByte('+')
				i = j + 1
				continue
			}
			return "", errUTF7
		}
		raw, err := b64.DecodeString(s[i+1 : j])
		if err != nil && len(raw) == 0 {
			return "", errUTF7
		}
		if len(raw)%2 == 1 {
			raw = raw[:len(raw)-1]
		}
		u := make([]uint16, len(raw)/2)
		for k := range u {
			u[k] = uint16(raw[2*k])<<8 | uint16(raw[2*k+1])
		}
		out.WriteString(string(utf16.Decode(u)))
		i = j
		if i < len(s) && s[i] == '-' {
			i++
		}
	}
	return out.String(), nil
}

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}

// EncodeUTF7 encodes s as RFC 2152 UTF-7 (printable ASCII but "+" as is).
func EncodeUTF7(s string) string {
	var out strings.Builder
	var run []rune
	flush := func() {
		if len(run) == 0 {
			return
		}
		u := utf16.Encode(run)
		raw := make([]byte, 2*len(u))
		for k, v := range u {
			raw[2*k], raw[2*k+1] = byte(v>>8), byte(v)
		}
		out.WriteString("+" + b64.EncodeToString(raw) + "-")
		run = run[:0]
	}
	for _, r := range s {
		switch {
		case r == '+':
			flush()
			out.WriteString("+-")
		case r >= 0x20 && r < 0x7f:
			flush()
			out.WriteRune(r)
		default:
			run = append(run, r)
		}
	}
	flush()
	return out.String()
}
