package jsonpath

import (
	"errors"
	"testing"

	"github.com/stepd/stepd/value"
)

// TestEscapedNames: field names that need escaping, in quoted bracket
// names and filter string literals, unescaped as Jayway does (backslash
// escapes, \uXXXX with UTF-16 surrogate pairs). The first path is
// LocalStack's ESCAPE_SEQUENCES_JSONPATH template (test_base_scenarios,
// recorded against AWS), whose execution input is the first member of the
// document.
func TestEscapedNames(t *testing.T) {
	t.Parallel()
	root, err := value.ParseString(`{"Test\\\"\"Name\"":"Value\"\\","😀":1,"é":2,"tab\there":3,"slash/":4,"q'd\"":5,
		"list":[{"n":"😀","v":6},{"n":"x'y","v":7}]}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{`$['Test\\\"\"Name\"']`, `"Value\"\\"`},
		{`$["Test\\\"\"Name\""]`, `"Value\"\\"`},
		{`$['Test\\"\"Name"']`, `"Value\"\\"`},
		{`$['\ud83d\ude00']`, `1`},
		{`$['\uD83D\uDE00']`, `1`},
		{`$['\u00e9']`, `2`},
		{`$['tab\there']`, `3`},
		{`$['slash\/']`, `4`},
		{`$['q\'d"']`, `5`},
		{`$["q'd\""]`, `5`},
		{`$['\ud83d\ude00','\u00e9']`, `{"😀":1,"é":2}`},
		{`$.list[?(@.n == '\ud83d\ude00')].v`, `[6]`},
		{`$.list[?(@.n == 'x\'y')].v`, `[7]`},
		{`$.list[?(@.n == "x'y")].v`, `[7]`},
	} {
		p, err := Compile(tc.path)
		if err != nil {
			t.Errorf("Compile(%s): %v", tc.path, err)
			continue
		}
		got, err := p.Get(root)
		if err != nil {
			t.Errorf("Get(%s): %v", tc.path, err)
			continue
		}
		if s := value.String(got); s != tc.want {
			t.Errorf("Get(%s) = %s, want %s", tc.path, s, tc.want)
		}
	}
	// A reference path (ResultPath) sets the unescaped name.
	rp, err := CompileReference(`$['\ud83d\ude00 \'new\'']`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rp.Set(value.NewObject(0), 8)
	if err != nil || value.String(out) != `{"😀 'new'":8}` {
		t.Errorf("Set = %s, %v", value.String(out), err)
	}
	// A high surrogate not followed by a low one stands alone (U+FFFD, as
	// an unpaired surrogate becomes in UTF-8), and the next escape is read
	// on its own.
	p, err := Compile(`$['\ud83dA\ud83d\u00e9']`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.normalized(-1); got != "$['\uFFFDA\uFFFDé']" {
		t.Errorf("Normalized = %q", got)
	}
}

// TestSpecReferencePaths: the reference paths the ASL specification lists
// as valid (a backslash in a dot-notation name makes the next character
// part of the name), and blanks around a path, which Jayway's compiler
// (AWS's) ignores: "$$.Execution.Name " is accepted by AWS.
func TestSpecReferencePaths(t *testing.T) {
	t.Parallel()
	root, err := value.ParseString(`{"store":{"book":1},"store.book":2,"foo":{".bar":3},"foo@bar":{"baz[[":{"?pretty":4}},
		"&Ж中":{"𐍆":5},"a b":6,"ledgers":{"branch":[{"pending":{"count":7}}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want, norm string }{
		{`$.store.book`, `1`, `$['store']['book']`},
		{`$.store\.book`, `2`, `$['store.book']`},
		{`$.\stor\e.boo\k`, `1`, `$['store']['book']`},
		{`$.foo.\.bar`, `3`, `$['foo']['.bar']`},
		{`$.foo\@bar.baz\[\[.\?pretty`, `4`, `$['foo@bar']['baz[[']['?pretty']`},
		{`$.&Ж中.\uD800\uDF46`, `5`, `$['&Ж中']['𐍆']`},
		{`$.ledgers.branch[0].pending.count`, `7`, `$['ledgers']['branch'][0]['pending']['count']`},
		{"$.a\\ b", `6`, `$['a b']`},
		{`$.store.book `, `1`, `$['store']['book']`},
		{" \t$.store.book\r\n", `1`, `$['store']['book']`},
	} {
		for _, compile := range []func(string) (*Path, error){Compile, CompileReference} {
			p, err := compile(tc.path)
			if err != nil {
				t.Errorf("compile(%q): %v", tc.path, err)
				continue
			}
			if got := p.normalized(-1); got != tc.norm {
				t.Errorf("normalized(%q) = %s, want %s", tc.path, got, tc.norm)
			}
			if p.String() != tc.path {
				t.Errorf("String() = %q, want the path as written %q", p.String(), tc.path)
			}
			got, err := p.Get(root)
			if err != nil || value.String(got) != tc.want {
				t.Errorf("Get(%q) = %s, %v; want %s", tc.path, value.String(got), err, tc.want)
			}
		}
	}
	rp, err := CompileReference(`$.foo\@bar.baz\[\[.\?pretty`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rp.Set(value.NewObject(0), 8)
	if err != nil || value.String(out) != `{"foo@bar":{"baz[[":{"?pretty":8}}}` {
		t.Errorf("Set = %s, %v", value.String(out), err)
	}
	// Still refused, with offsets counted in the path as written.
	for _, tc := range []struct {
		path   string
		offset int
	}{
		{`  $.a b`, 5},
		{`$.a\`, 4},
		{"   ", 3},
		{` $.a.`, 5},
	} {
		_, err := Compile(tc.path)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != tc.offset || se.Path != tc.path {
			t.Errorf("Compile(%q) = %v, want a syntax error at %d", tc.path, err, tc.offset)
		}
	}
}
