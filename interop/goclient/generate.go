// Package goclient is a Go client generated from Atrium's OpenAPI document by
// oapi-codegen, for its test: a scenario (browse the root and a subfolder,
// search, create a link share, list contacts and events) run against a test
// server, decoding every answer. Nothing else imports it.
//
// openapi.yaml is the 3.1 document the server serves (without its servers
// entry, which names the test server's address); TestDocumentCurrent fails when
// it is stale. Regenerate both with
//
//	go generate ./interop/goclient
//
// oapi-codegen reads the 3.1 document (its type arrays with "null" become Go
// pointers); the operations it generates are listed in oapi-codegen.yaml.
package goclient

//go:generate go test -run TestDocumentCurrent -update .
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml openapi.yaml
