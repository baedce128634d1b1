package ui

import "net/http"

// calendar is the calendar page: a shell that its scripts (assets/calendar.js
// and the calendar_*.js it names, one per view or feature) fill in the
// browser's time zone through the REST API (/api/v1/calendar/...), with the
// session cookie and the page's anti-forgery token.
func (u *UI) calendar(w http.ResponseWriter, r *http.Request, v *viewer) {
	u.render(w, r, http.StatusOK, "calendar", page{Title: "Calendar", V: v})
}
