// Package strictjson decodes stepd's own JSON configuration files (the
// resource registry, the connections file, a template's configurations)
// into Go values strictly: a member the Go type does not have, a value of
// the wrong kind and trailing text are refused, and the error names the
// member by its path from the document's root (Functions.greet.Comand),
// its line and column, and for an unknown member the nearest known one.
//
// It decodes with encoding/json; only when that fails does it walk the
// document's tokens beside the Go type to find where. It imports nothing
// of stepd's but asl (for the did-you-mean of member names).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/stepd/stepd/asl"
)

// Error is a problem at a member of the document.
type Error struct {
	File         string // the file, when the caller names it (DecodeFile)
	Path         string // e.g. Functions.greet.Comand; "" for the root
	Line, Column int    // 1-based; 0 when unknown
	Msg          string
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Column)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "%d:%d: ", e.Line, e.Column)
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Decode decodes the JSON document data into v (a pointer), refusing
// unknown members and trailing text; a failure is an *Error.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return at(data, int(dec.InputOffset()), &Error{Msg: "text after the JSON value"})
		}
		return nil
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return at(data, int(se.Offset)-1, &Error{Msg: "invalid JSON: " + strings.TrimPrefix(se.Error(), "json: ")})
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return at(data, len(data), &Error{Msg: "invalid JSON: unexpected end of input"})
	}
	w := &walker{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	w.dec.UseNumber()
	if p := w.value(reflect.TypeOf(v).Elem(), ""); p != nil {
		return at(data, p.offset, &Error{Path: p.path, Msg: p.msg})
	}
	return &Error{Msg: strings.TrimPrefix(err.Error(), "json: ")}
}

// DecodeFile is Decode of the contents data of the file named file, whose
// name its errors carry (file:line:col: path: message).
func DecodeFile(file string, data []byte, v any) error {
	err := Decode(data, v)
	if e, ok := err.(*Error); ok {
		e.File = file
	}
	return err
}

// at sets e's line and column from a byte offset of data.
func at(data []byte, offset int, e *Error) *Error {
	offset = min(max(offset, 0), len(data))
	before := data[:offset]
	e.Line = bytes.Count(before, []byte("\n")) + 1
	e.Column = len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return e
}

// problem is what the walker found wrong, and where.
type problem struct {
	path   string
	offset int
	msg    string
}

// walker reads a document's tokens beside a Go type.
type walker struct {
	data []byte
	dec  *json.Decoder
}

// next is the offset of the next token: past the white space, comma or
// colon after the last one read.
func (w *walker) next() int {
	i := int(w.dec.InputOffset())
	for i < len(w.data) && strings.IndexByte(" \t\r\n,:", w.data[i]) >= 0 {
		i++
	}
	return i
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// member is the path of the member key of the value at path.
func member(path, key string) string {
	if !identRE.MatchString(key) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// value reads one value of type t at path; nil when it fits.
func (w *walker) value(t reflect.Type, path string) *problem {
	start := w.next()
	tok, err := w.dec.Token()
	if err != nil {
		return &problem{path: path, offset: start, msg: "invalid JSON"}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if tok == nil {
		return nil // null fits anything, as encoding/json takes it
	}
	wrong := func(want string) *problem {
		w.skip(tok)
		return &problem{path: path, offset: start, msg: fmt.Sprintf("want %s, got %s", want, kind(tok))}
	}
	switch t.Kind() {
	case reflect.Interface:
		w.skip(tok)
		return nil
	case reflect.Struct:
		if tok != json.Delim('{') {
			return wrong("an object")
		}
		return w.object(path, func(key string) (reflect.Type, string, bool) {
			f, ok := field(t, key)
			if ok {
				return f.Type, "", true
			}
			names := fieldNames(t, nil)
			msg := fmt.Sprintf("unknown member (want %s)", strings.Join(names, ", "))
			if near := asl.Nearest(key, slices.Values(names)); near != "" {
				msg = fmt.Sprintf("unknown member (did you mean %s?)", near)
			}
			return nil, msg, false
		})
	case reflect.Map:
		if tok != json.Delim('{') {
			return wrong("an object")
		}
		return w.object(path, func(string) (reflect.Type, string, bool) { return t.Elem(), "", true })
	case reflect.Slice, reflect.Array:
		if tok != json.Delim('[') {
			return wrong("an array")
		}
		for i := 0; w.dec.More(); i++ {
			if p := w.value(t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != nil {
				return p
			}
		}
		_, _ = w.dec.Token() // ]
		return nil
	case reflect.String:
		if _, ok := tok.(string); !ok {
			return wrong("a string")
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return wrong("true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := tok.(json.Number)
		if !ok {
			return wrong("a whole number")
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return &problem{path: path, offset: start, msg: fmt.Sprintf("want a whole number, got %s", n)}
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := tok.(json.Number); !ok {
			return wrong("a number")
		}
	}
	return nil
}

// object reads the members of an object whose { was read; typeOf gives a
// member's type, or what is wrong with its key.
func (w *walker) object(path string, typeOf func(key string) (reflect.Type, string, bool)) *problem {
	for w.dec.More() {
		start := w.next()
		tok, err := w.dec.Token()
		if err != nil {
			return &problem{path: path, offset: start, msg: "invalid JSON"}
		}
		key, _ := tok.(string)
		t, msg, ok := typeOf(key)
		if !ok {
			return &problem{path: member(path, key), offset: start, msg: msg}
		}
		if p := w.value(t, member(path, key)); p != nil {
			return p
		}
	}
	_, _ = w.dec.Token() // }
	return nil
}

// skip reads the rest of a value whose first token was tok.
func (w *walker) skip(tok json.Token) {
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return
	}
	for depth := 1; depth > 0; {
		t, err := w.dec.Token()
		if err != nil {
			return
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// kind names the kind of the value a token starts.
func kind(tok json.Token) string {
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "null"
}

// jsonName is the member name of a struct field ("" when it has none).
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// fields appends the fields a struct's members decode into: its own, and
// those of the structs it embeds without a name of their own.
func fields(t reflect.Type, out []reflect.StructField) []reflect.StructField {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = fields(et, out)
				continue
			}
		}
		if jsonName(f) != "" {
			out = append(out, f)
		}
	}
	return out
}

// fieldNames appends the member names of a struct.
func fieldNames(t reflect.Type, out []string) []string {
	for _, f := range fields(t, nil) {
		out = append(out, jsonName(f))
	}
	return out
}

// field finds the struct field a member key decodes into, as
// encoding/json matches them: the exact name, else one equal but for case.
func field(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for _, f := range fields(t, nil) {
		n := jsonName(f)
		if n == key {
			return f, true
		}
		if !found && strings.EqualFold(n, key) {
			fold, found = f, true
		}
	}
	return fold, found
}
