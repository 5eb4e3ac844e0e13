package lsp

import (
	"sort"
	"unicode/utf16"
)

// lines indexes a document's text: byte offsets to LSP positions (UTF-16
// columns) and back.
type lines struct {
	text   string
	starts []int // byte offset of each line's start
}

func newLines(text string) *lines {
	l := &lines{text: text, starts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

// position returns the position of byte offset off.
func (l *lines) position(off int) Position {
	off = max(0, min(off, len(l.text)))
	line := sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off }) - 1
	col := 0
	for _, r := range l.text[l.starts[line]:off] {
		col += utf16.RuneLen(r)
	}
	return Position{Line: line, Character: col}
}

// offset returns the byte offset of a position; positions past a line's
// end or the text's end are clamped to it.
func (l *lines) offset(p Position) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(l.starts) {
		return len(l.text)
	}
	start := l.starts[p.Line]
	end := len(l.text)
	if p.Line+1 < len(l.starts) {
		end = l.starts[p.Line+1] - 1
	}
	col := 0
	for i, r := range l.text[start:end] {
		if col >= p.Character {
			return start + i
		}
		col += utf16.RuneLen(r)
	}
	return end
}

// rangeOf returns the range of the byte span [start, end).
func (l *lines) rangeOf(start, end int) Range {
	return Range{Start: l.position(start), End: l.position(end)}
}

// lineAt returns the byte offset of the start of the line holding off.
func (l *lines) lineStart(off int) int {
	line := sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off }) - 1
	return l.starts[max(line, 0)]
}

// lineStartOf returns the byte offset of a 1-based line's start.
func (l *lines) lineStartOf(line int) int {
	if line < 1 {
		return 0
	}
	if line > len(l.starts) {
		return len(l.text)
	}
	return l.starts[line-1]
}
