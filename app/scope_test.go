package app

import (
	"slices"
	"testing"
)

func TestScopesList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"none", nil, []string{}},
		{"known, sorted", []string{ScopeDriveWrite, ScopeAdmin, ScopeContactsRead}, []string{ScopeAdmin, ScopeContactsRead, ScopeDriveWrite}},
		{"every known scope", AllScopes(), AllScopes()},
		{"one unknown among known", []string{ScopeDriveRead, "zz:other", "aa:other", ScopeCalendarRead}, []string{"aa:other", ScopeCalendarRead, ScopeDriveRead, "zz:other"}},
		{"only unknown", []string{"b:x", "a:x"}, []string{"a:x", "b:x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NewScopes(tc.in...).List(); !slices.Equal(got, tc.want) {
				t.Errorf("List() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKnownScope(t *testing.T) {
	t.Parallel()
	for _, s := range AllScopes() {
		if !KnownScope(s) {
			t.Errorf("KnownScope(%q) = false", s)
		}
	}
	for _, s := range []string{"", "drive", "drive:delete", "admin:access ", "zz:zz", "a"} {
		if KnownScope(s) {
			t.Errorf("KnownScope(%q) = true", s)
		}
	}
	if !slices.IsSorted(AllScopes()) {
		t.Error("AllScopes is not sorted")
	}
	all := AllScopes()
	all[0] = "changed"
	if AllScopes()[0] == "changed" {
		t.Error("AllScopes shares its slice with the caller")
	}
}

// A principal's kept list is shared by its copies while their scopes are the
// set it was made of; a copy given another set lists that one.
func TestPrincipalScopeList(t *testing.T) {
	t.Parallel()
	p := &Principal{Scopes: NewScopes(ScopeDriveWrite, ScopeAdmin)}
	want := []string{ScopeAdmin, ScopeDriveWrite}
	if got := p.ScopeList(); !slices.Equal(got, want) {
		t.Fatalf("before KeepScopeList: %v, want %v", got, want)
	}
	p.KeepScopeList()
	cp := *p
	a, b := p.ScopeList(), cp.ScopeList()
	if !slices.Equal(a, want) || &a[0] != &b[0] {
		t.Errorf("a copy does not share the kept list: %v, %v", a, b)
	}
	cp.Scopes = NewScopes(ScopeDriveRead)
	if got := cp.ScopeList(); !slices.Equal(got, []string{ScopeDriveRead}) {
		t.Errorf("after its scopes changed: %v", got)
	}
	if got := p.ScopeList(); !slices.Equal(got, want) {
		t.Errorf("the original's list: %v", got)
	}
	cp.Scopes = nil
	if got := cp.ScopeList(); len(got) != 0 {
		t.Errorf("without scopes: %v", got)
	}
}
