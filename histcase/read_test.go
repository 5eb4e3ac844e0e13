package histcase

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pages splits a history into pages of n events, as the AWS CLI prints
// them with --max-items n, reversed when reverse is set.
func pages(t testing.TB, data []byte, n int, reverse bool) []string {
	t.Helper()
	v, err := value.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := v.(*value.Object).Get("events")
	list := append([]any(nil), evs.([]any)...)
	if reverse {
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
			list[i], list[j] = list[j], list[i]
		}
	}
	var out []string
	for i := 0; i < len(list); i += n {
		p := value.ObjectOf("events", list[i:min(i+n, len(list))])
		if i+n < len(list) {
			p.Set("NextToken", "tok")
		}
		out = append(out, value.Indent(p))
	}
	return out
}

func TestReadShapes(t *testing.T) {
	data := readFile(t, "retry.history.json")
	whole, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	ps := pages(t, data, 3, false)
	rs := pages(t, data, 4, true)
	for name, text := range map[string]string{
		"concatenated pages":          strings.Join(ps, "\n"),
		"concatenated, reverse order": strings.Join(rs, ""),
		"array of pages":              "[" + strings.Join(ps, ",") + "]",
		"overlapping pages":           strings.Join(append(ps, ps[1]), "\n"),
		"array of events":             value.String(mustGet(t, data, "events")),
		"stepd run output":            `{"status":"SUCCEEDED","history":` + value.String(mustGet(t, data, "events")) + `}`,
	} {
		h, err := Read([]byte(text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(h.Events) != len(whole.Events) {
			t.Errorf("%s: %d events, want %d", name, len(h.Events), len(whole.Events))
			continue
		}
		for i, e := range h.Events {
			if e.ID != int64(i+1) || e.Type != whole.Events[i].Type {
				t.Errorf("%s: event %d is %d %s, want %d %s", name, i, e.ID, e.Type, i+1, whole.Events[i].Type)
			}
		}
	}
}

func mustGet(t testing.TB, data []byte, k string) any {
	v, err := value.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(*value.Object).Get(k)
	return m
}

// TestReadRefuses: each way a history can be unusable gets a message
// naming what is wrong.
func TestReadRefuses(t *testing.T) {
	data := readFile(t, "retry.history.json")
	ps := pages(t, data, 3, false)
	noData := strings.ReplaceAll(string(data), `"input":"{\"n\":1}",`, ``)
	for name, tc := range map[string]struct{ text, want string }{
		"empty":         {"", "the history is empty"},
		"not JSON":      {"{\"events\": [", "not JSON"},
		"a page gone":   {ps[0] + ps[2], "events 4-6 are missing"},
		"no events":     {`{"events": []}`, "has no events"},
		"bad event":     {`{"events": [{"id": 1}]}`, "type: must be a non-empty string"},
		"bad id":        {`{"events": [{"type": "ExecutionStarted", "id": "one"}]}`, "id: must be an integer"},
		"two versions":  {ps[0] + strings.Replace(ps[0], "Charge", "Other", 1), "event 2 is given twice"},
		"not an object": {`"history"`, "not a string"},
	} {
		_, err := Read([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
	// A history without its data reads, but a case cannot be built.
	h, err := Read([]byte(noData))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), h, Options{DefinitionText: string(readFile(t, "retry.asl.json"))})
	if err == nil || !strings.Contains(err.Error(), "includeExecutionData") || !strings.Contains(err.Error(), "event 1 (ExecutionStarted) has no input") {
		t.Errorf("without data: got %v, want a refusal naming the event and includeExecutionData", err)
	}
	// Nor from one that has not ended.
	h, err = Read([]byte(ps[0] + ps[1]))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), h, Options{DefinitionText: string(readFile(t, "retry.asl.json"))})
	if err == nil || !strings.Contains(err.Error(), "had not ended") {
		t.Errorf("unfinished: got %v", err)
	}
}

// FuzzRead: any input reads or fails with an error; what reads has its
// events in id order without repeats, and a case built from it (with a
// fixed definition) is built or refused, never a panic.
func FuzzRead(f *testing.F) {
	data := readFile(f, "retry.history.json")
	f.Add(data)
	f.Add([]byte(strings.Join(pages(f, data, 2, true), "")))
	f.Add([]byte(`[{"events":[{"type":"ExecutionStarted","id":1,"previousEventId":0}]}]`))
	f.Add([]byte(`{"expected":{"history":[{"type":"ExecutionStarted","id":null,"executionStartedEventDetails":{"input":{}}}]}}`))
	f.Add([]byte(`{"status":"FAILED","history":[]}`))
	def := string(readFile(f, "retry.asl.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Read(data)
		if err != nil {
			if h != nil {
				t.Fatalf("a history and an error: %v", err)
			}
			return
		}
		var last int64
		for _, e := range h.Events {
			if e.HasID && !h.Parsed {
				if e.ID <= last {
					t.Fatalf("event %d after %d", e.ID, last)
				}
				last = e.ID
			}
		}
		if len(h.Events) > 50 {
			return
		}
		if r, err := Build(context.Background(), h, Options{DefinitionText: def}); err == nil && r.Case == nil {
			t.Fatal("no case and no error")
		}
	})
}

// TestChainSkips: an outcome whose previousEventId skips an event of its
// invocation (the TaskScheduled rather than the TaskStarted) still ends
// that invocation.
func TestChainSkips(t *testing.T) {
	text := strings.Replace(string(readFile(t, "retry.history.json")), `"type":"TaskSucceeded","id":8,"previousEventId":7`, `"type":"TaskSucceeded","id":8,"previousEventId":6`, 1)
	if !strings.Contains(text, `"previousEventId":6,"taskSucceeded`) {
		t.Fatal("the edit did not apply")
	}
	h, err := Read([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Build(context.Background(), h, Options{DefinitionText: string(readFile(t, "retry.asl.json"))})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reproduced || strings.Contains(strings.Join(res.Notes, "\n"), "had not answered") {
		t.Errorf("reproduced %v, notes:\n%s", res.Reproduced, strings.Join(res.Notes, "\n"))
	}
}
