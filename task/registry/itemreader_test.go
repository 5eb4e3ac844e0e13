package registry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/parquet-go/parquet-go"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awssdk"
	"github.com/stepd/stepd/task/registry"
	"github.com/stepd/stepd/value"
)

// The objects every reader test reads, by key.
var readerObjects = map[string]string{
	"in/people.csv":   "name,age\nann,31\nbob,42\ncid,7\n",
	"in/pipes.csv":    "ann|31\nbob|42\n",
	"in/tabs.csv":     "name\tage\nann\t31\n",
	"in/semi.csv":     "name;age\nann;31\n",
	"in/space.csv":    "name age\nann 31\n",
	"in/rows.jsonl":   "{\"a\":1}\n\n{\"a\":2}\n{\"a\":3}\n",
	"nums.json":       "[1,2,3,4,5]",
	"not-array.json":  `{"a":1}`,
	"list/a.txt":      "a",
	"list/b.txt":      "bb",
	"list/sub/c.txt":  "ccc",
	"other/skip.json": "[]",
	// As AWS recorded them (test_map_item_reader_* of the LocalStack
	// snapshots): ragged rows, typed headers, duplicate headers.
	"aws/ragged.csv":    "Col1,Col2,Col3\nValue1,Value2,Value3\nValue4,Value5,Value6\n,,,\ntrue,1,'HelloWorld'\nNull,None,\n   \n",
	"aws/typed.csv":     "0,True,{}\nValue4,Value5,Value6\n,,,\n",
	"aws/dup.csv":       "a,b,a\n1,2,3\n",
	"aws/max.csv":       "Col1,Col2\nValue1,Value2\nValue3,Value4\nValue5,Value6\nValue7,Value8\n",
	"nested.json":       `{"inventory":{"products":[{"sku":"a"},{"sku":"b"}]}}`,
	"flat/one.json":     "[1,2]",
	"flat/two.json":     "[3]",
	"athena/q.csv":      "s3://BUCKET/athena/1.jsonl\ns3://BUCKET/athena/2.jsonl\n",
	"athena/1.jsonl":    "{\"n\":1}\n",
	"athena/2.jsonl":    "{\"n\":2}\n{\"n\":3}\n",
	"inv/manifest.json": `{"sourceBucket":"src","destinationBucket":"arn:aws:s3:::BUCKET","version":"2016-11-30","fileFormat":"CSV","fileSchema":"Bucket, Key, Size","files":[{"key":"inv/data/1.csv.gz","size":1}]}`,
	"inv/data/1.csv.gz": gzipped("src,a.txt,1\nsrc,b.txt,22\n"),
	"rows.parquet":      parquetRows(),
}

// gzipped is text compressed with GZIP.
func gzipped(text string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(text))
	zw.Close()
	return b.String()
}

// parquetRows is a Parquet file of two rows.
func parquetRows() string {
	type row struct {
		Name string `parquet:"name"`
		Age  int64  `parquet:"age"`
	}
	var b bytes.Buffer
	if err := parquet.Write(&b, []row{{"ann", 31}, {"bob", 42}}); err != nil {
		panic(err)
	}
	return b.String()
}

// distributedMap is a JSONPath Distributed Map over reader (its ItemReader
// JSON) with a Pass iteration, plus extra members of the Map state.
func distributedMap(reader, extra string) string {
	return `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":` + reader + extra + `,
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
}

var readerCases = []struct {
	name, def, input, want string
}{
	{"CSV, first row", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"FIRST_ROW"},"Parameters":{"Bucket":"BUCKET","Key.$":"$.key"}}`, ``),
		`{"key":"in/people.csv"}`, `[{"name":"ann","age":"31"},{"name":"bob","age":"42"},{"name":"cid","age":"7"}]`},
	{"CSV, given headers, pipes", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"GIVEN","CSVHeaders":["n","a"],"CSVDelimiter":"PIPE"},"Parameters":{"Bucket":"BUCKET","Key":"in/pipes.csv"}}`, ``),
		`{}`, `[{"a":"31","n":"ann"},{"a":"42","n":"bob"}]`},
	{"CSV, tabs", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVDelimiter":"TAB"},"Parameters":{"Bucket":"BUCKET","Key":"in/tabs.csv"}}`, ``),
		`{}`, `[{"name":"ann","age":"31"}]`},
	{"CSV, semicolons", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVDelimiter":"SEMICOLON"},"Parameters":{"Bucket":"BUCKET","Key":"in/semi.csv"}}`, ``),
		`{}`, `[{"name":"ann","age":"31"}]`},
	{"CSV, spaces", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVDelimiter":"SPACE"},"Parameters":{"Bucket":"BUCKET","Key":"in/space.csv"}}`, ``),
		`{}`, `[{"name":"ann","age":"31"}]`},
	{"CSV, MaxItemsPath, batched", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","MaxItemsPath":"$.max"},"Parameters":{"Bucket":"BUCKET","Key":"in/people.csv"}}`, `,"ItemBatcher":{"MaxItemsPerBatch":1,"BatchInput":{"from":"csv"}}`),
		`{"max":2}`, `[{"BatchInput":{"from":"csv"},"Items":[{"name":"ann","age":"31"}]},{"BatchInput":{"from":"csv"},"Items":[{"name":"bob","age":"42"}]}]`},
	{"JSON", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","MaxItems":4},"Parameters":{"Bucket":"BUCKET","Key":"nums.json"}}`, `,"ItemBatcher":{"MaxItemsPerBatch":2}`),
		`{}`, `[{"Items":[1,2]},{"Items":[3,4]}]`},
	{"JSONL", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSONL"},"Parameters":{"Bucket":"BUCKET","Key":"in/rows.jsonl"}}`, `,"ItemSelector":{"i.$":"$$.Map.Item.Index","v.$":"$$.Map.Item.Value.a"}`),
		`{}`, `[{"i":0,"v":1},{"i":1,"v":2},{"i":2,"v":3}]`},
	{"listObjectsV2 with Prefix", distributedMap(`{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"BUCKET","Prefix":"list/"}}`, `,"ItemSelector":{"k.$":"$$.Map.Item.Value.Key","s.$":"$$.Map.Item.Value.Size","e.$":"$$.Map.Item.Value.Etag"}`),
		`{}`, `[{"k":"list/a.txt","s":1,"e":"\"0cc175b9c0f1b6a831c399e269772661\""},{"k":"list/b.txt","s":2,"e":"\"21ad0bd836b90d08f4cf640b4c298e7c\""},{"k":"list/sub/c.txt","s":3,"e":"\"9df62e693988eb4e1e1444ece0578579\""}]`},
	{"listObjectsV2 over pages", distributedMap(`{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"BUCKET","Prefix":"list/","MaxKeys":1}}`, `,"ItemSelector":{"k.$":"$$.Map.Item.Value.Key"}`),
		`{}`, `[{"k":"list/a.txt"},{"k":"list/b.txt"},{"k":"list/sub/c.txt"}]`},
	{"JSONata, CSV", `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map",
		"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","MaxItems":"{% $states.input.max %}"},"Arguments":{"Bucket":"BUCKET","Key":"{% $states.input.key %}"}},
		"ItemSelector":"{% $states.context.Map.Item.Value.name %}",
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		`{"key":"in/people.csv","max":2}`, `["ann","bob"]`},
	{"CSV as AWS reads it: ragged rows", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"FIRST_ROW"},"Parameters":{"Bucket":"BUCKET","Key":"aws/ragged.csv"}}`, ``),
		`{}`, `[{"Col1":"Value1","Col2":"Value2","Col3":"Value3"},{"Col1":"Value4","Col2":"Value5","Col3":"Value6"},{"Col1":"","Col2":"","Col3":""},{"Col1":"true","Col2":"1","Col3":"'HelloWorld'"},{"Col1":"Null","Col2":"None","Col3":""},{"Col1":"   ","Col2":"","Col3":""}]`},
	{"CSV as AWS reads it: typed headers", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"FIRST_ROW"},"Parameters":{"Bucket":"BUCKET","Key":"aws/typed.csv"}}`, ``),
		`{}`, `[{"0":"Value4","{}":"Value6","True":"Value5"},{"0":"","{}":"","True":""}]`},
	{"CSV as AWS reads it: one given header", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"GIVEN","CSVHeaders":["H1"]},"Parameters":{"Bucket":"BUCKET","Key":"aws/max.csv"}}`, ``),
		`{}`, `[{"H1":"Col1"},{"H1":"Value1"},{"H1":"Value3"},{"H1":"Value5"},{"H1":"Value7"}]`},
	{"CSV duplicate headers", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV"},"Parameters":{"Bucket":"BUCKET","Key":"aws/dup.csv"}}`, ``),
		`{}`, `FAILED States.ItemReaderFailed CSV headers cannot contain duplicates.`},
	{"MaxItemsPath -1", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","MaxItemsPath":"$.MaxItems"},"Parameters":{"Bucket":"BUCKET","Key":"aws/max.csv"}}`, ``),
		`{"MaxItems":-1}`, `FAILED States.ItemReaderFailed field MaxItems must be positive`},
	{"MaxItemsPath 1.5", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","MaxItemsPath":"$.MaxItems"},"Parameters":{"Bucket":"BUCKET","Key":"aws/max.csv"}}`, ``),
		`{"MaxItems":1.5}`, `FAILED States.Runtime An error occurred while executing the state 'M' (entered at the event id #2). The MaxItemsPath field refers to value "1.5" which is not a valid integer: $.MaxItems`},
	{"MaxItemsPath beyond AWS's limit", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","MaxItemsPath":"$.MaxItems"},"Parameters":{"Bucket":"BUCKET","Key":"aws/max.csv"}}`, ``),
		`{"MaxItems":100000001}`, `[{"Col1":"Value1","Col2":"Value2"},{"Col1":"Value3","Col2":"Value4"},{"Col1":"Value5","Col2":"Value6"},{"Col1":"Value7","Col2":"Value8"}]`},
	{"ItemsPath beside the ItemReader", `{"StartAt":"L","States":{"L":{"Type":"Pass","Parameters":{"Key":"nums.json","from_previous":["x"]},"Next":"M"},
		"M":{"Type":"Map","MaxConcurrency":1,"ItemsPath":"$.from_previous","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON"},"Parameters":{"Bucket":"BUCKET","Key.$":"$.Key"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
		`{}`, `[1,2,3,4,5]`},
	{"ItemsPointer", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","ItemsPointer":"/inventory/products"},"Parameters":{"Bucket":"BUCKET","Key":"nested.json"}}`, ``),
		`{}`, `[{"sku":"a"},{"sku":"b"}]`},
	{"listObjectsV2, LOAD_AND_FLATTEN", distributedMap(`{"Resource":"arn:aws:states:::s3:listObjectsV2","ReaderConfig":{"InputType":"JSON","Transformation":"LOAD_AND_FLATTEN"},"Parameters":{"Bucket":"BUCKET","Prefix":"flat/"}}`, ``),
		`{}`, `[1,2,3]`},
	{"Athena manifest", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSONL","ManifestType":"ATHENA_DATA","MaxItems":2},"Parameters":{"Bucket":"BUCKET","Key":"athena/q.csv"}}`, ``),
		`{}`, `[{"n":1},{"n":2}]`},
	{"S3 Inventory manifest", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"MANIFEST"},"Parameters":{"Bucket":"BUCKET","Key":"inv/manifest.json"}}`, ``),
		`{}`, `[{"Bucket":"src","Size":"1","Key":"a.txt"},{"Bucket":"src","Size":"22","Key":"b.txt"}]`},
	{"Parquet", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"PARQUET"},"Parameters":{"Bucket":"BUCKET","Key":"rows.parquet"}}`, ``),
		`{}`, `[{"name":"ann","age":31},{"name":"bob","age":42}]`},
	{"a child fails, no tolerance", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON"},"Parameters":{"Bucket":"BUCKET","Key":"nums.json"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"no"}}},"End":true}}}`,
		`{}`, `FAILED States.ExceedToleratedFailureThreshold The specified tolerated failure threshold was exceeded`},
	{"WriterConfig alone, FLATTEN", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","MaxItems":3},"Parameters":{"Bucket":"BUCKET","Key":"nums.json"}},
		"ResultWriter":{"WriterConfig":{"Transformation":"FLATTEN","OutputType":"JSON"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"a.$":"States.Array($, $)"},"OutputPath":"$.a","End":true}}},"End":true}}}`,
		`{}`, `[1,1,2,2,3,3]`},
	{"a missing object", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON"},"Parameters":{"Bucket":"BUCKET","Key":"nope.json"}}`, ``),
		`{}`, `FAILED States.ItemReaderFailed S3.NoSuchKeyException`},
	{"a JSON object that is no array", distributedMap(`{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON"},"Parameters":{"Bucket":"BUCKET","Key":"not-array.json"}}`, ``),
		`{}`, `FAILED States.ItemReaderFailed Attempting to map over non-iterable node.`},
}

// runReaderCases runs every reader case with bucket standing for BUCKET,
// served by reg.
func runReaderCases(t *testing.T, reg task.Invoker, bucket string, skip map[string]string) {
	for _, c := range readerCases {
		t.Run(c.name, func(t *testing.T) {
			if why := skip[c.name]; why != "" {
				t.Skip(why)
			}
			sm, err := asl.Parse([]byte(strings.ReplaceAll(c.def, "BUCKET", bucket)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := interp.Compile(sm)
			if err != nil {
				t.Fatal(err)
			}
			in, err := value.ParseString(c.input)
			if err != nil {
				t.Fatal(err)
			}
			info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", StateMachineName: "sm",
				StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			x := engine.Run(context.Background(), p, info, in, engine.Config{Invoker: reg})
			got := value.String(x.Output())
			if f := x.Failure(); f != nil {
				got = fmt.Sprintf("%s %s %s", x.Status(), f.Error, f.Cause)
			}
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// A Distributed Map reads its items from a folder that stands in for a
// bucket (the registry's Buckets).
func TestItemReaderFolder(t *testing.T) {
	dir := t.TempDir()
	for k, body := range readerObjects {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "BUCKET", "local-bucket")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := registry.New(registry.Config{Buckets: map[string]string{"local-bucket": dir}})
	if err != nil {
		t.Fatal(err)
	}
	runReaderCases(t, reg, "local-bucket", nil)
	t.Run("ResultWriter", func(t *testing.T) { runWriterCase(t, reg, "local-bucket") })
	t.Run("ResultWriter JSONL", func(t *testing.T) { runJSONLWriterCase(t, reg, "local-bucket") })
	if _, err := registry.New(registry.Config{Buckets: map[string]string{"b": filepath.Join(dir, "none")}}); err == nil {
		t.Error("a bucket whose folder does not exist is accepted")
	}
}

// A Distributed Map reads its items from an S3-compatible server (s3rver)
// through the AWS SDK integration.
func TestItemReaderS3(t *testing.T) {
	reg, url := s3rverRegistry(t)
	put := func(resource, params string) {
		in, err := value.ParseString(params)
		if err != nil {
			t.Fatal(err)
		}
		if r := reg.Invoke(context.Background(), &task.Request{Resource: resource, StateName: "setup", Input: in}); r.Failed() {
			t.Fatalf("%s %s: %s: %s", resource, params, r.Error, r.Cause)
		}
	}
	put("arn:aws:states:::aws-sdk:s3:createBucket", `{"Bucket":"stepd-reader"}`)
	for k, body := range readerObjects {
		// Step Functions' putObject stores a string Body with its quotes:
		// the files are uploaded as they are, with a signed PUT.
		req, err := http.NewRequest(http.MethodPut, url+"/stepd-reader/"+k, strings.NewReader(strings.ReplaceAll(body, "BUCKET", "stepd-reader")))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		creds := aws.Credentials{AccessKeyID: "S3RVER", SecretAccessKey: "S3RVER"}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT %s: %s", k, resp.Status)
		}
	}
	runReaderCases(t, reg, "stepd-reader", map[string]string{
		// s3rver makes continuation tokens with DES, which the OpenSSL 3 of
		// current Node.js no longer has: a truncated listing answers 500.
		"listObjectsV2 over pages": "s3rver cannot page a listObjectsV2 under OpenSSL 3 (its tokens use DES); paging runs over the folder",
	})
	t.Run("ResultWriter", func(t *testing.T) { runWriterCase(t, reg, "stepd-reader") })
	t.Run("ResultWriter JSONL", func(t *testing.T) { runJSONLWriterCase(t, reg, "stepd-reader") })
}

// s3rverRegistry starts s3rver and returns a registry whose S3 is it, and
// its URL.
func s3rverRegistry(t *testing.T) (*registry.Invoker, string) {
	awstest.Env(t, "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "S3RVER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
	e := awstest.StartEmulator(t, "../awssdk/testdata/emulators", "s3rver")
	reg, err := registry.New(registry.Config{Aws: &awssdk.Config{Endpoints: map[string]string{"s3": e.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	return reg, e.URL
}

// writerDef reads nums.json ([1,2,3,4,5]) from the bucket, fails the
// iteration of 3 (tolerated) and writes the results under the prefix.
const writerDef = `{"StartAt":"M","States":{"M":{"Type":"Map","ToleratedFailureCount":1,
	"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON"},"Parameters":{"Bucket":"BUCKET","Key":"nums.json"}},
	"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"BUCKET","Prefix.$":"$.prefix"}},
	"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"C","States":{
		"C":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":3,"Next":"F"}],"Default":"P"},
		"F":{"Type":"Fail","Error":"Three","Cause":"no threes"},
		"P":{"Type":"Pass","Parameters":{"twice.$":"States.MathAdd($, $)"},"End":true}}},"End":true}}}`

// runWriterCase runs writerDef and checks what it wrote, read back with
// getObject through reg: the manifest, SUCCEEDED_0.json and FAILED_0.json
// under <prefix>/<Map Run id>/, and the Map's output naming the manifest.
func runWriterCase(t *testing.T, reg task.Invoker, bucket string) {
	sm, err := asl.Parse([]byte(strings.ReplaceAll(writerDef, "BUCKET", bucket)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:x", StateMachineName: "sm",
		StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	x := engine.Run(context.Background(), p, info, value.ObjectOf("prefix", "runs/"), engine.Config{Invoker: reg})
	if f := x.Failure(); f != nil {
		t.Fatalf("%s %s: %s", x.Status(), f.Error, f.Cause)
	}
	out := x.Output().(*value.Object)
	runArn, _ := out.Get("MapRunArn")
	details, _ := out.Get("ResultWriterDetails")
	id := runArn.(string)[strings.LastIndexByte(runArn.(string), ':')+1:]
	dir := "runs/" + id + "/"
	if got, want := value.String(details), `{"Bucket":"`+bucket+`","Key":"`+dir+`manifest.json"}`; got != want {
		t.Fatalf("ResultWriterDetails = %s, want %s", got, want)
	}
	get := func(key string) any {
		r := reg.Invoke(context.Background(), &task.Request{Resource: "arn:aws:states:::aws-sdk:s3:getObject", StateName: "check",
			Input: value.ObjectOf("Bucket", bucket, "Key", key)})
		if r.Failed() {
			t.Fatalf("getObject %s: %s %s", key, r.Error, r.Cause)
		}
		body, _ := r.Output.(*value.Object).Get("Body")
		v, err := value.ParseString(body.(string))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return v
	}
	manifest := get(dir + "manifest.json").(*value.Object)
	files, _ := manifest.Get("ResultFiles")
	if got := value.String(files); !strings.Contains(got, `"FAILED":[{"Key":"`+dir+`FAILED_0.json","Size":`) ||
		!strings.Contains(got, `"PENDING":[]`) || !strings.Contains(got, `"SUCCEEDED":[{"Key":"`+dir+`SUCCEEDED_0.json","Size":`) {
		t.Errorf("ResultFiles = %s", got)
	}
	if arn, _ := manifest.Get("MapRunArn"); arn != runArn {
		t.Errorf("manifest MapRunArn = %v", arn)
	}
	var outputs []string
	for _, e := range get(dir + "SUCCEEDED_0.json").([]any) {
		o := e.(*value.Object)
		st, _ := o.Get("Status")
		output, _ := o.Get("Output")
		outputs = append(outputs, fmt.Sprint(st, " ", output))
	}
	if got := strings.Join(outputs, ", "); got != `SUCCEEDED {"twice":2}, SUCCEEDED {"twice":4}, SUCCEEDED {"twice":8}, SUCCEEDED {"twice":10}` {
		t.Errorf("SUCCEEDED_0.json: %s", got)
	}
	failed := get(dir + "FAILED_0.json").([]any)
	if len(failed) != 1 {
		t.Fatalf("FAILED_0.json has %d entries", len(failed))
	}
	fo := failed[0].(*value.Object)
	for k, want := range map[string]any{"Status": "FAILED", "Error": "Three", "Cause": "no threes", "Input": "3"} {
		if got, _ := fo.Get(k); got != want {
			t.Errorf("FAILED_0.json %s = %v, want %v", k, got, want)
		}
	}
}

// runJSONLWriterCase runs writerDef with a WriterConfig (COMPACT, JSONL):
// SUCCEEDED_0.jsonl holds the outputs alone, one a line; FAILED_0.jsonl
// the failed execution with its metadata, as Transformation NONE.
func runJSONLWriterCase(t *testing.T, reg task.Invoker, bucket string) {
	def := strings.Replace(strings.ReplaceAll(writerDef, "BUCKET", bucket), `"Prefix.$":"$.prefix"}`, `"Prefix.$":"$.prefix"},"WriterConfig":{"OutputType":"JSONL","Transformation":"COMPACT"}`, 1)
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:sm:y", StateMachineName: "sm",
		StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	x := engine.Run(context.Background(), p, info, value.ObjectOf("prefix", "jsonl"), engine.Config{Invoker: reg})
	if f := x.Failure(); f != nil {
		t.Fatalf("%s %s: %s", x.Status(), f.Error, f.Cause)
	}
	runArn, _ := x.Output().(*value.Object).Get("MapRunArn")
	dir := "jsonl/" + runArn.(string)[strings.LastIndexByte(runArn.(string), ':')+1:] + "/"
	get := func(key string) string {
		r := reg.Invoke(context.Background(), &task.Request{Resource: "arn:aws:states:::aws-sdk:s3:getObject", StateName: "check",
			Input: value.ObjectOf("Bucket", bucket, "Key", key)})
		if r.Failed() {
			t.Fatalf("getObject %s: %s %s", key, r.Error, r.Cause)
		}
		body, _ := r.Output.(*value.Object).Get("Body")
		return body.(string)
	}
	if got, want := get(dir+"SUCCEEDED_0.jsonl"), "{\"twice\":2}\n{\"twice\":4}\n{\"twice\":8}\n{\"twice\":10}\n"; got != want {
		t.Errorf("SUCCEEDED_0.jsonl = %q, want %q", got, want)
	}
	if got := get(dir + "FAILED_0.jsonl"); strings.Count(got, "\n") != 1 || !strings.Contains(got, `"Error":"Three"`) {
		t.Errorf("FAILED_0.jsonl = %q", got)
	}
	if got := get(dir + "manifest.json"); !strings.Contains(got, `"Key":"`+dir+`SUCCEEDED_0.jsonl","Size":49}`) {
		t.Errorf("manifest.json = %s", got)
	}
}
