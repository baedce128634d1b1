package partner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"atrium/app"
	"atrium/app/identity"
	"atrium/app/partner"
	"atrium/storage/sqldb"
)

type nopMailer struct{}

func (nopMailer) Queue(context.Context, app.Mail) error { return nil }

// world opens a database with a reseller and returns the partner service and the
// reseller admin's principal.
func world(b testing.TB) (*partner.Service, *app.Principal, *sqldb.DB) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, filepath.Join(b.TempDir(), "atrium.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ids := sqldb.IdentityStore{DB: db}
	audit := sqldb.Auditor{DB: db}
	isvc, err := identity.NewService(ctx, ids, audit, nil, "http://atrium.test")
	if err != nil {
		b.Fatal(err)
	}
	res, err := isvc.Bootstrap(ctx, "Reseller", "ops@reseller.test", app.RoleAdmin)
	if err != nil {
		b.Fatal(err)
	}
	tok, _, _ := isvc.CreateToken(ctx, identity.CreateTokenInput{UserID: res.User.ID})
	p, err := isvc.Authenticate(ctx, tok)
	if err != nil {
		b.Fatal(err)
	}
	svc := partner.NewService(sqldb.PartnerStore{IdentityStore: ids}, isvc, audit, sqldb.Outbox{DB: db}, nopMailer{}, nil, "http://atrium.test", []byte("k"))
	return svc, p, db
}

// BenchmarkProvisionOrg measures POST /partner/orgs' service call: organisation,
// subscription, invited admin, invitation, audit and event in one transaction.
// Target: < 20 ms per organisation.
func BenchmarkProvisionOrg(b *testing.B) {
	svc, p, _ := world(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := svc.CreateOrg(ctx, p, partner.CreateOrgInput{Name: fmt.Sprintf("Customer %d", i), PlanSlug: "business",
			AdminEmail: fmt.Sprintf("admin%d@customer.test", i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListOrgsPaged lists 10,000 customer organisations page by page (limit
// 100) with a name filter matching every tenth; ns/op is one page. Target: < 5 ms.
func BenchmarkListOrgsPaged(b *testing.B) {
	svc, p, db := world(b)
	ctx := context.Background()
	// Seed 10,000 children in a few transactions (provisioning each through the
	// service would take minutes and measure something else).
	err := db.InTx(ctx, func(ctx context.Context) error {
		store := sqldb.IdentityStore{DB: db}
		for i := range 10000 {
			name := fmt.Sprintf("Company %05d", i)
			if i%10 == 0 {
				name = fmt.Sprintf("Northwind %05d", i)
			}
			parent := p.OrgID
			o := identity.Organization{ID: app.NewID(), Name: name, Slug: fmt.Sprintf("c-%d", i), ParentOrganizationID: &parent, Status: "active"}
			if err := store.CreateOrg(ctx, o); err != nil {
				return err
			}
			if err := store.SetSubscription(ctx, identity.Subscription{OrgID: o.ID, PlanSlug: "business", Seats: 10, Status: "active"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []partner.OrgFilter{{}, {Q: "northwind"}, {Q: "pany 0"}} {
		b.Run(fmt.Sprintf("q=%q", f.Q), func(b *testing.B) {
			after := ""
			pages := 0
			for range b.N {
				items, err := svc.ListOrgs(ctx, p, f, app.PageRequest{After: after, Limit: 100})
				if err != nil {
					b.Fatal(err)
				}
				pages++
				if len(items) > 100 {
					after = items[99].ID
				} else {
					after = ""
				}
			}
			b.ReportMetric(float64(pages), "pages")
		})
	}
}
