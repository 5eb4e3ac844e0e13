package graph

import (
	"fmt"
	"strings"
)

// Mermaid prints the graph as a Mermaid flowchart (top to bottom), which
// GitHub, GitLab and most wikis render: each state a node (Choice states
// as diamonds, Start and End as stadiums), Choice edges labelled with their
// rule, Default edges labelled "Default", Catch edges dashed and labelled
// with their errors, Parallel and Map states as subgraphs holding their
// branches or item processor. Node ids are generated (n1, n2...); state
// names appear only in labels, escaped. status, when not nil, maps state
// names to "succeeded" (drawn green) or anything else (drawn red), as SVG
// does for coverage.
func Mermaid(top *Scope, status map[string]string) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	ids := map[string]string{}
	next := 0
	id := func(nodeID string) string {
		if s, ok := ids[nodeID]; ok {
			return s
		}
		next++
		s := fmt.Sprintf("n%d", next)
		ids[nodeID] = s
		return s
	}
	classes := map[string][]string{}
	var scope func(sc *Scope, pre string)
	scope = func(sc *Scope, pre string) {
		for _, n := range sc.Nodes {
			nid := id(n.ID)
			switch {
			case n.Kind == KindStart || n.Kind == KindEnd:
				fmt.Fprintf(&b, "%s%s([%s])\n", pre, nid, label(n.Name))
				classes["marker"] = append(classes["marker"], nid)
			case n.Kind == KindMissing:
				fmt.Fprintf(&b, "%s%s[%s]\n", pre, nid, label(n.Name+" (missing)"))
				classes["missing"] = append(classes["missing"], nid)
			case n.Children != nil:
				fmt.Fprintf(&b, "%ssubgraph %s [%s]\n", pre, nid, label(n.Name+" ("+n.Type+")"))
				fmt.Fprintf(&b, "%s  direction TB\n", pre)
				for _, c := range n.Children {
					cid := id(c.ID)
					fmt.Fprintf(&b, "%s  subgraph %s [%s]\n", pre, cid, label(c.Label))
					fmt.Fprintf(&b, "%s    direction TB\n", pre)
					scope(c, pre+"    ")
					fmt.Fprintf(&b, "%s  end\n", pre)
				}
				fmt.Fprintf(&b, "%send\n", pre)
			case n.Type == "Choice":
				fmt.Fprintf(&b, "%s%s{%s}\n", pre, nid, label(n.Name))
			default:
				fmt.Fprintf(&b, "%s%s[%s]\n", pre, nid, label(n.Name+"\n"+n.Type))
				switch {
				case status != nil:
				case n.Type == "Fail":
					classes["fail"] = append(classes["fail"], nid)
				case n.Type == "Succeed":
					classes["succeed"] = append(classes["succeed"], nid)
				}
			}
			if status != nil && n.Kind == KindState {
				if status[n.Name] == "succeeded" {
					classes["covered"] = append(classes["covered"], nid)
				} else {
					classes["uncovered"] = append(classes["uncovered"], nid)
				}
			}
		}
		for _, e := range sc.Edges {
			from, to := id(e.From), id(e.To)
			switch {
			case e.Kind == EdgeCatch:
				fmt.Fprintf(&b, "%s%s -.->|%s| %s\n", pre, from, label(e.Label), to)
			case e.Label != "":
				fmt.Fprintf(&b, "%s%s -->|%s| %s\n", pre, from, label(e.Label), to)
			default:
				fmt.Fprintf(&b, "%s%s --> %s\n", pre, from, to)
			}
		}
	}
	scope(top, "  ")
	styles := []struct{ class, style string }{
		{"marker", "fill:#eef,stroke:#668"},
		{"fail", "fill:#fde8e8,stroke:#c0392b"},
		{"succeed", "fill:#e6f4ea,stroke:#2e7d32"},
		{"missing", "fill:#fff,stroke:#c0392b,stroke-dasharray:4 3"},
		{"covered", "fill:#d9f2e3,stroke:#1f8a4c"},
		{"uncovered", "fill:#fbdcdb,stroke:#c9302c"},
	}
	for _, s := range styles {
		if len(classes[s.class]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  classDef %s %s\n", s.class, s.style)
		fmt.Fprintf(&b, "  class %s %s\n", strings.Join(classes[s.class], ","), s.class)
	}
	return b.String()
}

// label quotes a node or edge label for Mermaid: inside double quotes,
// with the characters Mermaid would read as syntax or HTML written as its
// entity codes (#quot; and the like), and line breaks as <br/>.
func label(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '#':
			b.WriteString("#35;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '`':
			b.WriteString("#96;")
		case '\n':
			b.WriteString("<br/>")
		case '\r', '\t':
			b.WriteByte(' ')
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteByte(' ')
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
