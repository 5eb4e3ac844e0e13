package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Request bodies are read as AWS's JSON services read them:
//
//   - member names are case-sensitive: "StateMachineArn" is not
//     "stateMachineArn" but a member the model does not define, which is
//     ignored (Go's decoder would take it for the other);
//   - a member of the wrong type is a SerializationException in the words
//     of AWS's deserializer ("STRING_VALUE can not be converted to an
//     Integer", "Start of list found where not expected"), to which stepd
//     adds the member's path.

// decode parses a request body into v (a pointer to a struct or a map),
// strictly: one JSON value and nothing after it, member names matched
// exactly.
func decode(body []byte, v any) error {
	// A body that json.Unmarshal takes whole is one JSON value with
	// nothing but white space after it: decoded so, without a Decoder's
	// allocations, unless a member's name matches a field's only when
	// case is ignored.
	if json.Unmarshal(body, v) == nil {
		if !foreignCase(body, reflect.TypeOf(v)) {
			return nil
		}
		return decodeExact(body, v)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return serializationError(body, err)
	}
	if err := trailing(body, dec.InputOffset()); err != nil {
		return err
	}
	if foreignCase(body, reflect.TypeOf(v)) {
		return decodeExact(body, v)
	}
	return nil
}

// decodeExact decodes body into v after dropping the members whose names
// match a field of v's type only when case is ignored.
func decodeExact(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return serializationError(body, err)
	}
	dropForeign(tree, reflect.TypeOf(v))
	exact, err := json.Marshal(tree)
	if err != nil {
		return &apiError{status: 400, code: "SerializationException", message: err.Error()}
	}
	// A fresh value: the first decoding may have set fields from the
	// members now dropped.
	rv := reflect.ValueOf(v).Elem()
	rv.Set(reflect.Zero(rv.Type()))
	if err := json.Unmarshal(exact, v); err != nil {
		return serializationError(exact, err)
	}
	return nil
}

// fieldsOf returns the JSON member names of a struct type and their
// types, with those of its embedded structs.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range fieldsOf(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	fieldCache.Store(t, out)
	return out
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// namesOf returns every member name of t's structs, at any depth.
func namesOf(t reflect.Type) map[string]bool {
	if n, ok := nameCache.Load(t); ok {
		return n.(map[string]bool)
	}
	out := map[string]bool{}
	var walk func(t reflect.Type, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, seen map[reflect.Type]bool) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for name, ft := range fieldsOf(t) {
			out[name] = true
			walk(ft, seen)
		}
	}
	walk(t, map[reflect.Type]bool{})
	nameCache.Store(t, out)
	return out
}

var nameCache sync.Map // reflect.Type → map[string]bool

// foreignCase reports whether a member name of body (at any depth) matches
// a member name of t only when case is ignored.
func foreignCase(body []byte, t reflect.Type) bool {
	names := namesOf(t)
	if len(names) == 0 {
		return false
	}
	found := false
	eachKey(body, func(key string) bool {
		if names[key] {
			return true
		}
		for n := range names {
			if strings.EqualFold(n, key) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}

// eachKey calls fn with each object key of a JSON text (the raw text
// between its quotes: escapes are left as they are, and a key written with
// escapes matches no name), until fn returns false. Strings that are
// values are skipped.
func eachKey(body []byte, fn func(key string) bool) {
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		start := i + 1
		j := start
		for j < len(body) && body[j] != '"' {
			if body[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(body) {
			return
		}
		i = j
		k := j + 1
		for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\n' || body[k] == '\r') {
			k++
		}
		if k < len(body) && body[k] == ':' {
			if !fn(string(body[start:j])) {
				return
			}
		}
	}
}

// dropForeign removes, from a decoded JSON tree, the members whose names
// match a field of t's structs only when case is ignored.
func dropForeign(v any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := fieldsOf(t)
		for k, mv := range m {
			if ft, ok := fields[k]; ok {
				dropForeign(mv, ft)
				continue
			}
			for name := range fields {
				if strings.EqualFold(name, k) {
					delete(m, k)
					break
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // json.RawMessage: read by its own decoder
		}
		if l, ok := v.([]any); ok {
			for _, e := range l {
				dropForeign(e, t.Elem())
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for _, e := range m {
				dropForeign(e, t.Elem())
			}
		}
	}
}

// serializationError is the SerializationException of a body that could
// not be decoded: for a member of the wrong type, AWS's deserializer's
// words and the member's path.
func serializationError(body []byte, err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return &apiError{status: 400, code: "SerializationException", message: err.Error()}
	}
	field := memberPath(body, te.Field)
	msg := typeMessage(te, body, field)
	if field != "" {
		msg += fmt.Sprintf(" (member '%s')", field)
	}
	return &apiError{status: 400, code: "SerializationException", message: msg}
}

// typeMessage words a type mismatch as AWS's JSON deserializer does.
func typeMessage(te *json.UnmarshalTypeError, body []byte, field string) string {
	value := te.Value
	switch {
	case value == "array":
		return "Start of list found where not expected"
	case value == "object":
		return "Start of structure or map found where not expected."
	case value == "string":
		value = "STRING_VALUE"
	case strings.HasPrefix(value, "number"):
		value = "NUMBER_VALUE"
	case value == "bool":
		value = "TRUE_VALUE"
		if !boolAt(body, field) {
			value = "FALSE_VALUE"
		}
	}
	t := te.Type
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return value + " can not be converted"
	}
	switch t.Kind() {
	case reflect.String:
		return value + " can not be converted to a String"
	case reflect.Int, reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		return value + " can not be converted to an Integer"
	case reflect.Int64, reflect.Uint64:
		return value + " can not be converted to a Long"
	case reflect.Float32, reflect.Float64:
		return value + " can not be converted to a Double"
	case reflect.Bool:
		return value + " can not be converted to an Boolean" // sic: AWS's words
	case reflect.Slice, reflect.Array:
		return "Expected list or null"
	}
	return "Expected null" // a structure or map given a scalar, as AWS answers
}

// boolAt returns the first boolean found at a member path (dotted, arrays
// searched element by element) of a JSON body; false when there is none.
func boolAt(body []byte, path string) bool {
	tree, ok := parseTree(body)
	if !ok {
		return false
	}
	var find func(v any, parts []string) (bool, bool)
	find = func(v any, parts []string) (bool, bool) {
		if l, ok := v.([]any); ok {
			for _, e := range l {
				if b, ok := find(e, parts); ok {
					return b, true
				}
			}
			return false, false
		}
		if len(parts) == 0 {
			b, ok := v.(bool)
			return b, ok
		}
		m, ok := v.(map[string]any)
		if !ok {
			return false, false
		}
		return find(m[parts[0]], parts[1:])
	}
	var parts []string
	if path != "" {
		parts = strings.Split(path, ".")
	}
	b, _ := find(tree, parts)
	return b
}

// memberPath is the path of members of a JSON body that Go's decoder
// names field: the names of embedded Go structs that it holds, which are
// no members of the body, are left out.
func memberPath(body []byte, field string) string {
	if field == "" {
		return ""
	}
	tree, ok := parseTree(body)
	if !ok {
		return field
	}
	var kept []string
	cur := []any{tree}
	for _, part := range strings.Split(field, ".") {
		var next []any
		for _, v := range flatten(cur) {
			if m, ok := v.(map[string]any); ok {
				if mv, ok := m[part]; ok {
					next = append(next, mv)
				}
			}
		}
		if len(next) == 0 {
			continue // an embedded struct's name
		}
		kept = append(kept, part)
		cur = next
	}
	return strings.Join(kept, ".")
}

// flatten replaces the arrays among vs by their elements, at any depth.
func flatten(vs []any) []any {
	var out []any
	for _, v := range vs {
		if l, ok := v.([]any); ok {
			out = append(out, flatten(l)...)
			continue
		}
		out = append(out, v)
	}
	return out
}

// parseTree decodes a JSON body into a tree, its numbers kept as text (a
// number too large for a float64 is still a member).
func parseTree(body []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var tree any
	return tree, dec.Decode(&tree) == nil
}
