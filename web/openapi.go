package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/danielgtaylor/huma/v2/yaml"
	"github.com/gin-gonic/gin"
)

// openAPIPath is where the OpenAPI document is served: .json and .yaml
// (OpenAPI 3.1), -3.0.json and -3.0.yaml (its OpenAPI 3.0.3 form).
const openAPIPath = "/api/v1/openapi"

// serveOpenAPI serves the OpenAPI document, as huma would with
// Config.OpenAPIPath, except that the 3.0 form is valid OpenAPI 3.0: huma's
// downgrade leaves keywords that only exist since 3.1 (contentMediaType, on
// every binary string), which 3.0 tools refuse.
func (s *Server) serveOpenAPI(e *gin.Engine) {
	api := s.api.OpenAPI()
	json31 := func() ([]byte, error) { return json.Marshal(api) }
	for _, d := range []struct {
		path, contentType string
		make              func() ([]byte, error)
	}{
		{openAPIPath + ".json", "application/openapi+json", json31},
		{openAPIPath + ".yaml", "application/openapi+yaml", api.YAML},
		{openAPIPath + "-3.0.json", "application/openapi+json", openAPI30(api.Downgrade)},
		{openAPIPath + "-3.0.yaml", "application/openapi+yaml", toYAML(openAPI30(api.Downgrade))},
	} {
		var once sync.Once
		var doc []byte
		var err error
		e.GET(d.path, func(c *gin.Context) {
			once.Do(func() { doc, err = d.make() })
			if err != nil {
				s.log.Error("OpenAPI document", "path", d.path, "err", err)
				s.problems.make(http.StatusInternalServerError, "", "The OpenAPI document cannot be written.").write(c.Writer, requestIDFrom(c.Request.Context()))
				return
			}
			c.Data(http.StatusOK, d.contentType, doc)
		})
	}
}

// openAPI30 completes huma's downgrade to OpenAPI 3.0.3.
func openAPI30(downgrade func() ([]byte, error)) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := downgrade()
		if err != nil {
			return nil, fmt.Errorf("downgrade the OpenAPI document: %w", err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("read the downgraded OpenAPI document: %w", err)
		}
		drop31(doc)
		return json.Marshal(doc)
	}
}

// drop31 removes, from a schema tree, the keywords OpenAPI 3.0 does not have
// and that huma's downgrade leaves: contentMediaType (a binary string is
// `format: binary` in 3.0, which the downgrade keeps).
func drop31(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["contentMediaType"]; ok && v["format"] == "binary" {
			delete(v, "contentMediaType")
		}
		for _, c := range v {
			drop31(c)
		}
	case []any:
		for _, c := range v {
			drop31(c)
		}
	}
}

func toYAML(make func() ([]byte, error)) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := make()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := yaml.Convert(&buf, bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("write the OpenAPI document as YAML: %w", err)
		}
		return buf.Bytes(), nil
	}
}
