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
