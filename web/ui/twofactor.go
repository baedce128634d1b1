package ui

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/boombuler/barcode/qr"

	"atrium/app"
	"atrium/app/identity"
)

// Two-factor sign-in: the second step of a sign-in (/signin/code) and the
// settings section that turns it on and off. The rules are in app/identity.

// ChallengeCookie carries the token of a sign-in's pending second step: the
// password was right, the code is still to come. It is no session.
const ChallengeCookie = "atrium_2fa"

type codeData struct {
	Next string
}

func (u *UI) setChallenge(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{Name: ChallengeCookie, Value: token, Path: "/signin", MaxAge: int(identity.SignInChallengeTTL / time.Second),
		HttpOnly: true, Secure: u.secure, SameSite: http.SameSiteLaxMode})
}

func (u *UI) clearChallenge(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: ChallengeCookie, Value: "", Path: "/signin", MaxAge: -1, HttpOnly: true, Secure: u.secure, SameSite: http.SameSiteLaxMode})
}

// challengeToken is the token of the browser's pending second step ("" when none).
func challengeToken(r *http.Request) string {
	if c, err := r.Cookie(ChallengeCookie); err == nil {
		return c.Value
	}
	return ""
}

// signInExpired sends the browser back to the password step, saying why.
func (u *UI) signInExpired(w http.ResponseWriter, r *http.Request, next string) {
	u.clearChallenge(w)
	to := "/signin?done=expired"
	if next != "" {
		to += "&next=" + url.QueryEscape(next)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (u *UI) showCode(w http.ResponseWriter, r *http.Request, errMsg string, d codeData) {
	u.render(w, r, http.StatusOK, "signin_code", page{Title: "Two-factor sign-in", CSRF: u.preCSRF(w, r), Error: errMsg, Data: d})
}

// codePage is the second step of a sign-in: the authentication code.
func (u *UI) codePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	next := localPath(r.URL.Query().Get("next"))
	if _, err := u.cfg.Identity.PendingSignIn(r.Context(), challengeToken(r)); err != nil {
		if errors.Is(err, identity.ErrSignInExpired) {
			u.signInExpired(w, r, next)
			return
		}
		u.fail(w, r, nil, err)
		return
	}
	u.showCode(w, r, "", codeData{Next: next})
}

// verifyCode checks the code of the second step and starts the session. Wrong
// codes count toward the failed sign-in limits of the account, like wrong
// passwords.
func (u *UI) verifyCode(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !u.checkPreCSRF(r) {
		u.forbidden(w, r, nil, "The sign-in form has expired or did not come from this server. Reload the page and try again.")
		return
	}
	d := codeData{Next: localPath(r.PostFormValue("next"))}
	token := challengeToken(r)
	ctx := r.Context()
	email, err := u.cfg.Identity.PendingSignIn(ctx, token)
	if errors.Is(err, identity.ErrSignInExpired) {
		u.signInExpired(w, r, d.Next)
		return
	}
	if err != nil {
		u.log.Error("sign in: second step", "err", err)
		u.fail(w, r, nil, err)
		return
	}
	if u.cfg.Limiter != nil {
		if wait := u.cfg.Limiter.CodeBlocked(r, email); wait > 0 {
			secs := max(int((wait+time.Second-1)/time.Second), 1)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			u.showCode(w, r, "Too many failed sign-in attempts. Try again in "+strconv.Itoa(secs)+" seconds.", d)
			return
		}
	}
	secret, _, err := u.cfg.Identity.CompleteSignIn(ctx, identity.CompleteSignInInput{Challenge: token, Code: r.PostFormValue("code"),
		UserAgent: r.UserAgent(), Address: u.clientIP(r)})
	switch {
	case err == nil:
	case errors.Is(err, identity.ErrBadCode):
		if u.cfg.Limiter != nil {
			u.cfg.Limiter.CodeFailed(r, email)
		}
		u.showCode(w, r, "The code is not correct. Enter the current code of your authenticator app, or an unused recovery code.", d)
		return
	case errors.Is(err, identity.ErrSignInExpired):
		u.signInExpired(w, r, d.Next)
		return
	default:
		u.clearChallenge(w)
		sd := signInData{Email: email, Next: d.Next}
		switch app.ErrorCode(err) {
		case app.EOrgSuspended:
			u.showSignIn(w, r, http.StatusOK, "Your organisation is suspended. Ask your provider to activate it.", sd)
		case app.EForbidden:
			u.showSignIn(w, r, http.StatusOK, "Your account is suspended. Ask your administrator to activate it.", sd)
		default:
			u.log.Error("sign in: second step", "err", err)
			u.showSignIn(w, r, http.StatusInternalServerError, message(err), sd)
		}
		return
	}
	if u.cfg.Limiter != nil {
		u.cfg.Limiter.Succeeded(r, email)
	}
	u.clearChallenge(w)
	u.setSession(w, secret)
	next := d.Next
	if next == "" {
		next = homePath
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// twoFactorData is the settings page's two-factor section.
type twoFactorData struct {
	identity.TwoFactorStatus
	// QR is the setup's otpauth:// address as a PNG data: URL.
	QR template.URL
	// NewRecoveryCodes are shown once, right after they were made.
	NewRecoveryCodes []string
}

// qrDataURL draws text as a QR code (medium error correction, a quiet zone
// of four modules, each module scale pixels) in a PNG data: URL.
func qrDataURL(text string, scale int) (template.URL, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", fmt.Errorf("QR code: %w", err)
	}
	n := code.Bounds().Dx()
	side := (n + 8) * scale
	img := image.NewPaletted(image.Rect(0, 0, side, side), color.Palette{color.White, color.Black})
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			if r, _, _, _ := code.At(x, y).RGBA(); r != 0 {
				continue
			}
			for dy := 0; dy < scale; dy++ {
				for dx := 0; dx < scale; dx++ {
					img.SetColorIndex((x+4)*scale+dx, (y+4)*scale+dy, 1)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", fmt.Errorf("QR code: %w", err)
	}
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), nil
}

// twoFactorSection loads the settings page's two-factor section.
func (u *UI) twoFactorSection(r *http.Request, v *viewer) (twoFactorData, error) {
	st, err := u.cfg.Identity.MyTwoFactor(r.Context(), v.P)
	if err != nil {
		return twoFactorData{}, err
	}
	d := twoFactorData{TwoFactorStatus: st}
	if st.Setup != nil {
		if d.QR, err = qrDataURL(st.Setup.URI, 5); err != nil {
			return d, err
		}
	}
	return d, nil
}

// twoFactorError shows the settings page again with the error of a
// two-factor form, answered 200: the form is there to be filled in again.
func (u *UI) twoFactorError(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	if code := status(err); code >= 500 {
		u.fail(w, r, v, err)
		return
	}
	u.showSettings(w, r, v, http.StatusOK, "", message(err), func(d *settingsData) { d.Section = "two-factor" })
}

func (u *UI) setUpTwoFactor(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.confirmFirst(r, v); err != nil {
		u.twoFactorError(w, r, v, err)
		return
	}
	if _, err := u.cfg.Identity.SetUpTwoFactor(r.Context(), v.P); err != nil {
		u.twoFactorError(w, r, v, err)
		return
	}
	http.Redirect(w, r, "/settings#two-factor", http.StatusSeeOther)
}

// enableTwoFactor confirms the secret with a code and shows the recovery codes
// once (this response is the only place they appear, so it is not a redirect).
func (u *UI) enableTwoFactor(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.confirmFirst(r, v); err != nil {
		u.twoFactorError(w, r, v, err)
		return
	}
	codes, err := u.cfg.Identity.EnableTwoFactor(r.Context(), v.P, r.PostFormValue("code"))
	if err != nil {
		u.twoFactorError(w, r, v, err)
		return
	}
	u.showSettings(w, r, v, http.StatusOK, "Two-factor sign-in is on. Store your recovery codes now.", "", func(d *settingsData) {
		d.TwoFactor.NewRecoveryCodes, d.Section = codes, "two-factor"
	})
}

func (u *UI) regenerateRecoveryCodes(w http.ResponseWriter, r *http.Request, v *viewer) {
	var codes []string
	err := u.checkPassword(r, v, func() error {
		var err error
		codes, err = u.cfg.Identity.RegenerateRecoveryCodes(r.Context(), v.P, r.PostFormValue("proof"))
		return err
	})
	if err != nil {
		u.twoFactorError(w, r, v, err)
		return
	}
	u.showSettings(w, r, v, http.StatusOK, "New recovery codes are made; the old ones no longer work.", "", func(d *settingsData) {
		d.TwoFactor.NewRecoveryCodes, d.Section = codes, "two-factor"
	})
}

func (u *UI) disableTwoFactor(w http.ResponseWriter, r *http.Request, v *viewer) {
	if err := u.checkPassword(r, v, func() error { return u.cfg.Identity.DisableTwoFactor(r.Context(), v.P, r.PostFormValue("password")) }); err != nil {
		u.twoFactorError(w, r, v, err)
		return
	}
	done(w, r, "two-factor-off", "two-factor")
}
