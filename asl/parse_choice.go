package asl

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/value"
)

// Comparison operators of Choice rules.
var operators = func() map[string]bool {
	m := map[string]bool{"StringMatches": true, "IsNull": true, "IsPresent": true, "IsNumeric": true, "IsString": true, "IsBoolean": true, "IsTimestamp": true, "BooleanEquals": true, "BooleanEqualsPath": true}
	for _, t := range []string{"String", "Numeric", "Timestamp"} {
		for _, op := range []string{"Equals", "LessThan", "GreaterThan", "LessThanEquals", "GreaterThanEquals"} {
			m[t+op] = true
			m[t+op+"Path"] = true
		}
	}
	return m
}()

func (p *parser) choices(st *State, o *value.Object, ptr string) {
	v, ok := o.Get("Choices")
	if !ok {
		p.errorf(ptr, CodeSchema, "These fields are required: [Choices]")
		return
	}
	arr, isArr := v.([]any)
	if !isArr {
		p.errorf(ptr+"/Choices", CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(v))
		return
	}
	if len(arr) == 0 {
		p.errorf(ptr+"/Choices", CodeSchema, "There must be at least one choice rule")
	}
	for i, e := range arr {
		r := p.rule(e, fmt.Sprintf("%s/Choices/%d", ptr, i), true, st.QueryLanguage)
		if r != nil {
			st.Choices = append(st.Choices, r)
		}
	}
}

func (p *parser) rule(v any, ptr string, top bool, ql string) *ChoiceRule {
	o, ok := object(v)
	if !ok {
		p.errorf(ptr, CodeSchema, "Expected value of type 'Object' but got '%s'", typeName(v))
		return nil
	}
	r := &ChoiceRule{Pointer: ptr}
	r.Comment = p.str(o, "Comment", ptr)
	if top {
		r.Next, r.hasNext = p.target(o, "Next", ptr)
		if !o.Has("Next") {
			p.errorf(ptr, CodeSchema, "These fields are required: [Next]")
		}
		r.Output = field(o, "Output")
		r.Assign = field(o, "Assign")
		p.objectField(r.Assign, ptr+"/Assign")
	}
	if ql == JSONata && top {
		r.Condition = field(o, "Condition")
		if !r.Condition.Set {
			p.errorf(ptr, CodeSchema, "These fields are required: [Condition]")
		}
		for _, k := range o.Keys() {
			switch k {
			case "Condition", "Next", "Output", "Assign", "Comment":
			default:
				p.unsupported(ptr, k, jsonataRuleFields)
			}
		}
		return r
	}
	nOps := 0
	for _, k := range o.Keys() {
		switch {
		case k == "Variable":
			r.Variable = p.str(o, k, ptr)
		case k == "And" || k == "Or":
			sub, _ := o.Get(k)
			arr, isArr := sub.([]any)
			if !isArr {
				p.errorf(ptr+"/"+k, CodeSchema, "Expected value of type 'Array' but got '%s'", typeName(sub))
				continue
			}
			nOps++
			if len(arr) == 0 {
				p.errorf(ptr+"/"+k, CodeSchema, "'%s' must have at least one choice rule", k)
			}
			for i, e := range arr {
				sr := p.rule(e, fmt.Sprintf("%s/%s/%d", ptr, k, i), false, ql)
				if sr == nil {
					continue
				}
				if k == "And" {
					r.And = append(r.And, sr)
				} else {
					r.Or = append(r.Or, sr)
				}
			}
		case k == "Not":
			sub, _ := o.Get(k)
			nOps++
			r.Not = p.rule(sub, ptr+"/Not", false, ql)
		case operators[k]:
			nOps++
			r.Operator = k
			r.Operand, _ = o.Get(k)
			p.operand(r, ptr+"/"+k)
		case top && (k == "Next" || k == "Output" || k == "Assign"), k == "Comment":
		default:
			p.unsupported(ptr, k, ruleFields(top))
		}
	}
	switch {
	case nOps == 0:
		p.errorf(ptr, CodeSchema, "A choice rule must have exactly one comparison operator or And, Or, Not")
	case nOps > 1:
		p.errorf(ptr, CodeSchema, "A choice rule must have exactly one comparison operator or And, Or, Not")
	case r.Operator != "" && r.Variable == "":
		p.errorf(ptr, CodeSchema, "These fields are required: [Variable]")
	}
	return r
}

func (p *parser) operand(r *ChoiceRule, ptr string) {
	op, v := r.Operator, r.Operand
	bad := func(want string) {
		p.errorf(ptr, CodeSchema, "Expected value of type '%s' but got '%s'", want, typeName(v))
	}
	switch {
	case strings.HasSuffix(op, "Path"):
		if _, ok := v.(string); !ok {
			bad("String")
		}
	case strings.HasPrefix(op, "Is"), op == "BooleanEquals":
		if _, ok := v.(bool); !ok {
			bad("Boolean")
		}
	case strings.HasPrefix(op, "Numeric"):
		if _, ok := v.(value.Number); !ok {
			bad("Number")
		}
	case strings.HasPrefix(op, "String"):
		if _, ok := v.(string); !ok {
			bad("String")
		}
	case strings.HasPrefix(op, "Timestamp"):
		s, ok := v.(string)
		if !ok {
			bad("String")
		} else if !validTimestamp(s) {
			p.errorf(ptr, CodeSchema, "String does not match RFC3339 timestamp")
		}
	}
}

// jsonataRuleFields are the fields of a JSONata Choice rule.
var jsonataRuleFields = set("Condition", "Next", "Output", "Assign", "Comment")

// ruleFields are the fields a JSONPath Choice rule may have: the
// operators, And, Or, Not, Variable, Comment and, at the top, Next,
// Output and Assign.
func ruleFields(top bool) map[string]bool {
	m := set("Variable", "And", "Or", "Not", "Comment")
	for k := range operators {
		m[k] = true
	}
	if top {
		m["Next"], m["Output"], m["Assign"] = true, true, true
	}
	return m
}
