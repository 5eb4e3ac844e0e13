package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/value"
)

// scaleCase is one size of a shape whose cost per transition must not grow
// with the size (issue 28's point 6).
type scaleCase struct {
	name  string
	def   string
	input any
}

// scaleCases are the shapes measured at several sizes: an inline Map of
// 10, 1,000 and 100,000 items; a loop whose history grows to 3k and 48k
// events; a payload of 16 to 250 KiB through 100 Pass states. They use
// only the engine's public API, so that the same file measures an older
// build (copy it there).
func scaleCases() []scaleCase {
	var out []scaleCase
	for _, n := range []int{10, 1000, 100000} {
		// Zeros: 100,000 of them fit the 256 KiB input limit.
		items := make([]any, n)
		for i := range items {
			items[i] = value.Int(0)
		}
		out = append(out, scaleCase{
			name: fmt.Sprintf("map-%d", n),
			def: `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ResultPath":null,"End":true,
				"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"v.$":"$","i.$":"$$.Map.Item.Index"},"End":true}}}}}}`,
			input: value.ObjectOf("items", items),
		})
	}
	// Each round of the loop enters two states, four events.
	for _, events := range []int{3000, 48000} {
		out = append(out, scaleCase{
			name: fmt.Sprintf("history-%dk", events/1000),
			def: `{"StartAt":"C","States":{
				"C":{"Type":"Choice","Choices":[{"Variable":"$.i","NumericLessThan":` + fmt.Sprint(events/4) + `,"Next":"Inc"}],"Default":"Done"},
				"Inc":{"Type":"Pass","Parameters":{"i.$":"States.MathAdd($.i, 1)"},"Next":"C"},
				"Done":{"Type":"Succeed"}}}`,
			input: value.ObjectOf("i", value.Int(0)),
		})
	}
	for _, kib := range []int{16, 64, 250} {
		states := make([]string, 100)
		for i := range states {
			next := fmt.Sprintf(`"Next":"P%d"`, i+1)
			if i == len(states)-1 {
				next = `"End":true`
			}
			states[i] = fmt.Sprintf(`"P%d":{"Type":"Pass","Parameters":{"blob.$":"$.blob","i":%d},%s}`, i, i, next)
		}
		out = append(out, scaleCase{
			name:  fmt.Sprintf("payload-%dk", kib),
			def:   `{"StartAt":"P0","States":{` + strings.Join(states, ",") + `}}`,
			input: value.ObjectOf("blob", strings.Repeat("x", kib*1024-100)),
		})
	}
	return out
}

// BenchmarkScale reports the cost per transition of each shape at each
// size: go test ./bench -run XXX -bench Scale. Within a shape, the figures
// must stay within 1.5× of each other.
func BenchmarkScale(b *testing.B) {
	for _, c := range scaleCases() {
		b.Run(c.name, func(b *testing.B) {
			sm, err := asl.Parse([]byte(c.def))
			if err != nil {
				b.Fatal(err)
			}
			p, err := interp.Compile(sm)
			if err != nil {
				b.Fatal(err)
			}
			info := interp.Info{Name: "scale", StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			transitions := 0
			b.ReportAllocs()
			for b.Loop() {
				x := engine.Run(context.Background(), p, info, c.input, engine.Config{})
				if x.Status() != interp.Succeeded {
					b.Fatalf("status %s: %+v", x.Status(), x.Failure())
				}
				for _, e := range x.History() {
					if strings.HasSuffix(e.Type, "StateEntered") {
						transitions++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(transitions), "ns/transition")
		})
	}
}
