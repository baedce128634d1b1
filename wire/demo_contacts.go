package wire

import (
	"context"
	"fmt"

	"atrium/app"
	"atrium/app/contacts"
)

// demoBook is a demo address book and its contacts.
type demoBook struct {
	name     string // "" for the default book
	contacts []contacts.ContactCreate
}

// demoContacts are the demo users' address books, by e-mail address.
var demoContacts = map[string][]demoBook{
	"alice@acme.example": {
		{contacts: []contacts.ContactCreate{
			{FirstName: "Zoë", LastName: "Fischer", Organization: "Fischer & Söhne", JobTitle: "Managing director",
				Emails:    []contacts.Email{{Type: "work", Value: "zoe.fischer@fischer-soehne.example"}},
				Phones:    []contacts.Phone{{Type: "work", Value: "+49 30 901820"}, {Type: "cell", Value: "+49 171 5550100"}},
				Addresses: []contacts.Address{{Type: "work", Street: "Friedrichstraße 68", City: "Berlin", PostalCode: "10117", Country: "Germany"}}},
			{FirstName: "Mateo", LastName: "García", Organization: "Iberia Logistics",
				Emails: []contacts.Email{{Type: "work", Value: "mateo@iberia-logistics.example"}},
				Phones: []contacts.Phone{{Type: "cell", Value: "+34 600 555 123"}}, Birthday: "1988-09-03"},
			{FirstName: "Priya", LastName: "Raman", Organization: "Acme Corp", JobTitle: "Accountant",
				Emails: []contacts.Email{{Type: "work", Value: "priya.raman@acme.example"}, {Type: "home", Value: "priya@mail.example"}}},
		}},
		{name: "Suppliers", contacts: []contacts.ContactCreate{
			{DisplayName: "Office Supplies Ltd", Organization: "Office Supplies Ltd",
				Emails: []contacts.Email{{Type: "work", Value: "orders@office-supplies.example"}},
				Phones: []contacts.Phone{{Type: "work", Value: "+44 20 7946 0018"}}, Notes: "Account number 4411-07"},
			{FirstName: "Jean", LastName: "Dupont", Organization: "Café du Coin", JobTitle: "Owner",
				Phones: []contacts.Phone{{Type: "work", Value: "+33 1 42 68 53 00"}}},
		}},
	},
	"bob@acme.example": {
		{contacts: []contacts.ContactCreate{
			{FirstName: "Alice", LastName: "Martin", Organization: "Acme Corp",
				Emails: []contacts.Email{{Type: "work", Value: "alice@acme.example"}}},
			{FirstName: "Lena", LastName: "Nguyen", Emails: []contacts.Email{{Type: "home", Value: "lena.nguyen@mail.example"}},
				Phones: []contacts.Phone{{Type: "cell", Value: "+1 415 555 0199"}}, Birthday: "1992-02-29", Notes: "Bob's sister"},
		}},
	},
	"carol@acme.example": {
		{contacts: []contacts.ContactCreate{
			{FirstName: "Søren", LastName: "Kierkegaard", Organization: "Copenhagen Philosophy Club",
				Emails: []contacts.Email{{Type: "work", Value: "soren@philosophy.example"}}},
		}},
	},
}

// seedContacts gives the demo users address books and contacts, once: a user
// whose default book already holds contacts is left alone.
func seedContacts(ctx context.Context, m *Main, orgID string) error {
	for email, books := range demoContacts {
		u, err := m.Identity.UserByEmail(ctx, email)
		if err != nil {
			return fmt.Errorf("demo contacts of %s: %w", email, err)
		}
		p := &app.Principal{OrgID: orgID, UserID: u.ID, Email: u.Email,
			Scopes: app.NewScopes(app.ScopeContactsWrite)}
		def, err := m.Contacts.DefaultBook(ctx, p)
		if err != nil {
			return fmt.Errorf("demo contacts of %s: %w", email, err)
		}
		if def.ContactCount > 0 {
			continue
		}
		for _, b := range books {
			bookID := def.ID
			if b.name != "" {
				nb, err := m.Contacts.CreateBook(ctx, p, "", contacts.AddressBookInput{Name: b.name})
				if err != nil {
					return fmt.Errorf("demo address book %q: %w", b.name, err)
				}
				bookID = nb.ID
			}
			for _, c := range b.contacts {
				if _, err := m.Contacts.CreateContact(ctx, p, bookID, c); err != nil {
					return fmt.Errorf("demo contact %s %s: %w", c.FirstName, c.LastName, err)
				}
			}
		}
	}
	return nil
}
