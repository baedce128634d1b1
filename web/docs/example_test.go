package docs_test

import (
	"net/http"

	"atrium/web/docs"
)

// The handler expects its mount prefix to be stripped and serves both the
// bare mount path and the one with a trailing slash.
func ExampleHandler() {
	mux := http.NewServeMux()
	h := http.StripPrefix("/api/v1/docs", docs.Handler("/api/v1/openapi.json", "Atrium API"))
	mux.Handle("GET /api/v1/docs", h)
	mux.Handle("GET /api/v1/docs/", h)
	_ = http.ListenAndServe // e.g. http.ListenAndServe("127.0.0.1:8080", mux)
}
