package s3folder_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/s3folder"
	"github.com/stepd/stepd/value"
)

func call(t *testing.T, f *s3folder.Invoker, action, params string) task.Result {
	t.Helper()
	in, err := value.ParseString(params)
	if err != nil {
		t.Fatal(err)
	}
	req := &task.Request{Resource: s3folder.Prefix + action, Input: in}
	if !f.Serves(req) {
		t.Fatalf("%s %s: not served", action, params)
	}
	return f.Invoke(context.Background(), req)
}

// Objects written are read back and listed, page by page, in key order;
// a key that would leave the folder is refused.
func TestFolder(t *testing.T) {
	dir := t.TempDir()
	f := &s3folder.Invoker{Buckets: map[string]string{"b": dir}}
	for _, k := range []string{"p/2", "p/1", "p/sub/3", "q"} {
		if r := call(t, f, "putObject", `{"Bucket":"b","Key":"`+k+`","Body":{"k":"`+k+`"}}`); r.Failed() {
			t.Fatalf("putObject %s: %s %s", k, r.Error, r.Cause)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "p", "sub", "3"))
	if err != nil || string(data) != `{"k":"p/sub/3"}` {
		t.Fatalf("file p/sub/3 = %q, %v", data, err)
	}
	r := call(t, f, "getObject", `{"Bucket":"b","Key":"p/1"}`)
	if body, _ := r.Output.(*value.Object).Get("Body"); body != `{"k":"p/1"}` {
		t.Errorf("getObject Body = %v", body)
	}
	var keys []string
	params := `{"Bucket":"b","Prefix":"p/","MaxKeys":2}`
	for pages := 0; ; pages++ {
		r := call(t, f, "listObjectsV2", params)
		out := r.Output.(*value.Object)
		contents, _ := out.Get("Contents")
		for _, c := range contents.([]any) {
			k, _ := c.(*value.Object).Get("Key")
			keys = append(keys, k.(string))
		}
		next, ok := out.Get("NextContinuationToken")
		if !ok {
			break
		}
		if pages > 3 {
			t.Fatal("listing does not end")
		}
		params = `{"Bucket":"b","Prefix":"p/","MaxKeys":2,"ContinuationToken":` + value.String(next) + `}`
	}
	if got := value.String(toAny(keys)); got != `["p/1","p/2","p/sub/3"]` {
		t.Errorf("listed %s", got)
	}
	if r := call(t, f, "getObject", `{"Bucket":"b","Key":"none"}`); r.Error != "S3.NoSuchKeyException" {
		t.Errorf("a missing key: %s %s", r.Error, r.Cause)
	}
	for _, k := range []string{"../x", "p/../../x", "/etc/passwd", ""} {
		if r := call(t, f, "getObject", `{"Bucket":"b","Key":"`+k+`"}`); r.Error != "S3.S3Exception" {
			t.Errorf("key %q: %s %s", k, r.Error, r.Cause)
		}
	}
	if f.Serves(&task.Request{Resource: s3folder.Prefix + "getObject", Input: value.ObjectOf("Bucket", "other", "Key", "k")}) {
		t.Error("a bucket without a folder is served")
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
