package wire

import (
	"context"
	"fmt"
	"strings"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"atrium/app"
)

// oidcVerifier verifies JWTs of one external OIDC issuer through its JWKS.
type oidcVerifier struct {
	issuer, audience, emailClaim string
	kf                           keyfunc.Keyfunc
}

func newOIDCVerifier(ctx context.Context, cfg Config) (*oidcVerifier, error) {
	kf, err := keyfunc.NewDefaultCtx(context.WithoutCancel(ctx), []string{cfg.OIDC.JWKSURL})
	if err != nil {
		return nil, fmt.Errorf("oidc jwks %s: %w", cfg.OIDC.JWKSURL, err)
	}
	return &oidcVerifier{issuer: cfg.OIDC.Issuer, audience: cfg.OIDC.Audience, emailClaim: cfg.OIDC.EmailClaim, kf: kf}, nil
}

func (v *oidcVerifier) Issuer() string { return v.issuer }

// Verify checks the signature, issuer, audience and expiry of token and returns
// the e-mail claim and the scopes (`scope` string or `scp` array).
func (v *oidcVerifier) Verify(_ context.Context, token string) (string, app.Scopes, error) {
	opts := []jwt.ParserOption{jwt.WithIssuer(v.issuer), jwt.WithExpirationRequired(),
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"})}
	if v.audience != "" {
		opts = append(opts, jwt.WithAudience(v.audience))
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(token, claims, v.kf.Keyfunc, opts...); err != nil {
		return "", nil, err
	}
	email, _ := claims[v.emailClaim].(string)
	if email == "" {
		return "", nil, fmt.Errorf("claim %q missing", v.emailClaim)
	}
	scopes := app.Scopes{}
	if s, ok := claims["scope"].(string); ok {
		scopes = app.ParseScopes(s)
	}
	if arr, ok := claims["scp"].([]any); ok {
		for _, x := range arr {
			if s, ok := x.(string); ok {
				scopes[strings.TrimSpace(s)] = struct{}{}
			}
		}
	}
	return email, scopes, nil
}
