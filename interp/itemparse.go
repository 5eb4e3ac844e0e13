package interp

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/internal/javahash"
	"github.com/stepd/stepd/value"
)

// readFormat is how an ItemReader reads an object's items, from its
// ReaderConfig.
type readFormat struct {
	kind     string // CSV, JSON, JSONL, PARQUET; "" a listing's objects are the items
	manifest string // S3_INVENTORY or ATHENA_DATA: the object lists the files to read
	given    bool   // CSVHeaderLocation GIVEN
	headers  []string
	delim    rune
	pointer  string // ItemsPointer (JSON)
}

// readerFormat is the format rd's ReaderConfig gives.
func readerFormat(rd *asl.ItemReader) readFormat {
	f := readFormat{kind: rd.InputType, given: rd.CSVHeaderLocation == "GIVEN", headers: rd.CSVHeaders,
		delim: csvDelimiters[rd.CSVDelimiter], pointer: rd.ItemsPointer, manifest: rd.ManifestType}
	if f.kind == "MANIFEST" || f.manifest == "S3_INVENTORY" {
		// An Amazon S3 Inventory: its manifest.json lists CSV files whose
		// columns its fileSchema names.
		f.kind, f.manifest, f.given = "CSV", "S3_INVENTORY", true
	}
	if rd.Action == "listObjectsV2" && rd.Transformation != "LOAD_AND_FLATTEN" {
		f.kind = "" // the listed objects themselves
	}
	return f
}

// csvDelimiters are ReaderConfig's CSVDelimiter values.
var csvDelimiters = map[string]rune{"": ',', "COMMA": ',', "PIPE": '|', "SEMICOLON": ';', "SPACE": ' ', "TAB": '\t'}

// awsCause is a cause of States.ItemReaderFailed as AWS words it.
type awsCause string

func (c awsCause) Error() string { return string(c) }

// The causes AWS recorded.
const (
	causeNotArray        awsCause = "Attempting to map over non-iterable node."
	causeDuplicateHeader awsCause = "CSV headers cannot contain duplicates."
)

// decompress undoes a GZIP or ZSTD compression, told by the object's
// first bytes (AWS reads such objects; Amazon S3 Inventory writes its
// files in GZIP).
func decompress(data []byte) ([]byte, error) {
	var r io.Reader
	var name string
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		name = "GZIP"
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("the GZIP object cannot be read: %w", err)
		}
		r = zr
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		name = "ZSTD"
		zr, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, fmt.Errorf("the ZSTD object cannot be read: %w", err)
		}
		defer zr.Close()
		r = zr
	default:
		return data, nil
	}
	out, err := io.ReadAll(io.LimitReader(r, maxObjectBytes+1))
	if err != nil {
		return nil, fmt.Errorf("the %s object cannot be read: %w", name, err)
	}
	if len(out) > maxObjectBytes {
		return nil, fmt.Errorf("the object is larger than %d bytes once decompressed", maxObjectBytes)
	}
	return out, nil
}

// maxObjectBytes bounds what one object may decompress to.
const maxObjectBytes = 1 << 30

// parseItems reads an S3 object's body as the items of a Map, as AWS
// does: a JSON array (or the array at ItemsPointer), JSON Lines (one value
// a line, blank lines skipped), or CSV (each row an object of its columns
// named by the first row or by CSVHeaders, every value a string; a row
// with fewer fields than headers has "" for the others, one with more
// has the extra ones dropped).
func parseItems(f readFormat, data []byte) ([]any, error) {
	data, err := decompress(data)
	if err != nil {
		return nil, err
	}
	switch f.kind {
	case "JSON":
		return parseJSON(data, f.pointer)
	case "JSONL":
		var items []any
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			v, err := value.ParseString(line)
			if err != nil {
				return nil, fmt.Errorf("line %d is not valid JSON: %w", i+1, err)
			}
			items = append(items, v)
		}
		return items, nil
	case "CSV":
		return parseCSV(data, f)
	case "PARQUET":
		d := itemDecoder("PARQUET")
		if d == nil {
			return nil, errors.New("this build of stepd reads no Parquet objects (no decoder is registered)")
		}
		items, err := d(data)
		if err != nil {
			return nil, fmt.Errorf("the Parquet object cannot be read: %w", err)
		}
		if items == nil {
			items = []any{}
		}
		return items, nil
	}
	return nil, fmt.Errorf("the InputType %q is not supported", f.kind)
}

// parseJSON reads a JSON object's items: the array it is, or the array
// pointer (a JSON Pointer) names in it.
func parseJSON(data []byte, pointer string) ([]any, error) {
	v, err := value.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the object is not valid JSON: %w", err)
	}
	if pointer != "" {
		if v, err = jsonPointer(v, pointer); err != nil {
			return nil, err
		}
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, causeNotArray
	}
	return arr, nil
}

// jsonPointer is the value p (RFC 6901) names in v.
func jsonPointer(v any, p string) (any, error) {
	if p == "" {
		return v, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("the ItemsPointer %q is not a JSON Pointer", p)
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case *value.Object:
			next, ok := x.Get(tok)
			if !ok {
				return nil, fmt.Errorf("the ItemsPointer %q names nothing in the object: no member %q", p, tok)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || tok != strconv.Itoa(i) {
				return nil, fmt.Errorf("the ItemsPointer %q names nothing in the object: no element %q", p, tok)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("the ItemsPointer %q names nothing in the object: %q is in %s", p, tok, value.Phrase(v))
		}
	}
	return v, nil
}

// parseCSV reads CSV rows as items.
func parseCSV(data []byte, f readFormat) ([]any, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = f.delim
	if cr.Comma == 0 {
		cr.Comma = ','
	}
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true // a quote inside a field is read as it is, not refused
	headers := f.headers
	var order []int
	items := []any{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the CSV object is malformed: %w", err)
		}
		if !f.given && headers == nil {
			headers = slices.Clone(rec)
		}
		if order == nil {
			if dup := duplicate(headers); dup {
				return nil, causeDuplicateHeader
			}
			order = javahash.Order(headers) // as every recorded CSV item lists its columns
			if !f.given {
				continue
			}
		}
		row := value.NewObject(len(headers))
		for _, i := range order {
			v := ""
			if i < len(rec) {
				v = rec[i]
			}
			row.Set(headers[i], v)
		}
		items = append(items, row)
	}
	if order == nil && f.given && duplicate(headers) {
		return nil, causeDuplicateHeader
	}
	return items, nil
}

func duplicate(headers []string) bool {
	seen := make(map[string]bool, len(headers))
	for _, h := range headers {
		if seen[h] {
			return true
		}
		seen[h] = true
	}
	return false
}

// parseManifest reads the files a manifest lists, and sets f to read them:
// an Amazon S3 Inventory's manifest.json (CSV files, in its
// destinationBucket, whose columns its fileSchema names), or an Amazon
// Athena manifest (one s3:// URI a line, each file read as f says).
func parseManifest(f *readFormat, data []byte) ([]s3Object, error) {
	data, err := decompress(data)
	if err != nil {
		return nil, err
	}
	var files []s3Object
	switch f.manifest {
	case "S3_INVENTORY":
		v, err := value.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("the S3 Inventory manifest is not valid JSON: %w", err)
		}
		m, _ := v.(*value.Object)
		if m == nil {
			return nil, fmt.Errorf("the S3 Inventory manifest is %s, not an object", value.Phrase(v))
		}
		if format, _ := m.Get("fileFormat"); format != "CSV" {
			return nil, fmt.Errorf("the S3 Inventory manifest's fileFormat is %s: only CSV inventories are read", value.String(format))
		}
		schema, _ := m.Get("fileSchema")
		s, _ := schema.(string)
		if strings.TrimSpace(s) == "" {
			return nil, errors.New("the S3 Inventory manifest has no fileSchema")
		}
		f.headers = nil
		for _, h := range strings.Split(s, ",") {
			f.headers = append(f.headers, strings.TrimSpace(h))
		}
		dest, _ := m.Get("destinationBucket")
		d, _ := dest.(string)
		bucket := strings.TrimPrefix(d, "arn:aws:s3:::")
		if bucket == "" {
			return nil, errors.New("the S3 Inventory manifest has no destinationBucket")
		}
		list, _ := m.Get("files")
		arr, ok := list.([]any)
		if !ok {
			return nil, errors.New("the S3 Inventory manifest has no files array")
		}
		for _, e := range arr {
			o, _ := e.(*value.Object)
			var key string
			if o != nil {
				k, _ := o.Get("key")
				key, _ = k.(string)
			}
			if key == "" {
				return nil, fmt.Errorf("the S3 Inventory manifest lists a file without a key: %s", value.String(e))
			}
			files = append(files, s3Object{bucket, key})
		}
	case "ATHENA_DATA":
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			rest, ok := strings.CutPrefix(line, "s3://")
			bucket, key, found := strings.Cut(rest, "/")
			if !ok || !found || bucket == "" || key == "" {
				return nil, fmt.Errorf("line %d of the Athena manifest is not an s3://bucket/key URI: %q", i+1, line)
			}
			files = append(files, s3Object{bucket, key})
		}
	default:
		return nil, fmt.Errorf("the ManifestType %q is not supported", f.manifest)
	}
	if files == nil {
		files = []s3Object{}
	}
	return files, nil
}
