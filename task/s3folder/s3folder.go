// Package s3folder serves Amazon S3 calls from local folders that stand in
// for buckets: getObject, putObject and listObjectsV2 as the AWS SDK
// integration arn:aws:states:::aws-sdk:s3:ACTION answers them, which is
// also how a Distributed Map's ItemReader reads its items. An object's key
// is its path under the bucket's folder, with "/" between folders. It is a
// task.Partial: it serves only the buckets it is given.
//
// It must not import the engine beside it, the other backends, or
// anything above (service, api, cmd/stepd …); registry wires it.
package s3folder

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// Prefix is the Resource prefix of the calls a folder serves.
const Prefix = "arn:aws:states:::aws-sdk:s3:"

// Invoker serves S3 calls for the buckets it maps to folders.
type Invoker struct {
	// Buckets maps a bucket name to its folder.
	Buckets map[string]string
}

func (f *Invoker) parse(req *task.Request) (action, bucket, dir string, in *value.Object, ok bool) {
	action, found := strings.CutPrefix(req.Resource, Prefix)
	if !found || (action != "getObject" && action != "putObject" && action != "listObjectsV2") {
		return "", "", "", nil, false
	}
	in, _ = req.Input.(*value.Object)
	if in == nil {
		return "", "", "", nil, false
	}
	b, _ := in.Get("Bucket")
	bucket, _ = b.(string)
	dir, ok = f.Buckets[bucket]
	return action, bucket, dir, in, ok
}

// Serves reports whether req is a getObject, putObject or listObjectsV2
// call on one of the buckets.
func (f *Invoker) Serves(req *task.Request) bool {
	_, _, _, _, ok := f.parse(req)
	return ok
}

// Waits reports true (task.Waiting): it reads and writes files, so the
// engine calls it on a goroutine of its own.
func (f *Invoker) Waits(*task.Request) bool { return true }

// Invoke carries out the call.
func (f *Invoker) Invoke(ctx context.Context, req *task.Request) task.Result {
	action, bucket, dir, in, ok := f.parse(req)
	if !ok {
		return task.Result{Error: "States.Runtime", Cause: fmt.Sprintf("no folder stands in for the bucket of %s", req.Resource)}
	}
	if err := ctx.Err(); err != nil {
		return task.Result{Error: "States.TaskFailed", Cause: err.Error()}
	}
	switch action {
	case "getObject":
		return getObject(dir, in)
	case "putObject":
		return putObject(dir, in, req.RawBody)
	default:
		return listObjects(bucket, dir, in)
	}
}

func failure(code string, status int, msg string) task.Result {
	return task.Result{Error: "S3." + code, Cause: fmt.Sprintf("%s (Service: S3, Status Code: %d, Request ID: stepd-folder)", msg, status)}
}

// file returns the path of key under dir, refusing keys that would leave it.
func file(dir string, in *value.Object) (string, string, *task.Result) {
	k, _ := in.Get("Key")
	key, _ := k.(string)
	if key == "" || strings.HasSuffix(key, "/") || !filepath.IsLocal(filepath.FromSlash(key)) {
		r := failure("S3Exception", 400, fmt.Sprintf("The key %q cannot name a file under the bucket's folder.", key))
		return "", key, &r
	}
	return filepath.Join(dir, filepath.FromSlash(key)), key, nil
}

func etag(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func getObject(dir string, in *value.Object) task.Result {
	p, _, fail := file(dir, in)
	if fail != nil {
		return *fail
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return failure("NoSuchKeyException", 404, "The specified key does not exist.")
	}
	if err != nil {
		return task.Result{Error: "S3.S3Exception", Cause: err.Error()}
	}
	st, err := os.Stat(p)
	if err != nil {
		return task.Result{Error: "S3.S3Exception", Cause: err.Error()}
	}
	out := value.NewObject(5)
	out.Set("Body", string(data))
	out.Set("ContentLength", value.Int(int64(len(data))))
	out.Set("ContentType", "application/octet-stream")
	out.Set("ETag", etag(data))
	out.Set("LastModified", st.ModTime().UTC().Format(time.RFC3339))
	return task.Result{Output: out}
}

func putObject(dir string, in *value.Object, raw []byte) task.Result {
	p, _, fail := file(dir, in)
	if fail != nil {
		return *fail
	}
	b, _ := in.Get("Body")
	// As Step Functions sends a Body: its JSON text, a string's with its
	// quotes.
	data := []byte(value.String(b))
	if raw != nil {
		data = raw // a ResultWriter's JSON Lines
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return task.Result{Error: "S3.S3Exception", Cause: err.Error()}
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return task.Result{Error: "S3.S3Exception", Cause: err.Error()}
	}
	return task.Result{Output: value.ObjectOf("ETag", etag(data))}
}

// listObjects lists the files under dir whose keys start with Prefix, in
// key order, MaxKeys (default 1000) a page; the continuation token is the
// last key of the page.
func listObjects(bucket, dir string, in *value.Object) task.Result {
	str := func(k string) string {
		v, _ := in.Get(k)
		s, _ := v.(string)
		return s
	}
	prefix, after := str("Prefix"), str("StartAfter")
	if t := str("ContinuationToken"); t != "" {
		after = t
	}
	maxKeys := 1000
	if v, ok := in.Get("MaxKeys"); ok {
		if n, isNum := v.(value.Number); isNum {
			if i, exact := n.Int64(); exact && i >= 0 && i < 1000 {
				maxKeys = int(i)
			}
		}
	}
	type entry struct {
		key  string
		path string
		info fs.FileInfo
	}
	var all []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) || key <= after {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		all = append(all, entry{key, p, info})
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return failure("NoSuchBucketException", 404, "The specified bucket does not exist")
	}
	if err != nil {
		return task.Result{Error: "S3.S3Exception", Cause: err.Error()}
	}
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	truncated := len(all) > maxKeys
	if truncated {
		all = all[:maxKeys]
	}
	contents := make([]any, 0, len(all))
	for _, e := range all {
		data, err := os.ReadFile(e.path)
		if err != nil {
			return task.Result{Error: "S3.S3Exception", Cause: err.Error()}
		}
		o := value.NewObject(5)
		o.Set("ETag", etag(data))
		o.Set("Key", e.key)
		o.Set("LastModified", e.info.ModTime().UTC().Format(time.RFC3339))
		o.Set("Size", value.Int(e.info.Size()))
		o.Set("StorageClass", "STANDARD")
		contents = append(contents, o)
	}
	out := value.NewObject(8)
	if len(contents) > 0 {
		out.Set("Contents", contents)
	}
	out.Set("IsTruncated", truncated)
	out.Set("KeyCount", value.Int(int64(len(contents))))
	out.Set("MaxKeys", value.Number(strconv.Itoa(maxKeys)))
	out.Set("Name", bucket)
	if truncated {
		out.Set("NextContinuationToken", all[len(all)-1].key)
	}
	out.Set("Prefix", prefix)
	return task.Result{Output: out}
}
