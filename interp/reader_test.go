package interp

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/stepd/stepd/value"
)

// FuzzParseItems checks the ItemReader's object parsers: they never panic;
// every JSON Lines item is a parsed line; every CSV item is an object
// with one string member per header.
func FuzzParseItems(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a|b\n1|2", "\"x,y\",z\n1,2\n", "a,b\n1\n", "a,a\n1,2\n", "{\"a\":1}\n\n[2]\n", "[1,2,3]", "{}", "", "\xff", "{\"a\":{\"b\":[1]}}"} {
		for _, typ := range []string{"JSON", "JSONL", "CSV"} {
			f.Add(typ, s, false, "", "")
		}
	}
	f.Add("CSV", "1;2\n3;4\n", true, "SEMICOLON", "")
	f.Add("JSON", `{"a":{"b":[1,2]}}`, false, "", "/a/b")
	f.Fuzz(func(t *testing.T, typ, body string, given bool, delim, pointer string) {
		if _, ok := csvDelimiters[delim]; !ok {
			delim = ""
		}
		var headers []string
		if given {
			headers = []string{"h1", "h2"}
		}
		items, err := parseItems(readFormat{kind: typ, given: given, headers: headers, delim: csvDelimiters[delim], pointer: pointer}, []byte(body))
		if err != nil {
			return
		}
		switch typ {
		case "JSONL":
			lines := 0
			for _, l := range strings.Split(body, "\n") {
				if strings.TrimSpace(l) != "" {
					lines++
				}
			}
			if len(items) != lines {
				t.Fatalf("%d items from %d lines", len(items), lines)
			}
		case "CSV":
			for _, it := range items {
				o, ok := it.(*value.Object)
				if !ok {
					t.Fatalf("item %s is not an object", value.String(it))
				}
				if given && o.Len() != 2 {
					t.Fatalf("item %s has not the 2 given headers", value.String(o))
				}
				for _, v := range o.All {
					if _, isStr := v.(string); !isStr {
						t.Fatalf("CSV value %s is not a string", value.String(v))
					}
				}
			}
		}
	})
}

// The CSV items AWS recorded (the LocalStack snapshots of
// test_map_item_reader_*): rows with fewer fields than headers get "",
// extra fields are dropped, columns are in AWS's (hash) order, duplicate
// headers fail.
func TestParseCSVAsRecorded(t *testing.T) {
	rows := "Value1,Value2,Value3\nValue4,Value5,Value6\n,,,\ntrue,1,'HelloWorld'\nNull,None,\n   \n"
	for _, c := range []struct {
		name    string
		f       readFormat
		body    string
		want    string
		wantErr string
	}{
		{"first row", readFormat{kind: "CSV"}, "Col1,Col2,Col3\n" + rows,
			`[{"Col1":"Value1","Col2":"Value2","Col3":"Value3"},{"Col1":"Value4","Col2":"Value5","Col3":"Value6"},{"Col1":"","Col2":"","Col3":""},{"Col1":"true","Col2":"1","Col3":"'HelloWorld'"},{"Col1":"Null","Col2":"None","Col3":""},{"Col1":"   ","Col2":"","Col3":""}]`, ""},
		{"given, one header", readFormat{kind: "CSV", given: true, headers: []string{"H1"}}, rows,
			`[{"H1":"Value1"},{"H1":"Value4"},{"H1":""},{"H1":"true"},{"H1":"Null"},{"H1":"   "}]`, ""},
		{"typed headers", readFormat{kind: "CSV"}, "0,True,{}\nValue4,Value5,Value6\n,,,\ntrue,1,'HelloWorld'\nNull,None,\n   \n",
			`[{"0":"Value4","{}":"Value6","True":"Value5"},{"0":"","{}":"","True":""},{"0":"true","{}":"'HelloWorld'","True":"1"},{"0":"Null","{}":"","True":"None"},{"0":"   ","{}":"","True":""}]`, ""},
		{"first row with an empty header", readFormat{kind: "CSV"}, "H1,\nValue4,Value5,Value6\n,,,\ntrue,1,'HelloWorld'\nNull,None,\n   \n",
			`[{"":"Value5","H1":"Value4"},{"":"","H1":""},{"":"1","H1":"true"},{"":"None","H1":"Null"},{"":"","H1":"   "}]`, ""},
		{"duplicate given headers", readFormat{kind: "CSV", given: true, headers: []string{"H1", "H1", "H3"}}, rows, "", "CSV headers cannot contain duplicates."},
		{"duplicate given headers, empty object", readFormat{kind: "CSV", given: true, headers: []string{"a", "a"}}, "", "", "CSV headers cannot contain duplicates."},
		{"duplicate first-row headers", readFormat{kind: "CSV"}, "a,b,a\n1,2,3\n", "", "CSV headers cannot contain duplicates."},
		{"a JSON object", readFormat{kind: "JSON"}, `{"Hello":"world"}`, "", "Attempting to map over non-iterable node."},
		{"ItemsPointer", readFormat{kind: "JSON", pointer: "/inventory/products"}, `{"inventory":{"products":[{"a":1},{"a":2}]}}`, `[{"a":1},{"a":2}]`, ""},
		{"ItemsPointer to an object", readFormat{kind: "JSON", pointer: "/inventory"}, `{"inventory":{"products":[]}}`, "", "Attempting to map over non-iterable node."},
		{"ItemsPointer to nothing", readFormat{kind: "JSON", pointer: "/nope"}, `{"inventory":{}}`, "", `the ItemsPointer "/nope" names nothing in the object: no member "nope"`},
		{"ItemsPointer escapes", readFormat{kind: "JSON", pointer: "/a~1b/m~0n/1"}, `{"a/b":{"m~n":[0,[7]]}}`, `[7]`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			items, err := parseItems(c.f, []byte(c.body))
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := value.String(items); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// Manifests list the files to read: an S3 Inventory's in its destination
// bucket with its fileSchema as headers, an Athena manifest's as s3 URIs.
func TestParseManifest(t *testing.T) {
	f := readFormat{kind: "CSV", manifest: "S3_INVENTORY", given: true}
	files, err := parseManifest(&f, []byte(`{"sourceBucket":"src","destinationBucket":"arn:aws:s3:::dest","fileFormat":"CSV","fileSchema":"Bucket, Key, Size","files":[{"key":"inv/data/a.csv.gz"},{"key":"inv/data/b.csv.gz"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0] != (s3Object{"dest", "inv/data/a.csv.gz"}) || strings.Join(f.headers, "|") != "Bucket|Key|Size" {
		t.Fatalf("files %v headers %v", files, f.headers)
	}
	if _, err := parseManifest(&f, []byte(`{"destinationBucket":"arn:aws:s3:::d","fileFormat":"ORC","fileSchema":"a","files":[]}`)); err == nil || !strings.Contains(err.Error(), "only CSV") {
		t.Errorf("an ORC inventory: %v", err)
	}
	a := readFormat{kind: "JSONL", manifest: "ATHENA_DATA"}
	files, err = parseManifest(&a, []byte("s3://b/q/1.json\n\ns3://b/q/2.json\n"))
	if err != nil || len(files) != 2 || files[1] != (s3Object{"b", "q/2.json"}) {
		t.Fatalf("%v %v", files, err)
	}
	if _, err := parseManifest(&a, []byte("http://b/x\n")); err == nil {
		t.Error("a line that is no s3 URI is read")
	}
}

// GZIP and ZSTD objects are read once decompressed.
func TestParseCompressed(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("a\n1\n2\n"))
	zw.Close()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zs := enc.EncodeAll([]byte(`[1,2]`), nil)
	for _, c := range []struct {
		f    readFormat
		data []byte
		want string
	}{
		{readFormat{kind: "CSV"}, gz.Bytes(), `[{"a":"1"},{"a":"2"}]`},
		{readFormat{kind: "JSON"}, zs, `[1,2]`},
	} {
		items, err := parseItems(c.f, c.data)
		if err != nil || value.String(items) != c.want {
			t.Errorf("%s: %s %v, want %s", c.f.kind, value.String(items), err, c.want)
		}
	}
	if _, err := parseItems(readFormat{kind: "JSON"}, gz.Bytes()[:10]); err == nil || !strings.Contains(err.Error(), "GZIP") {
		t.Errorf("a cut GZIP object: %v", err)
	}
}

// A quote inside an unquoted CSV field is read as it is.
func TestParseCSVLazyQuotes(t *testing.T) {
	items, err := parseItems(readFormat{kind: "CSV"}, []byte("a,b\nsay \"hi\",2\n"))
	if err != nil || value.String(items) != `[{"a":"say \"hi\"","b":"2"}]` {
		t.Fatalf("%s %v", value.String(items), err)
	}
}
