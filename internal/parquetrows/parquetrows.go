// Package parquetrows reads Apache Parquet files as rows of JSON values,
// for a Distributed Map's ItemReader of the InputType PARQUET: each row
// is an object of its columns, in the file schema's order. It registers
// itself with the interpreter (interp.RegisterItemDecoder); it is the only
// importer of github.com/parquet-go/parquet-go (see
// docs/integrations.md, Distributed Map over Amazon S3, for why that library).
//
// It imports interp (to register) and value only; interp must not import
// it (the engine does), so that the interpreter links no file-format
// library.
package parquetrows

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

func init() { interp.RegisterItemDecoder("PARQUET", Rows) }

// maxRows bounds the rows read from one file, as AWS bounds a Map's
// items.
const maxRows = 100000000

// Rows reads the rows of the Parquet file data.
func Rows(data []byte) (items []any, err error) {
	defer func() {
		// The library panics on some malformed files.
		if r := recover(); r != nil {
			items, err = nil, fmt.Errorf("malformed Parquet file: %v", r)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	schema := f.Schema()
	r := parquet.NewGenericReader[map[string]any](f, schema)
	defer r.Close()
	buf := make([]map[string]any, 64)
	items = []any{}
	for {
		for i := range buf {
			buf[i] = map[string]any{}
		}
		n, err := r.Read(buf)
		for _, row := range buf[:n] {
			items = append(items, object(schema.Fields(), row))
			if len(items) > maxRows {
				return nil, fmt.Errorf("the file has more than %d rows", maxRows)
			}
		}
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return items, nil
		}
	}
}

// object is a row (or a group) as a JSON object, its members in the
// order of fields, then any others in name order.
func object(fields []parquet.Field, m map[string]any) *value.Object {
	o := value.NewObject(len(m))
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		v, ok := m[f.Name()]
		if !ok {
			continue
		}
		seen[f.Name()] = true
		o.Set(f.Name(), jsonValue(f.Fields(), v))
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		o.Set(k, jsonValue(nil, m[k]))
	}
	return o
}

// jsonValue converts what the library reads into a JSON value: numbers,
// strings (binary data that is not UTF-8 as base64), booleans, null,
// lists and groups; a timestamp as the number the file holds, or as RFC
// 3339 text when the library gives a time.
func jsonValue(fields []parquet.Field, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		return x
	case string:
		return x
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return base64.StdEncoding.EncodeToString(x)
	case int:
		return value.Int(int64(x))
	case int8:
		return value.Int(int64(x))
	case int16:
		return value.Int(int64(x))
	case int32:
		return value.Int(int64(x))
	case int64:
		return value.Int(x)
	case uint8:
		return value.Int(int64(x))
	case uint16:
		return value.Int(int64(x))
	case uint32:
		return value.Int(int64(x))
	case uint64:
		return value.Number(strconv.FormatUint(x, 10))
	case float32:
		return number(float64(x))
	case float64:
		return number(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(nil, e)
		}
		return out
	case map[string]any:
		return object(fields, x)
	}
	return fmt.Sprint(v)
}

// number is f as JSON; NaN and infinities, which JSON lacks, as text.
func number(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return value.Float(f)
}
