package rest

import (
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// schemaRef is where huma's registry keeps the document's schemas.
const schemaRef = "#/components/schemas/"

// declareNulls makes the document say `null` wherever an answer may carry it.
// huma already does for slices and pointers to scalars, but not for the two
// other Go values that encode as null:
//   - a pointer to a struct (FolderContents.folder at the root, ShareInfo's
//     shared_with on a link share, Me.user of a service principal): huma
//     refuses `nullable:"true"` on a field whose schema is a $ref, so the
//     field refers instead to a twin of the object's schema whose type is
//     `[object, "null"]` (`<Name>OrNull`; in the 3.0 document `type: object,
//     nullable: true`, which every generator reads);
//   - a map (a nil map encodes as null): its inline schema gets `null` among
//     its types.
//
// A field with omitempty is left out rather than null, and is optional already.
// It runs once every operation is registered: it reads the Go type of each
// registered schema.
func declareNulls(api huma.API) {
	reg := api.OpenAPI().Components.Schemas
	schemas := reg.Map()
	names := make([]string, 0, len(schemas))
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t := reg.TypeFromRef(schemaRef + name)
		s := schemas[name]
		if t == nil || s == nil || s.Type != huma.TypeObject {
			continue
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			continue
		}
		for _, f := range jsonFields(t) {
			prop := s.Properties[f.name]
			if prop == nil || f.omitempty {
				continue
			}
			switch {
			case f.typ.Kind() == reflect.Map:
				prop.Nullable = true
			case f.typ.Kind() == reflect.Pointer && f.typ.Elem().Kind() == reflect.Struct && strings.HasPrefix(prop.Ref, schemaRef):
				prop.Ref = orNull(schemas, strings.TrimPrefix(prop.Ref, schemaRef))
			}
		}
	}
}

// orNull registers (once) the twin of the object schema name that also takes
// null, and returns its reference.
func orNull(schemas map[string]*huma.Schema, name string) string {
	twin := name + "OrNull"
	if _, ok := schemas[twin]; !ok {
		s := *schemas[name]
		s.Nullable = true
		s.Description = strings.TrimSpace("A " + name + ", or null. " + s.Description)
		s.PrecomputeMessages()
		schemas[twin] = &s
	}
	return schemaRef + twin
}

type jsonField struct {
	name      string
	typ       reflect.Type
	omitempty bool
}

// jsonFields lists a struct's fields as encoding/json (and huma) see them: by
// JSON name, embedded structs' fields after the struct's own, the first of a
// name winning.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	seen := map[string]bool{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		if depth > 8 {
			return
		}
		var embedded []reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if f.Anonymous && tag == "" {
				et := f.Type
				for et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					embedded = append(embedded, et)
				}
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" && opts == "" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			out = append(out, jsonField{name: name, typ: f.Type, omitempty: omit})
		}
		for _, et := range embedded {
			walk(et, depth+1)
		}
	}
	walk(t, 0)
	return out
}

// declareStatuses says that parameters are not null, and lists the statuses every operation of a kind can answer,
// which its registration does not name one by one, with the problem body of
// its other errors:
//   - 429 `rate_limited`, from the limits per credential and per address,
//     on every operation;
//   - 400 `bad_request` (a body that is not JSON) and 413
//     `payload_too_large` (a JSON body over 1 MiB) on every operation that
//     takes a JSON body;
//   - 400 `invalid_cursor` / `cursor_expired` on every cursor list.
func declareStatuses(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, o := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Options, item.Head, item.Patch} {
			if o == nil {
				continue
			}
			for _, p := range o.Parameters {
				// A parameter is text, never JSON's null: huma's slices
				// are nullable by default, which for a query parameter
				// (mime_types, filter, calendar_ids) only confuses
				// clients and validators.
				if p != nil && p.Schema != nil && p.Schema.Type == huma.TypeArray {
					p.Schema.Nullable = false
				}
			}
			add := []int{http.StatusTooManyRequests}
			if o.RequestBody != nil && o.RequestBody.Content["application/json"] != nil {
				add = append(add, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
			}
			for _, p := range o.Parameters {
				if p != nil && p.In == "query" && p.Name == "cursor" {
					add = append(add, http.StatusBadRequest)
				}
			}
			addProblems(o, add...)
		}
	}
}

// addProblems adds problem responses to an operation, unless it lists them,
// with the content of its other problem responses.
func addProblems(o *huma.Operation, codes ...int) {
	var content map[string]*huma.MediaType
	for _, r := range o.Responses {
		if r != nil && r.Content["application/problem+json"] != nil {
			content = r.Content
			break
		}
	}
	if content == nil {
		return
	}
	for _, code := range codes {
		k := strconv.Itoa(code)
		if o.Responses[k] == nil {
			o.Responses[k] = &huma.Response{Description: http.StatusText(code), Content: content}
		}
	}
}
