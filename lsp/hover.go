package lsp

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/value"
)

func quoteJSON(s string) string { return value.String(s) }

// payloadFields hold payloads, whose member names are the user's.
var payloadFields = []string{"Parameters", "Arguments", "Result", "ResultSelector", "ItemSelector", "Assign", "Output", "BatchInput", "Credentials"}

// hover answers textDocument/hover.
func (s *Server) hover(d *document, p Position) *Hover {
	if d.root == nil {
		return nil
	}
	off := d.lines.offset(p)
	if h := s.placeholderHover(d, off); h != nil {
		return h
	}
	n := d.root.at(off)
	if n == nil {
		return nil
	}
	if sc, name, ref := d.stateAt(p); sc != nil {
		st := sc.state(name)
		typ := "missing: no state of this name in its scope"
		if st != nil {
			typ = "a state"
			if t := st.child("Type"); t != nil {
				typ = "a " + t.str + " state"
			}
			if res := st.child("Resource"); res != nil && res.kind == 's' {
				typ += " calling " + res.str
			}
		}
		r := d.lines.rangeOf(ref.start, ref.end)
		if ref.inKey(off) {
			r = d.lines.rangeOf(ref.keyStart, ref.keyEnd)
		}
		return &Hover{Contents: MarkupContent{Kind: "markdown", Value: fmt.Sprintf("State **%s**: %s", name, typ)}, Range: &r}
	}
	if n.inKey(off) {
		for x := n.parent; x != nil; x = x.parent {
			for _, f := range payloadFields {
				if x.key == f && x.hasKey {
					return nil
				}
			}
		}
		doc, ok := fieldDocs[n.key]
		if !ok {
			return nil
		}
		r := d.lines.rangeOf(n.keyStart, n.keyEnd)
		return &Hover{Contents: MarkupContent{Kind: "markdown", Value: fmt.Sprintf("**%s**: %s", n.key, doc)}, Range: &r}
	}
	if n.kind == 's' && n.key == "Resource" {
		r := d.lines.rangeOf(n.start, n.end)
		return &Hover{Contents: MarkupContent{Kind: "markdown", Value: describeResource(n.str)}, Range: &r}
	}
	return nil
}

// placeholderHover shows the value of the ${Name} placeholder under the
// cursor.
func (s *Server) placeholderHover(d *document, off int) *Hover {
	ls := d.lines.lineStart(off)
	i := strings.LastIndex(d.text[ls:min(off+2, len(d.text))], "${")
	if i < 0 {
		return nil
	}
	start := ls + i
	j := strings.IndexByte(d.text[start:], '}')
	if j < 0 || start+j < off-1 || strings.ContainsAny(d.text[start:start+j], "\n") {
		return nil
	}
	name := d.text[start+2 : start+j]
	r := d.lines.rangeOf(start, start+j+1)
	text := fmt.Sprintf("`${%s}` has no substitution: give it with `--definition-substitutions %s=VALUE` or in initializationOptions.definitionSubstitutions", name, name)
	if v, ok := d.templateSubstitution(off, name); ok {
		text = fmt.Sprintf("`${%s}` = `%s` (the state machine's DefinitionSubstitutions)", name, v)
	}
	if v, ok := s.cfg.subs[name]; ok {
		text = fmt.Sprintf("`${%s}` = `%s` (definition substitution)", name, v)
	}
	return &Hover{Contents: MarkupContent{Kind: "markdown", Value: text}, Range: &r}
}

// describeResource says what a Task's Resource calls.
func describeResource(res string) string {
	if strings.HasPrefix(strings.TrimSpace(res), "{%") {
		return "A JSONata expression: the Resource is what it evaluates to."
	}
	if strings.Contains(res, "${") {
		return "A DefinitionSubstitutions placeholder: the Resource is the value substituted for it."
	}
	for _, x := range integrations {
		if x.arn == res {
			return fmt.Sprintf("Optimized integration `%s`: %s.", res, x.what)
		}
	}
	pattern := "request-response (the state ends with the call's answer)"
	base := res
	for _, p := range []struct{ suffix, what string }{
		{".sync:2", "run a job (.sync:2: waits for it; JSON output)"},
		{".sync", "run a job (.sync: waits for it to finish)"},
		{".waitForTaskToken", "wait for callback (.waitForTaskToken: waits for SendTaskSuccess or SendTaskFailure with $$.Task.Token)"},
	} {
		if strings.HasSuffix(res, p.suffix) {
			pattern, base = p.what, strings.TrimSuffix(res, p.suffix)
			break
		}
	}
	if rest, ok := strings.CutPrefix(base, "arn:aws:states:::aws-sdk:"); ok {
		svc, action, _ := strings.Cut(rest, ":")
		return fmt.Sprintf("AWS SDK integration: calls the %s API's %s action with the state's Parameters (or Arguments) as its request; pattern: %s.", svc, upperFirst(action), pattern)
	}
	if rest, ok := strings.CutPrefix(base, "arn:aws:states:::"); ok {
		svc, action, _ := strings.Cut(rest, ":")
		return fmt.Sprintf("Optimized integration with %s, action %s; pattern: %s.", svc, action, pattern)
	}
	parts := strings.SplitN(res, ":", 8)
	if len(parts) >= 7 && parts[0] == "arn" {
		switch {
		case parts[2] == "lambda" && parts[5] == "function":
			return fmt.Sprintf("The Lambda function `%s` (region %s, account %s), invoked directly: the state's output is the function's response.", parts[6], parts[3], parts[4])
		case parts[2] == "states" && parts[5] == "activity":
			return fmt.Sprintf("The activity `%s`: a worker polls GetActivityTask and answers with SendTaskSuccess or SendTaskFailure.", parts[6])
		}
	}
	return "The resource this Task calls: `" + res + "`."
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// templateSubstitution returns the text a template's state machine gives
// the placeholder name in its DefinitionSubstitutions, as written (an
// intrinsic function is shown, not resolved).
func (d *document) templateSubstitution(off int, name string) (string, bool) {
	if !d.template || d.root == nil {
		return "", false
	}
	for n := d.root.at(off); n != nil; n = n.parent {
		if n.parent == nil || n.parent.key != "Resources" || n.parent.parent != d.root {
			continue
		}
		v := n.child("Properties").child("DefinitionSubstitutions").child(name)
		if v == nil {
			return "", false
		}
		if v.kind == 's' || v.kind == 'n' {
			return v.str, true
		}
		return strings.Join(strings.Fields(d.text[v.start:v.end]), " "), true
	}
	return "", false
}
