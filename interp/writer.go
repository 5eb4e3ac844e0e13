package interp

import (
	"fmt"
	"strings"
	"time"

	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// iterRecord is one iteration of a Distributed Map seen as the child
// execution AWS runs for it: what the ResultWriter writes about it.
type iterRecord struct {
	input       any
	start, stop time.Time
	failure     *Failure // nil: succeeded
}

// writeRun is a ResultWriter's writing: the files still to put, each an
// s3:putObject call the engine carries out (like an ItemReader's reads),
// then the Map state's output.
type writeRun struct {
	c      *container
	files  []*value.Object // putObject parameters, manifest.json last
	raw    [][]byte        // each file's body as it is (JSON Lines), or nil
	op     *op
	output any
}

// startWrite writes the Map Run's results as AWS does, under
// <Prefix>/<Map Run id>/: SUCCEEDED_0.json and FAILED_0.json (each when it
// has entries) and manifest.json, which lists them; the Map's output is
// then {"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}}. The
// WriterConfig's Transformation shapes the succeeded entries (NONE, the
// default with a Resource: each with its execution's metadata; COMPACT:
// the outputs alone; FLATTEN: the outputs, arrays flattened one level);
// failed ones keep their metadata. With a WriterConfig alone nothing is
// written: the state's output is the shaped results.
func (th *thread) startWrite(c *container) {
	w := c.st.Writer
	ok, failed, all := c.resultEntries(w.Transformation)
	if w.Resource == "" {
		c.shaped = true
		th.run.write = &writeRun{c: c, output: all}
		c.succeed()
		return
	}
	params, f := c.st.ev.writerParams(th, c)
	if f != nil {
		th.fail(f)
		return
	}
	po, _ := params.(*value.Object)
	var bucket, prefix string
	if po != nil {
		b, _ := po.Get("Bucket")
		bucket, _ = b.(string)
		p, _ := po.Get("Prefix")
		prefix, _ = p.(string)
	}
	if bucket == "" {
		th.fail(&Failure{Error: ErrResultWriterFailed, Cause: "The ResultWriter's parameters must name a Bucket: " + value.String(params)})
		return
	}
	id := c.runArn[strings.LastIndexByte(c.runArn, ':')+1:]
	dir := id + "/"
	if prefix != "" {
		dir = strings.TrimSuffix(prefix, "/") + "/" + dir
	}
	wr := &writeRun{c: c}
	listed := value.NewObject(3)
	for _, g := range []struct {
		status  string
		entries []any
	}{{"FAILED", failed}, {"PENDING", nil}, {"SUCCEEDED", ok}} {
		files := []any{}
		if len(g.entries) > 0 {
			if w.OutputType == "JSONL" {
				// One entry a line, written as it is.
				key := dir + g.status + "_0.jsonl"
				var text []byte
				for _, e := range g.entries {
					text = append(value.Append(text, e), '\n')
				}
				wr.files = append(wr.files, value.ObjectOf("Bucket", bucket, "Key", key, "Body", string(text)))
				wr.raw = append(wr.raw, text)
				files = append(files, value.ObjectOf("Key", key, "Size", value.Int(int64(len(text)))))
			} else {
				key := dir + g.status + "_0.json"
				body := any(g.entries)
				wr.files = append(wr.files, value.ObjectOf("Bucket", bucket, "Key", key, "Body", body))
				wr.raw = append(wr.raw, nil)
				files = append(files, value.ObjectOf("Key", key, "Size", value.Int(int64(value.EncodedLen(body, 1<<62)))))
			}
		}
		listed.Set(g.status, files)
	}
	manifestKey := dir + "manifest.json"
	manifest := value.ObjectOf("DestinationBucket", bucket, "MapRunArn", c.runArn, "ResultFiles", listed)
	wr.files = append(wr.files, value.ObjectOf("Bucket", bucket, "Key", manifestKey, "Body", manifest))
	wr.raw = append(wr.raw, nil)
	wr.output = value.ObjectOf("MapRunArn", c.runArn, "ResultWriterDetails", value.ObjectOf("Bucket", bucket, "Key", manifestKey))
	th.run.write = wr
	th.writeNext()
}

// resultEntries are the Map Run's results shaped by transformation: the
// succeeded and the failed ones, and all of them in item order.
func (c *container) resultEntries(transformation string) (ok, failed, all []any) {
	x := c.owner.x
	smArn := x.scope().StateMachine(x.info.StateMachineName + "/" + mapRunLabel(c.st))
	shape := transformation
	if shape == "" {
		shape = "NONE"
		if c.st.Writer.Resource == "" {
			shape = "COMPACT"
		}
	}
	all = []any{}
	for i, it := range c.iters {
		if it.failure == nil && shape != "NONE" {
			out := c.results[i]
			if arr, isArr := out.([]any); isArr && shape == "FLATTEN" {
				ok = append(ok, arr...)
				all = append(all, arr...)
				continue
			}
			ok = append(ok, out)
			all = append(all, out)
			continue
		}
		name := c.kids[i].Name
		e := value.NewObject(10)
		e.Set("ExecutionArn", c.kids[i].ARN)
		e.Set("Input", value.String(it.input))
		e.Set("InputDetails", value.ObjectOf("Included", true))
		e.Set("Name", name)
		if it.failure == nil {
			e.Set("Output", value.String(c.results[i]))
			e.Set("OutputDetails", value.ObjectOf("Included", true))
		} else {
			e.Set("Cause", it.failure.Cause)
			e.Set("Error", it.failure.Error)
		}
		e.Set("StartDate", formatTime(it.start))
		e.Set("StateMachineArn", smArn)
		if it.failure == nil {
			e.Set("Status", "SUCCEEDED")
		} else {
			e.Set("Status", "FAILED")
		}
		e.Set("StopDate", formatTime(it.stop))
		if it.failure == nil {
			ok = append(ok, e)
		} else {
			failed = append(failed, e)
		}
		all = append(all, e)
	}
	return ok, failed, all
}

// writeNext puts the next file.
func (th *thread) writeNext() {
	w := th.run.write
	params, raw := w.files[0], w.raw[0]
	w.files, w.raw = w.files[1:], w.raw[1:]
	w.op = s3Call(th, opWrite, "putObject", params, raw)
}

// writeDone takes the answer of a putObject: the next file, or, once the
// manifest is written, the Map state's success.
func (th *thread) writeDone(res task.Result) {
	w := th.run.write
	w.op = nil
	if res.Failed() {
		th.run.failEvent = "MapStateFailed"
		th.fail(&Failure{Error: ErrResultWriterFailed, Cause: fmt.Sprintf("%s: %s", res.Error, res.Cause)})
		return
	}
	if len(w.files) > 0 {
		th.writeNext()
		return
	}
	w.c.written = true
	w.c.succeed()
}
