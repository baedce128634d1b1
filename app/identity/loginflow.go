package identity

// A sync client's sign-in through the web app (Nextcloud's Login Flow v2):
// the client starts a flow and opens the browser at its login page; the
// person signs in there as always (two-factor included) and approves
// "Connect <device>", which makes an app password named after the device,
// listed and revocable with the others; the client, polling with a token
// of its own, receives it once. A flow lives LoginFlowTTL. Flows are kept in
// the process's memory: the secret waits there, never in the database,
// until the client takes it, and a restart only makes a person start over.

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"atrium/app"
)

// LoginFlowTTL is how long a sync client's sign-in waits for its person.
const LoginFlowTTL = 20 * time.Minute

// maxLoginFlows bounds the flows waiting at once (anyone may start one).
const maxLoginFlows = 10000

// LoginFlow is a pending sign-in of a sync client.
type LoginFlow struct {
	// PollToken is the client's, LoginToken the browser's (in the login
	// page's address): each alone names the flow, and neither gives the
	// other.
	PollToken  string
	LoginToken string
	// Device names the client; its app password is named so.
	Device    string
	ExpiresAt time.Time

	// loginName and secret are set once the person approved.
	loginName, secret string
}

type loginFlows struct {
	mu      sync.Mutex
	byPoll  map[string]*LoginFlow
	byLogin map[string]*LoginFlow
}

// dropExpired forgets the flows past their time; mu is held.
func (f *loginFlows) dropExpired(now time.Time) {
	for k, fl := range f.byPoll {
		if !now.Before(fl.ExpiresAt) {
			delete(f.byPoll, k)
			delete(f.byLogin, fl.LoginToken)
		}
	}
}

func (f *loginFlows) remove(fl *LoginFlow) {
	delete(f.byPoll, fl.PollToken)
	delete(f.byLogin, fl.LoginToken)
}

// StartLoginFlow starts a sync client's sign-in for device (its name as the
// client gives it: the app password's name). Errors: unavailable (too many
// flows waiting).
func (s *Service) StartLoginFlow(ctx context.Context, device string) (LoginFlow, error) {
	device = cleanDevice(device)
	now := s.clock.Now()
	f := &s.flows
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byPoll == nil {
		f.byPoll, f.byLogin = map[string]*LoginFlow{}, map[string]*LoginFlow{}
	}
	if len(f.byPoll) >= maxLoginFlows {
		f.dropExpired(now)
		if len(f.byPoll) >= maxLoginFlows {
			return LoginFlow{}, &app.Error{Code: app.EUnavailable, RetryAfter: 60, Message: "Too many sign-ins are waiting; try again in a minute."}
		}
	}
	fl := &LoginFlow{PollToken: app.RandomHex(32), LoginToken: app.RandomHex(32), Device: device, ExpiresAt: now.Add(LoginFlowTTL)}
	f.byPoll[fl.PollToken], f.byLogin[fl.LoginToken] = fl, fl
	return *fl, nil
}

// cleanDevice is a device name fit to name an app password: printable, at
// most 100 characters, "Sync client" when empty.
func cleanDevice(d string) string {
	d = strings.Join(strings.FieldsFunc(d, func(r rune) bool { return r < ' ' || r == 0x7f || r == utf8.RuneError }), " ")
	d = strings.Join(strings.Fields(d), " ")
	if r := []rune(d); len(r) > 100 {
		d = string(r[:100])
	}
	if d == "" {
		d = "Sync client"
	}
	return d
}

// PendingLoginFlow returns the flow of a login page, for the page to name
// its device. Errors: not_found (no such flow, an expired or a finished one).
func (s *Service) PendingLoginFlow(ctx context.Context, loginToken string) (LoginFlow, error) {
	f := &s.flows
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.byLogin[loginToken]
	if !ok || !s.clock.Now().Before(fl.ExpiresAt) || fl.secret != "" {
		return LoginFlow{}, app.Errorf(app.ENotFound, "This sign-in link has expired or was used. Start again from the app.")
	}
	out := *fl
	out.loginName, out.secret = "", ""
	return out, nil
}

// ApproveLoginFlow makes an app password of the caller named after the
// flow's device (CreateMyAppPassword) and hands it to the flow's client.
// Errors: no_bound_user, forbidden (a service principal, a token that
// expires), insufficient_scope (a credential without credentials:manage or
// without every scope of the role), reauthentication_required (a web session
// past RecentSignIn), not_found (no such flow, an expired or a finished one).
func (s *Service) ApproveLoginFlow(ctx context.Context, p *app.Principal, loginToken string) (AppPassword, error) {
	fl, err := s.PendingLoginFlow(ctx, loginToken)
	if err != nil {
		return AppPassword{}, err
	}
	_, u, err := s.Profile(ctx, p)
	if err != nil {
		return AppPassword{}, err
	}
	if u == nil {
		return AppPassword{}, app.Errorf(app.ENoBoundUser, "Only a person connects a device.")
	}
	secret, a, err := s.CreateMyAppPassword(ctx, p, fl.Device)
	if err != nil {
		return AppPassword{}, err
	}
	f := &s.flows
	f.mu.Lock()
	live, ok := f.byLogin[loginToken]
	handed := ok && live.secret == ""
	if handed {
		live.loginName, live.secret = u.Email, secret
	}
	f.mu.Unlock()
	if !handed {
		// Approved in another tab meanwhile, or cancelled: the new
		// password would reach no one.
		if err := s.RevokeAppPassword(ctx, p, a.ID); err != nil {
			return AppPassword{}, err
		}
		return AppPassword{}, app.Errorf(app.ENotFound, "This sign-in link has expired or was used. Start again from the app.")
	}
	return a, nil
}

// CancelLoginFlow ends a flow its person declined. Errors: none of its own.
func (s *Service) CancelLoginFlow(ctx context.Context, loginToken string) {
	f := &s.flows
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.byLogin[loginToken]; ok {
		f.remove(fl)
	}
}

// PollLoginFlow answers a client polling its flow: once approved, the login
// name and the app password, once; the flow then ends. Errors: not_found
// (not approved yet, or no such flow: the client keeps polling until it
// gives up).
func (s *Service) PollLoginFlow(ctx context.Context, pollToken string) (loginName, appPassword string, err error) {
	f := &s.flows
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.byPoll[pollToken]
	if ok && !s.clock.Now().Before(fl.ExpiresAt) {
		f.remove(fl)
		ok = false
	}
	if !ok || fl.secret == "" {
		return "", "", app.Errorf(app.ENotFound, "Not approved yet.")
	}
	f.remove(fl)
	return fl.loginName, fl.secret, nil
}
