package graph

import (
	"encoding/xml"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/value"
)

// tricky has every kind of node and edge, and names that need escaping.
const tricky = `{"StartAt":"Start \"quoted\"","States":{
"Start \"quoted\"":{"Type":"Pass","Next":"Route #1"},
"Route #1":{"Type":"Choice","Choices":[
  {"Variable":"$.a","StringEquals":"x<y>&z","Next":"Fan out"},
  {"And":[{"Variable":"$.n","NumericGreaterThan":1},{"Not":{"Variable":"$.m","IsPresent":true}}],"Next":"Each"},
  {"Variable":"$.p","StringEqualsPath":"$.q","Next":"Nowhere"}],"Default":"Fail ✗"},
"Fan out":{"Type":"Parallel","Branches":[
  {"StartAt":"B1","States":{"B1":{"Type":"Pass","End":true}}},
  {"StartAt":"B2","States":{"B2":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["States.ALL"]}],"Next":"B2"}}}],
 "Catch":[{"ErrorEquals":["States.TaskFailed","Custom` + "`" + `err"],"Next":"Fail ✗"}],"Next":"Done"},
"Each":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"Item","States":{"Item":{"Type":"Succeed"}}},"End":true},
"Fail ✗":{"Type":"Fail"},
"Done":{"Type":"Succeed"}}}`

func mustParse(t testing.TB, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBuild(t *testing.T) {
	top := Build(mustParse(t, tricky))
	var edges []string
	for _, e := range top.Edges {
		edges = append(edges, strings.TrimPrefix(e.From, "s0:")+" -"+e.Kind+":"+e.Label+"-> "+strings.TrimPrefix(e.To, "s0:"))
	}
	want := []string{
		`start -next:-> Start "quoted"`,
		`Start "quoted" -next:-> Route #1`,
		`Route #1 -choice:$.a == "x<y>&z"-> Fan out`,
		`Route #1 -choice:($.n > 1) && (!($.m is present))-> Each`,
		`Route #1 -choice:$.p == $.q-> missing:Nowhere`,
		`Route #1 -default:Default-> Fail ✗`,
		`Fan out -next:-> Done`,
		"Fan out -catch:Catch States.TaskFailed, Custom`e…-> Fail ✗",
		`Each -next:-> end`,
		`Fail ✗ -next:-> end`,
		`Done -next:-> end`,
	}
	if strings.Join(edges, "\n") != strings.Join(want, "\n") {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(edges, "\n"), strings.Join(want, "\n"))
	}
	var fan, each *Node
	for _, n := range top.Nodes {
		switch n.Name {
		case "Fan out":
			fan = n
		case "Each":
			each = n
		}
	}
	if len(fan.Children) != 2 || fan.Children[1].Label != "Branch 2" || len(each.Children) != 1 || each.Children[0].Label != "Item processor (distributed)" {
		t.Errorf("containers: %+v %+v", fan.Children, each.Children)
	}
	// B2 loops to itself.
	b2 := fan.Children[1]
	if len(b2.Edges) != 2 || b2.Edges[1].From != b2.Edges[1].To {
		t.Errorf("B2's edges: %+v", b2.Edges)
	}
}

func TestRuleText(t *testing.T) {
	for _, tt := range []struct{ rule, want string }{
		{`{"Variable":"$.s","StringEquals":"done","Next":"X"}`, `$.s == "done"`},
		{`{"Variable":"$.n","NumericLessThanEqualsPath":"$.max","Next":"X"}`, `$.n <= $.max`},
		{`{"Variable":"$.b","IsNull":false,"Next":"X"}`, `$.b is not null`},
		{`{"Variable":"$.b","IsPresent":false,"Next":"X"}`, `$.b is absent`},
		{`{"Or":[{"Variable":"$.a","BooleanEquals":true},{"Variable":"$.t","TimestampGreaterThan":"2024-01-01T00:00:00Z"}],"Next":"X"}`, `($.a == true) || ($.t > "2024-01-01T00:00:00Z")`},
		{`{"Condition":"{% $states.input.n > 3 %}","Next":"X"}`, `$states.input.n > 3`},
		{`{"Next":"X"}`, `rule`},
	} {
		if got := RuleText(mustParse(t, tt.rule).(*value.Object)); got != tt.want {
			t.Errorf("RuleText(%s) = %q, want %q", tt.rule, got, tt.want)
		}
	}
}

func TestMermaid(t *testing.T) {
	m := Mermaid(Build(mustParse(t, tricky)), nil)
	for _, want := range []string{
		"flowchart TD\n",
		`n2["Start #quot;quoted#quot;<br/>Pass"]`,
		`n3{"Route #35;1"}`,
		`-->|"$.a == #quot;x#lt;y#gt;#amp;z#quot;"|`,
		`-->|"Default"|`,
		`-.->|"Catch States.TaskFailed, Custom#96;e…"|`,
		`subgraph n4 ["Fan out (Parallel)"]`,
		`subgraph n5 ["Branch 1"]`,
		`["Nowhere (missing)"]`,
		"class n15,n18 succeed",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("Mermaid lacks %q:\n%s", want, m)
		}
	}
	if strings.Count(m, "subgraph ") != strings.Count(m, "\n    end\n")+strings.Count(m, "\n  end\n")+strings.Count(m, "\n      end\n") {
		t.Errorf("unbalanced subgraphs:\n%s", m)
	}
	checkMermaidSyntax(t, "tricky", m)
}

// checkMermaidSyntax checks what Mermaid's grammar needs of our output:
// every label quoted with no raw quote inside, subgraphs closed, and every
// edge between declared ids.
func checkMermaidSyntax(t *testing.T, name, m string) {
	t.Helper()
	declared := map[string]bool{}
	depth := 0
	for _, line := range strings.Split(strings.TrimSpace(m), "\n")[1:] {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "subgraph "):
			depth++
			declared[strings.Fields(l)[1]] = true
		case l == "end":
			depth--
		case strings.HasPrefix(l, "direction "), strings.HasPrefix(l, "classDef "), strings.HasPrefix(l, "class "):
		case strings.Contains(l, " --> ") || strings.Contains(l, " -->|") || strings.Contains(l, " -.->|"):
			f := strings.Fields(l)
			from, to := f[0], f[len(f)-1]
			if !declared[from] || !declared[to] {
				t.Errorf("%s: edge between undeclared ids: %s", name, l)
			}
		default:
			i := strings.IndexAny(l, "[({")
			if i <= 0 {
				t.Errorf("%s: unexpected line %q", name, l)
				continue
			}
			declared[l[:i]] = true
		}
		if strings.Count(l, `"`)%2 != 0 {
			t.Errorf("%s: a quote inside a label: %s", name, l)
		}
	}
	if depth != 0 {
		t.Errorf("%s: %d subgraphs left open", name, depth)
	}
}

// checkLayout checks the layout of a scope and its children: nodes inside
// the scope and apart from each other, edges starting and ending on their
// nodes' borders, forward edges pointing down.
func checkLayout(t *testing.T, name string, sc *Scope) {
	t.Helper()
	byID := map[string]*Node{}
	for i, n := range sc.Nodes {
		byID[n.ID] = n
		if n.X-n.W/2 < -0.01 || n.Y-n.H/2 < -0.01 || n.X+n.W/2 > sc.Width+0.01 || n.Y+n.H/2 > sc.Height+0.01 {
			t.Errorf("%s: %s at (%.1f,%.1f) %gx%g is outside the scope %gx%g", name, n.ID, n.X, n.Y, n.W, n.H, sc.Width, sc.Height)
		}
		for _, o := range sc.Nodes[:i] {
			if math.Abs(n.X-o.X) < (n.W+o.W)/2-0.01 && math.Abs(n.Y-o.Y) < (n.H+o.H)/2-0.01 {
				t.Errorf("%s: %s and %s overlap", name, n.ID, o.ID)
			}
		}
		for _, c := range n.Children {
			checkLayout(t, name+"/"+n.Name, c)
		}
	}
	onBorder := func(n *Node, p Point) bool {
		dx, dy := math.Abs(p.X-n.X), math.Abs(p.Y-n.Y)
		in := dx <= n.W/2+0.1 && dy <= n.H/2+0.1
		edge := math.Abs(dx-n.W/2) < 0.1 || math.Abs(dy-n.H/2) < 0.1
		return in && edge
	}
	for _, e := range sc.Edges {
		from, to := byID[e.From], byID[e.To]
		if len(e.Points) < 2 {
			t.Errorf("%s: edge %s → %s has %d points", name, e.From, e.To, len(e.Points))
			continue
		}
		if !onBorder(from, e.Points[0]) || !onBorder(to, e.Points[len(e.Points)-1]) {
			t.Errorf("%s: edge %s → %s does not join its nodes: %v", name, e.From, e.To, e.Points)
		}
		if math.IsNaN(e.LX) || math.IsNaN(e.LY) {
			t.Errorf("%s: edge %s → %s: label at NaN", name, e.From, e.To)
		}
	}
}

// checkSVG parses the picture as XML.
func checkSVG(t *testing.T, name, svg string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	dec.Strict = true
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: the SVG is not well-formed XML: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Space + " " + se.Name.Local
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Errorf("%s: root element %q", name, root)
	}
}

func TestLayoutAndSVG(t *testing.T) {
	top := Build(mustParse(t, tricky))
	svg := SVG(top, map[string]string{"Done": "succeeded"})
	checkLayout(t, "tricky", top)
	checkSVG(t, "tricky", svg)
	for _, want := range []string{`data-state="Start &#34;quoted&#34;"`, `data-state="Done" data-status="succeeded"`, `data-state="B1" data-status="none"`, `class="edge catch"`, `Item processor (distributed)`} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// The forward edges of a chain point down, one rank below the other.
	chain := Build(mustParse(t, `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Pass","Next":"C"},"C":{"Type":"Pass","End":true}}}`))
	Layout(chain)
	ys := map[string]float64{}
	for _, n := range chain.Nodes {
		ys[n.Name] = n.Y
	}
	if !(ys["Start"] < ys["A"] && ys["A"] < ys["B"] && ys["B"] < ys["C"] && ys["C"] < ys["End"]) {
		t.Errorf("a chain is not drawn top to bottom: %v", ys)
	}
	// A loop back goes up, and Start stays on top.
	loop := Build(mustParse(t, `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Choice","Choices":[{"Variable":"$.x","IsNull":true,"Next":"A"}],"Default":"C"},"C":{"Type":"Succeed"}}}`))
	Layout(loop)
	checkLayout(t, "loop", loop)
	for _, n := range loop.Nodes {
		ys[n.Name] = n.Y
	}
	if !(ys["Start"] < ys["A"] && ys["A"] < ys["B"] && ys["B"] < ys["C"]) {
		t.Errorf("a loop breaks the order: %v", ys)
	}
}

// TestCorpus draws every definition of the recorded cases.
func TestCorpus(t *testing.T) {
	n := 0
	for _, f := range shared.Cases(t, "*.json") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.Parse(data)
		if err != nil {
			continue
		}
		o, _ := v.(*value.Object)
		def, ok := o.Get("definition")
		if !ok {
			continue
		}
		if _, isObj := def.(*value.Object); !isObj {
			continue
		}
		top := Build(def)
		svg := SVG(top, nil)
		checkLayout(t, f, top)
		checkSVG(t, f, svg)
		checkMermaidSyntax(t, f, Mermaid(top, nil))
		n++
	}
	if n < 100 {
		t.Errorf("only %d definitions drawn", n)
	}
}

func FuzzGraph(f *testing.F) {
	f.Add(tricky)
	f.Add(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"A"}}}`)
	f.Add(`{"States":{"A":{"Type":"Parallel","Branches":[{},{"States":[]}]},"B":{"Type":"Map","Iterator":{"StartAt":"<\"#&` + "`" + `>"}}}}`)
	f.Add(`{"StartAt":1,"States":{"x":{"Type":"Choice","Choices":[{"Not":null,"Next":{}}],"Catch":[{"Next":"x"}]}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := value.ParseString(s)
		if err != nil {
			return
		}
		top := Build(v)
		svg := SVG(top, nil)
		checkSVG(t, "fuzz", svg)
		checkMermaidSyntax(t, "fuzz", Mermaid(top, nil))
		checkLayout(t, "fuzz", top)
	})
}
