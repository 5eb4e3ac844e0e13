package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/value"
)

// FuzzAnswers holds the answers that encode themselves (encode.go) to the
// bytes json.Marshal writes for them, for any strings and dates.
func FuzzAnswers(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a&b>", "\u2028\u2029", "\x00\x1f\b\f\n\r\t\x7f", "é日本\U0001F600", "\xff\xfe", "a\xe2\x80", "\xe2\x80\xa8x"} {
		f.Add(s, s+"2", int64(1700000000123), int64(-1))
	}
	f.Add("a", "b", int64(0), int64(1))
	f.Add("a", "b", int64(math.MaxInt64), int64(math.MinInt64))
	f.Add("a", "b", int64(1), int64(999))
	f.Fuzz(func(t *testing.T, s1, s2 string, n1, n2 int64) {
		// Dates as the handlers make them: milliseconds in seconds.
		d1, d2 := float64(n1)/1000, float64(n2)/1000
		count := int(n2 % 1000)
		var empty string
		check := func(what string, a appender, v any) {
			t.Helper()
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if got := a.appendJSON([]byte("prefix")); !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Fatalf("%s:\n got  %s\n want prefix%s", what, got, want)
			}
		}
		st := &startAnswer{ExecutionArn: s1, StartDate: &d1}
		check("start", st, struct {
			ExecutionArn string   `json:"executionArn"`
			StartDate    *float64 `json:"startDate"`
		}(*st))
		check("start without date", &startAnswer{ExecutionArn: s1}, map[string]any{"executionArn": s1, "startDate": nil})

		full := &executionDescription{ExecutionArn: s1, StateMachineArn: s2, Name: s1, Status: s2, StartDate: &d1, StopDate: &d2,
			Input: s1, InputDetails: includedDetails{true}, Output: &s2, OutputDetails: &includedDetails{}, Error: s1, Cause: s2,
			TraceHeader: s1, RedriveCount: &count, RedriveStatus: s2, RedriveStatusReason: s1, RedriveDate: &d2, MapRunArn: s2,
			BillingDetails: &billingDetails{int(n1 % 1000), count}, StateMachineVersionArn: s1, StateMachineAliasArn: s2}
		check("description", full, *full)
		bare := &executionDescription{Output: &empty}
		check("bare description", bare, *bare)

		item := executionItem{ExecutionArn: s1, StateMachineArn: s2, Name: s2, Status: s1, StartDate: &d2, StopDate: &d1,
			StateMachineVersionArn: s2, StateMachineAliasArn: s1, MapRunArn: s2, RedriveCount: &count, RedriveDate: &d1}
		items := []executionItem{item, {ExecutionArn: s2}}
		for _, key := range []string{"executions", "stateMachines", "a", "z", s1} {
			for _, next := range []string{"", s2} {
				want := map[string]any{key: items}
				if next != "" {
					want["nextToken"] = next
				}
				if key == "nextToken" {
					continue // not a list's key
				}
				check("list of "+key, &listAnswer[executionItem]{key: key, items: items, next: next}, want)
				// Items that do not encode themselves go through encoding/json.
				tags := []tag{{Key: s1, Value: s2}}
				want[key] = tags
				check("tags", &listAnswer[tag]{key: key, items: tags, next: next}, want)
			}
		}
		check("empty list", &listAnswer[executionItem]{key: "executions", items: []executionItem{}}, map[string]any{"executions": []executionItem{}})

		// Events as the engine records them: compact, strings escaped
		// without HTML escapes.
		ev := func(s string) []byte {
			b := []byte(`{"id":1,"details":{"input":`)
			b = value.AppendString(b, s)
			return append(b, `,"n":[1.5,-2e-7,true,null]}}`...)
		}
		events := [][]byte{ev(s1), ev(s2)}
		for _, next := range []string{"", s1} {
			raw := []json.RawMessage{events[0], events[1]}
			want := map[string]any{"events": raw}
			if next != "" {
				want["nextToken"] = next
			}
			check("history", &history{events: events, next: next}, want)
		}
		check("empty history", &history{events: [][]byte{}}, map[string]any{"events": []json.RawMessage{}})
	})
}

// TestHistoryAsRecorded checks that GetExecutionHistory, which writes the
// events as the engine recorded them, answers what it answered when it
// parsed each event and wrote it again: for executions whose data holds
// every kind of character, number and failure.
func TestHistoryAsRecorded(t *testing.T) {
	ctx := context.Background()
	svc := service.New(service.Config{Store: memory.New(), Log: slog.New(slog.DiscardHandler)})
	defer svc.Close()
	h := New(svc, nil)
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "h", RoleARN: "arn:aws:iam::1:role/r", Definition: `{"StartAt":"P","States":{
		"P":{"Type":"Pass","Parameters":{"s.$":"$.s","n.$":"$.n","fmt.$":"States.Format('<{}> & {}', $.s, $.n)","x":1.0,"y":-0.0,"z":1e21,"w":123456789012345678901234567890},"Next":"M"},
		"M":{"Type":"Map","ItemsPath":"$.n","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"ResultPath":"$.m","Next":"Q"},
		"Q":{"Type":"Pass","QueryLanguage":"JSONata","Output":"{% $states.input ~> |$|{'j': $string($states.input.n)}| %}","Next":"F"},
		"F":{"Type":"Fail","Error":"E<&>\u2028","Cause":"c\"\\\n\u0001\u00e9\u65e5\ud83d\ude00"}}}`})
	if err != nil {
		t.Fatal(err)
	}
	for i, input := range []string{
		`{"s":"plain","n":[1,2.5,-3e-7,1e300]}`,
		`{"s":"<tag attr=\"x\">&amp;</tag> \u2028\u2029 \u0000\u001f\b\f\n\r\t é日本😀 \\","n":[0,-0,1.0,100000000000000000000000]}`,
		`{"s":"\ud800","n":[]}`,
	} {
		e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "e" + string(rune('0'+i)), Input: input})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Wait(ctx, e.ARN); err != nil {
			t.Fatal(err)
		}
		for _, include := range []string{"", `,"includeExecutionData":true`, `,"includeExecutionData":false`} {
			for _, more := range []string{"", `,"maxResults":3`, `,"reverseOrder":true`} {
				body := []byte(`{"executionArn":"` + e.ARN + `"` + include + more + `}`)
				out, err := h.getExecutionHistory(ctx, body)
				if err != nil {
					t.Fatal(err)
				}
				got := out.(appender).appendJSON(nil)
				// As the answer was made before: each event parsed and
				// written again, encoded by encoding/json.
				var in struct {
					MaxResults   int  `json:"maxResults"`
					ReverseOrder bool `json:"reverseOrder"`
				}
				_ = json.Unmarshal(body, &in)
				evs, next, err := svc.History(ctx, e.ARN, "", in.MaxResults, in.ReverseOrder)
				if err != nil {
					t.Fatal(err)
				}
				var raw []json.RawMessage
				for _, v := range historyEvents(evs, !strings.Contains(include, "false")) {
					raw = append(raw, json.RawMessage(value.String(v)))
				}
				old := map[string]any{"events": raw}
				if next != "" {
					old["nextToken"] = next
				}
				want, err := json.Marshal(old)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s:\n got  %s\n want %s", body, got, want)
				}
			}
		}
	}
}

// BenchmarkAnswers encodes a ListExecutions page of 100 executions and a
// DescribeExecution answer, by appendJSON and by encoding/json.
func BenchmarkAnswers(b *testing.B) {
	start, stop := 1764160000.123, 1764160001.456
	items := make([]executionItem, 100)
	for i := range items {
		name := "execution-" + strings.Repeat("x", i%10)
		items[i] = executionItem{ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:load:" + name,
			StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:load", Name: name, Status: "SUCCEEDED",
			StartDate: &start, StopDate: &stop}
	}
	list := &listAnswer[executionItem]{key: "executions", items: items, next: "token"}
	out := `{"order":{"id":"e1","items":[1,2,3]},"result":{"ok":true}}`
	desc := &executionDescription{ExecutionArn: items[0].ExecutionArn, StateMachineArn: items[0].StateMachineArn, Name: "e1",
		Status: "SUCCEEDED", StartDate: &start, StopDate: &stop, Input: `{"order":{"id":"e1","items":[1,2,3]}}`,
		InputDetails: includedDetails{true}, Output: &out, OutputDetails: &includedDetails{true}}
	for _, a := range []struct {
		name string
		v    appender
		old  any
	}{{"list", list, map[string]any{"executions": items, "nextToken": "token"}}, {"describe", desc, *desc}} {
		b.Run(a.name+"/append", func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				buf = a.v.appendJSON(buf[:0])
			}
		})
		b.Run(a.name+"/encoding-json", func(b *testing.B) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			for b.Loop() {
				buf.Reset()
				_ = enc.Encode(a.old)
			}
		})
	}
}
