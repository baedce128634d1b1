package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"atrium/app"
)

// JWT lifetimes of the embedded issuer.
const (
	UserJWTTTL = time.Hour
	SPJWTTTL   = time.Hour
	jwtAud     = "atrium"
)

// Issuer is Atrium's embedded JWT issuer: an ES256 key made on first start and
// kept in the database, published as a JWKS.
type Issuer struct {
	url   string
	key   *ecdsa.PrivateKey
	kid   string
	clock app.Clock
}

func newIssuer(ctx context.Context, store Store, clock app.Clock, url string) (*Issuer, error) {
	der, err := store.Secret(ctx, "jwt_signing_key_es256", func() ([]byte, error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		return x509.MarshalPKCS8PrivateKey(k)
	})
	if err != nil {
		return nil, fmt.Errorf("load jwt signing key: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse jwt signing key: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("jwt signing key is %T, want ECDSA", k)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&ek.PublicKey)
	sum := sha256.Sum256(pub)
	return &Issuer{url: strings.TrimRight(url, "/"), key: ek, kid: base64.RawURLEncoding.EncodeToString(sum[:12]), clock: clock}, nil
}

// URL is the issuer identifier (`iss`).
func (i *Issuer) URL() string { return i.url }

// Claims of Atrium's JWTs.
type Claims struct {
	jwt.RegisteredClaims
	Org   string `json:"org"`
	Scope string `json:"scope"`
	// SP is the service principal a client-credentials token was issued to.
	SP string `json:"sp,omitempty"`
}

// Sign issues a JWT for subject sub.
func (i *Issuer) Sign(sub, org, sp string, scopes app.Scopes, ttl time.Duration) (string, time.Time, error) {
	now := i.clock.Now()
	exp := now.Add(ttl)
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: i.url, Subject: sub, Audience: jwt.ClaimStrings{jwtAud},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-30 * time.Second)),
			ExpiresAt: jwt.NewNumericDate(exp), ID: app.NewID(),
		},
		Org: org, Scope: scopes.String(), SP: sp,
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	t.Header["kid"] = i.kid
	s, err := t.SignedString(i.key)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign jwt: %w", err)
	}
	return s, exp, nil
}

// Parse verifies a JWT of this issuer and returns its claims.
func (i *Issuer) Parse(token string) (*Claims, error) {
	c := &Claims{}
	_, err := jwt.ParseWithClaims(token, c, func(t *jwt.Token) (any, error) {
		if kid, _ := t.Header["kid"].(string); kid != i.kid {
			return nil, fmt.Errorf("unknown key id")
		}
		return &i.key.PublicKey, nil
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(i.url), jwt.WithAudience(jwtAud),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(i.clock.Now))
	if err != nil {
		return nil, err
	}
	return c, nil
}

// JWKS returns the public key set document.
func (i *Issuer) JWKS() map[string]any {
	pub := i.key.PublicKey
	return map[string]any{"keys": []map[string]any{{
		"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": i.kid,
		"x": b64(pub.X, 32), "y": b64(pub.Y, 32),
	}}}
}

func b64(n *big.Int, size int) string {
	b := n.Bytes()
	if len(b) < size {
		b = append(make([]byte, size-len(b)), b...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Discovery returns the OpenID provider metadata document.
func (i *Issuer) Discovery() map[string]any {
	return map[string]any{
		"issuer":                                i.url,
		"jwks_uri":                              i.url + "/.well-known/jwks.json",
		"token_endpoint":                        i.url + "/oauth/token",
		"grant_types_supported":                 []string{"client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"id_token_signing_alg_values_supported": []string{"ES256"},
		"response_types_supported":              []string{"token"},
		"subject_types_supported":               []string{"public"},
		"scopes_supported":                      app.AllScopes(),
	}
}

// fromJWT resolves a bearer JWT, of the embedded issuer or the external one.
func (s *Service) fromJWT(ctx context.Context, token string) (*app.Principal, error) {
	if s.External != nil && s.jwtIssuer(token) == s.External.Issuer() && s.External.Issuer() != s.jwt.url {
		email, scopes, err := s.External.Verify(ctx, token)
		if err != nil {
			return nil, app.Errorf(app.EUnauthorized, "The token is not valid: %v.", err)
		}
		u, err := s.store.UserByEmail(ctx, email)
		if err != nil {
			return nil, errBadCredential
		}
		cred, err := s.store.UserCredential(ctx, u.ID)
		if err != nil {
			return nil, errBadCredential
		}
		cred.Kind, cred.ID = app.CredJWT, "external"
		return s.principal(cred, scopes)
	}
	c, err := s.jwt.Parse(token)
	if err != nil {
		return nil, app.Errorf(app.EUnauthorized, "The token is not valid: %v.", err)
	}
	var cred Credential
	if c.SP != "" {
		cred, err = s.store.SPCredential(ctx, c.SP)
	} else {
		cred, err = s.store.UserCredential(ctx, c.Subject)
	}
	if err != nil {
		return nil, errBadCredential
	}
	if cred.Org.ID != c.Org {
		return nil, errBadCredential
	}
	// iat is in whole seconds: a JWT of the second of the revocation is refused too.
	if c.SP == "" && !cred.NotBefore.IsZero() && (c.IssuedAt == nil || !c.IssuedAt.After(cred.NotBefore.Truncate(time.Second))) {
		return nil, app.Errorf(app.EUnauthorized, "The token was revoked: every credential of its user was revoked after it was issued.")
	}
	cred.Kind, cred.ID = app.CredJWT, c.ID
	if c.ExpiresAt != nil {
		exp := c.ExpiresAt.Time
		cred.ExpiresAt = &exp
	}
	return s.principal(cred, app.ParseScopes(c.Scope))
}

// jwtIssuer reads the `iss` claim of a token without verifying it, to pick the
// verifier.
func (s *Service) jwtIssuer(token string) string {
	c := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(token, c); err != nil {
		return ""
	}
	iss, _ := c["iss"].(string)
	return iss
}

// TokenResponse is the body of a successful `POST /oauth/token`.
type TokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int    `json:"expires_in"`
	Scope           string `json:"scope"`
	IssuedTokenType string `json:"issued_token_type,omitempty"`
}

// ClientCredentials issues a JWT to a service principal: client_id is its id and
// client_secret one of its tokens. requested narrows the scopes when not empty.
// Errors: unauthorized (clientSecret is not a valid token of service principal
// clientID), insufficient_scope (requested is wider than the token).
func (s *Service) ClientCredentials(ctx context.Context, clientID, clientSecret string, requested app.Scopes) (TokenResponse, error) {
	p, err := s.Authenticate(ctx, clientSecret)
	if err != nil || p.Credential != app.CredSPToken || p.ServicePrincipalID != clientID {
		return TokenResponse{}, app.Errorf(app.EUnauthorized, "invalid_client")
	}
	return s.issueFor(p, requested, SPJWTTTL, "")
}

// ExchangeToken implements RFC 8693 token exchange of a PAT for a short-lived user
// JWT with the same (or narrower) scopes. Errors: bad_request (another subject
// token type, a subject token that is not a personal access token),
// unauthorized (an unknown, expired or revoked credential), org_suspended,
// forbidden (a user not active), insufficient_scope (requested is wider than
// the token).
func (s *Service) ExchangeToken(ctx context.Context, subjectToken, subjectTokenType string, requested app.Scopes) (TokenResponse, error) {
	if subjectTokenType != "urn:ietf:params:oauth:token-type:access_token" {
		return TokenResponse{}, app.Errorf(app.EBadRequest, "unsupported subject_token_type")
	}
	p, err := s.Authenticate(ctx, subjectToken)
	if err != nil {
		return TokenResponse{}, err
	}
	if p.Credential != app.CredPAT {
		return TokenResponse{}, app.Errorf(app.EBadRequest, "subject_token must be a personal access token")
	}
	return s.issueFor(p, requested, UserJWTTTL, "urn:ietf:params:oauth:token-type:jwt")
}

func (s *Service) issueFor(p *app.Principal, requested app.Scopes, ttl time.Duration, issuedType string) (TokenResponse, error) {
	scopes := p.Scopes
	if len(requested) > 0 {
		if !containsAll(p.Scopes, requested.List()) {
			return TokenResponse{}, app.Errorf(app.EInsufficientScope, "invalid_scope: more scopes were requested than the credential holds")
		}
		scopes = requested
	}
	sub := p.UserID
	if p.ServicePrincipalID != "" {
		sub = "sp:" + p.ServicePrincipalID
	}
	tok, exp, err := s.jwt.Sign(sub, p.OrgID, p.ServicePrincipalID, scopes, ttl)
	if err != nil {
		return TokenResponse{}, err
	}
	return TokenResponse{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int(exp.Sub(s.clock.Now()).Round(time.Second).Seconds()),
		Scope: scopes.String(), IssuedTokenType: issuedType}, nil
}
