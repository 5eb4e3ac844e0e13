package jsonpath

import (
	"errors"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

const doc = `{"store":{"book":[
 {"category":"reference","author":"Nigel Rees","title":"Sayings","price":8.95},
 {"category":"fiction","author":"Evelyn Waugh","title":"Sword","price":12.99},
 {"category":"fiction","author":"Herman Melville","title":"Moby Dick","isbn":"0-553","price":8.99},
 {"category":"fiction","author":"J. R. R. Tolkien","title":"LOTR","isbn":"0-395","price":22.99}],
 "bicycle":{"color":"red","price":19.95}},
 "a b":1, "a-b":2, "arr":[1,2,3,4,5], "n":{"x":{"y":null}}, "s":"str",
 "flags":[{"f":false,"id":1},{"f":null,"id":2},{"id":3},{"f":true,"id":4}],
 "q'uote":5, "num":[{"v":1},{"v":1.0},{"v":10},{"v":"1"}], "limit":10,
 "mixed":[1,"a",{"k":1},[2],null]}`

func mustDoc(t testing.TB) any {
	t.Helper()
	v, err := value.ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGet(t *testing.T) {
	t.Parallel()
	root := mustDoc(t)
	tests := []struct{ path, want string }{
		{"$.store.bicycle", `{"color":"red","price":19.95}`},
		{"$.store.bicycle.color", `"red"`},
		{"$['a b']", `1`},
		{"$.a-b", `2`},
		{`$["store"]['bicycle']['color']`, `"red"`},
		{`$.['s']`, `"str"`},
		{`$['q\'uote']`, `5`},
		{`$["q'uote"]`, `5`},
		{`$['\u0061-b']`, `2`},
		{"$.store.book[0].title", `"Sayings"`},
		{"$.store.book[-1].title", `"LOTR"`},
		{"$.n.x.y", `null`},
		{"$.n.x", `{"y":null}`},
		// Leaf name unions merge into one object (Jayway); missing names are left out.
		{"$.store.bicycle['color','price']", `{"color":"red","price":19.95}`},
		{"$.store.bicycle['price','nope','color']", `{"price":19.95,"color":"red"}`},
		{"$.store.book[*]['title', 'price']", `[{"title":"Sayings","price":8.95},{"title":"Sword","price":12.99},{"title":"Moby Dick","price":8.99},{"title":"LOTR","price":22.99}]`},
		// Slices, Jayway style.
		{"$.arr[1:3]", `[2,3]`},
		{"$.arr[-2:]", `[4,5]`},
		{"$.arr[:2]", `[1,2]`},
		{"$.arr[:-2]", `[1,2,3]`},
		{"$.arr[3:]", `[4,5]`},
		{"$.arr[7:]", `[]`},
		{"$.arr[-9:]", `[1,2,3,4,5]`},
		{"$.arr[1:99]", `[2,3,4,5]`},
		{"$.arr[0:4:2]", `[1,2,3,4]`},
		{"$.arr[1:3:]", `[2,3]`},
		{"$.arr[-3:-1]", `[3,4]`},
		{"$.arr[-2:2]", `[4,5,1,2]`},
		{"$.arr[1:-1]", `[]`},
		{"$.arr[3:1]", `[]`},
		{"$.arr[0,2]", `[1,3]`},
		{"$.arr[0,-1,9]", `[1,5]`},
		{"$.arr[*]", `[1,2,3,4,5]`},
		{"$.store.bicycle[*]", `["red",19.95]`},
		{"$.store.bicycle.*", `["red",19.95]`},
		{"$.store.*.color", `["red"]`},
		{"$.s[*]", `[]`},
		{"$.store.book[*].author", `["Nigel Rees","Evelyn Waugh","Herman Melville","J. R. R. Tolkien"]`},
		{"$.store.book[*].isbn", `["0-553","0-395"]`},
		{"$..price", `[8.95,12.99,8.99,22.99,19.95]`},
		{"$.store..color", `["red"]`},
		{"$..book[2].title", `["Moby Dick"]`},
		{"$..book[-1:].title", `["LOTR"]`},
		{"$.n..*", `[{"y":null},null]`},
		{"$..['color','price']", `[{"color":"red","price":19.95}]`},
		// Filters.
		{"$.store.book[?(@.price > 10)].title", `["Sword","LOTR"]`},
		{"$.store.book[?(@.price>10)].title", `["Sword","LOTR"]`},
		{"$.store.book[?(@.isbn)].title", `["Moby Dick","LOTR"]`},
		{"$.store.book[?(!@.isbn)].title", `["Sayings","Sword"]`},
		{"$.store.book[?(@.price < 10 && @.category == 'fiction')].title", `["Moby Dick"]`},
		{"$.store.book[?(@.price > 20 || @.author == \"Nigel Rees\")].title", `["Sayings","LOTR"]`},
		{"$.store.book[?(!(@.price > 10))].title", `["Sayings","Moby Dick"]`},
		{"$.store.book[?((@.price > 20 || @.price < 9) && @.isbn)].title", `["Moby Dick","LOTR"]`},
		{"$.store.book[?(@.price == 8.95)].title", `["Sayings"]`},
		{"$.store.book[?(@.price <= 8.99)].title", `["Sayings","Moby Dick"]`},
		{"$.store.book[?(@.price >= 22.99)].title", `["LOTR"]`},
		{"$.store.book[?(@.category != 'fiction')].title", `["Sayings"]`},
		{"$.store.book[?(@.author < 'F')].title", `["Sword"]`},
		{"$.store.book[?(@.price > $.limit)].title", `["Sword","LOTR"]`},
		{"$.store.book[?(@.isbn != '0-553')].title", `["Sayings","Sword","LOTR"]`},
		{"$.store.book[?(@.nope == 1)]", `[]`},
		{"$.store.book[?(@.price > 'x')]", `[]`},
		// Existence is not truthiness: false and null members exist.
		{"$.flags[?(@.f)].id", `[1,2,4]`},
		{"$.flags[?(@.f == true)].id", `[4]`},
		{"$.flags[?(@.f == null)].id", `[2]`},
		{"$.flags[?(@.f == false)].id", `[1]`},
		// 1 and 1.0 are equal; a string never equals a number.
		{"$.num[?(@.v == 1)]", `[{"v":1},{"v":1.0}]`},
		{"$.num[?(@.v == 1.0)]", `[{"v":1},{"v":1.0}]`},
		{"$.num[?(@.v < 2)]", `[{"v":1},{"v":1.0}]`},
		{"$.num[?(@.v == '1')]", `[{"v":"1"}]`},
		// A filter on an object tests the object itself.
		{"$.store.bicycle[?(@.color == 'red')]", `[{"color":"red","price":19.95}]`},
		{"$.store.bicycle[?(@.color == 'blue')]", `[]`},
		{"$.s[?(@.a)]", `[]`},
		// @ does not match scalars (AWS developer guide).
		{"$.arr[?(@ > 3)]", `[]`},
		{"$.mixed[?(@)]", `[{"k":1},[2]]`},
		{"$.mixed[?(@.k == 1)]", `[{"k":1}]`},
		{"$.mixed[?(@[0] == 2)]", `[[2]]`},
		{"$..book[?(@.price > 20)].title", `["LOTR"]`},
		{"$..[?(@.price > 19)]", `[{"category":"fiction","author":"J. R. R. Tolkien","title":"LOTR","isbn":"0-395","price":22.99},{"color":"red","price":19.95}]`},
		{"$.store.book[?(@.title.length() > 3)]", `[]`},
		// Missing parts of an indefinite path are skipped.
		{"$.nothing[*]", `[]`},
		{"$.nothing.items[1:]", `[]`},
		{"$.nothing[0,1]", `[]`},
		{"$..nothing", `[]`},
	}
	for _, tt := range tests {
		p, err := Compile(tt.path)
		if err != nil {
			t.Errorf("Compile(%q): %v", tt.path, err)
			continue
		}
		got, err := p.Get(root)
		if err != nil {
			t.Errorf("Get(%q): %v", tt.path, err)
			continue
		}
		if s := value.String(got); s != tt.want {
			t.Errorf("Get(%q) = %s, want %s", tt.path, s, tt.want)
		}
		if p.String() != tt.path {
			t.Errorf("String() = %q, want %q", p.String(), tt.path)
		}
	}
}

func TestGetRoot(t *testing.T) {
	t.Parallel()
	root := mustDoc(t)
	for _, path := range []string{"$", "$$"} {
		p, err := Compile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Get(root)
		if err != nil || got != root {
			t.Errorf("Get(%q) = %v, %v; want the root itself", path, got, err)
		}
		if len(p.segs) != 0 || p.Context() != (path == "$$") {
			t.Errorf("%q: %d segments, Context %v", path, len(p.segs), p.Context())
		}
	}
}

func TestGetErrors(t *testing.T) {
	t.Parallel()
	root := mustDoc(t)
	tests := []struct {
		path string
		kind ErrorKind
		want string
	}{
		// Recorded from AWS (scenarios.base_scenarios.*).
		{"$.NoSuchInputPath", NoResults, "Invalid path '$.NoSuchInputPath' : No results for path: $['NoSuchInputPath']"},
		{"$.no.such.result.path", MissingProperty, "Invalid path '$.no.such.result.path' : Missing property in path $['no']"},
		// Jayway's behaviour.
		{"$.store.nope.x", MissingProperty, "Invalid path '$.store.nope.x' : Missing property in path $['store']['nope']"},
		{"$.store.book[9]", NoResults, "Invalid path '$.store.book[9]' : No results for path: $['store']['book'][9]"},
		{"$.store.book[9].title", NoResults, "Invalid path '$.store.book[9].title' : No results for path: $['store']['book'][9]['title']"},
		{"$.store.book[-5]", NoResults, "Invalid path '$.store.book[-5]' : No results for path: $['store']['book'][-5]"},
		{"$$.Execution.Nope", MissingProperty, "Invalid path '$$.Execution.Nope' : Missing property in path $['Execution']"},
		{"$.arr.x", NotObject, "Invalid path '$.arr.x' : Expected to find an object with property ['x'] in path $['arr'] but found 'array'"},
		{"$.n.x.y.z", NotObject, "Invalid path '$.n.x.y.z' : Expected to find an object with property ['z'] in path $['n']['x']['y'] but found 'null'"},
		{"$.s[0]", NotArray, `Invalid path '$.s[0]' : Filter: [0] can only be applied to arrays. Current context is: "str"`},
		{"$.n.x.y[0]", NotArray, "Invalid path '$.n.x.y[0]' : The path $['n']['x']['y'] is null"},
		{"$['store', 'x'].book", MultiProperty, "Invalid path '$['store', 'x'].book' : Multi properties can only be used as path leafs: $['store', 'x']"},
		{"$.store.book[*]['a','b'].c", MultiProperty, "Invalid path '$.store.book[*]['a','b'].c' : Multi properties can only be used as path leafs: $['store']['book'][*]['a', 'b']"},
		{"$.arr.length()", NoResults, "Invalid path '$.arr.length()' : No results for path: $['arr'].length()"},
	}
	for _, tt := range tests {
		p, err := Compile(tt.path)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.path, err)
		}
		_, err = p.Get(root)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("Get(%q) error = %v, want an *Error", tt.path, err)
			continue
		}
		if pe.Error() != tt.want || pe.Kind != tt.kind {
			t.Errorf("Get(%q) error = %q (kind %d), want %q (kind %d)", tt.path, pe.Error(), pe.Kind, tt.want, tt.kind)
		}
		if pe.Path != tt.path || !strings.HasSuffix(pe.Error(), pe.reason()) {
			t.Errorf("Get(%q): Path %q, Reason %q", tt.path, pe.Path, pe.reason())
		}
	}
	// Multi-property check is lenient when the union only meets non-objects.
	p, _ := Compile("$.arr[*]['a','b'].c")
	if got, err := p.Get(value.ObjectOf("arr", []any{value.Int(1)})); err != nil || value.String(got) != "[]" {
		t.Errorf("union over scalars = %v, %v; want []", got, err)
	}
}

func TestErrorFields(t *testing.T) {
	t.Parallel()
	root := mustDoc(t)
	p, _ := Compile("$.arr.x")
	_, err := p.Get(root)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("got %v", err)
	}
	if pe.Normalized != "$['arr']" || pe.Fragment != "['x']" || value.String(pe.Found) != "[1,2,3,4,5]" {
		t.Errorf("fields = %+v", pe)
	}
}

func TestNormalized(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		n    int
		want string
	}{
		{"$", -1, "$"},
		{"$$.Execution.Input", -1, "$['Execution']['Input']"},
		{"$.a[0]['b c'][-1]", -1, "$['a'][0]['b c'][-1]"},
		{"$.a[0]['b c'][-1]", 2, "$['a'][0]"},
		{"$.a[*]..b[1:2][:3][4:][?(@.x)]['p','q'][1,2]", -1, "$['a'][*]..['b'][1:2][:3][4:][?]['p','q'][1,2]"},
		{"$.a", 9, "$['a']"},
	}
	for _, tt := range tests {
		p, err := Compile(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.normalized(tt.n); got != tt.want {
			t.Errorf("Normalized(%q, %d) = %s, want %s", tt.path, tt.n, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path   string
		offset int
		msg    string
	}{
		{"", 0, "must start with '$'"},
		{"a.b", 0, "must start with '$'"},
		{"$.", 2, "must not end with '.'"},
		{"$..", 3, "must not end with '.'"},
		{"$.a.", 4, "must not end with '.'"},
		{"$x", 1, "unexpected character"},
		{"$.my key", 4, "blanks"},
		{"$[", 2, "unterminated '['"},
		{"$[1", 1, "unterminated '['"},
		{"$['a", 2, "unterminated quoted"},
		{"$['a'", 1, "unterminated '['"},
		{"$[a]", 2, "unexpected character 'a' in brackets"},
		{"$[-]", 3, "expected digits"},
		{"$[1,]", 4, "expected an index"},
		{"$[::2]", 2, "Failed to parse SliceOperation: ::2"},
		{"$[:]", 2, "Failed to parse SliceOperation"},
		{"$[99999999999]", 2, "out of range"},
		{"$.a.length().b", 12, "function must be the last"},
		{"$.a.length(", 11, "unterminated function"},
		{"$..f()", 1, "cannot follow '..'"},
		{"$[?(@.a =~ /x/)]", 8, "regular expressions"},
		{"$[?(@.a in ['x'])]", 8, "operator 'in' is not supported"},
		{"$[?(@.a > )]", 10, "expected a value"},
		{"$[?(@.a > 1]", 11, "unexpected ']' in filter"},
		{"$[?(@.a > 1", 11, "unterminated filter"},
		{"$[?@.a]", 3, "expected '(' after '?'"},
		{"$[?((@.a)]", 9, "unexpected ']' in filter"},
		{"$[?((@.a]", 8, "expected ')'"},
		{"$[?(@.a == 'x)]", 11, "unterminated quoted"},
		{"$[?(@.a == 1e)]", 11, "invalid number"},
		{"$[?(@.a == truex)]", 11, "expected a value"},
		{`$['\u00zz']`, 5, "invalid \\u escape"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.path)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) error = %v, want a *SyntaxError", tt.path, err)
			continue
		}
		if se.Offset != tt.offset || !strings.Contains(se.Msg, tt.msg) || se.Path != tt.path {
			t.Errorf("Compile(%q) = offset %d %q, want offset %d containing %q", tt.path, se.Offset, se.Msg, tt.offset, tt.msg)
		}
	}
}

func TestCompileReference(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"$", "$.a", "$.a.b[0]", "$['a b'][-1]", "$.a-b"} {
		p, err := CompileReference(path)
		if err != nil || !p.isReference() {
			t.Errorf("CompileReference(%q) = %v", path, err)
		}
	}
	tests := []struct{ path, msg string }{
		{"$.a[*]", "not a wildcard"},
		{"$.a.*", "not a wildcard"},
		{"$..a", "not a descendant segment"},
		{"$.a[1:2]", "not a slice"},
		{"$.a[0,1]", "not an index union"},
		{"$['a','b']", "not a name union"},
		{"$.a[?(@.b)]", "not a filter"},
		{"$.a.length()", "not a function"},
		{"$$.Execution", "Context object"},
		{"$.a[", "unterminated"},
	}
	for _, tt := range tests {
		_, err := CompileReference(tt.path)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, tt.msg) {
			t.Errorf("CompileReference(%q) = %v, want a *SyntaxError containing %q", tt.path, err, tt.msg)
		}
	}
	if p := mustCompile("$$.Map.Item.Value"); !p.isReference() || !p.Context() {
		t.Error("$$.Map.Item.Value should be a Context reference path")
	}
}

// mustCompile is Compile for paths known to be valid; it panics on an
// error.
func mustCompile(path string) *Path {
	p, err := Compile(path)
	if err != nil {
		panic(err)
	}
	return p
}

func TestDefinite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want bool
	}{
		{"$", true}, {"$.a.b[0]", true}, {"$['x']", true}, {"$.a[-1]", true}, {"$['a','b']", true},
		{"$.a[*]", false}, {"$.*", false}, {"$..a", false}, {"$.a[0,1]", false}, {"$.a[0:1]", false}, {"$.a[?(@.b)]", false},
	}
	for _, tt := range tests {
		p, err := Compile(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if p.Definite() != tt.want {
			t.Errorf("Definite(%q) = %v, want %v", tt.path, !tt.want, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, path, v, want string }{
		{`{"a":1}`, "$", `2`, `2`},
		{`{"a":1}`, "$.b", `2`, `{"a":1,"b":2}`},
		{`{"a":1}`, "$.a", `2`, `{"a":2}`},
		{`{"a":1}`, "$.x.y.z", `true`, `{"a":1,"x":{"y":{"z":true}}}`},
		{`{"a":null}`, "$.a.b", `1`, `{"a":{"b":1}}`},
		{`null`, "$.a", `1`, `{"a":1}`},
		{`{"a":[1,{"b":2}]}`, "$.a[1].b", `3`, `{"a":[1,{"b":3}]}`},
		{`{"a":[1,2,3]}`, "$.a[-1]", `"z"`, `{"a":[1,2,"z"]}`},
		{`[[0,1]]`, "$[0][1]", `9`, `[[0,9]]`},
		{`{"a":{"c":0}}`, "$['a']['b']", `"s"`, `{"a":{"c":0,"b":"s"}}`},
		{`{"a":{"c":0}}`, "$.a", `{"n":1}`, `{"a":{"n":1}}`},
	}
	for _, tt := range tests {
		in, err := value.ParseString(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.ParseString(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		p, err := CompileReference(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Set(in, v)
		if err != nil {
			t.Errorf("Set(%s, %s): %v", tt.in, tt.path, err)
			continue
		}
		if s := value.String(got); s != tt.want {
			t.Errorf("Set(%s, %s) = %s, want %s", tt.in, tt.path, s, tt.want)
		}
		if value.String(in) != tt.in {
			t.Errorf("Set mutated its input: %s, was %s", value.String(in), tt.in)
		}
	}
}

func TestSetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, path, want, reason string }{
		{`"str"`, "$.a", `Unable to apply ReferencePath $.a to input "str"`, "member 'a' of string at $"},
		{`{"a":"s"}`, "$.a.b", `Unable to apply ReferencePath $.a.b to input {"a":"s"}`, "member 'b' of string at $['a']"},
		{`[1]`, "$.a", `Unable to apply ReferencePath $.a to input [1]`, "of array"},
		{`{"a":[1]}`, "$.a[5]", `Unable to apply ReferencePath $.a[5] to input {"a":[1]}`, "index 5 is out of bounds"},
		{`{"a":{}}`, "$.a[0]", `Unable to apply ReferencePath $.a[0] to input {"a":{}}`, "index 0 of object"},
		{`{}`, "$.a[0]", `Unable to apply ReferencePath $.a[0] to input {}`, "index 0 of null"},
	}
	for _, tt := range tests {
		in, _ := value.ParseString(tt.in)
		p, err := CompileReference(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Set(in, true)
		var se *SetError
		if !errors.As(err, &se) || se.Error() != tt.want || !strings.Contains(se.Reason, tt.reason) {
			t.Errorf("Set(%s, %s) error = %v (%+v), want %q with reason containing %q", tt.in, tt.path, err, se, tt.want, tt.reason)
		}
	}
	p := mustCompile("$.a[*]")
	if _, err := p.Set(value.NewObject(0), 1); err == nil {
		t.Error("Set with a wildcard path succeeded")
	}
}

func TestGetAllocs(t *testing.T) {
	root := mustDoc(t)
	p := mustCompile("$.store.book[3].title")
	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.Get(root); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("definite Get allocates %v times, want 0", n)
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"$.a.b", "$..x[?(@.y > 1 && !@.z)]", "$['a','b'][0:2:-1]", "$$.Map.Item.Value",
		"$[?(@ == 'x' || $.a)]", "$.store.book[-1:].title", "$..*", "$.a.length()", `$['\u0041']`, `$['\ud83d\ude00']`, `$['\ud83d\u12']`,
		"$.store['book','bicycle'].price", "$.store.book[?((@.price > 1 || !@.isbn) && @.x != null)]",
		`$.foo\@bar.baz\[\[.\?pretty`, `$.&Ж中.\uD800\uDF46`, `$.a\u00`, "$$.Execution.Name ", " \t$.a\n", `$.a\`,
	} {
		f.Add(s)
	}
	root, err := value.ParseString(doc)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, err := Compile(path)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(path) {
				t.Fatalf("Compile(%q): bad error %v", path, err)
			}
			return
		}
		got, err := p.Get(root)
		if err == nil && !p.Definite() {
			if _, ok := got.([]any); !ok {
				t.Fatalf("indefinite Get(%q) = %T, want []any", path, got)
			}
		}
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Get(%q): error %T", path, err)
			}
		}
		_ = p.normalized(-1)
		if rp, err := CompileReference(path); err == nil {
			before := value.String(root)
			_, _ = rp.Set(root, true)
			if value.String(root) != before {
				t.Fatalf("Set(%q) mutated the root", path)
			}
		}
	})
}

func BenchmarkGet(b *testing.B) {
	root, err := value.ParseString(`{"a":{"b":{"c":[0,1,2,{"d":"x"}]}}}`)
	if err != nil {
		b.Fatal(err)
	}
	store := mustDoc(b)
	for _, bc := range []struct {
		path string
		root any
	}{
		{"$.a.b.c[3].d", root},
		{"$.store.book[*].author", store},
		{"$..price", store},
		{"$.store.book[?(@.price > 10 && @.category == 'fiction')].title", store},
	} {
		p := mustCompile(bc.path)
		b.Run(bc.path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Get(bc.root); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("$.store.book[?(@.price > 10)].title"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSet(b *testing.B) {
	root := mustDoc(b)
	p, err := CompileReference("$.store.bicycle.result")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Set(root, true); err != nil {
			b.Fatal(err)
		}
	}
}
