package rest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"

	"atrium/app"
	"atrium/app/contacts"
	"atrium/web/presign"
)

// BookPath names an address book.
type BookPath struct {
	BookID string `path:"book_id" maxLength:"200" doc:"Address book id."`
}

// ContactPath names a contact of an address book.
type ContactPath struct {
	BookID    string `path:"book_id" maxLength:"200" doc:"Address book id."`
	ContactID string `path:"contact_id" maxLength:"200" doc:"ContactDetail id."`
}

// withETag is a response with an ETag header.
type withETag[T any] struct {
	ETag string `header:"ETag" doc:"Strong entity tag of the contact's vCard."`
	Body T
}

// rawJSON is a JSON body rendered by the service.
type rawJSON struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

// vcardFile is a vCard download.
type vcardFile struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

func vcardOut(f contacts.VCardFile, err error) (*vcardFile, error) {
	if err != nil {
		return nil, err
	}
	return &vcardFile{ContentType: "text/vcard; charset=utf-8", ContentDisposition: presign.ContentDisposition(f.Name, false), Body: f.Data}, nil
}

// vcardResponse documents a text/vcard success response.
func vcardResponse(o huma.Operation) huma.Operation {
	o.Responses = map[string]*huma.Response{
		"200": {Description: "A vCard 4.0 (RFC 6350) file.", Content: map[string]*huma.MediaType{
			"text/vcard": {Schema: &huma.Schema{Type: "string"}}}},
	}
	return o
}

// nonEmptyBody answers an empty request body with 422 naming the body (huma
// refuses a missing raw body with 400, before the handler could).
func nonEmptyBody(api huma.API, msg string) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		if gc := humagin.Unwrap(ctx); gc != nil && gc.Request.Body != nil {
			br := bufio.NewReader(gc.Request.Body)
			if _, err := br.Peek(1); err == io.EOF {
				_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "body: "+msg,
					&huma.ErrorDetail{Location: "body", Message: msg})
				return
			}
			gc.Request.Body = struct {
				io.Reader
				io.Closer
			}{br, gc.Request.Body}
		}
		next(ctx)
	}
}

func registerContacts(api huma.API, d Deps) {
	if d.Contacts == nil {
		return
	}
	const tag = "Contacts"
	rd, wr := app.ScopeContactsRead, app.ScopeContactsWrite
	svc := d.Contacts

	huma.Register(api, op(http.MethodGet, "/contacts/books", "listAddressBooks", "List address books", tag, rd),
		func(ctx context.Context, _ *struct{}) (*body[[]contacts.AddressBook], error) {
			bs, err := svc.Books(ctx, principal(ctx))
			return out(bs), err
		})
	createBook := op(http.MethodPost, "/contacts/books", "createAddressBook", "Create an address book", tag, wr)
	createBook.Description = "Creates another address book for the caller (every user also has a default book, named \"Contacts\", made on first access)."
	huma.Register(api, createBook,
		func(ctx context.Context, in *struct{ Body contacts.AddressBookInput }) (*body[contacts.AddressBook], error) {
			b, err := svc.CreateBook(ctx, principal(ctx), "", in.Body)
			return out(b), err
		})
	list := errs(op(http.MethodGet, "/contacts/books/{book_id}", "listContacts", "List the contacts of an address book", tag, rd), http.StatusNotFound)
	list.Description = "Every contact of the book, by display name."
	list.Responses = map[string]*huma.Response{"200": {Description: "An array of ContactSummary.", Content: map[string]*huma.MediaType{
		"application/json": {Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[[]contacts.ContactSummary](), true, "")}}}}
	huma.Register(api, list,
		func(ctx context.Context, in *BookPath) (*rawJSON, error) {
			// The list is rendered from each contact's stored list form: a 10,000-contact
			// book answers without encoding every field again.
			data, err := svc.ContactsJSON(ctx, principal(ctx), in.BookID)
			if err != nil {
				return nil, err
			}
			return &rawJSON{ContentType: "application/json", Body: data}, nil
		})
	huma.Register(api, errs(op(http.MethodPatch, "/contacts/books/{book_id}", "updateAddressBook", "Rename an address book", tag, wr), http.StatusNotFound),
		func(ctx context.Context, in *struct {
			BookPath
			Body contacts.AddressBookInput
		}) (*body[contacts.AddressBook], error) {
			b, err := svc.UpdateBook(ctx, principal(ctx), in.BookID, in.Body)
			return out(b), err
		})
	delBook := errs(op(http.MethodDelete, "/contacts/books/{book_id}", "deleteAddressBook", "Delete an address book and its contacts", tag, wr), http.StatusNotFound, http.StatusConflict)
	delBook.Description = "The default address book cannot be deleted (409 `conflict`)."
	huma.Register(api, delBook,
		func(ctx context.Context, in *BookPath) (*struct{}, error) {
			return nil, svc.DeleteBook(ctx, principal(ctx), in.BookID)
		})

	create := errs(op(http.MethodPost, "/contacts/books/{book_id}", "createContact", "Create a contact", tag, wr), http.StatusNotFound)
	create.Description = "`display_name` is derived from the names (or organization, e-mail, phone) when absent. The contact is stored as a vCard 4.0; the response carries its `ETag`."
	huma.Register(api, create,
		func(ctx context.Context, in *struct {
			BookPath
			Body contacts.ContactCreate
		}) (*withETag[contacts.ContactSummary], error) {
			c, err := svc.CreateContact(ctx, principal(ctx), in.BookID, in.Body)
			if err != nil {
				return nil, err
			}
			return &withETag[contacts.ContactSummary]{ETag: c.ETag, Body: c.Summary()}, nil
		})
	huma.Register(api, errs(op(http.MethodGet, "/contacts/books/{book_id}/{contact_id}", "getContact", "Get a contact", tag, rd), http.StatusNotFound),
		func(ctx context.Context, in *ContactPath) (*withETag[contacts.ContactDetail], error) {
			c, err := svc.Contact(ctx, principal(ctx), in.BookID, in.ContactID)
			if err != nil {
				return nil, err
			}
			return &withETag[contacts.ContactDetail]{ETag: c.ETag, Body: c}, nil
		})
	update := errs(op(http.MethodPut, "/contacts/books/{book_id}/{contact_id}", "updateContact", "Update a contact", tag, wr),
		http.StatusNotFound, http.StatusPreconditionFailed)
	update.Description = "Fields present in the body replace the stored ones (an empty string or array clears a field); absent fields stay. " +
		"vCard properties Atrium does not model (X- properties, photos, extra parameters) are kept as they are. " +
		"With `If-Match`, the write succeeds only when it matches the current `ETag` (else 412 `precondition_failed`); without it, the write goes through."
	huma.Register(api, update,
		func(ctx context.Context, in *struct {
			ContactPath
			IfMatch string `header:"If-Match" doc:"The ETag the client last read."`
			Body    contacts.ContactUpdate
		}) (*withETag[contacts.ContactSummary], error) {
			c, err := svc.UpdateContact(ctx, principal(ctx), in.BookID, in.ContactID, in.Body, in.IfMatch)
			if err != nil {
				return nil, err
			}
			return &withETag[contacts.ContactSummary]{ETag: c.ETag, Body: c.Summary()}, nil
		})
	huma.Register(api, errs(op(http.MethodDelete, "/contacts/books/{book_id}/{contact_id}", "deleteContact", "Delete a contact", tag, wr),
		http.StatusNotFound, http.StatusPreconditionFailed),
		func(ctx context.Context, in *struct {
			ContactPath
			IfMatch string `header:"If-Match" doc:"When present, must match the current ETag."`
		}) (*struct{}, error) {
			return nil, svc.DeleteContact(ctx, principal(ctx), in.BookID, in.ContactID, in.IfMatch)
		})
	move := errs(status(op(http.MethodPost, "/contacts/books/{book_id}/move", "moveContacts", "Move contacts to another address book", tag, wr), http.StatusOK), http.StatusNotFound)
	move.Description = "Moves contacts of this book to `target_book_id` (another book of the caller) in one transaction. " +
		"Ids that are not the caller's contacts, or not in this book, are listed in `failed` with a reason (`not_found`, `not_in_source_book`); the rest move."
	huma.Register(api, move,
		func(ctx context.Context, in *struct {
			BookPath
			Body contacts.MoveContactsRequest
		}) (*body[contacts.MoveContactsResponse], error) {
			r, err := svc.Move(ctx, principal(ctx), in.BookID, in.Body)
			return out(r), err
		})
	huma.Register(api, errs(status(op(http.MethodPost, "/contacts/books/{book_id}/{contact_id}/favorite", "toggleFavoriteContact", "Toggle a contact's favorite flag", tag, wr), http.StatusOK), http.StatusNotFound),
		func(ctx context.Context, in *ContactPath) (*body[contacts.ContactSummary], error) {
			c, err := svc.ToggleFavorite(ctx, principal(ctx), in.BookID, in.ContactID)
			return out(c.Summary()), err
		})
	search := op(http.MethodGet, "/contacts/search", "searchContacts", "Search contacts across all address books", tag, rd)
	search.Description = "Every word of `q` must match the start of a word of a contact's names, e-mail addresses, phone numbers or organization, ignoring case and accents; best matches first (names weigh most, favorites a little more)."
	huma.Register(api, search,
		func(ctx context.Context, in *struct {
			Q     string `query:"q" required:"true" minLength:"1" maxLength:"200" doc:"Search text."`
			Limit int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"Maximum number of results."`
		}) (*body[[]contacts.ContactSummary], error) {
			r, err := svc.Search(ctx, principal(ctx), in.Q, in.Limit)
			return out(r), err
		})
	huma.Register(api, op(http.MethodGet, "/contacts/directory", "listDirectory", "List the organization's directory", tag, rd),
		func(ctx context.Context, _ *struct{}) (*body[[]contacts.DirectoryEntry], error) {
			r, err := svc.Directory(ctx, principal(ctx))
			return out(r), err
		})
	huma.Register(api, vcardResponse(errs(op(http.MethodGet, "/contacts/directory/{user_id}/export", "exportDirectoryEntry", "Export a directory entry as vCard", tag, rd), http.StatusNotFound)),
		func(ctx context.Context, in *struct {
			UserID string `path:"user_id" maxLength:"200"`
		}) (*vcardFile, error) {
			return vcardOut(svc.ExportDirectoryEntry(ctx, principal(ctx), in.UserID))
		})
	// Book export and import: Atrium extensions outside the stable v1 contract,
	// routed but not published (docs/api-extensions.md).
	exp := vcardResponse(errs(op(http.MethodGet, "/contacts/books/{book_id}/export", "exportAddressBook", "Export an address book as one vCard file", tag, rd), http.StatusNotFound))
	exp.Description = "Every contact of the book, by display name, as one `text/vcard` file of vCard 4.0 cards, each as the per-contact export writes it " +
		"(a card stored as 3.0 is converted; properties Atrium does not model are kept). The file is named after the book."
	exp.Hidden = true
	huma.Register(api, exp,
		func(ctx context.Context, in *BookPath) (*vcardFile, error) {
			return vcardOut(svc.ExportBook(ctx, principal(ctx), in.BookID))
		})
	imp := errs(status(op(http.MethodPost, "/contacts/books/{book_id}/import", "importAddressBook", "Import a vCard file into an address book", tag, wr), http.StatusOK),
		http.StatusNotFound, http.StatusRequestEntityTooLarge)
	imp.Description = "The body is a `text/vcard` file of one or more cards (vCard 3.0 or 4.0), at most 10 MiB (else 413) and 10000 cards (else 422). " +
		"Each card is checked as a created contact is and kept whole (properties Atrium does not model stay). A card keeps its UID (one without gets one); " +
		"a card whose UID is already that of a contact of the book replaces it (`updated`, or `unchanged` when identical: importing the same file twice changes nothing). " +
		"Cards fail on their own and are listed in `failed` with their `index` in the file (from 0) and the reason; the others are added together. " +
		"A body that is not a vCard file (empty, or not starting with BEGIN:VCARD) → 422 and nothing changes."
	imp.Hidden = true
	imp.MaxBodyBytes = contacts.MaxImportBytes
	imp.BodyReadTimeout = 2 * time.Minute
	imp.Middlewares = huma.Middlewares{nonEmptyBody(api, "is not a vCard file (it must start with BEGIN:VCARD)")}
	huma.Register(api, imp,
		func(ctx context.Context, in *struct {
			BookPath
			RawBody []byte `contentType:"text/vcard" required:"false"`
		}) (*body[contacts.BookImportResult], error) {
			r, err := svc.Import(ctx, principal(ctx), in.BookID, in.RawBody)
			return out(r), err
		})
	huma.Register(api, vcardResponse(errs(op(http.MethodGet, "/contacts/books/{book_id}/{contact_id}/export", "exportContact", "Export a contact as vCard", tag, rd), http.StatusNotFound)),
		func(ctx context.Context, in *ContactPath) (*vcardFile, error) {
			return vcardOut(svc.ExportContact(ctx, principal(ctx), in.BookID, in.ContactID))
		})
}
