package postgres

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, s := range []string{"", "plain", "é ü 💥", "a\x00b", "\xff\xfe", "\uffff", "\uffffplain", "x\uffff00", "\xe2\x82", "\x00"} {
		got := toText(s)
		if strings.IndexByte(got, 0) >= 0 || !utf8.ValidString(got) {
			t.Errorf("toText(%q) = %q: not text PostgreSQL holds", s, got)
		}
		if back := fromText(got); back != s {
			t.Errorf("fromText(toText(%q)) = %q", s, back)
		}
		if !needsEscape(s) && got != s {
			t.Errorf("toText(%q) = %q, want it unchanged", s, got)
		}
	}
	for _, malformed := range []string{"\uffff\uffff", "\uffff\uffffzz", "\uffffa\uffff0"} {
		if got := fromText(malformed); got != malformed {
			t.Errorf("fromText(%q) = %q, want it as it is", malformed, got)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "a\x00b", "\xff", "\uffff", "\uffff00", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := toText(s)
		if strings.IndexByte(got, 0) >= 0 || !utf8.ValidString(got) {
			t.Fatalf("toText(%q) = %q: not text PostgreSQL holds", s, got)
		}
		if back := fromText(got); back != s {
			t.Fatalf("fromText(toText(%q)) = %q", s, back)
		}
		_ = fromText(s) // never panics
	})
}
