package web_test

import (
	"context"
	"testing"

	"atrium/app/identity"
	"atrium/webtest"
)

// Every door answers an app error through the one code→status table: a
// suspended organisation is 403 org_suspended over REST, the WebDAV mount and
// the DAV doors alike (the DAV doors answered 500).
func TestErrorVocabularyOverTheDoors(t *testing.T) {
	t.Parallel()
	s := webtest.New(t)
	ann := s.Bootstrap("Doors Org", "ann@example.test", "admin")
	if err := s.Main.Identity.SetOrgStatus(context.Background(), "", ann.OrganizationID, identity.OrgSuspended); err != nil {
		t.Fatal(err)
	}
	depth := map[string]string{"Depth": "0"}
	s.Run(t, []webtest.Scenario{
		{Name: "REST", Request: webtest.Request{Method: "GET", Path: "/api/v1/me", Token: ann.Token}, Status: 403, Problem: "org_suspended"},
		{Name: "WebDAV", Request: webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", Token: ann.Token, Header: depth}, Status: 403, Problem: "org_suspended"},
		{Name: "WebDAV Basic", Request: webtest.Request{Method: "PROPFIND", Path: "/api/v1/webdav/", BasicID: ann.Email, BasicPW: ann.AppPassword, Header: depth},
			Status: 403, Problem: "org_suspended"},
		{Name: "CardDAV", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/", Token: ann.Token, Header: depth}, Status: 403, Problem: "org_suspended"},
		{Name: "CalDAV Basic", Request: webtest.Request{Method: "PROPFIND", Path: "/dav/principals/", BasicID: ann.Email, BasicPW: ann.AppPassword, Header: depth},
			Status: 403, Problem: "org_suspended"},
		{Name: "tus", Request: webtest.Request{Method: "POST", Path: "/api/v1/drive/tus/", Token: ann.Token,
			Header: map[string]string{"Tus-Resumable": "1.0.0", "Upload-Length": "1"}}, Status: 403, Problem: "org_suspended"},
	})
}
