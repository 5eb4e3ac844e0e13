package interp

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/value"
)

// runChoice runs a Choice state: the first rule that matches the effective
// input names the next state (or Default).
func (th *thread) runChoice() {
	ev := th.cur.ev
	in, f := ev.input(th)
	if f != nil {
		th.fail(f)
		return
	}
	ev.inspectInput(th, in)
	next, out, f := ev.choose(th, in)
	if f != nil {
		th.fail(f)
		return
	}
	th.exit(out, next)
}

// choice is a compiled JSONPath-mode Choice rule.
type choice struct {
	rule     *asl.ChoiceRule
	variable *ref
	operand  *ref // for *Path operators
	and, or  []*choice
	not      *choice
	assign   *payload // a top-level rule's Assign
}

func compileChoice(r *asl.ChoiceRule) (*choice, error) {
	c := &choice{rule: r}
	var err error
	switch {
	case len(r.And) > 0 || len(r.Or) > 0:
		for _, sub := range r.And {
			sc, err := compileChoice(sub)
			if err != nil {
				return nil, err
			}
			c.and = append(c.and, sc)
		}
		for _, sub := range r.Or {
			sc, err := compileChoice(sub)
			if err != nil {
				return nil, err
			}
			c.or = append(c.or, sc)
		}
		return c, nil
	case r.Not != nil:
		if c.not, err = compileChoice(r.Not); err != nil {
			return nil, err
		}
		return c, nil
	}
	if r.Variable == "" {
		return nil, fmt.Errorf("a comparison needs a Variable")
	}
	if c.variable, err = compileRef(r.Variable); err != nil {
		return nil, err
	}
	if strings.HasSuffix(r.Operator, "Path") {
		s, ok := r.Operand.(string)
		if !ok {
			return nil, fmt.Errorf("%s must be a path string", r.Operator)
		}
		if c.operand, err = compileRef(s); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// eval evaluates a JSONPath-mode rule.
func (c *choice) eval(e *env) (bool, error) {
	switch {
	case c.and != nil:
		for _, s := range c.and {
			ok, err := s.eval(e)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case c.or != nil:
		for _, s := range c.or {
			ok, err := s.eval(e)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case c.not != nil:
		ok, err := c.not.eval(e)
		return !ok, err
	}
	op := c.rule.Operator
	v, err := c.variable.get(e)
	if op == "IsPresent" {
		want, _ := c.rule.Operand.(bool)
		return (err == nil) == want, nil
	}
	if err != nil {
		return false, err
	}
	operand := c.rule.Operand
	if c.operand != nil {
		if operand, err = c.operand.get(e); err != nil {
			return false, err
		}
		op = strings.TrimSuffix(op, "Path")
	}
	return compare(op, v, operand), nil
}

func compare(op string, v, operand any) bool {
	switch op {
	case "IsNull":
		return (v == nil) == (operand == true)
	case "IsBoolean":
		_, ok := v.(bool)
		return ok == (operand == true)
	case "IsNumeric":
		_, ok := v.(value.Number)
		return ok == (operand == true)
	case "IsString":
		_, ok := v.(string)
		return ok == (operand == true)
	case "IsTimestamp":
		s, ok := v.(string)
		if ok {
			_, ok = parseTimestamp(s)
		}
		return ok == (operand == true)
	case "BooleanEquals":
		a, ok1 := v.(bool)
		b, ok2 := operand.(bool)
		return ok1 && ok2 && a == b
	case "StringMatches":
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		return ok1 && ok2 && wildcardMatch(b, a)
	}
	var cmp int
	switch {
	case strings.HasPrefix(op, "String"):
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false
		}
		cmp = strings.Compare(a, b)
		op = op[len("String"):]
	case strings.HasPrefix(op, "Numeric"):
		a, ok1 := v.(value.Number)
		b, ok2 := operand.(value.Number)
		if !ok1 || !ok2 {
			return false
		}
		x, y := a.Float64(), b.Float64()
		switch {
		case x < y:
			cmp = -1
		case x > y:
			cmp = 1
		}
		op = op[len("Numeric"):]
	case strings.HasPrefix(op, "Timestamp"):
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false
		}
		ta, ok1 := parseTimestamp(a)
		tb, ok2 := parseTimestamp(b)
		if !ok1 || !ok2 {
			return false
		}
		cmp = ta.Compare(tb)
		op = op[len("Timestamp"):]
	default:
		return false
	}
	switch op {
	case "Equals":
		return cmp == 0
	case "LessThan":
		return cmp < 0
	case "GreaterThan":
		return cmp > 0
	case "LessThanEquals":
		return cmp <= 0
	case "GreaterThanEquals":
		return cmp >= 0
	}
	return false
}

// wildcardMatch matches s against an ASL StringMatches pattern: '*' matches
// any run of characters, '\*' a literal star and '\\' a backslash.
func wildcardMatch(pattern, s string) bool {
	// Split the pattern into literal segments separated by unescaped stars.
	var segs []string
	var cur strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '\\' && i+1 < len(pattern) && (pattern[i+1] == '*' || pattern[i+1] == '\\') {
			cur.WriteByte(pattern[i+1])
			i++
			continue
		}
		if c == '*' {
			segs = append(segs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	segs = append(segs, cur.String())
	if len(segs) == 1 {
		return s == segs[0]
	}
	if !strings.HasPrefix(s, segs[0]) {
		return false
	}
	s = s[len(segs[0]):]
	last := segs[len(segs)-1]
	for _, seg := range segs[1 : len(segs)-1] {
		i := strings.Index(s, seg)
		if i < 0 {
			return false
		}
		s = s[i+len(seg):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
