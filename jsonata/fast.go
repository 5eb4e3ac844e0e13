package jsonata

import (
	"math"
	"strconv"

	"github.com/stepd/stepd/value"
)

// The adapter evaluates the simplest expressions itself, over stepd's
// values, without gnata: a gnata evaluation builds an environment, copies
// the variables into it and converts values both ways, which for an
// expression such as "$i + 1" costs far more than the arithmetic. An
// expression has a fast form (parseFast) when it is made only of
//
//   - number, string (without escapes), true, false and null literals;
//   - variables ($name) and member paths on them ($states.input.n);
//   - unary -, the operators + - * / % & = != < <= > >= and, or;
//   - $string(x), when no variable named string hides the function;
//   - parentheses around one expression, and object constructors whose
//     keys are string literals and whose values are such expressions.
//
// The fast form computes only the results it is sure of: whenever a value
// is not what it handles (undefined, an array, a number JSONata cannot
// read, an object where a scalar is needed, a result out of range,
// operands of mixed types...) it gives up, and the expression is evaluated
// by gnata as if the fast form did not exist. Expressions have no side
// effects, so evaluating again is safe, and every error, and every
// undefined result, comes from gnata. FuzzFast checks the fast results
// against gnata's.

// fop is the operation of a fast node.
type fop uint8

const (
	fLit    fop = iota // a literal: lit
	fVar               // a variable, then the members of path
	fNeg               // unary minus of l
	fArith             // l op r, op one of + - * / %
	fConcat            // l & r
	fCmp               // l op r, op one of < <= > >=
	fEq                // l = r (op '=') or l != r (op '!')
	fAnd               // l and r
	fOr                // l or r
	fString            // $string(l)
	fObject            // {keys[i]: vals[i], ...}
)

// fnode is a node of an expression's fast form.
type fnode struct {
	op   fop
	tok  byte // the operator: + - * / % < l(<=) > g(>=) = !
	lit  fval
	name string
	path []string
	l, r *fnode
	keys []string
	vals []*fnode
}

// fkind is the type of a fast value.
type fkind uint8

const (
	kNull fkind = iota
	kBool
	kNum
	kStr
	kObj
)

// fval is a value in a fast evaluation: a JSON scalar or an object.
type fval struct {
	kind fkind
	b    bool
	text value.Number // kNum: the number's text, "" for a computed one
	f    float64      // kNum: its value, when computed or parsed
	s    string
	obj  *value.Object
	made bool // kObj: built by the expression's object constructor
}

// num returns a number's value; ok is false when the text is not one
// that JSONata reads as a number.
func (v *fval) num() (float64, bool) {
	if v.text == "" {
		return v.f, true
	}
	return parseNumber(string(v.text))
}

// parseNumber reads a number's text as gnata does (strconv.ParseFloat),
// plain integers of up to 15 digits without it.
func parseNumber(s string) (float64, bool) {
	if n := len(s); n > 0 && n <= 15 {
		i, neg := 0, false
		if s[0] == '-' {
			i, neg = 1, true
		}
		var x int64
		j := i
		for ; j < n && s[j] >= '0' && s[j] <= '9'; j++ {
			x = x*10 + int64(s[j]-'0')
		}
		if j == n && j > i {
			f := float64(x)
			if neg {
				f = -f
			}
			return f, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// fromValue is the fast value of a stepd value; ok is false for values
// the fast form does not handle (arrays, anything not JSON).
func fromValue(v any) (fval, bool) {
	switch x := v.(type) {
	case nil:
		return fval{kind: kNull}, true
	case bool:
		return fval{kind: kBool, b: x}, true
	case string:
		return fval{kind: kStr, s: x}, true
	case value.Number:
		if x == "" {
			return fval{}, false
		}
		return fval{kind: kNum, text: x}, true
	case *value.Object:
		return fval{kind: kObj, obj: x}, true
	}
	return fval{}, false
}

// toValue is the stepd value of a fast value.
func (v *fval) toValue() any {
	switch v.kind {
	case kBool:
		return v.b
	case kNum:
		if v.text != "" {
			return v.text
		}
		return value.Float(v.f)
	case kStr:
		return v.s
	case kObj:
		return v.obj
	}
	return nil
}

// truth is JSONata's boolean cast of a scalar; ok is false for an object
// or an unreadable number.
func (v *fval) truth() (t, ok bool) {
	switch v.kind {
	case kNull:
		return false, true
	case kBool:
		return v.b, true
	case kStr:
		return v.s != "", true
	case kNum:
		f, ok := v.num()
		return ok && f != 0, ok
	}
	return false, false
}

// str is $string of a scalar: ok is false for an object or a number that
// $string refuses.
func (v *fval) str() (string, bool) {
	switch v.kind {
	case kNull:
		return "null", true
	case kBool:
		return strconv.FormatBool(v.b), true
	case kStr:
		return v.s, true
	case kNum:
		f, ok := v.num()
		if !ok || !finite(f) {
			return "", false
		}
		var buf [32]byte
		return string(appendNumber(buf[:0], f)), true
	}
	return "", false
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// fastEval evaluates a fast form with the variables vars (nil: none);
// ok is false when the fast form gives up.
func fastEval(n *fnode, vars Vars) (fval, bool) {
	switch n.op {
	case fLit:
		return n.lit, true
	case fVar:
		if vars == nil {
			return fval{}, false
		}
		v, _, ok := vars.Var(n.name)
		if !ok {
			return fval{}, false
		}
		for _, k := range n.path {
			o, isObj := v.(*value.Object)
			if !isObj {
				return fval{}, false
			}
			if v, ok = o.Get(k); !ok {
				return fval{}, false
			}
		}
		return fromValue(v)
	case fNeg:
		x, ok := fastEval(n.l, vars)
		if !ok || x.kind != kNum {
			return fval{}, false
		}
		f, ok := x.num()
		return fval{kind: kNum, f: -f}, ok && finite(f)
	case fArith:
		return fastArith(n, vars)
	case fConcat:
		l, ok := fastEval(n.l, vars)
		if !ok {
			return fval{}, false
		}
		r, ok := fastEval(n.r, vars)
		if !ok {
			return fval{}, false
		}
		ls, ok := l.str()
		if !ok {
			return fval{}, false
		}
		rs, ok := r.str()
		return fval{kind: kStr, s: ls + rs}, ok
	case fCmp:
		return fastCompare(n, vars)
	case fEq:
		return fastEqual(n, vars)
	case fAnd, fOr:
		l, ok := fastEval(n.l, vars)
		if !ok {
			return fval{}, false
		}
		t, ok := l.truth()
		if !ok {
			return fval{}, false
		}
		if t == (n.op == fOr) {
			return fval{kind: kBool, b: t}, true
		}
		r, ok := fastEval(n.r, vars)
		if !ok {
			return fval{}, false
		}
		t, ok = r.truth()
		return fval{kind: kBool, b: t}, ok
	case fString:
		if vars != nil {
			if _, _, hidden := vars.Var(stringName); hidden {
				return fval{}, false
			}
		}
		x, ok := fastEval(n.l, vars)
		if !ok {
			return fval{}, false
		}
		s, ok := x.str()
		return fval{kind: kStr, s: s}, ok
	case fObject:
		o := value.NewObject(len(n.keys))
		for i, k := range n.keys {
			x, ok := fastEval(n.vals[i], vars)
			if !ok || x.kind == kObj && !x.made {
				// An object of the input inside a new one: gnata's
				// result keeps its form for the next state (Keeper),
				// which then reads it without converting it again.
				return fval{}, false
			}
			o.Set(k, x.toValue())
		}
		return fval{kind: kObj, obj: o, made: true}, true
	}
	return fval{}, false
}

// fastOperands evaluates both operands as numbers.
func fastOperands(n *fnode, vars Vars) (l, r float64, ok bool) {
	x, ok := fastEval(n.l, vars)
	if !ok || x.kind != kNum {
		return 0, 0, false
	}
	y, ok := fastEval(n.r, vars)
	if !ok || y.kind != kNum {
		return 0, 0, false
	}
	if l, ok = x.num(); !ok {
		return 0, 0, false
	}
	r, ok = y.num()
	return l, r, ok
}

func fastArith(n *fnode, vars Vars) (fval, bool) {
	l, r, ok := fastOperands(n, vars)
	if !ok {
		return fval{}, false
	}
	var f float64
	switch n.tok {
	case '+':
		f = l + r
	case '-':
		f = l - r
	case '*':
		f = l * r
	case '/':
		f = l / r
	case '%':
		if r == 0 {
			return fval{}, false
		}
		f = math.Mod(l, r)
	}
	return fval{kind: kNum, f: f}, finite(f)
}

func fastCompare(n *fnode, vars Vars) (fval, bool) {
	x, ok := fastEval(n.l, vars)
	if !ok {
		return fval{}, false
	}
	y, ok := fastEval(n.r, vars)
	if !ok || x.kind != y.kind {
		return fval{}, false
	}
	var c int // -1, 0, 1; 2: unordered (NaN)
	switch x.kind {
	case kNum:
		l, ok1 := x.num()
		r, ok2 := y.num()
		if !ok1 || !ok2 {
			return fval{}, false
		}
		switch {
		case l < r:
			c = -1
		case l > r:
			c = 1
		case l == r:
			c = 0
		default:
			c = 2
		}
	case kStr:
		switch {
		case x.s < y.s:
			c = -1
		case x.s > y.s:
			c = 1
		}
	default:
		return fval{}, false
	}
	var b bool
	switch n.tok {
	case '<':
		b = c == -1
	case 'l':
		b = c == -1 || c == 0
	case '>':
		b = c == 1
	case 'g':
		b = c == 1 || c == 0
	}
	return fval{kind: kBool, b: b}, true
}

func fastEqual(n *fnode, vars Vars) (fval, bool) {
	x, ok := fastEval(n.l, vars)
	if !ok {
		return fval{}, false
	}
	y, ok := fastEval(n.r, vars)
	if !ok || x.kind == kObj || y.kind == kObj {
		return fval{}, false
	}
	eq := false
	if x.kind == y.kind {
		switch x.kind {
		case kNull:
			eq = true
		case kBool:
			eq = x.b == y.b
		case kStr:
			eq = x.s == y.s
		case kNum:
			l, ok1 := x.num()
			r, ok2 := y.num()
			if !ok1 || !ok2 {
				return fval{}, false
			}
			eq = l == r
		}
	} else if x.kind == kNum || y.kind == kNum {
		// A number against another type: make sure the number is one
		// JSONata reads, as gnata's comparison does.
		num := &x
		if y.kind == kNum {
			num = &y
		}
		if _, ok := num.num(); !ok {
			return fval{}, false
		}
	}
	return fval{kind: kBool, b: eq != (n.tok == '!')}, true
}
