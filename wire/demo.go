package wire

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"atrium/app"
	"atrium/app/identity"
)

// DemoCredential is one demo user's credentials.
type DemoCredential struct {
	Org         string `json:"org"`
	Email       string `json:"email"`
	Role        string `json:"role"`
	Token       string `json:"token"`
	AppPassword string `json:"app_password"`
	// Password is the account password for the web sign-in; empty for a user
	// made before demo passwords were kept (an invitation or reset sets one).
	Password string `json:"password,omitempty"`
}

// demoUsers are the customer organisation's people.
var demoUsers = []identity.EnsureUserInput{
	{Email: "alice@acme.example", FirstName: "Alice", LastName: "Martin", Role: app.RoleAdmin},
	{Email: "bob@acme.example", FirstName: "Bob", LastName: "Nguyen", Role: app.RoleMember},
	{Email: "carol@acme.example", FirstName: "Carol", LastName: "Schmidt", Role: app.RoleMember},
}

// demoCredsFile keeps the demo's credentials in the data directory, so that every
// start of the demo prints the same ones instead of minting more.
const demoCredsFile = "demo-credentials.json"

// SeedDemo makes (once) a demo reseller and a customer organisation on the
// business plan with three users, and returns their credentials: the same on
// every start while they still work (they are kept in demo-credentials.json in
// the data directory, readable by its owner only); new ones when they do not.
func SeedDemo(ctx context.Context, m *Main) ([]DemoCredential, error) {
	path := filepath.Join(m.Config.Data, demoCredsFile)
	if creds, err := loadDemo(path); err == nil && demoValid(ctx, m, creds) {
		return creds, nil
	}
	ids := m.Identity
	if err := ids.SeedPlans(ctx); err != nil {
		return nil, err
	}
	var creds []DemoCredential
	ensure := func(org identity.Organization, in identity.EnsureUserInput) error {
		_, err := ids.UserByEmail(ctx, in.Email)
		isNew := app.ErrorCode(err) == app.ENotFound
		if err != nil && !isNew {
			return err
		}
		if isNew {
			in.Password = demoPassword()
		}
		u, err := ids.EnsureUser(ctx, org.ID, in)
		if err != nil {
			return err
		}
		tok, _, err := ids.CreateToken(ctx, identity.CreateTokenInput{UserID: u.ID, Name: "demo"})
		if err != nil {
			return err
		}
		pw, _, err := ids.CreateAppPassword(ctx, u.ID, "demo")
		if err != nil {
			return err
		}
		creds = append(creds, DemoCredential{Org: org.Name, Email: u.Email, Role: u.RoleSlug, Token: tok, AppPassword: pw, Password: in.Password})
		return nil
	}
	reseller, err := ids.EnsureOrg(ctx, identity.EnsureOrgInput{Name: "Demo Reseller", BillingEmail: "reseller@demo.example",
		PlanSlug: "enterprise", Seats: 1000, ResellerDepth: 1})
	if err != nil {
		return nil, err
	}
	if err := ensure(reseller, identity.EnsureUserInput{Email: "reseller@demo.example", FirstName: "Rita", LastName: "Reseller", Role: app.RoleAdmin}); err != nil {
		return nil, err
	}
	acme, err := ids.EnsureOrg(ctx, identity.EnsureOrgInput{ParentID: &reseller.ID, Name: "Acme Corp",
		BillingEmail: "billing@acme.example", PlanSlug: "business", Seats: 10})
	if err != nil {
		return nil, err
	}
	for _, in := range demoUsers {
		if err := ensure(acme, in); err != nil {
			return nil, err
		}
	}
	if err := seedContacts(ctx, m, acme.ID); err != nil {
		return nil, err
	}
	if err := seedCalendar(ctx, m, acme.ID); err != nil {
		return nil, err
	}
	if err := seedDrive(ctx, m, acme.ID, 1<<40); err != nil { // the business plan's quota
		return nil, err
	}
	// Kept credentials that stopped working (a token revoked) are replaced; the
	// account passwords of users made by an earlier run are still those it kept.
	if old, err := loadDemo(path); err == nil {
		for i := range creds {
			for _, o := range old {
				if creds[i].Password == "" && o.Email == creds[i].Email {
					creds[i].Password = o.Password
				}
			}
		}
	}
	if err := saveDemo(path, creds); err != nil {
		return nil, err
	}
	return creds, nil
}

// demoPassword is a random account password for a demo user.
func demoPassword() string {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "demo-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

func loadDemo(path string) ([]DemoCredential, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var creds []DemoCredential
	if err := json.Unmarshal(b, &creds); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(creds) != 1+len(demoUsers) {
		return nil, fmt.Errorf("%s: %d users, want %d", path, len(creds), 1+len(demoUsers))
	}
	return creds, nil
}

// demoValid reports whether every kept credential still signs its user in.
func demoValid(ctx context.Context, m *Main, creds []DemoCredential) bool {
	for _, c := range creds {
		p, err := m.Identity.Authenticate(ctx, c.Token)
		if err != nil || p == nil {
			return false
		}
		if p, err = m.Identity.AuthenticateBasic(ctx, c.Email, c.AppPassword); err != nil || p == nil {
			return false
		}
	}
	return true
}

// saveDemo writes the credentials whole or not at all.
func saveDemo(path string, creds []DemoCredential) error {
	b, err := json.MarshalIndent(creds, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("demo credentials: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("demo credentials: %w", err)
	}
	return nil
}

// PrintDemo prints the demo credentials for a person to copy.
func PrintDemo(w io.Writer, publicURL string, creds []DemoCredential) {
	fmt.Fprintf(w, "\nAtrium demo is running. Open %s/ in a browser and sign in", publicURL)
	for _, c := range creds {
		if c.Email == "alice@acme.example" && c.Password != "" {
			fmt.Fprintf(w, " as %s with the password %s", c.Email, c.Password)
		}
	}
	fmt.Fprintf(w, ".\n")
	fmt.Fprintf(w, "API docs: %s/api/v1/docs   CardDAV and CalDAV: %s/dav/   WebDAV drive: %s/webdav/ (e-mail + app password)\n",
		publicURL, publicURL, publicURL)
	fmt.Fprintf(w, "These credentials stay the same at every start of this data directory (kept in %s there).\n\n", demoCredsFile)
	for _, c := range creds {
		fmt.Fprintf(w, "%-14s %-26s %-7s\n", c.Org, c.Email, c.Role)
		if c.Password != "" {
			fmt.Fprintf(w, "  password:     %s\n", c.Password)
		}
		fmt.Fprintf(w, "  token:        %s\n  app password: %s\n", c.Token, c.AppPassword)
	}
	fmt.Fprintf(w, "\nTry: curl -H 'Authorization: Bearer %s' %s/api/v1/me\n\n", creds[2].Token, publicURL)
}
