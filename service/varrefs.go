package service

import (
	"slices"
	"strings"

	"github.com/stepd/stepd/value"
)

// VariableReferences returns, by state name, the workflow variables each
// state of a definition references (DescribeStateMachine's
// variableReferences): the $name of JSONata expressions ({% … %}) and of
// JSONPath paths and intrinsic functions (members ending in ".$" or
// "Path"), sorted by name as AWS lists them, without $states, $$, the
// expression's own bindings ($x := …, function parameters) and function
// calls. States of Parallel branches and Map processors are listed under
// their own names; states that reference none are left out. A definition
// that does not parse has none.
func VariableReferences(def string) map[string][]string {
	v, err := value.ParseString(def)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	if root, ok := v.(*value.Object); ok {
		statesOf(root, out)
	}
	return out
}

// statesOf adds the references of the states of a machine or branch.
func statesOf(machine *value.Object, out map[string][]string) {
	states, _ := machine.Get("States")
	list, ok := states.(*value.Object)
	if !ok {
		return
	}
	for name, s := range list.All {
		st, ok := s.(*value.Object)
		if !ok {
			continue
		}
		var refs []string
		for k, f := range st.All {
			switch k {
			case "Branches":
				if bs, ok := f.([]any); ok {
					for _, b := range bs {
						if bo, ok := b.(*value.Object); ok {
							statesOf(bo, out)
						}
					}
				}
				continue
			case "ItemProcessor", "Iterator":
				if p, ok := f.(*value.Object); ok {
					statesOf(p, out)
				}
				continue
			case "Comment", "Type", "Next", "End", "Default":
				continue
			}
			refs = fieldRefs(k, f, refs)
		}
		if len(refs) > 0 {
			slices.Sort(refs)
			out[name] = refs
		}
	}
}

// fieldRefs adds the variables a field's value references.
func fieldRefs(key string, v any, refs []string) []string {
	switch v := v.(type) {
	case string:
		if src, ok := strings.CutPrefix(v, "{%"); ok && strings.HasSuffix(src, "%}") {
			return scanVars(strings.TrimSuffix(src, "%}"), refs)
		}
		if strings.HasSuffix(key, ".$") || strings.HasSuffix(key, "Path") || key == "Variable" {
			return scanVars(v, refs)
		}
	case *value.Object:
		for k, f := range v.All {
			refs = fieldRefs(k, f, refs)
		}
	case []any:
		for _, f := range v {
			refs = fieldRefs(key, f, refs)
		}
	}
	return refs
}

func isIdent(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// scanVars adds the $names an expression or path references, skipping
// quoted text, function calls, $states and names the expression binds.
func scanVars(src string, refs []string) []string {
	bound := map[string]bool{"states": true}
	var found []string
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			for i++; i < len(src) && src[i] != c; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case c == '$' && i+1 < len(src) && isIdent(src[i+1], true):
			j := i + 1
			for j < len(src) && isIdent(src[j], false) {
				j++
			}
			name, rest := src[i+1:j], strings.TrimLeft(src[j:], " \t\r\n")
			switch {
			case strings.HasPrefix(rest, ":="):
				bound[name] = true
			case strings.HasPrefix(rest, "("):
			default:
				found = append(found, name)
			}
			i = j - 1
		case strings.HasPrefix(src[i:], "function"):
			open := strings.IndexByte(src[i:], '(')
			end := strings.IndexByte(src[i:], ')')
			if open > 0 && end > open {
				for _, p := range strings.Split(src[i+open+1:i+end], ",") {
					bound[strings.TrimPrefix(strings.TrimSpace(p), "$")] = true
				}
				i += end
			}
		}
	}
	for _, name := range found {
		if !bound[name] && !contains(refs, name) {
			refs = append(refs, name)
		}
	}
	return refs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
