package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"atrium/app"
)

type otherKey struct{}

// A request's context answers its id, its server and, once set, its principal,
// also through contexts derived from it before the principal was set; any other
// key goes to its parent.
func TestRequestContextValues(t *testing.T) {
	t.Parallel()
	s := &Server{}
	parent := context.WithValue(context.Background(), otherKey{}, "parent's")
	rc := &requestContext{Context: parent, id: "req-1", s: s}
	derived, cancel := context.WithCancel(rc)
	defer cancel()

	if got := requestIDFrom(rc); got != "req-1" {
		t.Errorf("request id = %q", got)
	}
	if got, _ := derived.Value(serverKey{}).(*Server); got != s {
		t.Errorf("server = %p, want %p", got, s)
	}
	if got := derived.Value(otherKey{}); got != "parent's" {
		t.Errorf("other key = %v", got)
	}
	if app.PrincipalFrom(derived) != nil {
		t.Error("a principal before authentication")
	}
	if requestIDFrom(context.Background()) != "" {
		t.Error("a request id without a request")
	}

	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest(http.MethodGet, "/api/v1/me", nil).WithContext(rc)
	p := &app.Principal{UserID: "u1"}
	withPrincipal(c, p)
	if c.Request.Context() != context.Context(rc) {
		t.Error("the request was copied although its context is its requestContext")
	}
	if app.PrincipalFrom(c.Request.Context()) != p || app.PrincipalFrom(derived) != p {
		t.Error("the principal is not in the request's context")
	}

	// A second principal, or a request whose context is not its own
	// requestContext any more, gets a context of its own.
	q := &app.Principal{UserID: "u2"}
	withPrincipal(c, q)
	if app.PrincipalFrom(c.Request.Context()) != q || rc.p != p {
		t.Error("a second principal replaced the first in place")
	}
	c.Request = c.Request.WithContext(context.WithValue(rc, otherKey{}, "child's"))
	withPrincipal(c, q)
	if app.PrincipalFrom(c.Request.Context()) != q || requestIDFrom(c.Request.Context()) != "req-1" {
		t.Error("a derived request context lost its principal or id")
	}
}
