package jsonpath

import (
	"testing"

	"github.com/stepd/stepd/value"
)

const doc = `{"store":{"book":[
 {"category":"reference","author":"Nigel Rees","title":"Sayings","price":8.95},
 {"category":"fiction","author":"Evelyn Waugh","title":"Sword","price":12.99},
 {"category":"fiction","author":"Herman Melville","title":"Moby Dick","isbn":"0-553","price":8.99},
 {"category":"fiction","author":"J. R. R. Tolkien","title":"LOTR","isbn":"0-395","price":22.99}],
 "bicycle":{"color":"red","price":19.95}},
 "a b":1, "a-b":2, "arr":[1,2,3,4,5], "n":{"x":{"y":null}}}`

func mustDoc(t testing.TB) any {
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
		{"$", ""},
		{"$.store.bicycle.color", `"red"`},
		{"$['a b']", `1`},
		{"$.a-b", `2`},
		{`$["store"]['bicycle']`, `{"color":"red","price":19.95}`},
		{"$.store.book[0].title", `"Sayings"`},
		{"$.store.book[-1].title", `"LOTR"`},
		{"$.arr[1:3]", `[2,3]`},
		{"$.arr[-2:]", `[4,5]`},
		{"$.arr[::2]", `[1,3,5]`},
		{"$.arr[0,2]", `[1,3]`},
		{"$.store.book[*].author", `["Nigel Rees","Evelyn Waugh","Herman Melville","J. R. R. Tolkien"]`},
		{"$.store.book[?(@.price > 10)].title", `["Sword","LOTR"]`},
		{"$.store.book[?(@.isbn)].title", `["Moby Dick","LOTR"]`},
		{"$.store.book[?(@.price < 10 && @.category == 'fiction')].title", `["Moby Dick"]`},
		{"$.store.book[?(@.price > 20 || @.author == \"Nigel Rees\")].title", `["Sayings","LOTR"]`},
		{"$.store.book[?(!(@.price > 10))].title", `["Sayings","Moby Dick"]`},
		{"$..price", `[8.95,12.99,8.99,22.99,19.95]`},
		{"$.store.*.color", `["red"]`},
		{"$.arr[?(@ > 3)]", `[4,5]`},
		{"$.store.book[?(@.price == 8.95)].title", `["Sayings"]`},
		{"$.nothing[*]", `[]`},
		{"$.n.x.y", `null`},
		{"$['store']['book', 'bicycle']", ""},
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
		if tt.want == "" {
			continue
		}
		if s := value.String(got); s != tt.want {
			t.Errorf("Get(%q) = %s, want %s", tt.path, s, tt.want)
		}
	}
}

func TestGetErrors(t *testing.T) {
	t.Parallel()
	root := mustDoc(t)
	tests := []struct{ path, want string }{
		{"$.NoSuchInputPath", "Invalid path '$.NoSuchInputPath' : No results for path: $['NoSuchInputPath']"},
		{"$.no.such.result.path", "Invalid path '$.no.such.result.path' : Missing property in path $['no']"},
		{"$.store.book[9]", "Invalid path '$.store.book[9]' : No results for path: $['store']['book'][9]"},
		{"$.arr.x", "Invalid path '$.arr.x' : No results for path: $['arr']['x']"},
	}
	for _, tt := range tests {
		p, err := Compile(tt.path)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.path, err)
		}
		_, err = p.Get(root)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Get(%q) error = %v, want %s", tt.path, err, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", "a.b", "$.", "$[", "$[1", "$['a", "$.a.length()", "$[?(@.a =~ /x/)]", "$[?(@.a > )]", "$[::0]", "$x"} {
		if _, err := Compile(path); err == nil {
			t.Errorf("Compile(%q) succeeded, want an error", path)
		}
	}
	for _, path := range []string{"$.a[*]", "$..a", "$.a[1:2]", "$[?(@.a)]", "$$.Execution"} {
		if _, err := CompileReference(path); err == nil {
			t.Errorf("CompileReference(%q) succeeded, want an error", path)
		}
	}
}

func TestDefinite(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]bool{"$": true, "$.a.b[0]": true, "$['x']": true, "$.a[*]": false, "$..a": false, "$.a[0,1]": false, "$.a[0:1]": false, "$.a[?(@.b)]": false} {
		p, err := Compile(path)
		if err != nil {
			t.Fatal(err)
		}
		if p.Definite() != want {
			t.Errorf("Definite(%q) = %v", path, !want)
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
		{`{"a":[1,{"b":2}]}`, "$.a[1].b", `3`, `{"a":[1,{"b":3}]}`},
		{`{"a":{"c":0}}`, "$['a']['b']", `"s"`, `{"a":{"c":0,"b":"s"}}`},
	}
	for _, tt := range tests {
		in, _ := value.ParseString(tt.in)
		v, _ := value.ParseString(tt.v)
		before := value.String(in)
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
		if value.String(in) != before {
			t.Errorf("Set mutated its input: %s", value.String(in))
		}
	}
	for _, bad := range []struct{ in, path string }{{`"str"`, "$.a"}, {`{"a":"s"}`, "$.a.b"}, {`{"a":[1]}`, "$.a[5]"}, {`[1]`, "$.a"}} {
		in, _ := value.ParseString(bad.in)
		p, _ := CompileReference(bad.path)
		if _, err := p.Set(in, true); err == nil {
			t.Errorf("Set(%s, %s) succeeded, want an error", bad.in, bad.path)
		}
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"$.a.b", "$..x[?(@.y > 1 && !@.z)]", "$['a','b'][0:2:-1]", "$$.Map.Item.Value", "$[?(@ == 'x' || $.a)]"} {
		f.Add(s)
	}
	root, _ := value.ParseString(doc)
	f.Fuzz(func(t *testing.T, path string) {
		p, err := Compile(path)
		if err != nil {
			return
		}
		_, _ = p.Get(root)
		if rp, err := CompileReference(path); err == nil {
			_, _ = rp.Set(root, true)
		}
	})
}

func BenchmarkGet(b *testing.B) {
	root := mustDoc(b)
	for _, path := range []string{"$.store.book[3].title", "$.store.book[*].author", "$..price", "$.store.book[?(@.price > 20)].title"} {
		p, err := Compile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Get(root); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
