package identity

// A sync client's sign-in through the web app (Nextcloud's Login Flow v2):
// the client starts a flow and opens the browser at its login page; the
// person signs in there as always (two-factor included) and approves
// "Connect <device>", which makes an app password named after the device,
// listed and revocable with the others; the client, polling with a token
// of its own, receives it once. A flow lives LoginFlowTTL. Flows are kept in
// the database, so that the client may poll any node of a cluster: their
// tokens as keyed hashes, and the approved app password sealed with a key
// that only the client's poll token gives (sealLoginSecret), so that the
// database alone never yields it.

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
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
	// other. PollToken is set only by StartLoginFlow.
	PollToken  string
	LoginToken string
	// Device names the client; its app password is named so.
	Device    string
	ExpiresAt time.Time
}

// LoginFlowRecord is a flow as the store keeps it: its tokens' keyed hashes.
type LoginFlowRecord struct {
	PollHash, LoginHash []byte
	// SealKey is the public key the approved app password is sealed to.
	SealKey   []byte
	Device    string
	ExpiresAt time.Time
}

func expiredFlow() error {
	return app.Errorf(app.ENotFound, "This sign-in link has expired or was used. Start again from the app.")
}

// StartLoginFlow starts a sync client's sign-in for device (its name as the
// client gives it: the app password's name). Errors: unavailable (too many
// flows waiting).
func (s *Service) StartLoginFlow(ctx context.Context, device string) (LoginFlow, error) {
	device = cleanDevice(device)
	now := s.clock.Now()
	n, err := s.store.CountLoginFlows(ctx, now)
	if err != nil {
		return LoginFlow{}, err
	}
	if n >= maxLoginFlows {
		if _, err := s.store.PruneLoginFlows(ctx, now); err != nil {
			return LoginFlow{}, err
		}
		if n, err = s.store.CountLoginFlows(ctx, now); err != nil {
			return LoginFlow{}, err
		}
		if n >= maxLoginFlows {
			return LoginFlow{}, &app.Error{Code: app.EUnavailable, RetryAfter: 60, Message: "Too many sign-ins are waiting; try again in a minute."}
		}
	}
	fl := LoginFlow{PollToken: app.RandomHex(32), LoginToken: app.RandomHex(32), Device: device, ExpiresAt: now.Add(LoginFlowTTL)}
	key, err := loginFlowKey(fl.PollToken)
	if err != nil {
		return LoginFlow{}, fmt.Errorf("start a sign-in: %w", err)
	}
	if err := s.store.AddLoginFlow(ctx, LoginFlowRecord{PollHash: s.hash(fl.PollToken), LoginHash: s.hash(fl.LoginToken),
		SealKey: key.PublicKey().Bytes(), Device: fl.Device, ExpiresAt: fl.ExpiresAt}); err != nil {
		return LoginFlow{}, fmt.Errorf("start a sign-in: %w", err)
	}
	return fl, nil
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
// its device (PollToken empty). Errors: not_found (no such flow, an expired
// or a finished one).
func (s *Service) PendingLoginFlow(ctx context.Context, loginToken string) (LoginFlow, error) {
	r, err := s.store.PendingLoginFlow(ctx, s.hash(loginToken), s.clock.Now())
	if app.ErrorCode(err) == app.ENotFound {
		return LoginFlow{}, expiredFlow()
	}
	if err != nil {
		return LoginFlow{}, err
	}
	return LoginFlow{LoginToken: loginToken, Device: r.Device, ExpiresAt: r.ExpiresAt}, nil
}

// ApproveLoginFlow makes an app password of the caller named after the
// flow's device (CreateMyAppPassword) and hands it to the flow's client.
// Errors: no_bound_user, forbidden (a service principal, a token that
// expires), insufficient_scope (a credential without credentials:manage or
// without every scope of the role), reauthentication_required (a web session
// past RecentSignIn), not_found (no such flow, an expired or a finished one).
func (s *Service) ApproveLoginFlow(ctx context.Context, p *app.Principal, loginToken string) (AppPassword, error) {
	loginHash := s.hash(loginToken)
	r, err := s.store.PendingLoginFlow(ctx, loginHash, s.clock.Now())
	if app.ErrorCode(err) == app.ENotFound {
		return AppPassword{}, expiredFlow()
	}
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
	secret, a, err := s.CreateMyAppPassword(ctx, p, r.Device)
	if err != nil {
		return AppPassword{}, err
	}
	sealed, err := sealLoginSecret(r.SealKey, secret)
	handed := false
	if err == nil {
		handed, err = s.store.ApproveLoginFlow(ctx, loginHash, u.Email, sealed, s.clock.Now())
	}
	if err != nil || !handed {
		// Approved in another tab meanwhile, cancelled, or not stored: the
		// new password would reach no one.
		if rerr := s.RevokeAppPassword(ctx, p, a.ID); rerr != nil {
			return AppPassword{}, errors.Join(err, rerr)
		}
		if err != nil {
			return AppPassword{}, fmt.Errorf("hand the app password to the sign-in: %w", err)
		}
		return AppPassword{}, expiredFlow()
	}
	return a, nil
}

// CancelLoginFlow ends a flow its person declined. Errors: none of its own.
func (s *Service) CancelLoginFlow(ctx context.Context, loginToken string) error {
	return s.store.DeleteLoginFlow(ctx, s.hash(loginToken))
}

// PollLoginFlow answers a client polling its flow: once approved, the login
// name and the app password, once; the flow then ends. Errors: not_found
// (not approved yet, or no such flow: the client keeps polling until it
// gives up).
func (s *Service) PollLoginFlow(ctx context.Context, pollToken string) (loginName, appPassword string, err error) {
	pollHash := s.hash(pollToken)
	name, sealed, err := s.store.TakeLoginFlow(ctx, pollHash, s.clock.Now())
	if app.ErrorCode(err) == app.ENotFound {
		return "", "", app.Errorf(app.ENotFound, "Not approved yet.")
	}
	if err != nil {
		return "", "", err
	}
	secret, err := openLoginSecret(pollToken, sealed)
	if err != nil {
		return "", "", err
	}
	return name, secret, nil
}

// PruneLoginFlows forgets the flows past their time and returns how many
// (the cluster's housekeeping). Errors: none of its own.
func (s *Service) PruneLoginFlows(ctx context.Context) (int, error) {
	return s.store.PruneLoginFlows(ctx, s.clock.Now())
}

// The approved app password is sealed to the flow's client: StartLoginFlow
// makes an X25519 key pair whose private key is derived from the poll token
// (which the store never sees: it keeps the token's keyed hash) and stores
// the public key; the approval, on any node, seals the password to it with a
// key pair of its own (ECDH, then AES-256-GCM); the poll, with the token,
// derives the private key again and opens it.

// loginFlowKey is the private key of the flow whose poll token is pollToken.
func loginFlowKey(pollToken string) (*ecdh.PrivateKey, error) {
	seed := sha256.Sum256([]byte("atrium login flow key\x00" + pollToken))
	return ecdh.X25519().NewPrivateKey(seed[:])
}

// loginSealAEAD is the cipher of a shared secret between the two keys.
func loginSealAEAD(shared, from, to []byte) (cipher.AEAD, error) {
	h := sha256.New()
	h.Write([]byte("atrium login flow seal\x00"))
	h.Write(shared)
	h.Write(from)
	h.Write(to)
	block, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealLoginSecret seals secret to the flow's public key: the sender's
// public key, the nonce and the sealed bytes.
func sealLoginSecret(to []byte, secret string) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(to)
	if err != nil {
		return nil, fmt.Errorf("seal the app password: the flow's key: %w", err)
	}
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("seal the app password: %w", err)
	}
	shared, err := eph.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("seal the app password: %w", err)
	}
	from := eph.PublicKey().Bytes()
	aead, err := loginSealAEAD(shared, from, to)
	if err != nil {
		return nil, fmt.Errorf("seal the app password: %w", err)
	}
	out := append([]byte{}, from...)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, []byte(secret), from), nil
}

// openLoginSecret opens what sealLoginSecret sealed, with the poll token.
func openLoginSecret(pollToken string, sealed []byte) (string, error) {
	priv, err := loginFlowKey(pollToken)
	if err != nil {
		return "", fmt.Errorf("open the app password: %w", err)
	}
	if len(sealed) < 32 {
		return "", errors.New("open the app password: sealed bytes too short")
	}
	from := sealed[:32]
	pub, err := ecdh.X25519().NewPublicKey(from)
	if err != nil {
		return "", fmt.Errorf("open the app password: %w", err)
	}
	shared, err := priv.ECDH(pub)
	if err != nil {
		return "", fmt.Errorf("open the app password: %w", err)
	}
	to := priv.PublicKey().Bytes()
	aead, err := loginSealAEAD(shared, from, to)
	if err != nil {
		return "", fmt.Errorf("open the app password: %w", err)
	}
	rest := sealed[32:]
	if len(rest) < aead.NonceSize() {
		return "", errors.New("open the app password: sealed bytes too short")
	}
	plain, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], from)
	if err != nil {
		return "", fmt.Errorf("open the app password: %w", err)
	}
	return string(plain), nil
}
