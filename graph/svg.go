package graph

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// style is the console's graph style (console/web/src/style.css), for a
// picture that stands alone.
const style = `text{font:13px system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;fill:#1d2330}
text.type{font-size:11px;fill:#5b6475}
.node .box{fill:#fff;stroke:#8a94a6;stroke-width:1.5}
.node.container>.box{fill:#fbfbfd}
.node.container>text.name{font-weight:600}
.branch{fill:none;stroke:#b8c0cc;stroke-dasharray:4 3}
.branch-label{font-size:11px;fill:#5b6475}
.node[data-status="succeeded"]>.box{fill:#d9f2e3;stroke:#1f8a4c}
.node[data-status="failed"]>.box{fill:#fbdcdb;stroke:#c9302c}
.node[data-status="none"]>.box{stroke:#9aa3b2}
.node.missing rect{fill:#fff;stroke:#c9302c;stroke-dasharray:4 3}
.marker rect{fill:#1d2330}
.marker text{fill:#fff;font-size:12px;font-weight:600}
.edge path{fill:none;stroke:#7b8494;stroke-width:1.5}
.edge.default path{stroke-dasharray:6 4}
.edge.catch path{stroke:#c2410c;stroke-dasharray:2 3;stroke-width:1.7}
.edge .elabel{fill:#fff;stroke:#d5d9e0}
.edge.catch .elabel{stroke:#f1b58f}
.edge text{font-size:11px;fill:#3d4555}
.edge.catch text{fill:#c2410c}
.arrowhead{fill:#7b8494}
.arrowhead.catch{fill:#c2410c}`

const defs = `<defs>
<marker id="arrow-next" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker>
<marker id="arrow-catch" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead catch"/></marker>
</defs>`

// SVG lays the graph out (Layout) and draws it as a standalone SVG
// document, as the console draws it. status, when not nil, maps state
// names to "succeeded", "failed" or "none" (the console's colours), set as
// each state's data-status; stepd graph uses it to show coverage.
func SVG(top *Scope, status map[string]string) string {
	Layout(top)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img">`+"\n", num(top.Width), num(top.Height), num(top.Width), num(top.Height))
	b.WriteString("<style>\n" + style + "\n</style>\n" + defs + "\n")
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	renderScope(&b, top, status)
	b.WriteString("</svg>\n")
	return b.String()
}

func num(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

func esc(s string) string { return html.EscapeString(s) }

func pathData(pts []Point) string {
	if len(pts) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "M%.1f,%.1f", pts[0].X, pts[0].Y)
	if len(pts) == 2 {
		fmt.Fprintf(&b, "L%.1f,%.1f", pts[1].X, pts[1].Y)
		return b.String()
	}
	// Quadratic segments through the midpoints give smooth bends.
	for i := 1; i < len(pts)-1; i++ {
		p, q := pts[i], pts[i+1]
		mx, my := (p.X+q.X)/2, (p.Y+q.Y)/2
		if i == len(pts)-2 {
			mx, my = q.X, q.Y
		}
		fmt.Fprintf(&b, "Q%.1f,%.1f %.1f,%.1f", p.X, p.Y, mx, my)
	}
	return b.String()
}

func renderScope(b *strings.Builder, sc *Scope, status map[string]string) {
	for _, e := range sc.Edges {
		fmt.Fprintf(b, `<g class="edge %s">`, e.Kind)
		if e.Title != "" {
			fmt.Fprintf(b, "<title>%s</title>", esc(e.Title))
		}
		marker := "next"
		if e.Kind == EdgeCatch {
			marker = "catch"
		}
		fmt.Fprintf(b, `<path d="%s" marker-end="url(#arrow-%s)"/>`, pathData(e.Points), marker)
		if e.Label != "" {
			w := labelWidth(e.Label)
			fmt.Fprintf(b, `<rect class="elabel" x="%.1f" y="%.1f" width="%s" height="18" rx="4"/>`, e.LX-w/2, e.LY-9, num(w))
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, e.LX, e.LY+4, esc(e.Label))
		}
		b.WriteString("</g>\n")
	}
	for _, n := range sc.Nodes {
		x, y := n.X-n.W/2, n.Y-n.H/2
		switch n.Kind {
		case KindStart, KindEnd:
			fmt.Fprintf(b, `<g class="marker %s"><rect x="%.1f" y="%.1f" width="%s" height="%s" rx="14"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text></g>`+"\n",
				n.Kind, x, y, num(n.W), num(n.H), n.X, n.Y+4, esc(n.Name))
			continue
		case KindMissing:
			fmt.Fprintf(b, `<g class="node missing"><rect x="%.1f" y="%.1f" width="%s" height="%s" rx="6"/><text x="%.1f" y="%.1f" text-anchor="middle">%s (missing)</text></g>`+"\n",
				x, y, num(n.W), num(n.H), n.X, n.Y+4, esc(n.Name))
			continue
		}
		label := n.Name + ", " + n.Type + " state"
		class := "node"
		if n.Children != nil {
			class += " container"
		}
		st := ""
		if status != nil {
			s := status[n.Name]
			if s == "" {
				s = "none"
			}
			st = fmt.Sprintf(` data-status="%s"`, esc(s))
		}
		fmt.Fprintf(b, `<g class="%s t-%s" data-state="%s"%s><title>%s</title>`, class, esc(n.Type), esc(n.Name), st, esc(label))
		if n.Children != nil {
			fmt.Fprintf(b, `<rect class="box" x="%.1f" y="%.1f" width="%s" height="%s" rx="8"/>`, x, y, num(n.W), num(n.H))
			fmt.Fprintf(b, `<text class="name" x="%.1f" y="%.1f">%s</text>`, x+10, y+19, esc(n.Name))
			fmt.Fprintf(b, `<text class="type" x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x+n.W-10, y+19, esc(n.Type))
			cx := n.X - n.InnerW/2 + pad
			for _, c := range n.Children {
				fmt.Fprintf(b, `<g class="scope" transform="translate(%.1f,%.1f)">`, cx, y+header)
				fmt.Fprintf(b, `<rect class="branch" x="0" y="0" width="%s" height="%s" rx="6"/>`, num(c.Width), num(c.Height+22))
				fmt.Fprintf(b, `<text class="branch-label" x="8" y="15">%s</text>`, esc(c.Label))
				b.WriteString(`<g transform="translate(0,22)">` + "\n")
				renderScope(b, c, status)
				b.WriteString("</g></g>\n")
				cx += c.Width + branchGap
			}
		} else {
			fmt.Fprintf(b, `<rect class="box" x="%.1f" y="%.1f" width="%s" height="%s" rx="6"/>`, x, y, num(n.W), num(n.H))
			name := n.Name
			if r := []rune(name); float64(len(r))*charW > n.W-16 {
				keep := int(math.Floor((n.W - 20) / charW))
				name = string(r[:max(0, min(keep, len(r)))]) + "…"
			}
			fmt.Fprintf(b, `<text class="name" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, n.X, n.Y-2, esc(name))
			fmt.Fprintf(b, `<text class="type" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, n.X, n.Y+13, esc(n.Type))
		}
		b.WriteString("</g>\n")
	}
}
