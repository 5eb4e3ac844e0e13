package lsp

import (
	"regexp"
	"slices"
	"strings"

	"github.com/stepd/stepd/asl"
)

// cursor is what is being written at a position: a member's key in obj,
// or the value of obj's member key.
type cursor struct {
	obj       *node
	key       string
	inKey     bool
	quote     bool   // a JSON key written without its quotes yet
	prefix    string // the text of the key or value before the cursor
	editStart int    // what a proposal replaces
	editEnd   int
}

// cursorAt works out what is being written at off.
func (d *document) cursorAt(off int) *cursor {
	if d.root == nil {
		return nil
	}
	if d.yaml {
		return d.yamlCursor(off)
	}
	n := d.root.at(off)
	if n == nil {
		if d.root.kind == 'o' && off > d.root.start {
			n = d.root
		} else {
			return nil
		}
	}
	switch {
	case n.inKey(off):
		s, e := d.keyContent(n)
		return &cursor{obj: n.parent, key: n.key, inKey: true, prefix: d.text[s:max(s, off)], editStart: s, editEnd: max(e, off)}
	case n.kind == 's' && off > n.start && (off < n.end || !n.closed):
		obj, key := n.parent, n.key
		if !n.hasKey && obj != nil {
			key = obj.key
			obj = obj.parent
		}
		return &cursor{obj: obj, key: key, prefix: d.text[n.contentStart():off], editStart: n.contentStart(), editEnd: n.contentEnd()}
	case n.kind == 'o':
		ls := d.lines.lineStart(off)
		if m := jsonValueRE.FindStringSubmatch(d.text[ls:off]); m != nil {
			// "Next": | — a value not begun: proposals bring their quotes
			return &cursor{obj: n, key: m[1], quote: true, editStart: off, editEnd: off}
		}
		return &cursor{obj: n, inKey: true, quote: true, editStart: off, editEnd: off}
	}
	return nil
}

var (
	jsonValueRE = regexp.MustCompile(`"([^"\\]+)"\s*:\s*$`)
	yamlValueRE = regexp.MustCompile(`^(\s*(?:-\s+)?)([^\s:#'"][^:#]*?)\s*:\s+(["']?)([^"']*)$`)
	yamlKeyRE   = regexp.MustCompile(`^(\s*)(-\s+)?([A-Za-z.$]*)$`)
)

func (d *document) yamlCursor(off int) *cursor {
	ls := d.lines.lineStart(off)
	line := d.text[ls:off]
	if m := yamlValueRE.FindStringSubmatch(line); m != nil {
		end := off
		for end < len(d.text) && d.text[end] != '\n' && d.text[end] != '"' && d.text[end] != '\'' {
			end++
		}
		c := &cursor{key: m[2], prefix: m[4], editStart: off - len(m[4]), editEnd: end}
		if m[3] == "" {
			c.editEnd = off + len(strings.TrimRight(d.text[off:end], " \r"))
		}
		c.obj = d.yamlContainer(ls, len(m[1]), off)
		return c
	}
	if m := yamlKeyRE.FindStringSubmatch(line); m != nil {
		return &cursor{inKey: true, prefix: m[3], editStart: off - len(m[3]), editEnd: off,
			obj: d.yamlContainer(ls, len(m[1])+len(m[2]), off)}
	}
	return nil
}

// yamlContainer returns the mapping whose members' keys stand at column
// col and which has one before off (the mapping being written in); the
// member on line ls itself is preferred.
func (d *document) yamlContainer(ls, col, off int) *node {
	var best *node
	bestAt := -1
	d.root.walk(func(n *node) {
		if !n.hasKey || n.keyStart >= off || n.parent == nil || n.parent.kind != 'o' {
			return
		}
		if n.keyStart-d.lines.lineStart(n.keyStart) != col {
			return
		}
		if n.keyStart > bestAt {
			best, bestAt = n.parent, n.keyStart
		}
	})
	if best == nil && col == 0 && d.root.kind == 'o' {
		return d.root
	}
	return best
}

var (
	jsonataContextRE = regexp.MustCompile(`\$states\.context\.([A-Za-z]*)$`)
	jsonataStatesRE  = regexp.MustCompile(`\$states\.([A-Za-z]*)$`)
	jsonataFuncRE    = regexp.MustCompile(`\$([A-Za-z0-9_]*)$`)
	contextRE        = regexp.MustCompile(`\$\$[.A-Za-z]*$`)
	intrinsicRE      = regexp.MustCompile(`(^|[(,]\s*)([A-Za-z.]*)$`)
)

// completion answers textDocument/completion.
func (s *Server) completion(d *document, p Position) CompletionList {
	out := CompletionList{Items: []CompletionItem{}}
	off := d.lines.offset(p)
	c := d.cursorAt(off)
	if c == nil {
		return out
	}
	add := func(label, detail string, kind int, text string, start int) {
		it := CompletionItem{Label: label, Kind: kind, Detail: detail,
			TextEdit: &TextEdit{Range: d.lines.rangeOf(start, max(c.editEnd, off)), NewText: text}}
		if start != c.editStart {
			it.TextEdit.Range = d.lines.rangeOf(start, off)
		}
		out.Items = append(out.Items, it)
	}
	if c.inKey {
		for _, f := range d.fieldsFor(c.obj) {
			text := f
			if c.quote {
				text = `"` + f + `"`
			}
			add(f, fieldDocs[f], kindField, text, c.editStart)
		}
		return out
	}
	if i := strings.LastIndex(c.prefix, "{%"); i >= 0 && !strings.Contains(c.prefix[i:], "%}") {
		if m := jsonataContextRE.FindStringSubmatch(c.prefix); m != nil {
			for _, x := range []string{"Execution", "State", "StateMachine", "Task", "Map"} {
				add(x, "the Context object", kindProperty, x, off-len(m[1]))
			}
			return out
		}
		if m := jsonataStatesRE.FindStringSubmatch(c.prefix); m != nil {
			for _, x := range statesMembers {
				add(x.name, x.doc, kindProperty, x.name, off-len(m[1]))
			}
			return out
		}
		if m := jsonataFuncRE.FindStringSubmatch(c.prefix); m != nil {
			start := off - len(m[0])
			add("$states", "the state's input, result, error output and context", kindValue, "$states", start)
			for _, v := range d.variables(c.obj) {
				add("$"+v, "a variable (Assign)", kindVariable, "$"+v, start)
			}
			for _, f := range jsonataFunctions {
				add("$"+f, "JSONata function", kindFunction, "$"+f, start)
			}
		}
		return out
	}
	switch key := c.key; {
	case key == "Next" || key == "Default" || key == "StartAt":
		if sc := d.scopeOf(c.obj); sc != nil {
			for _, st := range sc.states() {
				typ := ""
				if t := st.child("Type"); t != nil {
					typ = t.str
				}
				add(st.key, typ+" state", kindReference, d.valueText(c, st.key), c.editStart)
			}
		}
	case key == "Resource":
		for _, x := range integrations {
			add(x.arn, x.what, kindValue, d.valueText(c, x.arn), c.editStart)
		}
	case key == "Type":
		if st, _ := d.stateOf(c.obj); st == c.obj && st != nil {
			for _, t := range asl.StateTypes() {
				add(t, "state type", kindValue, d.valueText(c, t), c.editStart)
			}
		}
	case key == "QueryLanguage":
		for _, q := range []string{asl.JSONPath, asl.JSONata} {
			add(q, "query language", kindValue, d.valueText(c, q), c.editStart)
		}
	case strings.HasSuffix(key, ".$") || strings.HasSuffix(key, "Path") || key == "Variable":
		if m := contextRE.FindString(c.prefix); m != "" {
			for _, x := range contextPaths {
				add(x, "the Context object", kindProperty, x, off-len(m))
			}
			return out
		}
		if m := intrinsicRE.FindStringSubmatch(c.prefix); m != nil && strings.HasSuffix(key, ".$") {
			for _, f := range intrinsics {
				add(f.name, f.name+f.sig, kindFunction, f.name+"(", off-len(m[2]))
			}
		}
	}
	return out
}

// valueText is a state name (or type) as the value being written: plain
// inside quotes, else quoted as the document needs.
func (d *document) valueText(c *cursor, s string) string {
	if c.quote {
		return quoteJSON(s)
	}
	if !d.yaml || (c.editStart > 0 && (d.text[c.editStart-1] == '"' || d.text[c.editStart-1] == '\'')) {
		if d.yaml && d.text[c.editStart-1] == '\'' {
			return strings.ReplaceAll(s, "'", "''")
		}
		q := quoteJSON(s)
		return q[1 : len(q)-1]
	}
	return d.quoted(s)
}

// fieldsFor lists the fields that may be added to obj: a state's (for
// its type and query language), or a state machine's; fields present
// are left out.
func (d *document) fieldsFor(obj *node) []string {
	if obj == nil || obj.kind != 'o' {
		return nil
	}
	var fields []string
	if st, sc := d.stateOf(obj); st == obj && st != nil {
		typ := ""
		if t := st.child("Type"); t != nil {
			typ = t.str
		}
		fields = asl.StateFields(typ, queryLanguage(st, sc))
		if fields == nil {
			fields = []string{"Type", "Comment", "QueryLanguage"}
		}
	} else if sc := d.scopeOf(obj); sc != nil && sc.node == obj {
		fields = asl.MachineFields(sc.where)
	} else {
		return nil
	}
	return slices.DeleteFunc(fields, func(f string) bool { return obj.child(f) != nil })
}

// variables lists the names the definition holding n assigns (Assign
// members), sorted.
func (d *document) variables(n *node) []string {
	top := d.root
	if sc := d.scopeOf(n); sc != nil {
		top = sc.top
	}
	seen := map[string]bool{}
	top.walk(func(x *node) {
		if x.hasKey && x.key == "Assign" && x.kind == 'o' {
			for _, m := range x.children {
				if m.key != "" {
					seen[strings.TrimSuffix(m.key, ".$")] = true
				}
			}
		}
	})
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
