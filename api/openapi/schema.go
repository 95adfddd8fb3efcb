package openapi

import (
	"reflect"
	"strings"
	"time"
)

// schemas builds JSON Schemas (OpenAPI 3.0 flavour) of Go types by
// reflection on their json tags, into components/schemas: a document that
// follows the code instead of a copy of it.
type schemas struct {
	defs map[string]any
}

var timeType = reflect.TypeOf(time.Time{})

// of returns the schema of v's type (a reference for named structs).
func (s *schemas) of(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": s.of(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": s.of(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		name := schemaName(t)
		if name == "" {
			return s.object(t)
		}
		if _, ok := s.defs[name]; !ok {
			s.defs[name] = map[string]any{} // a placeholder: types may refer to themselves
			s.defs[name] = s.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// object is a struct's schema: its json-tagged fields, embedded structs
// flattened as encoding/json does.
func (s *schemas) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
					continue
				}
			}
			if name == "" {
				name = f.Name
			}
			props[name] = s.of(f.Type)
		}
	}
	add(t)
	return map[string]any{"type": "object", "properties": props}
}

// schemaName names a struct type in components: "shoal.Compute" becomes
// "Compute", generic list bodies stay inline.
func schemaName(t reflect.Type) string {
	if t.Name() == "" || strings.Contains(t.Name(), "[") {
		return ""
	}
	pkg := t.PkgPath()
	switch {
	case strings.HasSuffix(pkg, "/service"):
		return "Service" + t.Name()
	case strings.HasSuffix(pkg, "/api"), strings.HasSuffix(pkg, "/client"):
		// The native API's own bodies live with its Go client; they keep
		// the names they had when they lived here.
		return "Api" + t.Name()
	}
	return t.Name()
}
