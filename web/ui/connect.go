package ui

import (
	"net/http"

	"atrium/app"
)

// connectData is the page where a person approves a sync client's sign-in
// (Nextcloud's Login Flow v2, started by the client: package web/nextcloud).
type connectData struct {
	Token, Device, Email string
	// Reauth: the session signed in long enough ago that making the app
	// password asks for the account password again.
	Reauth bool
}

// connectPage asks "Connect <device>?". A person not signed in signs in
// first (two-factor included) and comes back here.
func (u *UI) connectPage(w http.ResponseWriter, r *http.Request, v *viewer) {
	u.showConnect(w, r, v, http.StatusOK, "")
}

func (u *UI) showConnect(w http.ResponseWriter, r *http.Request, v *viewer, code int, errMsg string) {
	token := r.PathValue("token")
	fl, err := u.cfg.Identity.PendingLoginFlow(r.Context(), token)
	if err != nil {
		u.render(w, r, http.StatusNotFound, "message", page{Title: "This sign-in has ended", V: v, Error: message(err)})
		return
	}
	u.render(w, r, code, "connect", page{Title: "Connect " + fl.Device, V: v, Error: errMsg,
		Data: connectData{Token: token, Device: fl.Device, Email: v.User.Email, Reauth: u.cfg.Identity.NeedsReauthentication(v.P)}})
}

// connect approves (an app password named after the device, handed to the
// client) or declines the sign-in.
func (u *UI) connect(w http.ResponseWriter, r *http.Request, v *viewer) {
	token := r.PathValue("token")
	fl, err := u.cfg.Identity.PendingLoginFlow(r.Context(), token)
	if err != nil {
		u.render(w, r, http.StatusNotFound, "message", page{Title: "This sign-in has ended", V: v, Error: message(err)})
		return
	}
	if r.PostFormValue("action") != "connect" {
		if err := u.cfg.Identity.CancelLoginFlow(r.Context(), token); err != nil {
			u.fail(w, r, v, err)
			return
		}
		u.render(w, r, http.StatusOK, "message", page{Title: fl.Device + " is not connected", V: v,
			Flash: "Nothing was shared with it. You can close this window."})
		return
	}
	if err := u.confirmFirst(r, v); err != nil {
		u.connectError(w, r, v, err)
		return
	}
	if _, err := u.cfg.Identity.ApproveLoginFlow(r.Context(), v.P, token); err != nil {
		u.connectError(w, r, v, err)
		return
	}
	u.render(w, r, http.StatusOK, "message", page{Title: fl.Device + " is connected", V: v,
		Flash: "You can close this window and go back to " + fl.Device + ". Its app password, named “" + fl.Device +
			"”, is listed in Settings, where you can revoke it."})
}

func (u *UI) connectError(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	code := status(err)
	if code >= 500 {
		u.fail(w, r, v, err)
		return
	}
	retryAfter(w, err)
	if app.ErrorCode(err) == app.ENotFound {
		u.render(w, r, http.StatusNotFound, "message", page{Title: "This sign-in has ended", V: v, Error: message(err)})
		return
	}
	u.showConnect(w, r, v, code, message(err))
}
