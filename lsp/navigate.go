package lsp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/stepd/stepd/value"
)

// stateAt returns the state name under the cursor, on a state's key or on
// a reference to it (StartAt, Next, Default), with its scope.
func (d *document) stateAt(p Position) (*scope, string, *node) {
	if d.root == nil {
		return nil, "", nil
	}
	off := d.lines.offset(p)
	n := d.root.at(off)
	if n == nil {
		return nil, "", nil
	}
	if n.inKey(off) && n.parent != nil && n.parent.key == "States" && n.parent.parent != nil {
		if sc := d.scopeOf(n.parent.parent); sc != nil && sc.node == n.parent.parent {
			return sc, n.key, n
		}
	}
	if n.kind == 's' && !n.inKey(off) {
		if sc := d.scopeOf(n); sc != nil && sc.isReference(n) {
			return sc, n.str, n
		}
	}
	return nil, "", nil
}

func (d *document) location(start, end int) Location {
	return Location{URI: d.uri, Range: d.lines.rangeOf(start, end)}
}

// definition answers textDocument/definition: the state a reference
// names.
func (d *document) definition(p Position) []Location {
	sc, name, _ := d.stateAt(p)
	if sc == nil {
		return []Location{}
	}
	st := sc.state(name)
	if st == nil {
		return []Location{}
	}
	return []Location{d.location(st.keyStart, st.keyEnd)}
}

// references answers textDocument/references: every reference to the
// state under the cursor (and its key, with the declaration).
func (d *document) references(p Position, decl bool) []Location {
	sc, name, _ := d.stateAt(p)
	out := []Location{}
	if sc == nil {
		return out
	}
	if st := sc.state(name); st != nil && decl {
		out = append(out, d.location(st.keyStart, st.keyEnd))
	}
	for _, r := range sc.references() {
		if r.str == name {
			out = append(out, d.location(r.start, r.end))
		}
	}
	return out
}

// prepareRename answers textDocument/prepareRename: the name under the
// cursor, when it is a state's.
func (d *document) prepareRename(p Position) any {
	sc, name, n := d.stateAt(p)
	if sc == nil || sc.state(name) == nil {
		return nil
	}
	if n.kind != 's' || n.inKey(d.lines.offset(p)) {
		return map[string]any{"range": d.lines.rangeOf(n.keyStart, n.keyEnd), "placeholder": name}
	}
	return map[string]any{"range": d.lines.rangeOf(n.start, n.end), "placeholder": name}
}

// rename answers textDocument/rename: the state's key and every
// reference to it in its scope.
func (d *document) rename(p Position, to string) (any, *rpcError) {
	sc, name, _ := d.stateAt(p)
	if sc == nil {
		return nil, &rpcError{Code: codeRequestFailed, Message: "no state name here to rename"}
	}
	st := sc.state(name)
	if st == nil {
		return nil, &rpcError{Code: codeRequestFailed, Message: fmt.Sprintf("no state named %q in this scope", name)}
	}
	if to == "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "a state name must not be empty"}
	}
	if len([]rune(to)) > 80 {
		return nil, &rpcError{Code: codeInvalidParams, Message: "a state name is at most 80 characters"}
	}
	for _, other := range d.allScopes() {
		if other.top == sc.top && to != name && other.state(to) != nil {
			return nil, &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("a state named %q already exists: state names are unique in a state machine", to)}
		}
	}
	edits := []TextEdit{d.keyEdit(st, to)}
	for _, r := range sc.references() {
		if r.str == name {
			edits = append(edits, d.valueEdit(r, to))
		}
	}
	return WorkspaceEdit{Changes: map[string][]TextEdit{d.uri: edits}}, nil
}

var plainYAML = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-]*( [A-Za-z0-9_.\-]+)*$`)

var yamlWords = []string{"true", "false", "null", "yes", "no", "on", "off", "y", "n"}

// quoted returns s as a scalar for the document: a JSON string in JSON, a
// plain scalar in YAML where one is safe.
func (d *document) quoted(s string) string {
	if d.yaml && plainYAML.MatchString(s) && !slices.Contains(yamlWords, lower(s)) {
		return s
	}
	return value.String(s)
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// keyEdit renames a member's key.
func (d *document) keyEdit(n *node, to string) TextEdit {
	if n.keyEnd > n.keyStart && d.text[n.keyStart] == '"' {
		s, e := d.keyContent(n)
		q := value.String(to)
		return TextEdit{Range: d.lines.rangeOf(s, e), NewText: q[1 : len(q)-1]}
	}
	if n.keyEnd > n.keyStart && d.text[n.keyStart] == '\'' {
		s, e := d.keyContent(n)
		return TextEdit{Range: d.lines.rangeOf(s, e), NewText: strings.ReplaceAll(to, "'", "''")}
	}
	return TextEdit{Range: d.lines.rangeOf(n.keyStart, n.keyEnd), NewText: d.quoted(to)}
}

// keyContent returns the span of a key's text, inside its quotes.
func (d *document) keyContent(n *node) (int, int) {
	s, e := n.keyStart, n.keyEnd
	if s < e && (d.text[s] == '"' || d.text[s] == '\'') {
		q := d.text[s]
		s++
		if e > s && d.text[e-1] == q {
			e--
		}
	}
	return s, e
}

// valueEdit replaces a string value, keeping its quoting where it can.
func (d *document) valueEdit(n *node, to string) TextEdit {
	if n.quote == '"' && n.closed {
		return TextEdit{Range: d.lines.rangeOf(n.contentStart(), n.contentEnd()), NewText: d.escape(n, to)}
	}
	if n.quote == '\'' && n.closed {
		return TextEdit{Range: d.lines.rangeOf(n.contentStart(), n.contentEnd()), NewText: d.escape(n, to)}
	}
	return TextEdit{Range: d.lines.rangeOf(n.start, n.end), NewText: d.quoted(to)}
}

// symbols answers textDocument/documentSymbol: the states, with the
// states of Parallel branches and Map item processors under them; in a
// template, under their state machine.
func (d *document) symbols() []DocumentSymbol {
	out := []DocumentSymbol{}
	for _, sc := range d.scopes() {
		states := d.stateSymbols(sc)
		if sc.label == "" {
			out = append(out, states...)
			continue
		}
		res := sc.node.parent.parent // the resource
		out = append(out, DocumentSymbol{Name: sc.label, Detail: "state machine", Kind: symbolClass,
			Range: d.lines.rangeOf(res.keyStart, res.end), SelectionRange: d.lines.rangeOf(res.keyStart, res.keyEnd), Children: states})
	}
	return out
}

func (d *document) stateSymbols(sc *scope) []DocumentSymbol {
	out := []DocumentSymbol{}
	for _, st := range sc.states() {
		typ := ""
		if t := st.child("Type"); t != nil {
			typ = t.str
		}
		sym := DocumentSymbol{Name: st.key, Detail: typ, Kind: symbolKind(typ),
			Range: d.lines.rangeOf(st.keyStart, max(st.end, st.keyEnd)), SelectionRange: d.lines.rangeOf(st.keyStart, st.keyEnd)}
		branch := 0
		for _, n := range sc.nested {
			if n.owner != st {
				continue
			}
			if n.where == "branch" {
				sym.Children = append(sym.Children, DocumentSymbol{Name: fmt.Sprintf("Branch %d", branch), Kind: symbolModule,
					Range: d.lines.rangeOf(n.node.start, n.node.end), SelectionRange: d.lines.rangeOf(n.node.start, n.node.start+1), Children: d.stateSymbols(n)})
				branch++
				continue
			}
			sym.Children = append(sym.Children, d.stateSymbols(n)...)
		}
		out = append(out, sym)
	}
	return out
}

func symbolKind(typ string) int {
	switch typ {
	case "Task":
		return symbolFunction
	case "Choice":
		return symbolOperator
	case "Wait":
		return symbolEvent
	case "Parallel", "Map":
		return symbolArray
	}
	return symbolObject
}

// codeActions answers textDocument/codeAction: the did-you-mean fixes of
// the diagnostics in the range.
func (d *document) codeActions(r Range) []CodeAction {
	out := []CodeAction{}
	for _, f := range d.fixes {
		if before(f.diag.Range.End, r.Start) || before(r.End, f.diag.Range.Start) {
			continue
		}
		out = append(out, CodeAction{Title: f.title, Kind: "quickfix", Diagnostics: []Diagnostic{f.diag}, IsPreferred: true,
			Edit: &WorkspaceEdit{Changes: map[string][]TextEdit{d.uri: {{Range: f.rng, NewText: f.newText}}}}})
	}
	return out
}

func before(a, b Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
}
