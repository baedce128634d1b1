package goclient

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"atrium/webtest"
)

// TestGeneratedClient runs a short scenario with the client generated from
// the OpenAPI document: every answer must decode into the generated types
// (and, through webtest's harness, match the document). The fields the
// contract answers with null are pointers here because the document says so.
func TestGeneratedClient(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	creds := s.Bootstrap("Generated Client Org", "client@example.test", "member")
	c, err := NewClientWithResponses(s.URL, WithHTTPClient(s.Client()),
		WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+creds.Token)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// want checks a call: no transport or decoding error, the status, a
	// decoded body.
	want := func(what string, err error, res *http.Response, status int, decoded bool) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.StatusCode != status || !decoded {
			t.Fatalf("%s: status %d (want %d), decoded %v", what, res.StatusCode, status, decoded)
		}
	}

	me, err := c.GetMeWithResponse(ctx)
	want("get me", err, me.HTTPResponse, 200, me.JSON200 != nil)
	if me.JSON200.User == nil || me.JSON200.User.Email != "client@example.test" {
		t.Fatalf("me.user: %+v", me.JSON200.User)
	}

	root, err := c.BrowseRootWithResponse(ctx, nil)
	want("browse the root", err, root.HTTPResponse, 200, root.JSON200 != nil)
	if root.JSON200.Folder != nil {
		t.Fatalf("the root's folder is %+v, want null", root.JSON200.Folder)
	}

	folder, err := c.CreateFolderWithResponse(ctx, nil, CreateFolderJSONRequestBody{Name: "Quarterly reports"})
	want("create a folder", err, folder.HTTPResponse, 201, folder.JSON201 != nil)
	id := folder.JSON201.Id
	inner, err := c.CreateFolderWithResponse(ctx, nil, CreateFolderJSONRequestBody{Name: "Drafts", ParentId: &id})
	want("create a subfolder", err, inner.HTTPResponse, 201, inner.JSON201 != nil)

	sub, err := c.BrowseFolderWithResponse(ctx, id, nil)
	want("browse a subfolder", err, sub.HTTPResponse, 200, sub.JSON200 != nil)
	if sub.JSON200.Folder == nil || sub.JSON200.Folder.Id != id || sub.JSON200.Items == nil || len(*sub.JSON200.Items) != 1 {
		t.Fatalf("subfolder: folder %+v, items %v", sub.JSON200.Folder, sub.JSON200.Items)
	}

	q := "Quarterly"
	found, err := c.SearchDriveWithResponse(ctx, &SearchDriveParams{Q: &q})
	want("search", err, found.HTTPResponse, 200, found.JSON200 != nil)
	if found.JSON200.Hits == nil || len(*found.JSON200.Hits) != 1 || (*found.JSON200.Hits)[0].Id != id {
		t.Fatalf("search hits: %+v", found.JSON200.Hits)
	}

	link := true
	share, err := c.CreateShareWithResponse(ctx, id, CreateShareJSONRequestBody{CreateLink: &link})
	want("create a link share", err, share.HTTPResponse, 201, share.JSON201 != nil)
	if share.JSON201.SharedWith != nil || share.JSON201.ShareLink == nil || !strings.Contains(*share.JSON201.ShareLink, "/s/") {
		t.Fatalf("link share: shared_with %+v, share_link %v", share.JSON201.SharedWith, share.JSON201.ShareLink)
	}

	books, err := c.ListAddressBooksWithResponse(ctx)
	want("list address books", err, books.HTTPResponse, 200, books.JSON200 != nil && len(*books.JSON200) > 0)
	book := (*books.JSON200)[0].Id
	first, last := "Ada", "Lovelace"
	contact, err := c.CreateContactWithResponse(ctx, book, CreateContactJSONRequestBody{FirstName: &first, LastName: &last})
	want("create a contact", err, contact.HTTPResponse, 201, contact.JSON201 != nil)
	contacts, err := c.ListContactsWithResponse(ctx, book)
	want("list contacts", err, contacts.HTTPResponse, 200, contacts.JSON200 != nil)
	if len(*contacts.JSON200) != 1 || (*contacts.JSON200)[0].DisplayName != "Ada Lovelace" {
		t.Fatalf("contacts: %+v", *contacts.JSON200)
	}

	cals, err := c.ListCalendarsWithResponse(ctx)
	want("list calendars", err, cals.HTTPResponse, 200, cals.JSON200 != nil && len(*cals.JSON200) > 0)
	start := time.Now().UTC().Truncate(time.Hour).Add(48 * time.Hour)
	event, err := c.CreateEventWithResponse(ctx, (*cals.JSON200)[0].Id, CreateEventJSONRequestBody{
		Title: "Review", Start: start.Format(time.RFC3339), End: start.Add(time.Hour).Format(time.RFC3339)})
	want("create an event", err, event.HTTPResponse, 201, event.JSON201 != nil)
	events, err := c.ListEventsWithResponse(ctx, &ListEventsParams{Start: start.Add(-24 * time.Hour), End: start.Add(24 * time.Hour)})
	want("list events", err, events.HTTPResponse, 200, events.JSON200 != nil)
	if len(*events.JSON200) != 1 || (*events.JSON200)[0].Title != "Review" {
		t.Fatalf("events: %+v", *events.JSON200)
	}
}
