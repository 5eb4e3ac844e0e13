package intrinsic

import (
	"errors"
	mrand "math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stepd/stepd/value"
)

func mustParseJSON(t *testing.T, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return v
}

// testInput is the input of the TestEval cases.
const testInput = `{
	"s": "Hello", "empty": "", "n": 3, "f": 1.5, "neg": -2.5, "t": true, "nul": null,
	"arr": [1, 2, 3, 4, 5], "dup": [1, 2, 2, "a", "a", {"x": 1}, {"x": 1}, [1], [1], 1.0, null, null],
	"obj": {"a": 1, "b": [2, {"c": "d"}]}, "obj2": {"b": 3, "e": 4},
	"json": "{\"k\": [1, -0, 2.5e1, \"v\"]}", "b64": "RGF0YSB0byBlbmNvZGU=",
	"tmpl": "Hi {}, {} \\{}", "big": 2147483648, "alg": "SHA-256"
}`

func TestEval(t *testing.T) {
	tests := []struct {
		expr string
		want string // JSON; ignored when err is set
		err  string // substring of the *Error cause
	}{
		// States.Format
		{expr: `States.Format('Hello')`, want: `"Hello"`},
		{expr: `States.Format('{} {} {} {} {}', $.s, $.n, $.f, $.t, $.nul)`, want: `"Hello 3 1.5 true null"`},
		{expr: `States.Format('{}|{}', $.arr, $.obj)`, want: `"[1, 2, 3, 4, 5]|{a=1, b=[2, {c=d}]}"`},
		{expr: `States.Format('\{\} {} \\ \'', $.s)`, want: `"{} Hello \\ '"`},
		{expr: `States.Format('\{}', $.s)`, err: "does not match the number of placeholders"},
		{expr: `States.Format($.tmpl, 'a', 'b')`, want: `"Hi a, b {}"`},
		{expr: `States.Format('{}{}', $.s)`, err: "(1) does not match the number of placeholders {} in the format string (2)"},
		{expr: `States.Format('{}', $.s, $.s)`, err: "(2) does not match the number of placeholders {} in the format string (1)"},
		{expr: `States.Format($.n)`, err: "argument 1 of States.Format must be a string, but was number: 3"},
		{expr: `States.Format('{', $.s)`, err: "does not match"},
		{expr: `States.Format('a\nb')`, err: `invalid escape sequence '\n'`},
		// States.StringToJson
		{expr: `States.StringToJson($.json)`, want: `{"k":[1,0,25,"v"]}`},
		{expr: `States.StringToJson(' ')`, want: `null`},
		{expr: `States.StringToJson('"x"')`, want: `"x"`},
		{expr: `States.StringToJson('{"a":')`, err: `The argument of States.StringToJson is not valid JSON: {"a":`},
		{expr: `States.StringToJson($.n)`, err: "must be a string"},
		// States.JsonToString
		{expr: `States.JsonToString($.obj)`, want: `"{\"a\":1,\"b\":[2,{\"c\":\"d\"}]}"`},
		{expr: `States.JsonToString($.s)`, want: `"\"Hello\""`},
		{expr: `States.JsonToString($.nul)`, want: `"null"`},
		// States.Array
		{expr: `States.Array()`, want: `[]`},
		{expr: `States.Array($.n, 'x', null, States.Array(1))`, want: `[3,"x",null,[1]]`},
		// States.ArrayPartition
		{expr: `States.ArrayPartition($.arr, 2)`, want: `[[1,2],[3,4],[5]]`},
		{expr: `States.ArrayPartition($.arr, 5)`, want: `[[1,2,3,4,5]]`},
		{expr: `States.ArrayPartition($.arr, 1.6)`, want: `[[1,2],[3,4],[5]]`},
		{expr: `States.ArrayPartition(States.Array(), 3)`, want: `[]`},
		{expr: `States.ArrayPartition($.arr, 0)`, err: "chunk size argument of States.ArrayPartition must be greater than 0, but was 0"},
		{expr: `States.ArrayPartition($.arr, -1)`, err: "greater than 0"},
		{expr: `States.ArrayPartition($.obj, 1)`, err: "argument 1 of States.ArrayPartition must be an array, but was object"},
		{expr: `States.ArrayPartition($.arr, 'x')`, err: "argument 2 of States.ArrayPartition must be a number"},
		// States.ArrayContains
		{expr: `States.ArrayContains($.arr, 3)`, want: `true`},
		{expr: `States.ArrayContains($.arr, 3.0)`, want: `true`},
		{expr: `States.ArrayContains($.arr, '3')`, want: `false`},
		{expr: `States.ArrayContains($.dup, $.obj)`, want: `false`},
		{expr: `States.ArrayContains($.dup, States.StringToJson('{"x":1}'))`, want: `true`},
		{expr: `States.ArrayContains($.s, 1)`, err: "must be an array"},
		// States.ArrayRange
		{expr: `States.ArrayRange(1, 9, 2)`, want: `[1,3,5,7,9]`},
		{expr: `States.ArrayRange(0, 10, 3)`, want: `[0,3,6,9]`},
		{expr: `States.ArrayRange(5, 1, -2)`, want: `[5,3,1]`},
		{expr: `States.ArrayRange(5, 1, 1)`, want: `[]`},
		{expr: `States.ArrayRange(1.5, 3.4, 0.6)`, want: `[2,3]`},
		{expr: `States.ArrayRange(1, 1000, 1)`, want: ""},
		{expr: `States.ArrayRange(0, 1000, 1)`, err: "would produce 1001 items; at most 1000 are allowed"},
		{expr: `States.ArrayRange(1, 2, 0)`, err: "step argument of States.ArrayRange must not be 0"},
		{expr: `States.ArrayRange(1, 2, 0.4)`, err: "must not be 0"},
		{expr: `States.ArrayRange(1, $.big, 1)`, err: "argument 2 of States.ArrayRange must be an integer between -2147483648 and 2147483647, but was 2147483648"},
		// States.ArrayGetItem
		{expr: `States.ArrayGetItem($.arr, 0)`, want: `1`},
		{expr: `States.ArrayGetItem($.arr, 4)`, want: `5`},
		{expr: `States.ArrayGetItem($.arr, 5)`, err: "The index 5 is out of bounds for the array of length 5 in States.ArrayGetItem"},
		{expr: `States.ArrayGetItem($.arr, -1)`, err: "out of bounds"},
		{expr: `States.ArrayGetItem($.arr, 1.5)`, err: "argument 2 of States.ArrayGetItem must be an integer, but was number: 1.5"},
		// States.ArrayLength
		{expr: `States.ArrayLength($.arr)`, want: `5`},
		{expr: `States.ArrayLength(States.Array())`, want: `0`},
		{expr: `States.ArrayLength($.s)`, err: "must be an array, but was string"},
		// States.ArrayUnique
		{expr: `States.ArrayUnique($.dup)`, want: `[1,2,"a",{"x":1},[1],null]`},
		{expr: `States.ArrayUnique(States.Array())`, want: `[]`},
		{expr: `States.ArrayUnique($.nul)`, err: "must be an array, but was null"},
		// States.Base64Encode / Base64Decode
		{expr: `States.Base64Encode('Data to encode')`, want: `"RGF0YSB0byBlbmNvZGU="`},
		{expr: `States.Base64Encode('héllo €')`, want: `"aMOpbGxvIOKCrA=="`},
		{expr: `States.Base64Encode($.empty)`, want: `""`},
		{expr: `States.Base64Decode($.b64)`, want: `"Data to encode"`},
		{expr: `States.Base64Decode('aMOp bGxv\nIOKCrA')`, err: "invalid escape"},
		{expr: `States.Base64Decode('aMOp bGxvIOKCrA')`, want: `"héllo €"`},
		{expr: `States.Base64Decode('a')`, err: "The input to States.Base64Decode is not valid base64: a"},
		{expr: `States.Base64Decode($.n)`, err: "must be a string"},
		// States.Hash
		{expr: `States.Hash('input data', 'MD5')`, want: `"812f45842bc6d66ee14572ce20db8e86"`},
		{expr: `States.Hash('input data', 'SHA-1')`, want: `"aaff4a450a104cd177d28d18d74485e8cae074b7"`},
		{expr: `States.Hash('input data', 'SHA-384')`, want: `"d28a7d5cf25a74f11a50a18452b75e04bb3d70c9dd0510d6123aa008c756511b87525bdc835ebb27e1fb9e9374a15562"`},
		{expr: `States.Hash(States.StringToJson('{"a": 1}'), $.alg)`, want: `"015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"`},
		{expr: `States.Hash('x', 'SHA-2')`, err: "The hash algorithm 'SHA-2' of States.Hash is not supported"},
		{expr: `States.Hash('x', 'md5')`, err: "not supported"},
		{expr: `States.Hash('x', 5)`, err: "argument 2 of States.Hash must be a string"},
		// States.JsonMerge
		{expr: `States.JsonMerge($.obj, $.obj2, false)`, want: `{"a":1,"b":3,"e":4}`},
		{expr: `States.JsonMerge($.obj, $.obj2, true)`, err: "supports only shallow merging"},
		{expr: `States.JsonMerge($.obj, $.arr, false)`, err: "argument 2 of States.JsonMerge must be an object, but was array"},
		{expr: `States.JsonMerge($.obj, $.obj2, 'false')`, err: "argument 3 of States.JsonMerge must be a boolean"},
		// States.MathAdd
		{expr: `States.MathAdd(1, 2)`, want: `3`},
		{expr: `States.MathAdd(111, -1)`, want: `110`},
		{expr: `States.MathAdd($.f, $.neg)`, want: `0`},
		{expr: `States.MathAdd(-0.5, 0)`, want: `0`},
		{expr: `States.MathAdd(0.49999999999999994, 0)`, want: `0`},
		{expr: `States.MathAdd(2147483647, 2147483647)`, want: `4294967294`},
		{expr: `States.MathAdd($.big, 1)`, err: "argument 1 of States.MathAdd must be an integer between"},
		{expr: `States.MathAdd('1', 1)`, err: "argument 1 of States.MathAdd must be a number, but was string: \"1\""},
		// States.MathRandom (seeded: deterministic; see also TestMathRandom)
		{expr: `States.MathRandom(5, 6)`, want: `5`},
		{expr: `States.MathRandom(5, 6, 42)`, want: `5`},
		{expr: `States.MathRandom(4.5, 5.4)`, err: "The end argument of States.MathRandom (5) must be greater than its start argument (5)"},
		{expr: `States.MathRandom(10, 1)`, err: "must be greater than its start"},
		{expr: `States.MathRandom(1, 10, 'x')`, err: "argument 3 of States.MathRandom must be a number"},
		// States.StringSplit
		{expr: `States.StringSplit('1,2,3,4,5', ',')`, want: `["1","2","3","4","5"]`},
		{expr: `States.StringSplit('This.is+a,test=string', '.+,=')`, want: `["This","is","a","test","string"]`},
		{expr: `States.StringSplit(', , ,', ',')`, want: `[" "," "]`},
		{expr: `States.StringSplit('', ',')`, want: `[]`},
		{expr: `States.StringSplit('abc', '')`, want: `["abc"]`},
		{expr: `States.StringSplit('a€b€c', '€')`, want: `["a","b","c"]`},
		{expr: `States.StringSplit($.arr, ',')`, err: "argument 1 of States.StringSplit must be a string, but was array: [1,2,3,4,5]"},
		// nesting and variables
		{expr: `States.ArrayGetItem(States.StringSplit($.s, 'l'), States.MathAdd(States.ArrayLength(States.StringSplit($.s, 'l')), -1))`, want: `"o"`},
		{expr: `States.Format('{} {}', $greeting, $cfg.who)`, want: `"Hi world"`},
		{expr: `States.Format('{}', $$.Execution.Name)`, want: `"exec"`},
	}
	r := testResolver{
		input:   mustParseJSON(t, testInput),
		context: mustParseJSON(t, `{"Execution": {"Name": "exec"}}`),
		vars:    map[string]any{"greeting": "Hi", "cfg": mustParseJSON(t, `{"who": "world"}`)},
	}
	for _, tt := range tests {
		c, err := Parse(tt.expr)
		if err != nil {
			t.Errorf("Parse(%s): %v", tt.expr, err)
			continue
		}
		got, err := c.Eval(r)
		if tt.err != "" {
			var ie *Error
			if !errors.As(err, &ie) {
				t.Errorf("%s = %s, %v; want an *Error containing %q", tt.expr, value.String(got), err, tt.err)
				continue
			}
			if ie.Name != "States.IntrinsicFailure" || !strings.Contains(ie.Cause, tt.err) || ie.Error() != ie.Cause {
				t.Errorf("%s: error %s: %q, want States.IntrinsicFailure containing %q", tt.expr, ie.Name, ie.Cause, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if tt.want == "" {
			continue
		}
		// Compare the text, so that number formatting and key order count.
		if gs, ws := value.String(got), value.String(mustParseJSON(t, tt.want)); gs != ws {
			t.Errorf("%s = %s, want %s", tt.expr, gs, ws)
		}
	}
}

func TestEvalDoesNotModifyInputs(t *testing.T) {
	in := mustParseJSON(t, testInput)
	before := value.String(in)
	r := testResolver{input: in}
	for _, expr := range []string{
		`States.JsonMerge($.obj, $.obj2, false)`,
		`States.ArrayPartition($.arr, 2)`,
		`States.ArrayUnique($.dup)`,
		`States.Array($.obj, $.arr)`,
		`States.StringToJson($.json)`,
	} {
		c, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Eval(r); err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
	}
	if after := value.String(in); after != before {
		t.Errorf("input changed:\n before %s\n after  %s", before, after)
	}
}

func TestEvalPathError(t *testing.T) {
	c, err := Parse(`States.Format('{}', $.missing)`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Eval(testResolver{input: value.NewObject(0)})
	var pe *PathError
	if !errors.As(err, &pe) || pe.Path != "$.missing" || errors.Unwrap(err) == nil {
		t.Fatalf("got %v (%T), want a *PathError for $.missing", err, err)
	}
	if err.Error() != pe.Err.Error() {
		t.Errorf("PathError text %q, want the resolver's %q", err.Error(), pe.Err.Error())
	}
	var ie *Error
	if errors.As(err, &ie) {
		t.Errorf("a path error must not be an *Error")
	}
}

func TestMathRandom(t *testing.T) {
	src := mrand.NewPCG(1, 2)
	eval := func(expr string) int64 {
		t.Helper()
		c, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.Eval(testResolver{rand: src})
		if err != nil {
			t.Fatal(err)
		}
		n, ok := v.(value.Number)
		i, isInt := n.Int64()
		if !ok || !isInt {
			t.Fatalf("%s = %s, want an integer", expr, value.String(v))
		}
		return i
	}
	seen := map[int64]bool{}
	for range 200 {
		i := eval(`States.MathRandom(-3, 3)`)
		if i < -3 || i >= 3 {
			t.Fatalf("MathRandom(-3, 3) = %d, out of [-3, 3)", i)
		}
		seen[i] = true
	}
	if len(seen) != 6 {
		t.Errorf("200 draws of MathRandom(-3, 3) gave only %v", seen)
	}
	for _, seed := range []string{"0", "7", "-12345"} {
		a := eval(`States.MathRandom(0, 1000000, ` + seed + `)`)
		if b := eval(`States.MathRandom(0, 1000000, ` + seed + `)`); a != b {
			t.Errorf("seed %s gave %d then %d", seed, a, b)
		}
	}
	if eval(`States.MathRandom(0, 1000000, 1)`) == eval(`States.MathRandom(0, 1000000, 2)`) {
		t.Errorf("seeds 1 and 2 gave the same number")
	}
}

func TestUUID(t *testing.T) {
	c, err := Parse(`States.UUID()`)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	src := mrand.NewPCG(1, 2)
	for range 50 {
		v, err := c.Eval(testResolver{rand: src})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := v.(string)
		if !re.MatchString(s) {
			t.Fatalf("UUID() = %s, not a version 4 UUID", value.String(v))
		}
		if seen[s] {
			t.Fatalf("UUID() repeated %s", s)
		}
		seen[s] = true
	}
}

func TestLimits(t *testing.T) {
	long := strings.Repeat("a", maxBase64Input)
	r := testResolver{input: value.ObjectOf(
		"ok", long,
		"long", long+"b",
		"wide", strings.Repeat("€", maxBase64Input/2)+"x", // 5001 characters, 15001 bytes
	)}
	tests := []struct {
		expr string
		err  string
	}{
		{`States.Base64Encode($.ok)`, ""},
		{`States.Base64Encode($.long)`, "is 10001 characters long; at most 10000 are allowed"},
		{`States.Base64Encode($.wide)`, ""},
		{`States.Base64Decode($.long)`, "at most 10000"},
		{`States.Hash($.ok, 'MD5')`, ""},
		{`States.Hash($.long, 'MD5')`, "The input to States.Hash is 10001 characters long"},
		{`States.Hash($.wide, 'MD5')`, ""},
	}
	for _, tt := range tests {
		c, err := Parse(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Eval(r)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.expr, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want %q", tt.expr, err, tt.err)
		}
	}
}

// TestRandomSource checks that States.UUID and States.MathRandom without a
// seed draw from the resolver's source: the same source state gives the
// same values, another state other values, and no source the fixed-seed
// values.
func TestRandomSource(t *testing.T) {
	call := func(expr string, r Resolver) string {
		t.Helper()
		c, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.Eval(r)
		if err != nil {
			t.Fatal(err)
		}
		return value.String(v)
	}
	for _, expr := range []string{`States.UUID()`, `States.MathRandom(0, 1000000000)`} {
		a := call(expr, testResolver{rand: mrand.NewPCG(7, 7)})
		if b := call(expr, testResolver{rand: mrand.NewPCG(7, 7)}); a != b {
			t.Errorf("%s: the same source gave %s then %s", expr, a, b)
		}
		if b := call(expr, testResolver{rand: mrand.NewPCG(8, 8)}); a == b {
			t.Errorf("%s: different sources both gave %s", expr, a)
		}
		if x, y := call(expr, testResolver{}), call(expr, testResolver{}); x != y {
			t.Errorf("%s: without a source: %s then %s, want the fixed-seed value", expr, x, y)
		}
	}
}
