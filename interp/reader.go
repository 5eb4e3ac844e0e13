package interp

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

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
	items    []any
	done     bool
}

// s3Action is the AWS SDK integration that carries out an ItemReader's
// call: the invoker serves it like a Task's aws-sdk:s3 call (the AWS
// service, an S3-compatible endpoint, or a folder standing in for a bucket).
const s3Action = "arn:aws:states:::aws-sdk:s3:"

// startRead evaluates the ItemReader and asks for its first S3 call.
func (th *thread) startRead(in any) {
	params, maxItems, f := th.cur.ev.readerParams(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	po, ok := params.(*value.Object)
	if !ok {
		th.fail(&Failure{Error: ErrItemReaderFailed, Cause: "The ItemReader's parameters must be an object, not " + value.String(params)})
		return
	}
	th.run.read = &readRun{in: in, params: po, maxItems: maxItems}
	th.readCall(po)
}

// readCall invokes the ItemReader's S3 action with params.
func (th *thread) readCall(params *value.Object) {
	th.run.read.op = th.s3Call(opRead, th.cur.Reader.Action, params)
}

// s3Call invokes an S3 action (an ItemReader's read, a ResultWriter's put)
// for the thread's Map state, as an op of kind.
func (th *thread) s3Call(kind opKind, action string, params *value.Object) *op {
	x := th.x
	o := x.newOp(th, kind)
	o.request = task.Request{
		Resource:         s3Action + action,
		StateName:        th.cur.Name,
		StateMachineName: x.info.StateMachineName,
		TestCase:         x.info.TestCase,
		Input:            params,
		ContextFrom:      o,
	}
	o.ctx = th.contextAt()
	o.req = &o.request
	x.command(Command{Kind: Invoke, ID: o.id, Request: o.req})
	return o
}

// readDone takes the answer of an ItemReader's S3 call: the object's items,
// or a page of a listing (asking for the next page while there is one).
func (th *thread) readDone(res task.Result) {
	r, rd := th.run.read, th.cur.Reader
	r.op = nil
	if res.Failed() {
		th.fail(&Failure{Error: ErrItemReaderFailed, Cause: fmt.Sprintf("%s: %s", res.Error, res.Cause)})
		return
	}
	out, _ := res.Output.(*value.Object)
	if out == nil {
		th.fail(&Failure{Error: ErrItemReaderFailed, Cause: "s3:" + rd.Action + " answered " + value.String(res.Output) + ", not an object"})
		return
	}
	switch rd.Action {
	case "listObjectsV2":
		contents, _ := out.Get("Contents")
		list, _ := contents.([]any)
		for _, c := range list {
			r.items = append(r.items, listedObject(c))
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
			th.readCall(p)
			return
		}
	default:
		body, _ := out.Get("Body")
		items, err := parseItems(rd.InputType, body, rd.CSVHeaderLocation == "GIVEN", rd.CSVHeaders, rd.CSVDelimiter)
		if err != nil {
			th.fail(&Failure{Error: ErrItemReaderFailed, Cause: err.Error()})
			return
		}
		r.items = items
	}
	if r.maxItems > 0 && len(r.items) > r.maxItems {
		r.items = r.items[:r.maxItems]
	}
	if r.items == nil {
		r.items = []any{}
	}
	r.done = true
	th.mapOver(r.in)
}

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

// csvDelimiters are ReaderConfig's CSVDelimiter values.
var csvDelimiters = map[string]rune{"": ',', "COMMA": ',', "PIPE": '|', "SEMICOLON": ';', "SPACE": ' ', "TAB": '\t'}

// parseItems reads an S3 object's body as the items of a Map: a JSON array,
// JSON Lines (one value a line, blank lines skipped) or CSV (each row an
// object of its columns named by the first row or by headers, every value
// a string).
func parseItems(inputType string, body any, given bool, headers []string, delim string) ([]any, error) {
	text, isStr := body.(string)
	if !isStr {
		if arr, ok := body.([]any); ok && inputType == "JSON" {
			return arr, nil
		}
		return nil, fmt.Errorf("the object's body is not text: %s", value.String(body))
	}
	switch inputType {
	case "JSON":
		v, err := value.ParseString(text)
		if err != nil {
			return nil, fmt.Errorf("the object is not valid JSON: %w", err)
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("the JSON object must hold an array of items, not %s", typeOf(v))
		}
		return arr, nil
	case "JSONL":
		var items []any
		for i, line := range strings.Split(text, "\n") {
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
		cr := csv.NewReader(bytes.NewReader([]byte(text)))
		cr.Comma = csvDelimiters[delim]
		if given {
			cr.FieldsPerRecord = len(headers)
		}
		var items []any
		for {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("the CSV object is malformed: %w", err)
			}
			if headers == nil {
				headers = rec
				continue
			}
			row := value.NewObject(len(headers))
			for i, h := range headers {
				row.Set(h, rec[i])
			}
			items = append(items, row)
		}
		return items, nil
	}
	return nil, fmt.Errorf("the InputType %q is not supported", inputType)
}

func typeOf(v any) string {
	switch v.(type) {
	case *value.Object:
		return "an object"
	case string:
		return "a string"
	case value.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a " + fmt.Sprintf("%T", v)
}
