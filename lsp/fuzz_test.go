package lsp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadMessage: any input gives messages, io.EOF or an error, never
// a panic, and a body is exactly Content-Length bytes.
func FuzzReadMessage(f *testing.F) {
	for _, s := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}Content-Length: 4\r\n\r\nnull",
		"content-length:3\n\n[1]",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 99999999999\r\n\r\n",
		"X: y\r\n\r\n{}",
		"Content-Length: 10\r\n\r\n{}",
		"garbage",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for range 100 {
			body, err := ReadMessage(r)
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			if len(body) > len(data) {
				t.Fatalf("a body of %d bytes from %d bytes of input", len(body), len(data))
			}
		}
	})
}

func TestReadMessage(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("Content-Length: 2\r\nContent-Type: x\r\n\r\n{}Content-Length: 4\n\nnull"))
	for _, want := range []string{"{}", "null"} {
		body, err := ReadMessage(r)
		if err != nil || string(body) != want {
			t.Fatalf("ReadMessage = %q, %v; want %q", body, err, want)
		}
	}
	if _, err := ReadMessage(r); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
	for _, bad := range []string{"Content-Length: x\r\n\r\n", "no colon\r\n\r\n", "Content-Type: y\r\n\r\n{}", "Content-Length: 5\r\n\r\n{}", "Content-Length: 2\r\n"} {
		if _, err := ReadMessage(bufio.NewReader(strings.NewReader(bad))); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%q: %v, want an error", bad, err)
		}
	}
}

// FuzzOutline: the lenient outlines never panic, their spans lie in the
// text, and every node's pointer finds it again.
func FuzzOutline(f *testing.F) {
	for _, s := range []string{
		`{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`,
		`{"a": "b\u00e9\ud83d\ude00", "c": [1, {"d": null}], "e"`,
		`{"Next": "`, `[[[`, `{"a":}`, `{,,"x" 1}`, "StartAt: A\nStates:\n  A: {Type: Pass, End: true}\n",
		"a: |\n  text\n  more\nb: 'it''s'\nc: \"q\\\"\"\n", "- x\n- y: !Sub '${A}'\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		l := newLines(text)
		roots := []*node{parseJSON(text)}
		if y, err := parseYAML(text, l); err == nil {
			roots = append(roots, y)
		}
		for _, root := range roots {
			root.walk(func(n *node) {
				if n.start < 0 || n.end > len(text) || n.start > n.end || n.hasKey && (n.keyStart > n.keyEnd || n.keyEnd > len(text)) {
					t.Fatalf("a node's spans %d-%d (key %d-%d) outside the text of %d bytes", n.start, n.end, n.keyStart, n.keyEnd, len(text))
				}
				if n.kind == 's' {
					for i := 0; i <= len(n.str); i++ {
						if o := n.sourceOffset(text, i); o < n.start || o > n.end {
							t.Fatalf("offset %d of %q maps to %d, outside %d-%d", i, n.str, o, n.start, n.end)
						}
					}
				}
				if got, ok := root.find(splitPointer(n.pointer())); !ok || got == nil {
					t.Fatalf("the pointer %q does not find its node", n.pointer())
				}
				_ = root.at(n.start)
			})
			for off := 0; off <= len(text); off++ {
				if off < len(text) && !utf8.RuneStart(text[off]) {
					continue
				}
				p := l.position(off)
				if back := l.offset(p); back > off || back < l.lineStart(off) {
					t.Fatalf("offset %d -> %+v -> %d", off, p, back)
				}
			}
		}
	})
}

// FuzzDocument: any text, as JSON or YAML, is analyzed and served at any
// position without a panic, and every range it answers with lies in the
// document.
func FuzzDocument(f *testing.F) {
	seeds := []string{
		`{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"x.$":"States.Format('{}', $.a"},"Next":"B"},"B":{"Type":"Parallel","Branches":[{"StartAt":"C","States":{"C":{"Type":"Pass","End":true}}}],"End":true}}}`,
		`{"StartAt":"A","QueryLanguage":"JSONata","States":{"A":{"Type":"Pass","Output":"{% $x + %}","Next":"`,
		"StartAt: A\nStates:\n  A:\n    Type: Map\n    ItemProcessor:\n      StartAt: B\n      States:\n        B: {Type: Pass, End: true}\n    Next: C\n",
		"Resources:\n  M:\n    Type: AWS::Serverless::StateMachine\n    Properties:\n      Definition:\n        StartAt: A\n        States:\n          A: {Type: Pas, End: true}\n",
		`{"StartAt": "${X}", "States": {"${X}": {"Type": "Succeed"}}}`,
	}
	for i, s := range seeds {
		f.Add(s, uint16(i*7), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, text string, at uint16, yaml bool) {
		s := NewServer(Options{})
		path := "/w/f.asl.json"
		if yaml {
			path = "/w/f.asl.yaml"
		}
		d := &document{uri: "file://" + path, path: path, text: text}
		s.analyze(d)
		l := newLines(text)
		end := l.position(len(text))
		inDoc := func(r Range) {
			if before(r.End, r.Start) || before(end, r.End) || r.Start.Line < 0 {
				t.Fatalf("a range %+v outside the document (end %+v)", r, end)
			}
		}
		for _, x := range d.diags {
			inDoc(x.Range)
		}
		for _, p := range []Position{{}, l.position(int(at) % (len(text) + 1)), end} {
			for _, it := range s.completion(d, p).Items {
				inDoc(it.TextEdit.Range)
			}
			if h := s.hover(d, p); h != nil && h.Range != nil {
				inDoc(*h.Range)
			}
			for _, loc := range d.definition(p) {
				inDoc(loc.Range)
			}
			for _, loc := range d.references(p, true) {
				inDoc(loc.Range)
			}
			d.prepareRename(p)
			if e, err := d.rename(p, "New name"); err == nil {
				for _, te := range e.(WorkspaceEdit).Changes[d.uri] {
					inDoc(te.Range)
				}
			}
		}
		d.symbols()
		for _, a := range d.codeActions(Range{End: end}) {
			for _, te := range a.Edit.Changes[d.uri] {
				inDoc(te.Range)
			}
		}
	})
}
