package wire

import (
	"context"
	"fmt"
	"io"

	"atrium/app"
	"atrium/app/identity"
)

// DemoCredential is one demo user's fresh credentials.
type DemoCredential struct {
	Org         string
	Email       string
	Role        string
	Token       string
	AppPassword string
}

// demoUsers are the customer organisation's people.
var demoUsers = []identity.EnsureUserInput{
	{Email: "alice@acme.example", FirstName: "Alice", LastName: "Martin", Role: app.RoleAdmin},
	{Email: "bob@acme.example", FirstName: "Bob", LastName: "Nguyen", Role: app.RoleMember},
	{Email: "carol@acme.example", FirstName: "Carol", LastName: "Schmidt", Role: app.RoleMember},
}

// SeedDemo makes (once) a demo reseller and a customer organisation on the
// business plan with three users, and returns fresh credentials for each.
func SeedDemo(ctx context.Context, m *Main) ([]DemoCredential, error) {
	ids := m.Identity
	res, err := ids.Bootstrap(ctx, "Demo Reseller", "reseller@demo.example", app.RoleAdmin)
	if err != nil {
		return nil, err
	}
	var creds []DemoCredential
	add := func(org string, u identity.User) error {
		tok, _, err := ids.CreateToken(ctx, identity.CreateTokenInput{UserID: u.ID, Name: "demo"})
		if err != nil {
			return err
		}
		pw, _, err := ids.CreateAppPassword(ctx, u.ID, "demo")
		if err != nil {
			return err
		}
		creds = append(creds, DemoCredential{Org: org, Email: u.Email, Role: u.RoleSlug, Token: tok, AppPassword: pw})
		return nil
	}
	if err := add(res.Org.Name, res.User); err != nil {
		return nil, err
	}
	acme, err := ids.EnsureOrg(ctx, identity.EnsureOrgInput{ParentID: &res.Org.ID, Name: "Acme Corp",
		BillingEmail: "billing@acme.example", PlanSlug: "business", Seats: 10})
	if err != nil {
		return nil, err
	}
	for _, in := range demoUsers {
		u, err := ids.EnsureUser(ctx, acme.ID, in)
		if err != nil {
			return nil, err
		}
		if err := add(acme.Name, u); err != nil {
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
	return creds, nil
}

// PrintDemo prints the demo credentials for a person to copy.
func PrintDemo(w io.Writer, publicURL string, creds []DemoCredential) {
	fmt.Fprintf(w, "\nAtrium demo is running at %s\n", publicURL)
	fmt.Fprintf(w, "API docs: %s/api/v1/docs   CardDAV and CalDAV: %s/dav/   WebDAV drive: %s/webdav/ (e-mail + app password)\n\n",
		publicURL, publicURL, publicURL)
	for _, c := range creds {
		fmt.Fprintf(w, "%-14s %-26s %-7s\n  token:        %s\n  app password: %s\n", c.Org, c.Email, c.Role, c.Token, c.AppPassword)
	}
	fmt.Fprintf(w, "\nTry: curl -H 'Authorization: Bearer %s' %s/api/v1/me\n\n", creds[2].Token, publicURL)
}
