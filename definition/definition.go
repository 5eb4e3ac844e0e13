// Package definition reads state machine definitions as deployment tools
// write them: JSON or YAML files, with DefinitionSubstitutions (${Name}
// placeholders) applied the way AWS CloudFormation applies them, and finds
// the placeholders left unresolved.
//
// Substitution follows the AWS::StepFunctions::StateMachine resource: it
// is textual, on the definition's JSON text (a YAML definition is first
// turned into JSON), so a placeholder may stand anywhere, also outside a
// string ("TimeoutSeconds": ${Timeout}); every "${Key}" of a given key is
// replaced by its value as it is, without JSON escaping; replacement
// repeats while a value brings in another known placeholder (a cycle is an
// error); a placeholder without a substitution stays as it is, and there
// is no escape (Fn::Sub's ${!Name} belongs to the template, not here).
// Values may be strings, numbers or booleans, which stand as their text.
//
// It must not import template, which builds on it, nor interp beside it,
// nor anything above them: the engine and the backends, the server
// (service, api …), conformance, bench, cmd/stepd.
package definition

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/internal/yamlvalue"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// IsYAML reports whether a file holds YAML rather than JSON: by its
// extension (.yaml, .yml; .json is JSON), else by its content (JSON starts
// with { or [).
func IsYAML(path string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return true
	case ".json":
		return false
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(t) > 0 && t[0] != '{' && t[0] != '['
}

// Warn is told of what a file holds that is read but may be a mistake, as
// "path:line:column: message" (a YAML key given twice: the last value is
// kept). Nil makes such a file an error.
type Warn func(msg string)

// YAMLWarn adapts w to the YAML reader's warnings of the file at path
// (nil when w is nil).
func YAMLWarn(path string, w Warn) yamlvalue.WarnFunc {
	if w == nil {
		return nil
	}
	return func(e *yamlvalue.Error) { w(fmt.Sprintf("%s:%d:%d: %s", path, e.Line, e.Column, e.Msg)) }
}

// ToJSON returns the JSON text of a definition file: JSON unchanged, YAML
// converted (keys in order, numbers as written).
func ToJSON(path string, data []byte, warn Warn) ([]byte, error) {
	if !IsYAML(path, data) {
		return data, nil
	}
	v, err := yamlvalue.ParseWarn(data, nil, YAMLWarn(path, warn))
	if err != nil {
		return nil, err
	}
	return value.Append(nil, v), nil
}

// Parse reads a definition file's contents (JSON or YAML) into a value.
func Parse(path string, data []byte, warn Warn) (any, error) {
	if IsYAML(path, data) {
		return yamlvalue.ParseWarn(data, nil, YAMLWarn(path, warn))
	}
	v, err := value.Parse(data)
	if err != nil {
		return nil, value.Locate(path, data, err)
	}
	return v, nil
}

// Substitutions maps placeholder names to their text.
type Substitutions map[string]string

// Set adds a substitution. Names must be non-empty and hold no "}".
func (s Substitutions) Set(name string, v any) error {
	if name == "" || strings.Contains(name, "}") {
		return fmt.Errorf("substitution name %q: a name is not empty and holds no }", name)
	}
	switch v := v.(type) {
	case string:
		s[name] = v
	case value.Number:
		s[name] = string(v)
	case bool:
		s[name] = fmt.Sprint(v)
	default:
		return fmt.Errorf("substitution %s: the value must be a string, a number or a boolean, not %s", name, value.KindOf(v))
	}
	return nil
}

// ParseSubstitutions reads a substitutions file: a JSON or YAML mapping of
// names to strings, numbers or booleans.
func ParseSubstitutions(path string, data []byte) (Substitutions, error) {
	v, err := Parse(path, data, nil)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*value.Object)
	if !ok {
		return nil, errors.New("substitutions: want a mapping of names to values")
	}
	s := Substitutions{}
	for i := 0; i < o.Len(); i++ {
		k, v := o.At(i)
		if err := s.Set(k, v); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// maxText bounds the text substitution may build (AWS's limit is in
// characters, of up to 4 bytes each).
const maxText = 4 * validate.MaxDefinitionLength

// Substitute applies the substitutions to a definition's text. It returns
// an error only for substitutions that refer to each other in a cycle.
func Substitute(text string, subs Substitutions) (string, error) {
	if len(subs) == 0 {
		return text, nil
	}
	// Like CloudFormation, a pass replaces every known placeholder, and
	// passes repeat while one replaced something; more passes than there
	// are names means a cycle.
	for pass := 0; ; pass++ {
		out, n := substituteOnce(text, subs)
		if n == 0 {
			return out, nil
		}
		if len(out) > maxText {
			return "", fmt.Errorf("DefinitionSubstitutions make the definition longer than AWS's limit of %d characters", validate.MaxDefinitionLength)
		}
		if pass >= len(subs) {
			names := Placeholders(out)
			var known []string
			for _, p := range names {
				if _, ok := subs[p]; ok && !slices.Contains(known, p) {
					known = append(known, p)
				}
			}
			return "", fmt.Errorf("DefinitionSubstitutions refer to each other in a cycle: ${%s}", strings.Join(known, "}, ${"))
		}
		text = out
	}
}

func substituteOnce(text string, subs Substitutions) (string, int) {
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i+2:], '}')
		if j < 0 {
			break
		}
		name := text[i+2 : i+2+j]
		v, ok := subs[name]
		if !ok {
			b.WriteString(text[:i+2])
			text = text[i+2:]
			continue
		}
		if n == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[:i])
		b.WriteString(v)
		text = text[i+3+j:]
		n++
	}
	if n == 0 {
		return b.String() + text, 0
	}
	b.WriteString(text)
	return b.String(), n
}

// Placeholders lists the names of the ${Name} placeholders in s, in order.
func Placeholders(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			return out
		}
		if name := s[i+2 : i+2+j]; name != "" && !strings.Contains(name, "${") {
			out = append(out, name)
		}
		s = s[i+2:]
	}
}

// Unresolved is a ${Name} placeholder left in a definition.
type Unresolved struct {
	Pointer string // JSON pointer of the string (or key) that holds it
	Name    string
	// Resource: it stands in a Resource field (a Task's, an ItemReader's
	// or a ResultWriter's), where it can never work.
	Resource bool
}

// Find lists the placeholders left in a parsed definition: in string
// values and member names, with their JSON pointers.
func Find(def any) []Unresolved {
	var out []Unresolved
	var walk func(v any, ptr, key string)
	walk = func(v any, ptr, key string) {
		switch v := v.(type) {
		case string:
			for _, n := range Placeholders(v) {
				out = append(out, Unresolved{Pointer: ptr, Name: n, Resource: key == "Resource"})
			}
		case []any:
			for i, e := range v {
				walk(e, fmt.Sprintf("%s/%d", ptr, i), "")
			}
		case *value.Object:
			for i := 0; i < v.Len(); i++ {
				k, e := v.At(i)
				p := ptr + "/" + escapePointer(k)
				for _, n := range Placeholders(k) {
					out = append(out, Unresolved{Pointer: p, Name: n})
				}
				walk(e, p, k)
			}
		}
	}
	walk(def, "", "")
	return out
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// MachineName is the state machine name a definition file gives when no
// name is given: its base name without the extension, and without an
// .asl before it (orders.asl.json and orders.asl.yaml name orders, as the
// AWS Toolkit and SAM write definition files).
func MachineName(path string) string {
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if len(name) > 4 && strings.EqualFold(name[len(name)-4:], ".asl") {
		name = name[:len(name)-4]
	}
	return name
}

// UnresolvedCode is the code of the diagnostic for a ${Name} placeholder
// left in a definition (stepd's own: AWS takes such text as it is).
const UnresolvedCode = "UNRESOLVED_SUBSTITUTION"

// Diagnose diagnoses the ${Name} placeholders left in a definition's JSON
// text: an error in a Resource (it can never work), a warning elsewhere
// (it may be meant as text). fromTemplate: the definition is a
// template's, whose DefinitionSubstitutions may give the value. Text that
// is not JSON gives none (the definition's own diagnostics say why).
func Diagnose(text []byte, fromTemplate bool) asl.Diagnostics {
	v, err := value.Parse(text)
	if err != nil {
		return nil
	}
	var out asl.Diagnostics
	for _, u := range Find(v) {
		how := fmt.Sprintf("give it with --definition-substitutions %s=VALUE", u.Name)
		if fromTemplate {
			how = fmt.Sprintf("add %s to the state machine's DefinitionSubstitutions, or give it with --definition-substitutions %s=VALUE", u.Name, u.Name)
		}
		sev, what := asl.SeverityWarning, "is left as text"
		if u.Resource {
			sev, what = asl.SeverityError, "is not a resource"
		}
		out = append(out, asl.Diagnostic{Pointer: u.Pointer, Code: UnresolvedCode, Severity: sev,
			Message: fmt.Sprintf("${%s} has no substitution and %s", u.Name, what), Hint: how})
	}
	return out
}
