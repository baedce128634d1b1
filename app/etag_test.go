package app

import "testing"

func TestCheckIfMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ifMatch, etag string
		ok            bool
	}{
		{"", `"a"`, true},
		{"*", `"a"`, true},
		{`"a"`, `"a"`, true},
		{`"b", "a"`, `"a"`, true},
		{`"b"`, `"a"`, false},
		{`W/"a"`, `"a"`, false},
		{`a`, `"a"`, true},
		{`"ab"`, `"a"`, false},
	}
	for _, tt := range tests {
		err := CheckIfMatch(tt.ifMatch, tt.etag)
		if (err == nil) != tt.ok || (err != nil && ErrorCode(err) != EPreconditionFailed) {
			t.Errorf("If-Match %s vs %s: %v", tt.ifMatch, tt.etag, err)
		}
	}
}
