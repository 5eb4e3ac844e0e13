package execlog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIncludes(t *testing.T) {
	for _, tc := range []struct {
		typ                  string
		all, errorLvl, fatal bool
	}{
		{"ExecutionStarted", true, false, false},
		{"PassStateEntered", true, false, false},
		{"TaskFailed", true, true, false},
		{"LambdaFunctionTimedOut", true, true, false},
		{"MapIterationAborted", true, true, false},
		{"FailStateEntered", true, true, false},
		{"ExecutionFailed", true, true, true},
		{"ExecutionTimedOut", true, true, true},
		{"ExecutionAborted", true, true, true},
		{"ExecutionSucceeded", true, false, false},
	} {
		if Includes(All, tc.typ) != tc.all || Includes(Error, tc.typ) != tc.errorLvl || Includes(Fatal, tc.typ) != tc.fatal || Includes(Off, tc.typ) {
			t.Errorf("%s: ALL %v ERROR %v FATAL %v OFF %v", tc.typ, Includes(All, tc.typ), Includes(Error, tc.typ), Includes(Fatal, tc.typ), Includes(Off, tc.typ))
		}
	}
}

const started = `{"timestamp":1700000000.123,"type":"ExecutionStarted","id":1,"previousEventId":0,"executionStartedEventDetails":{"input":"{\"a\":1.50}","inputDetails":{"truncated":false},"roleArn":"arn:aws:iam::1:role/r"}}`

func TestAppendRecord(t *testing.T) {
	got, err := AppendRecord(nil, []byte(started), "arn:aws:states:us-east-1:1:execution:m:e", true, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"1","type":"ExecutionStarted","details":{"input":"{\"a\":1.50}","inputDetails":{"truncated":false},"roleArn":"arn:aws:iam::1:role/r"},"previous_event_id":"0","event_timestamp":"1700000000123","execution_arn":"arn:aws:states:us-east-1:1:execution:m:e","redrive_count":"0"}` + "\n"
	if string(got) != want {
		t.Errorf("record\n got %s\nwant %s", got, want)
	}
	got, err = AppendRecord(got[:0], []byte(started), "arn:x", false, 2)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"id":"1","type":"ExecutionStarted","details":{"roleArn":"arn:aws:iam::1:role/r"},"previous_event_id":"0","event_timestamp":"1700000000123","execution_arn":"arn:x","redrive_count":"2"}` + "\n"
	if string(got) != want {
		t.Errorf("record without data\n got %s\nwant %s", got, want)
	}
	if got, err := AppendRecord(nil, []byte(`{"timestamp":1,"type":"PassStateEntered","id":2,"previousEventId":1}`), "arn:x", true, 0); err != nil ||
		!bytes.Contains(got, []byte(`"details":{}`)) {
		t.Errorf("an event without details: %s %v", got, err)
	}
	for _, bad := range []string{``, `[]`, `{"id":1}`, `{"type":"X"}`, `{`} {
		if _, err := AppendRecord(nil, []byte(bad), "arn:x", true, 0); err == nil {
			t.Errorf("AppendRecord(%q) took it", bad)
		}
	}
}

func TestLogGroupName(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/states/orders:*": "/aws/vendedlogs/states/orders",
		"arn:aws-cn:logs:cn-north-1:1:log-group:x:*":                                    "x",
	} {
		if got, err := LogGroupName(arn); err != nil || got != want {
			t.Errorf("LogGroupName(%q) = %q, %v; want %q", arn, got, err, want)
		}
	}
	for _, arn := range []string{"", "arn:aws:logs:us-east-1:1:log-group:x", "arn:aws:s3:::b", "arn:aws:logs:us-east-1:1:log-group::*", "arn:aws:logs:us-east-1:1:log-group:a:b:*"} {
		if _, err := LogGroupName(arn); err == nil {
			t.Errorf("LogGroupName(%q) took it", arn)
		}
	}
}

// TestToDir writes two log groups' records and finds each in its file.
func TestToDir(t *testing.T) {
	dir := t.TempDir()
	d, err := ToDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, b := "arn:aws:logs:us-east-1:1:log-group:/a/b:*", "arn:aws:logs:us-east-1:1:log-group:a_b:*"
	for _, w := range []struct{ group, line string }{{a, "1\n"}, {b, "2\n"}, {a, "3\n"}} {
		if err := d.Write(w.group, []byte(w.line)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"/a/b": "1\n3\n", "a_b": "2\n"} {
		got, err := os.ReadFile(filepath.Join(dir, FileName(name)))
		if err != nil || string(got) != want {
			t.Errorf("log group %s: %q %v, want %q", name, got, err, want)
		}
	}
	if err := d.Write("arn:aws:logs:us-east-1:1:log-group:c", []byte("x\n")); err == nil {
		t.Error("a log group ARN without :* was taken")
	}
}

// FuzzAppendRecord: any event text gives an error or one line of JSON
// whose members are AWS's, strings but details.
func FuzzAppendRecord(f *testing.F) {
	f.Add([]byte(started), true)
	f.Add([]byte(`{"timestamp":1,"type":"TaskFailed","id":9,"previousEventId":8,"taskFailedEventDetails":{"error":"E","cause":"C"}}`), false)
	f.Add([]byte(`{"type":"X","id":1e3}`), true)
	f.Fuzz(func(t *testing.T, event []byte, data bool) {
		rec, err := AppendRecord(nil, event, "arn:x", data, 0)
		if err != nil {
			return
		}
		if !bytes.HasSuffix(rec, []byte("\n")) || bytes.Count(rec, []byte("\n")) != 1 {
			t.Fatalf("not one line: %q", rec)
		}
		var r map[string]any
		if err := json.Unmarshal(rec, &r); err != nil {
			t.Fatalf("not JSON: %q: %v", rec, err)
		}
		for _, k := range []string{"id", "type", "previous_event_id", "event_timestamp", "execution_arn", "redrive_count"} {
			if _, ok := r[k].(string); !ok {
				t.Fatalf("%s is %#v in %s", k, r[k], rec)
			}
		}
		if _, ok := r["details"].(map[string]any); !ok {
			t.Fatalf("details in %s", rec)
		}
	})
}

// FuzzLogGroupName: a name LogGroupName returns makes a file name of its
// own, with no path separator.
func FuzzLogGroupName(f *testing.F) {
	f.Add("arn:aws:logs:us-east-1:1:log-group:/aws/vendedlogs/states/x:*")
	f.Add("arn:aws:logs:us-east-1:1:log-group:..:*")
	f.Fuzz(func(t *testing.T, arn string) {
		name, err := LogGroupName(arn)
		if err != nil {
			return
		}
		fn := FileName(name)
		if strings.ContainsAny(fn, `/\`) || filepath.Base(fn) != fn || fn == ".log" {
			t.Fatalf("FileName(%q) = %q", name, fn)
		}
	})
}
