package lsp

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/internal/yamlvalue"
	"github.com/stepd/stepd/intrinsic"
	"github.com/stepd/stepd/jsonata"
	"github.com/stepd/stepd/jsonpath"
	"github.com/stepd/stepd/template"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// document is an open file and what the server made of it.
type document struct {
	uri     string
	path    string
	text    string
	version int
	yaml    bool
	lines   *lines
	// root is the outline; for YAML that does not parse, the last one
	// that did (or nil).
	root     *node
	template bool
	diags    []Diagnostic
	fixes    []fix
}

// fix is a did-you-mean replacement for a diagnostic.
type fix struct {
	diag    Diagnostic
	rng     Range
	newText string
	title   string
}

// analyze reads the document's text again: its outline, then every
// diagnostic stepd validate gives, placed in the text.
func (s *Server) analyze(d *document) {
	d.lines = newLines(d.text)
	d.diags, d.fixes = nil, nil
	d.yaml = definition.IsYAML(d.path, []byte(d.text))
	if d.yaml {
		root, err := parseYAML(d.text, d.lines)
		if err != nil {
			// the last outline says whether the file is a state machine's
			if d.relevant() || strings.Contains(d.text, "StartAt") {
				d.addError(d.yamlRange(err), "INVALID_YAML", err.Error())
			}
			return
		}
		d.root = root
	} else {
		d.root = parseJSON(d.text)
	}
	if !d.relevant() {
		return // another JSON or YAML file: nothing to say
	}
	data := []byte(d.text)
	var doc any
	if d.yaml {
		// A key given twice is kept (the last value), as SAM CLI keeps
		// it, with a warning that names both lines.
		v, err := template.Read(d.path, data, func(msg string) {
			d.diags = append(d.diags, Diagnostic{Range: d.yamlRange(errors.New(msg)), Severity: severityWarning, Code: "DUPLICATE_KEY", Source: "stepd", Message: msg})
		})
		if err != nil {
			d.addError(d.yamlRange(err), "INVALID_YAML", err.Error())
			return
		}
		doc = v
	} else if v, err := value.Parse(data); err == nil {
		doc = v
	}
	d.template = template.IsTemplate(doc)
	if d.template {
		s.analyzeTemplate(d, data)
		return
	}
	text := data
	if d.yaml {
		text = value.Append(nil, doc)
	}
	sub, err := definition.Substitute(string(text), s.cfg.subs)
	if err != nil {
		d.addError(d.lines.rangeOf(0, 0), "INVALID_SUBSTITUTIONS", err.Error())
		return
	}
	r := validate.Definition([]byte(sub), s.cfg.typ)
	r.Diagnostics = append(r.Diagnostics, definition.Diagnose([]byte(sub), false)...)
	d.place("", r.Diagnostics, sub != string(data))
}

// analyzeTemplate validates each state machine of a SAM or
// CloudFormation template.
func (s *Server) analyzeTemplate(d *document, data []byte) {
	sms, err := template.Parse(d.path, data, template.Options{Region: s.cfg.region, Account: s.cfg.account, Parameters: s.cfg.params})
	if err != nil {
		d.addError(d.templateRange(err), "INVALID_TEMPLATE", err.Error())
		return
	}
	for _, sm := range sms {
		text, err := definition.Substitute(sm.Definition, s.cfg.subs)
		res := "/Resources/" + escapePointer(sm.LogicalID)
		if err != nil {
			d.addError(d.keyRange(res), "INVALID_SUBSTITUTIONS", err.Error())
			continue
		}
		r := validate.Definition([]byte(text), sm.Type)
		r.Diagnostics = append(r.Diagnostics, definition.Diagnose([]byte(text), true)...)
		switch {
		case sm.Pointer != "":
			d.place(sm.Pointer, r.Diagnostics, true)
		default:
			// A DefinitionString or a DefinitionUri file: the
			// diagnostics stand on that property.
			where := res + "/Properties/DefinitionString"
			if sm.DefinitionFile != "" {
				where = res + "/Properties/DefinitionUri"
			}
			rng := d.keyRange(where)
			for _, x := range r.Diagnostics {
				ptr := x.Pointer
				if ptr == "" {
					ptr = "/"
				}
				d.add(rng, x, fmt.Sprintf("%s: %s", ptr, x.Message))
			}
		}
	}
}

// relevant reports whether the document is a state machine's: named
// *.asl.json or *.asl.yaml, or with StartAt or States at its top, or a
// template with a state machine resource. Other JSON and YAML files, which
// an editor may hand every JSON or YAML server, get no diagnostics.
func (d *document) relevant() bool {
	base := strings.ToLower(filepath.Base(d.path))
	if strings.Contains(base, ".asl.") {
		return true
	}
	if d.root == nil || d.root.kind != 'o' {
		return false
	}
	if d.root.child("StartAt") != nil || d.root.child("States") != nil {
		return true
	}
	if res := d.root.child("Resources"); res != nil {
		for _, r := range res.children {
			if t := r.child("Type"); t != nil && (t.str == template.CFNStateMachine || t.str == template.SAMStateMachine) {
				return true
			}
		}
	}
	return false
}

var hintRE = regexp.MustCompile(`^did you mean '(.*)'\?$`)

// place adds the validator's diagnostics of the definition at prefix.
// shifted: the validated text is not the document's (YAML turned into
// JSON, substitutions applied), so offsets in it do not apply.
func (d *document) place(prefix string, diags asl.Diagnostics, shifted bool) {
	for _, x := range diags {
		var se *value.SyntaxError
		if errors.As(x.Err, &se) {
			rng := d.lines.rangeOf(0, 0)
			if !shifted {
				rng = d.lines.rangeOf(se.Offset, se.Offset+1)
			}
			d.add(rng, x, se.Msg)
			continue
		}
		segs := append(splitPointer(prefix), splitPointer(x.Pointer)...)
		n, exact := d.root.find(segs)
		rng := d.nodeRange(n, exact && n.kind != 'o' && n.kind != 'a' && !strings.HasPrefix(x.Message, "Field '"))
		if exact {
			if r, ok := d.inside(n, x.Err); ok {
				rng = r
			}
		}
		msg := x.Message
		if x.Hint != "" {
			msg += " (" + x.Hint + ")"
		}
		diag := d.add(rng, x, msg)
		d.suggest(n, exact, x, diag)
	}
}

// suggest records the did-you-mean fix of a diagnostic: the hint's field
// name for an unknown field or state type, the nearest state for a
// transition to a missing one.
func (d *document) suggest(n *node, exact bool, x asl.Diagnostic, diag Diagnostic) {
	if !exact {
		return
	}
	want := ""
	if m := hintRE.FindStringSubmatch(x.Hint); m != nil {
		want = m[1]
	} else if x.Code == asl.CodeMissingTarget && n.kind == 's' {
		if sc := d.scopeOf(n); sc != nil {
			want = asl.Nearest(n.str, slices.Values(sc.names()))
		}
	}
	if want == "" {
		return
	}
	if strings.HasPrefix(x.Message, "Field '") && n.hasKey {
		s, e := d.keyContent(n)
		d.fixes = append(d.fixes, fix{diag: diag, rng: d.lines.rangeOf(s, e), newText: want, title: fmt.Sprintf("Change '%s' to '%s'", n.key, want)})
		return
	}
	if n.kind == 's' {
		d.fixes = append(d.fixes, fix{diag: diag, rng: d.lines.rangeOf(n.contentStart(), n.contentEnd()), newText: d.escape(n, want), title: fmt.Sprintf("Change '%s' to '%s'", n.str, want)})
	}
}

// escape returns s as the text of the string n, quoted as n is.
func (d *document) escape(n *node, s string) string {
	switch n.quote {
	case '"':
		q := value.String(s)
		return q[1 : len(q)-1]
	case '\'':
		return strings.ReplaceAll(s, "'", "''")
	}
	return s
}

// inside narrows a diagnostic's range to the place in the string that
// its syntax error names: a JSONPath's or intrinsic call's offset, a
// JSONata expression (or its token).
func (d *document) inside(n *node, err error) (Range, bool) {
	if err == nil {
		return Range{}, false
	}
	var pe *jsonpath.SyntaxError
	var ie *intrinsic.SyntaxError
	var je *jsonata.SyntaxError
	switch {
	case errors.As(err, &ie) && n.kind == 's':
		return d.at(n, ie.Offset+len(n.str)-len(ie.Text), 1), true
	case errors.As(err, &pe) && n.kind == 's':
		// a $variable path is checked as $ and the rest
		return d.at(n, pe.Offset+len(n.str)-len(pe.Path), 1), true
	case errors.As(err, &je):
		m := n
		if je.Path != "" {
			var ok bool
			if m, ok = n.find(strings.Split(je.Path, "/")); !ok {
				return d.nodeRange(m, false), true
			}
		}
		if m.kind != 's' {
			return d.nodeRange(m, true), true
		}
		i := strings.Index(m.str, je.Expr)
		if i < 0 {
			return d.nodeRange(m, true), true
		}
		var e *jsonata.Error
		if errors.As(je.Err, &e) && e.Token != "" {
			if e.Token == "EOF" {
				return d.at(m, i+max(len(je.Expr)-1, 0), 1), true
			}
			if j := tokenOffset(je.Expr, e); j >= 0 {
				return d.at(m, i+j, len(e.Token)), true
			}
		}
		return d.at(m, i, len(je.Expr)), true
	}
	return Range{}, false
}

// tokenOffset finds where in expr the token of a syntax error stands, as
// the JSONata library names the token but not its offset: the first
// occurrence at which the expression cut after it fails the same way,
// else the first occurrence (-1 when there is none).
func tokenOffset(expr string, e *jsonata.Error) int {
	first := -1
	for i, tries := 0, 0; tries < 32; tries++ {
		j := strings.Index(expr[i:], e.Token)
		if j < 0 {
			break
		}
		pos := i + j
		if first < 0 {
			first = pos
		}
		_, err := jsonata.ParseTemplate("{% " + expr[:pos+len(e.Token)] + " %}")
		var got *jsonata.Error
		if errors.As(err, &got) && got.Code == e.Code && got.Token == e.Token {
			return pos
		}
		i = pos + len(e.Token)
	}
	return first
}

// at returns the range of n bytes of string n's value from offset off.
func (d *document) at(n *node, off, size int) Range {
	if off >= len(n.str) {
		off = len(n.str) - 1 // an error at the end: the last character
	}
	off = max(0, off)
	size = max(1, min(size, len(n.str)-off))
	s := n.sourceOffset(d.text, off)
	e := n.sourceOffset(d.text, off+size)
	if e <= s {
		e = min(s+1, n.contentEnd())
	}
	return d.lines.rangeOf(s, e)
}

// nodeRange is where a diagnostic on n stands: the value of a scalar
// (value), else the member's key (a state's name), else the value's first
// line.
func (d *document) nodeRange(n *node, val bool) Range {
	if n == nil {
		return d.lines.rangeOf(0, 0)
	}
	if !val && n.hasKey {
		return d.lines.rangeOf(n.keyStart, n.keyEnd)
	}
	if n.kind == 's' && n.contentEnd() > n.contentStart() {
		return d.lines.rangeOf(n.contentStart(), n.contentEnd())
	}
	end := n.end
	if i := strings.IndexByte(d.text[n.start:min(n.end, len(d.text))], '\n'); i >= 0 {
		end = n.start + i
	}
	return d.lines.rangeOf(n.start, end)
}

// keyRange is the range of the key at ptr (or of the nearest member on
// its way).
func (d *document) keyRange(ptr string) Range {
	if d.root == nil {
		return d.lines.rangeOf(0, 0)
	}
	n, _ := d.root.find(splitPointer(ptr))
	return d.nodeRange(n, false)
}

func (d *document) yamlRange(err error) Range {
	var ye *yamlvalue.Error
	if errors.As(err, &ye) && ye.Line > 0 {
		s := d.lines.lineStartOf(ye.Line)
		e := strings.IndexByte(d.text[s:], '\n')
		if e < 0 {
			e = len(d.text) - s
		}
		if ye.Column > 0 {
			b := &yamlBuilder{text: d.text, l: d.lines}
			s = b.offset(ye.Line, ye.Column)
			return d.lines.rangeOf(s, s+1)
		}
		return d.lines.rangeOf(s, s+e)
	}
	return d.lines.rangeOf(0, 0)
}

var templatePathRE = regexp.MustCompile(`(/Resources/[^\s:,]+)`)

// templateRange places a template error on the property its message
// names, else at the start.
func (d *document) templateRange(err error) Range {
	if r := d.yamlRange(err); r != (Range{}) {
		return r
	}
	if m := templatePathRE.FindString(err.Error()); m != "" {
		return d.keyRange(m)
	}
	return d.lines.rangeOf(0, 0)
}

func (d *document) addError(r Range, code, msg string) {
	d.diags = append(d.diags, Diagnostic{Range: r, Severity: severityError, Code: code, Source: "stepd", Message: msg})
}

func (d *document) add(r Range, x asl.Diagnostic, msg string) Diagnostic {
	sev := severityError
	if x.IsWarning() {
		sev = severityWarning
	}
	diag := Diagnostic{Range: r, Severity: sev, Code: x.Code, Source: "stepd", Message: msg}
	d.diags = append(d.diags, diag)
	return diag
}
