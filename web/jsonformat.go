package web

import (
	"io"

	"github.com/danielgtaylor/huma/v2"
	segjson "github.com/segmentio/encoding/json"
)

// jsonFormat is huma's JSON format with segmentio/encoding's encoder, a
// drop-in for encoding/json's (the same bytes for the same values).
var jsonFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		enc := segjson.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	},
	Unmarshal: huma.DefaultJSONFormat.Unmarshal,
}
