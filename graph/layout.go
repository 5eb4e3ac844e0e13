package graph

import (
	"math"
	"sort"
)

// The console's measures (console/web/src/graph.js).
const (
	charW      = 7.1 // approximate width of a 13px sans-serif character
	nodeH      = 44.0
	pad        = 14.0
	header     = 30.0
	branchGap  = 16.0
	nodeSep    = 28.0
	rankSep    = 46.0
	edgeSep    = 12.0
	margin     = 12.0
	labelH     = 18.0
	labelCharW = 6.3
)

func nodeSize(n *Node) (w, h float64) {
	if n.Kind == KindStart || n.Kind == KindEnd {
		return 64, 28
	}
	chars := max(len([]rune(n.Name)), len([]rune(n.Type))+2)
	w = max(110, math.Ceil(float64(chars)*charW)+28)
	return min(w, 320), nodeH
}

func labelWidth(s string) float64 {
	if s == "" {
		return 0
	}
	return math.Ceil(float64(len([]rune(s)))*labelCharW) + 10
}

// Layout sets the position and size of every node, the route of every edge
// and the size of every scope, the way the console does: top to bottom,
// one scope at a time from the innermost out, a Parallel or Map state
// being a container sized by its laid-out scopes side by side.
//
// The console lays each scope out with dagre; this is a Go port of the same
// layered approach with the console's sizes and spacing (dagre's as the
// console configures it: ranks 46 apart, nodes 28 apart, edge labels as
// nodes in a middle rank), with simpler steps inside: longest-path ranking
// instead of network simplex, barycentric ordering, and positions averaged
// over neighbours instead of Brandes–Köpf. The pictures are alike, not
// identical.
func Layout(sc *Scope) {
	for _, n := range sc.Nodes {
		w, h := nodeSize(n)
		if n.Children != nil {
			inner, tallest := 0.0, 0.0
			for _, c := range n.Children {
				Layout(c)
				inner += c.Width
				tallest = max(tallest, c.Height+22)
			}
			inner += branchGap*float64(len(n.Children)-1) + 2*pad
			n.InnerW = inner
			w, h = max(inner, w), tallest+header+pad
		}
		n.W, n.H = w, h
	}
	layoutScope(sc)
}

// vertex is a node of the layered graph: a node of the scope or a dummy on
// a long edge (with the edge's label at its middle rank).
type vertex struct {
	node       *Node // nil for a dummy
	w, h       float64
	rank       int
	order      int
	x, y       float64
	in, out    []int // neighbours in the ranks above and below
	labelOf    *Edge // a dummy carrying this edge's label
	isDummy    bool
	dfsVisited bool
}

func layoutScope(sc *Scope) {
	var vs []*vertex
	index := map[string]int{}
	for _, n := range sc.Nodes {
		index[n.ID] = len(vs)
		vs = append(vs, &vertex{node: n, w: n.W, h: n.H})
	}
	// Break cycles: an edge that closes a cycle in a depth-first search
	// from the nodes in order is reversed for ranking.
	type arc struct {
		e        *Edge
		from, to int
		reversed bool
		self     bool
	}
	arcs := make([]*arc, len(sc.Edges))
	succ := make([][]int, len(vs))
	for i, e := range sc.Edges {
		a := &arc{e: e, from: index[e.From], to: index[e.To]}
		a.self = a.from == a.to
		arcs[i] = a
		if !a.self {
			succ[a.from] = append(succ[a.from], i)
		}
	}
	onStack := make([]bool, len(vs))
	var dfs func(v int)
	dfs = func(v int) {
		vs[v].dfsVisited = true
		onStack[v] = true
		for _, i := range succ[v] {
			a := arcs[i]
			switch {
			case onStack[a.to]:
				a.reversed = true
			case !vs[a.to].dfsVisited:
				dfs(a.to)
			}
		}
		onStack[v] = false
	}
	for v := range vs {
		if !vs[v].dfsVisited {
			dfs(v)
		}
	}
	// Longest-path ranks, every edge spanning at least two ranks so that
	// its label has a rank of its own (as dagre does).
	inArcs := make([][]*arc, len(vs))
	for _, a := range arcs {
		if a.self {
			continue
		}
		u, v := a.from, a.to
		if a.reversed {
			u, v = v, u
		}
		inArcs[v] = append(inArcs[v], a)
	}
	rank := make([]int, len(vs))
	done := make([]bool, len(vs))
	var rankOf func(v int) int
	rankOf = func(v int) int {
		if done[v] {
			return rank[v]
		}
		done[v] = true // no cycles remain, but guard anyway
		r := 0
		for _, a := range inArcs[v] {
			u := a.from
			if a.reversed {
				u = a.to
			}
			r = max(r, rankOf(u)+2)
		}
		rank[v] = r
		return r
	}
	for v := range vs {
		rankOf(v)
		vs[v].rank = rank[v]
	}
	// Pull sources other than Start down next to their first successor, so
	// that an unreachable state does not sit on the top rank.
	for v := range vs {
		if len(inArcs[v]) > 0 || vs[v].node.Kind == KindStart {
			continue
		}
		best := -1
		for _, i := range succ[v] {
			a := arcs[i]
			if !a.reversed && (best < 0 || vs[a.to].rank-2 < best) {
				best = vs[a.to].rank - 2
			}
		}
		if best > vs[v].rank {
			vs[v].rank = best
		}
	}
	// Dummies along edges that span more than one rank.
	type chain struct {
		a     *arc
		verts []int // from the upper end to the lower end
	}
	chains := make([]*chain, 0, len(arcs))
	for _, a := range arcs {
		if a.self {
			chains = append(chains, &chain{a: a})
			continue
		}
		u, v := a.from, a.to
		if a.reversed {
			u, v = v, u
		}
		ch := &chain{a: a, verts: []int{u}}
		lo, hi := vs[u].rank, vs[v].rank
		mid := lo + (hi-lo)/2
		prev := u
		for r := lo + 1; r < hi; r++ {
			d := &vertex{rank: r, isDummy: true}
			if r == mid && a.e.Label != "" {
				d.w, d.h, d.labelOf = labelWidth(a.e.Label), labelH, a.e
			}
			vs = append(vs, d)
			id := len(vs) - 1
			vs[prev].out = append(vs[prev].out, id)
			d.in = append(d.in, prev)
			ch.verts = append(ch.verts, id)
			prev = id
		}
		vs[prev].out = append(vs[prev].out, v)
		vs[v].in = append(vs[v].in, prev)
		ch.verts = append(ch.verts, v)
		chains = append(chains, ch)
	}
	// Ranks, in a first order from a breadth-first walk.
	maxRank := 0
	for _, v := range vs {
		maxRank = max(maxRank, v.rank)
	}
	layers := make([][]int, maxRank+1)
	seen := make([]bool, len(vs))
	var queue []int
	for v := range vs {
		if len(vs[v].in) == 0 && !vs[v].isDummy {
			queue = append(queue, v)
			seen[v] = true
		}
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		layers[vs[v].rank] = append(layers[vs[v].rank], v)
		for _, w := range vs[v].out {
			if !seen[w] {
				seen[w] = true
				queue = append(queue, w)
			}
		}
	}
	for v := range vs {
		if !seen[v] {
			layers[vs[v].rank] = append(layers[vs[v].rank], v)
		}
	}
	setOrder := func() {
		for _, l := range layers {
			for i, v := range l {
				vs[v].order = i
			}
		}
	}
	setOrder()
	// Barycentric ordering, sweeping down and up; keep the best.
	best := cloneLayers(layers)
	bestCross := crossings(vs, layers)
	for iter := 0; iter < 12 && bestCross > 0; iter++ {
		down := iter%2 == 0
		for k := range layers {
			r := k
			if !down {
				r = len(layers) - 1 - k
			}
			l := layers[r]
			bary := make(map[int]float64, len(l))
			for _, v := range l {
				nb := vs[v].in
				if !down {
					nb = vs[v].out
				}
				if len(nb) == 0 {
					bary[v] = float64(vs[v].order)
					continue
				}
				s := 0.0
				for _, u := range nb {
					s += float64(vs[u].order)
				}
				bary[v] = s / float64(len(nb))
			}
			sort.SliceStable(l, func(i, j int) bool { return bary[l[i]] < bary[l[j]] })
			for i, v := range l {
				vs[v].order = i
			}
		}
		if c := crossings(vs, layers); c < bestCross {
			bestCross, best = c, cloneLayers(layers)
		}
	}
	layers = best
	setOrder()
	// Vertical positions: each rank as tall as its tallest vertex, ranks
	// ranksep/2 apart (edges span two ranks).
	y := margin
	for _, l := range layers {
		h := 0.0
		for _, v := range l {
			h = max(h, vs[v].h)
		}
		for _, v := range l {
			vs[v].y = y + h/2
		}
		y += h + rankSep/2
	}
	// Horizontal positions: packed, then moved towards the mean of their
	// neighbours while keeping order and separation.
	sep := func(a, b *vertex) float64 {
		s := nodeSep
		if a.isDummy || b.isDummy {
			s = edgeSep
		}
		return a.w/2 + s + b.w/2
	}
	for _, l := range layers {
		x := 0.0
		for i, v := range l {
			if i > 0 {
				x += sep(vs[l[i-1]], vs[v])
			}
			vs[v].x = x
		}
	}
	for iter := 0; iter < 16; iter++ {
		down := iter%2 == 0
		for k := range layers {
			r := k
			if !down {
				r = len(layers) - 1 - k
			}
			l := layers[r]
			want := make([]float64, len(l))
			for i, v := range l {
				nb := append(append([]int(nil), vs[v].in...), vs[v].out...)
				if len(nb) == 0 {
					want[i] = vs[v].x
					continue
				}
				s := 0.0
				for _, u := range nb {
					s += vs[u].x
				}
				want[i] = s / float64(len(nb))
			}
			place(vs, l, want, sep)
		}
	}
	// Normalise to the margins.
	minX := math.Inf(1)
	maxX, maxY := math.Inf(-1), 0.0
	for _, v := range vs {
		minX = min(minX, v.x-v.w/2)
		maxX = max(maxX, v.x+v.w/2)
		maxY = max(maxY, v.y+v.h/2)
	}
	// Self loops go out to the right of their node.
	for _, ch := range chains {
		if ch.a.self {
			n := vs[ch.a.from]
			maxX = max(maxX, n.x+n.w/2+24+labelWidth(ch.a.e.Label))
		}
	}
	dx := margin - minX
	for _, v := range vs {
		v.x += dx
		if v.node != nil {
			v.node.X, v.node.Y = v.x, v.y
		}
	}
	sc.Width = maxX + dx + margin
	sc.Height = maxY + margin
	// Routes: from the border of the upper end through the dummies to the
	// border of the lower end, turned around for reversed edges.
	for _, ch := range chains {
		e := ch.a.e
		if ch.a.self {
			n := vs[ch.a.from]
			r := n.x + n.w/2
			e.Points = []Point{{r, n.y - n.h/4}, {r + 24, n.y}, {r, n.y + n.h/4}}
			e.LX, e.LY = r+24+labelWidth(e.Label)/2, n.y
			continue
		}
		pts := make([]Point, 0, len(ch.verts))
		for _, v := range ch.verts {
			pts = append(pts, Point{vs[v].x, vs[v].y})
		}
		first, last := vs[ch.verts[0]], vs[ch.verts[len(ch.verts)-1]]
		pts[0] = border(first, pts[1])
		pts[len(pts)-1] = border(last, pts[len(pts)-2])
		mid := pts[len(pts)/2]
		e.LX, e.LY = mid.X, mid.Y
		for _, v := range ch.verts {
			if vs[v].labelOf == e {
				e.LX, e.LY = vs[v].x, vs[v].y
			}
		}
		if ch.a.reversed {
			for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
				pts[i], pts[j] = pts[j], pts[i]
			}
		}
		e.Points = pts
	}
}

// place moves the vertices of one rank as close to their wanted positions
// as their order and separation allow: each is pushed right past its left
// neighbour, then the rank is pushed left past its right neighbours.
func place(vs []*vertex, l []int, want []float64, sep func(a, b *vertex) float64) {
	n := len(l)
	if n == 0 {
		return
	}
	x := make([]float64, n)
	for i := range l {
		x[i] = want[i]
		if i > 0 {
			x[i] = max(x[i], x[i-1]+sep(vs[l[i-1]], vs[l[i]]))
		}
	}
	// Shift back left what the pushing moved right of its wish, as far as
	// the separation from the right neighbour requires.
	for i := n - 2; i >= 0; i-- {
		x[i] = min(want[i], x[i+1]-sep(vs[l[i]], vs[l[i+1]]))
	}
	for i := 1; i < n; i++ {
		x[i] = max(x[i], x[i-1]+sep(vs[l[i-1]], vs[l[i]]))
	}
	for i, v := range l {
		vs[v].x = x[i]
	}
}

// border is where the segment from the centre of v to p leaves v's box.
func border(v *vertex, p Point) Point {
	dx, dy := p.X-v.x, p.Y-v.y
	w, h := v.w/2, v.h/2
	if dx == 0 && dy == 0 {
		return Point{v.x, v.y}
	}
	var sx, sy float64
	if math.Abs(dy)*w > math.Abs(dx)*h {
		if dy < 0 {
			h = -h
		}
		sx, sy = h*dx/dy, h
	} else {
		if dx < 0 {
			w = -w
		}
		sx, sy = w, w*dy/dx
	}
	return Point{v.x + sx, v.y + sy}
}

func cloneLayers(ls [][]int) [][]int {
	out := make([][]int, len(ls))
	for i, l := range ls {
		out[i] = append([]int(nil), l...)
	}
	return out
}

// crossings counts the edge crossings between adjacent ranks in the
// current order.
func crossings(vs []*vertex, layers [][]int) int {
	pos := make([]int, len(vs))
	for _, l := range layers {
		for i, v := range l {
			pos[v] = i
		}
	}
	total := 0
	for _, l := range layers {
		var segs [][2]int
		for _, v := range l {
			for _, w := range vs[v].out {
				segs = append(segs, [2]int{pos[v], pos[w]})
			}
		}
		for i := range segs {
			for j := i + 1; j < len(segs); j++ {
				a, b := segs[i], segs[j]
				if (a[0]-b[0])*(a[1]-b[1]) < 0 {
					total++
				}
			}
		}
	}
	return total
}
