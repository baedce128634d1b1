package ui

// navItem is one link of the navigation.
type navItem struct {
	Label string
	Path  string
	// Show says whether the signed-in person sees the item; nil: everyone.
	Show func(v *viewer) bool
}

// navItems is the navigation, in order: the one place a page adds itself, with
// one line, once it exists — e.g.
//
//	{Label: "Files", Path: "/drive"},
//	{Label: "Contacts", Path: "/contacts"},
//	{Label: "Calendar", Path: "/calendar"},
//	{Label: "Admin", Path: "/admin", Show: (*viewer).IsAdmin},
//	{Label: "Customers", Path: "/partner", Show: (*viewer).IsResellerStaff},
//
// Pages not built yet are not linked.
var navItems = []navItem{
	{Label: "Files", Path: "/drive"},
	{Label: "Contacts", Path: "/contacts"},
	{Label: "Calendar", Path: "/calendar"},
	{Label: "Admin", Path: "/admin", Show: (*viewer).IsAdmin},
	{Label: "Customers", Path: "/partner", Show: (*viewer).IsResellerStaff},
	{Label: "Settings", Path: "/settings"},
}

// navLink is a navigation item as a page shows it.
type navLink struct {
	Label, Path string
	Current     bool
}

// nav returns the navigation v sees on the page at path.
func nav(v *viewer, path string) []navLink {
	var out []navLink
	for _, it := range navItems {
		if it.Show != nil && !it.Show(v) {
			continue
		}
		cur := path == it.Path || len(path) > len(it.Path) && path[:len(it.Path)+1] == it.Path+"/"
		out = append(out, navLink{Label: it.Label, Path: it.Path, Current: cur})
	}
	return out
}
