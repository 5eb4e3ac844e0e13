package interp

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// readRun is a Distributed Map's reading of its items: the ItemReader's S3
// calls, made as task invocations the engine carries out (so that what was
// read is committed with the step that received it and replay is
// deterministic), and the items read so far.
type readRun struct {
	in       any // the Map's effective input
	params   *value.Object
	maxItems int // 0: all
	op       *op
	action   string // of the call in progress: getObject or listObjectsV2
	items    []any
	done     bool
	c        *container // the Map Run, started before the read
	// files are the objects still to read after a manifest or a listing
	// (MANIFEST, ATHENA_DATA, LOAD_AND_FLATTEN), and format how to read
	// them.
	files  []s3Object
	format readFormat
}

// s3Object names an object to read.
type s3Object struct{ bucket, key string }

// maxReaderItems is the most items AWS reads: a larger MaxItems reads as
// many as there are, up to it.
const maxReaderItems = 100000000

// s3Action is the AWS SDK integration that carries out an ItemReader's
// call: the invoker serves it like a Task's aws-sdk:s3 call (the AWS
// service, an S3-compatible endpoint, or a folder standing in for a bucket).
const s3Action = "arn:aws:states:::aws-sdk:s3:"

// startRead starts a Distributed Map whose ItemReader reads its items, as
// AWS does: MapStateStarted (of length 0, the items being unknown yet),
// then the Map Run, which reads them. A failure to evaluate the reader's
// fields is a States.Runtime error of the state; a failure to read is
// States.ItemReaderFailed, of the Map Run (MapRunFailed, MapStateFailed).
func (th *thread) startRead(in any) {
	ev := th.cur.ev
	c := &container{owner: th, st: th.cur, isMap: true, input: in}
	if f := ev.mapLimits(th, c, in); f != nil {
		th.fail(f)
		return
	}
	th.x.emit(th, "MapStateStarted", "mapStateStartedEventDetails", value.ObjectOf("length", value.Int(0)))
	params, maxItems, f := ev.readerParams(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	if f := ev.mapTolerance(th, c, in); f != nil {
		th.fail(f)
		return
	}
	th.startMapRun(c)
	th.run.ctr = c // a stop or a failing sibling aborts the Map Run
	po, isObj := params.(*value.Object)
	th.run.read = &readRun{in: in, params: po, maxItems: min(maxItems, maxReaderItems), c: c, format: readerFormat(th.cur.Reader)}
	switch {
	case maxItems < 0:
		c.failMap(&Failure{Error: ErrItemReaderFailed, Cause: "field MaxItems must be positive"}, th.last)
	case !isObj:
		c.failMap(&Failure{Error: ErrItemReaderFailed, Cause: "The ItemReader's parameters must be an object, not " + value.String(params)}, th.last)
	default:
		th.run.read.call(th, th.cur.Reader.Action, po)
	}
}

// call invokes an S3 action of the ItemReader with params.
func (r *readRun) call(th *thread, action string, params *value.Object) {
	r.action = action
	r.op = s3Call(th, opRead, action, params, nil)
}

// s3Call invokes an S3 action (an ItemReader's read, a ResultWriter's put)
// for thread th's Map state, as an op of kind; raw, when not nil, is a
// put's body as it is.
func s3Call(th *thread, kind opKind, action string, params *value.Object, raw []byte) *op {
	x := th.x
	o := x.newOp(th, kind)
	o.request = task.Request{
		Resource:         s3Action + action,
		StateName:        th.cur.Name,
		StateMachineName: x.info.StateMachineName,
		TestCase:         x.info.TestCase,
		Input:            params,
		ContextFrom:      o,
		RawBody:          raw,
	}
	o.ctx = th.contextAt()
	o.req = &o.request
	x.command(Command{Kind: Invoke, ID: o.id, Request: o.req})
	return o
}

// fail fails the Map Run with States.ItemReaderFailed and cause.
func (r *readRun) fail(th *thread, cause string) {
	r.c.failMap(&Failure{Error: ErrItemReaderFailed, Cause: cause}, th.last)
}

// answer takes the answer of an ItemReader's S3 call to thread th: a page
// of a listing (asking for the next page while there is one), a manifest
// (then the files it lists), or an object's items.
func (r *readRun) answer(th *thread, res task.Result) {
	r.op = nil
	if res.Failed() {
		r.fail(th, fmt.Sprintf("%s: %s", res.Error, res.Cause))
		return
	}
	out, _ := res.Output.(*value.Object)
	if out == nil {
		r.fail(th, "s3 answered "+value.String(res.Output)+", not an object")
		return
	}
	if r.action == "listObjectsV2" {
		if r.listed(th, out) {
			return
		}
	} else {
		data, err := bodyBytes(out)
		if err != nil {
			r.fail(th, err.Error())
			return
		}
		if r.format.manifest != "" && r.files == nil {
			files, err := parseManifest(&r.format, data)
			if err != nil {
				r.fail(th, err.Error())
				return
			}
			r.files = files
		} else {
			items, err := parseItems(r.format, data)
			if err != nil {
				r.fail(th, err.Error())
				return
			}
			r.items = append(r.items, items...)
		}
	}
	if (r.maxItems == 0 || len(r.items) < r.maxItems) && len(r.files) > 0 {
		next := r.files[0]
		r.files = r.files[1:]
		if r.files == nil {
			r.files = []s3Object{}
		}
		r.call(th, "getObject", value.ObjectOf("Bucket", next.bucket, "Key", next.key))
		return
	}
	r.end(th)
}

// listed takes a page of a listObjectsV2 answer: asks for the next page
// (true) while there is one and items are wanted, or queues the listed
// objects to read (LOAD_AND_FLATTEN).
func (r *readRun) listed(th *thread, out *value.Object) bool {
	contents, _ := out.Get("Contents")
	list, _ := contents.([]any)
	bucket, _ := r.params.Get("Bucket")
	b, _ := bucket.(string)
	for _, c := range list {
		obj := listedObject(c)
		if r.format.kind == "" {
			r.items = append(r.items, obj)
			continue
		}
		o, _ := obj.(*value.Object)
		k, _ := o.Get("Key")
		key, _ := k.(string)
		if key == "" || strings.HasSuffix(key, "/") {
			continue // a folder holds no items
		}
		r.files = append(r.files, s3Object{b, key})
	}
	truncated, _ := out.Get("IsTruncated")
	next, _ := out.Get("NextContinuationToken")
	if tok, isStr := next.(string); truncated == true && isStr && tok != "" && (r.maxItems == 0 || len(r.items) < r.maxItems) {
		p := value.NewObject(r.params.Len() + 1)
		for k, v := range r.params.All {
			if k != "ContinuationToken" {
				p.Set(k, v)
			}
		}
		p.Set("ContinuationToken", tok)
		r.call(th, "listObjectsV2", p)
		return true
	}
	return false
}

// end starts the Map Run's iterations (thread th's) over the items read.
func (r *readRun) end(th *thread) {
	if r.maxItems > 0 && len(r.items) > r.maxItems {
		r.items = r.items[:r.maxItems]
	}
	if r.items == nil {
		r.items = []any{}
	}
	r.done = true
	c := r.c
	c.items = r.items
	th.mapStart(c, r.in)
}

// bodyBytes is the body of a getObject answer. A body that is not UTF-8
// text (a Parquet file, a compressed object) is kept in the answer as
// base64, so that the answer committed with this step (JSON text) gives
// back the same bytes when the execution is replayed.
func bodyBytes(out *value.Object) ([]byte, error) {
	body, _ := out.Get("Body")
	text, isStr := body.(string)
	if !isStr {
		return nil, fmt.Errorf("the object's body is not text: %s", value.String(body))
	}
	if enc, _ := out.Get(bodyEncodingKey); enc == "base64" {
		return base64.StdEncoding.DecodeString(text)
	}
	if !utf8.ValidString(text) {
		out.Set("Body", base64.StdEncoding.EncodeToString([]byte(text)))
		out.Set(bodyEncodingKey, "base64")
	}
	return []byte(text), nil
}

// bodyEncodingKey marks a getObject answer whose Body bodyBytes re-encoded.
const bodyEncodingKey = "stepd:BodyEncoding"

// listedObject is one object of a listObjectsV2 page as an ItemReader
// item: Etag, Key, LastModified (epoch seconds), Size, StorageClass.
func listedObject(c any) any {
	o, _ := c.(*value.Object)
	if o == nil {
		return c
	}
	item := value.NewObject(5)
	if v, ok := o.Get("ETag"); ok {
		item.Set("Etag", v)
	}
	if v, ok := o.Get("Key"); ok {
		item.Set("Key", v)
	}
	if v, ok := o.Get("LastModified"); ok {
		if s, isStr := v.(string); isStr {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				v = value.Int(t.Unix())
			}
		}
		item.Set("LastModified", v)
	}
	if v, ok := o.Get("Size"); ok {
		item.Set("Size", v)
	}
	if v, ok := o.Get("StorageClass"); ok {
		item.Set("StorageClass", v)
	}
	return item
}
