package lsptest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stepd/stepd/lsp"
)

// Pos returns the position of the n-th (0-based) occurrence of needle in
// text, plus delta bytes, counted independently of the server.
func Pos(t testing.TB, text, needle string, n, delta int) lsp.Position {
	t.Helper()
	off := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(text[off+1:], needle)
		if j < 0 {
			t.Fatalf("%q (occurrence %d) is not in the text", needle, n)
		}
		off += 1 + j
	}
	off += delta
	line := strings.Count(text[:off], "\n")
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return lsp.Position{Line: line, Character: len(utf16.Encode([]rune(text[start:off])))}
}

// Span returns the range of the n-th occurrence of needle.
func Span(t testing.TB, text, needle string, n int) lsp.Range {
	t.Helper()
	return lsp.Range{Start: Pos(t, text, needle, n, 0), End: Pos(t, text, needle, n, len(needle))}
}

func doc(uri string, p lsp.Position) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p}
}

// find returns the diagnostic whose message holds msg.
func find(t testing.TB, diags []lsp.Diagnostic, msg string) lsp.Diagnostic {
	t.Helper()
	for _, d := range diags {
		if strings.Contains(d.Message, msg) {
			return d
		}
	}
	t.Fatalf("no diagnostic says %q; got %+v", msg, diags)
	return lsp.Diagnostic{}
}

func labels(items []lsp.CompletionItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Label)
	}
	return out
}

func complete(t testing.TB, c *Client, uri string, p lsp.Position) []lsp.CompletionItem {
	t.Helper()
	var list lsp.CompletionList
	c.MustCall("textDocument/completion", doc(uri, p), &list)
	return list.Items
}

func has(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: %q missing from %q", what, w, got)
		}
	}
}

func hasNot(t testing.TB, what string, got []string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if slices.Contains(got, w) {
			t.Errorf("%s: %q offered, and does not belong there: %q", what, w, got)
		}
	}
}

// Parse is a definition whose structure is wrong: an unknown field and a
// state type misspelled (the parser's errors, with did-you-mean hints).
const Parse = `{
  "StartAt": "First",
  "States": {
    "First": {
      "Type": "Pass",
      "Nxt": "Second",
      "End": true
    },
    "Second": {
      "Type": "Pas",
      "End": true
    }
  }
}
`

// Checks is a well-formed definition with errors only the validator
// finds: paths, intrinsic calls, JSONata, a missing transition target.
const Checks = `{
  "Comment": "checks",
  "StartAt": "Get",
  "States": {
    "Get": {
      "Type": "Task",
      "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "${FnArn}", "Items.$": "$.items[", "Msg.$": "States.Format('{}', $.a"},
      "Next": "Chose"
    },
    "Choose": {
      "Type": "Choice",
      "Choices": [{"Variable": "$.ok", "BooleanEquals": true, "Next": "Fan"}],
      "Default": "Fan"
    },
    "Fan": {
      "Type": "Parallel",
      "Branches": [{"StartAt": "Left", "States": {"Left": {"Type": "Pass", "Next": "Right"}, "Right": {"Type": "Succeed"}}}],
      "Next": "Each"
    },
    "Each": {
      "Type": "Map",
      "ItemProcessor": {"StartAt": "Item", "States": {"Item": {"Type": "Pass", "End": true}}},
      "Next": "Sum"
    },
    "Sum": {
      "Type": "Pass",
      "QueryLanguage": "JSONata",
      "Assign": {"tally": "{% $states.input.n + + 1 %}"},
      "Output": {"total": "{% $sum($states.input.x) + %}", "id": "{% $states.context.Execution.Id %}"},
      "End": true
    }
  }
}
`

// Template is a SAM template holding a definition with an error.
const Template = `AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Hello
        States:
          Hello:
            Type: Pass
            Next: World
          World:
            Type: Pass
            OutputPath: "$.a["
            End: true
`

// YAMLDef is a YAML definition.
const YAMLDef = `StartAt: One
States:
  One:
    Type: Pass
    Next: Two
  Two:
    Type: Succeed
`

// Matrix runs every check against a server the client talks to, which
// has not been initialized yet.
func Matrix(t *testing.T, c *Client) {
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := c.Call("textDocument/hover", doc("file:///x.json", lsp.Position{}), nil); err == nil {
		t.Error("a request before initialize was answered")
	}
	c.MustCall("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{},
		"initializationOptions": map[string]any{"definitionSubstitutions": map[string]any{"FnArn": "arn:aws:lambda:us-east-1:123456789012:function:greet"}}}, &init)
	for _, cap := range []string{"completionProvider", "hoverProvider", "definitionProvider", "referencesProvider", "renameProvider", "documentSymbolProvider", "codeActionProvider", "textDocumentSync"} {
		if _, ok := init.Capabilities[cap]; !ok {
			t.Errorf("initialize: no %s in %v", cap, init.Capabilities)
		}
	}
	c.Notify("initialized", map[string]any{})

	t.Run("parse errors and fixes", func(t *testing.T) { parseErrors(t, c) })
	t.Run("validator errors", func(t *testing.T) { validatorErrors(t, c) })
	t.Run("completion", func(t *testing.T) { completion(t, c) })
	t.Run("hover", func(t *testing.T) { hover(t, c) })
	t.Run("navigation", func(t *testing.T) { navigation(t, c) })
	t.Run("yaml and templates", func(t *testing.T) { yamlAndTemplates(t, c) })
	t.Run("edges", func(t *testing.T) { edges(t, c) })

	if err := c.Call("workspace/executeCommand", map[string]any{"command": "x"}, nil); err == nil || err.(*RPCError).Code != -32601 {
		t.Errorf("an unknown method: %v, want the error -32601", err)
	}
	c.MustCall("shutdown", nil, nil)
	c.Notify("exit", nil)
	if err := c.Wait(); err != nil {
		t.Errorf("after exit: %v", err)
	}
}

func parseErrors(t *testing.T, c *Client) {
	uri := "file:///w/parse.asl.json"
	diags := c.Open(uri, Parse)
	nxt := find(t, diags, "Field 'Nxt' is not supported")
	if want := Span(t, Parse, `"Nxt"`, 0); nxt.Range != want {
		t.Errorf("the unknown field is at %+v, want its key %+v", nxt.Range, want)
	}
	if !strings.Contains(nxt.Message, "did you mean 'Next'?") || nxt.Code != "SCHEMA_VALIDATION_FAILED" || nxt.Severity != 1 {
		t.Errorf("the unknown field's diagnostic: %+v", nxt)
	}
	typ := find(t, diags, "Instance value (\"Pas\")")
	if want := (lsp.Range{Start: Pos(t, Parse, `"Pas"`, 0, 1), End: Pos(t, Parse, `"Pas"`, 0, 4)}); typ.Range != want {
		t.Errorf("the bad type is at %+v, want %+v", typ.Range, want)
	}
	var actions []lsp.CodeAction
	c.MustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri}, "range": nxt.Range,
		"context": map[string]any{"diagnostics": []any{nxt}}}, &actions)
	if len(actions) != 1 || actions[0].Edit == nil {
		t.Fatalf("code actions for the unknown field: %+v", actions)
	}
	edits := actions[0].Edit.Changes[uri]
	if len(edits) != 1 || edits[0].NewText != "Next" || edits[0].Range != Span(t, Parse, "Nxt", 0) {
		t.Errorf("the fix: %+v, want Nxt replaced by Next", edits)
	}
	c.MustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri}, "range": typ.Range,
		"context": map[string]any{"diagnostics": []any{typ}}}, &actions)
	if len(actions) != 1 || actions[0].Edit.Changes[uri][0].NewText != "Pass" {
		t.Errorf("the fix of the type: %+v", actions)
	}
	// the fixes applied: no diagnostics left
	fixed := strings.Replace(strings.Replace(Parse, `"Nxt": "Second",`+"\n      ", "", 1), `"Pas"`, `"Pass"`, 1)
	if diags := c.Change(uri, 2, fixed); len(diags) != 1 || !strings.Contains(diags[0].Message, "not reachable") {
		t.Errorf("after the fixes: %+v, want only Second unreachable", diags)
	}
	fixed = strings.Replace(fixed, `"End": true`, `"Next": "Second"`, 1)
	if diags := c.Change(uri, 3, fixed); len(diags) != 0 {
		t.Errorf("a valid definition has diagnostics: %+v", diags)
	}
	// malformed JSON: the syntax error's place
	bad := strings.Replace(fixed, `"Type": "Pass",`, `"Type": "Pass"`, 1)
	diags = c.Change(uri, 4, bad)
	if len(diags) != 1 || diags[0].Range.Start != Pos(t, bad, `"Next": "Second"`, 0, 0) {
		t.Errorf("malformed JSON: %+v, want one diagnostic at %+v", diags, Pos(t, bad, `"Next": "Second"`, 0, 0))
	}
}

func validatorErrors(t *testing.T, c *Client) {
	uri := "file:///w/checks.asl.json"
	diags := c.Open(uri, Checks)
	path := find(t, diags, "must be a valid JSONPath")
	if want := Pos(t, Checks, `$.items[`, 0, len("$.items")); path.Range.Start != want {
		t.Errorf("the JSONPath error is at %+v, want the '[' at %+v", path.Range, want)
	}
	call := find(t, diags, "valid intrinsic function call")
	if call.Range.Start.Line != Pos(t, Checks, "States.Format", 0, 0).Line || call.Range.Start.Character <= Pos(t, Checks, "States.Format", 0, 0).Character {
		t.Errorf("the intrinsic call's error is at %+v, want inside the call", call.Range)
	}
	expr := find(t, diags, "unexpected end of expression")
	if want := Span(t, Checks, "+ %}", 0); expr.Range != (lsp.Range{Start: want.Start, End: Pos(t, Checks, "+ %}", 0, 1)}) {
		t.Errorf("the JSONata error is at %+v, want the '+' at %+v", expr.Range, want)
	}
	unary := find(t, diags, "S0211")
	if want := Span(t, Checks, "+ 1 %}", 0); unary.Range != (lsp.Range{Start: want.Start, End: Pos(t, Checks, "+ 1 %}", 0, 1)}) {
		t.Errorf("the JSONata error is at %+v, want the second '+' at %+v", unary.Range, want.Start)
	}
	target := find(t, diags, "Missing 'Next' target: Chose")
	if want := (lsp.Range{Start: Pos(t, Checks, `"Chose"`, 0, 1), End: Pos(t, Checks, `"Chose"`, 0, 6)}); target.Range != want {
		t.Errorf("the missing target is at %+v, want %+v", target.Range, want)
	}
	var actions []lsp.CodeAction
	c.MustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri}, "range": target.Range,
		"context": map[string]any{"diagnostics": []any{target}}}, &actions)
	if len(actions) != 1 || actions[0].Edit.Changes[uri][0].NewText != "Choose" {
		t.Errorf("the fix of the missing target: %+v, want Choose", actions)
	}
}

func completion(t *testing.T, c *Client) {
	uri := "file:///w/checks.asl.json"
	items := complete(t, c, uri, Pos(t, Checks, `"Next": "Chose"`, 0, len(`"Next": "Ch`)))
	has(t, "Next", labels(items), "Get", "Choose", "Fan", "Each", "Sum")
	hasNot(t, "Next", labels(items), "Left", "Item")
	for _, it := range items {
		if it.Label == "Choose" && (it.TextEdit == nil || it.TextEdit.NewText != "Choose" || it.TextEdit.Range != (lsp.Range{Start: Pos(t, Checks, `"Chose"`, 0, 1), End: Pos(t, Checks, `"Chose"`, 0, 6)})) {
			t.Errorf("the Next proposal replaces %+v", it.TextEdit)
		}
	}
	// a branch's Next: its own scope
	has(t, "a branch's Next", labels(complete(t, c, uri, Pos(t, Checks, `"Next": "Right"`, 0, len(`"Next": "`)))), "Left", "Right")
	has(t, "StartAt", labels(complete(t, c, uri, Pos(t, Checks, `"StartAt": "Get"`, 0, len(`"StartAt": "`)))), "Get")
	has(t, "Default", labels(complete(t, c, uri, Pos(t, Checks, `"Default": "Fan"`, 0, len(`"Default": "`)))), "Fan", "Sum")
	res := labels(complete(t, c, uri, Pos(t, Checks, `arn:aws:states:::lambda`, 0, 0)))
	has(t, "Resource", res, "arn:aws:states:::lambda:invoke", "arn:aws:states:::sqs:sendMessage", "arn:aws:states:::states:startExecution.sync:2")
	// fields: a JSONPath Task's key, a JSONata Pass's key
	task := labels(complete(t, c, uri, Pos(t, Checks, `"Resource"`, 0, 2)))
	has(t, "a JSONPath Task's fields", task, "ResultSelector", "Retry", "Catch", "TimeoutSeconds", "HeartbeatSeconds", "InputPath")
	hasNot(t, "a JSONPath Task's fields", task, "Arguments", "Output", "Branches", "Choices", "Parameters", "Next")
	pass := labels(complete(t, c, uri, Pos(t, Checks, `"Output": {"total"`, 0, 2)))
	has(t, "a JSONata Pass's fields", pass, "Comment", "Result")
	hasNot(t, "a JSONata Pass's fields", pass, "InputPath", "Parameters", "ResultPath", "Resource", "Output", "Assign")
	// a value not begun: the proposal brings its quotes
	begun := strings.Replace(Checks, `"Next": "Each"`, `"Next": `, 1)
	c.Change(uri, 2, begun)
	items = complete(t, c, uri, Pos(t, begun, `"Next": `+"\n", 0, len(`"Next": `)))
	has(t, "a Next not begun", labels(items), "Each", "Sum")
	for _, it := range items {
		if it.Label == "Each" && it.TextEdit.NewText != `"Each"` {
			t.Errorf("a Next not begun gets %q, want \"Each\" with its quotes", it.TextEdit.NewText)
		}
	}
	c.Change(uri, 3, Checks)
	// intrinsic functions in a .$ member
	intr := labels(complete(t, c, uri, Pos(t, Checks, `States.Format(`, 0, len("States.F"))))
	has(t, "intrinsics", intr, "States.Format", "States.ArrayPartition", "States.UUID", "States.MathRandom")
	// JSONata functions and $states inside {% %}
	fns := labels(complete(t, c, uri, Pos(t, Checks, `$sum(`, 0, len("$su"))))
	has(t, "JSONata functions", fns, "$sum", "$string", "$partition", "$uuid", "$states", "$tally")
	has(t, "the Context object", labels(complete(t, c, uri, Pos(t, Checks, `$states.context.Execution`, 0, len("$states.context.Ex")))), "Execution", "StateMachine")
	st := labels(complete(t, c, uri, Pos(t, Checks, `$states.input`, 0, len("$states.in"))))
	has(t, "$states members", st, "input", "result", "errorOutput", "context")
}

func hover(t *testing.T, c *Client) {
	uri := "file:///w/checks.asl.json"
	var h *lsp.Hover
	c.MustCall("textDocument/hover", doc(uri, Pos(t, Checks, `"Resource"`, 0, 3)), &h)
	if h == nil || !strings.Contains(h.Contents.Value, "ARN of what the Task calls") {
		t.Errorf("hover on the Resource field: %+v", h)
	}
	c.MustCall("textDocument/hover", doc(uri, Pos(t, Checks, `arn:aws:states:::lambda:invoke`, 0, 5)), &h)
	if h == nil || !strings.Contains(h.Contents.Value, "AWS Lambda Invoke") {
		t.Errorf("hover on the Resource: %+v", h)
	}
	c.MustCall("textDocument/hover", doc(uri, Pos(t, Checks, `${FnArn}`, 0, 3)), &h)
	if h == nil || !strings.Contains(h.Contents.Value, "arn:aws:lambda:us-east-1:123456789012:function:greet") {
		t.Errorf("hover on a placeholder: %+v", h)
	}
	c.MustCall("textDocument/hover", doc(uri, Pos(t, Checks, `"Default": "Fan"`, 0, len(`"Default": "F`))), &h)
	if h == nil || !strings.Contains(h.Contents.Value, "Parallel") {
		t.Errorf("hover on a reference: %+v", h)
	}
}

func navigation(t *testing.T, c *Client) {
	uri := "file:///w/checks.asl.json"
	var locs []lsp.Location
	c.MustCall("textDocument/definition", doc(uri, Pos(t, Checks, `"Default": "Fan"`, 0, len(`"Default": "F`))), &locs)
	if len(locs) != 1 || locs[0].Range != (lsp.Range{Start: Pos(t, Checks, `"Fan": {`, 0, 0), End: Pos(t, Checks, `"Fan": {`, 0, 5)}) {
		t.Errorf("definition of Fan: %+v", locs)
	}
	c.MustCall("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": Pos(t, Checks, `"Fan": {`, 0, 2),
		"context": map[string]any{"includeDeclaration": true}}, &locs)
	if len(locs) != 3 {
		t.Errorf("references of Fan: %+v, want the state and two references", locs)
	}
	var edit lsp.WorkspaceEdit
	c.MustCall("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": Pos(t, Checks, `"Fan": {`, 0, 2), "newName": "FanOut"}, &edit)
	if got := edit.Changes[uri]; len(got) != 3 {
		t.Errorf("rename Fan: %+v, want three edits", got)
	}
	if err := c.Call("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": Pos(t, Checks, `"Fan": {`, 0, 2), "newName": "Left"}, nil); err == nil {
		t.Error("renaming a state to the name of another was accepted")
	}
	var syms []lsp.DocumentSymbol
	c.MustCall("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}}, &syms)
	var names []string
	var walk func(prefix string, s []lsp.DocumentSymbol)
	walk = func(prefix string, s []lsp.DocumentSymbol) {
		for _, x := range s {
			names = append(names, prefix+x.Name)
			walk(prefix+x.Name+"/", x.Children)
		}
	}
	walk("", syms)
	has(t, "symbols", names, "Get", "Choose", "Fan", "Fan/Branch 0/Left", "Fan/Branch 0/Right", "Each/Item", "Sum")
}

func yamlAndTemplates(t *testing.T, c *Client) {
	uri := "file:///w/flow.asl.yaml"
	if diags := c.Open(uri, YAMLDef); len(diags) != 0 {
		t.Errorf("a valid YAML definition: %+v", diags)
	}
	bad := strings.Replace(YAMLDef, "Next: Two", "Next: Tow", 1)
	diags := c.Change(uri, 2, bad)
	miss := find(t, diags, "Missing 'Next' target: Tow")
	if want := Span(t, bad, "Tow", 0); miss.Range != want {
		t.Errorf("the YAML missing target is at %+v, want %+v", miss.Range, want)
	}
	has(t, "a YAML Next", labels(complete(t, c, uri, Pos(t, bad, "Next: Tow", 0, len("Next: T")))), "One", "Two")
	// a key being written in YAML: the fields of the state it sits in
	typing := strings.Replace(bad, "    Type: Succeed\n", "    Type: Succeed\n    Co\n", 1)
	c.Change(uri, 10, typing)
	keys := complete(t, c, uri, Pos(t, typing, "    Co\n", 0, len("    Co")))
	has(t, "a YAML Succeed's fields", labels(keys), "Comment", "QueryLanguage", "InputPath")
	hasNot(t, "a YAML Succeed's fields", labels(keys), "Next", "Type", "Resource")
	c.Change(uri, 11, bad)
	// a JSON key not begun: the proposal brings its quotes
	juri := "file:///w/keys.asl.json"
	jtext := "{\"StartAt\": \"A\", \"States\": {\"A\": {\"Type\": \"Wait\",\n  \n  \"End\": true}}}"
	c.Open(juri, jtext)
	wait := complete(t, c, juri, Pos(t, jtext, "\n  \n", 0, 3))
	has(t, "a Wait's fields", labels(wait), "Seconds", "Timestamp", "SecondsPath")
	hasNot(t, "a Wait's fields", labels(wait), "End", "Type", "Resource")
	for _, it := range wait {
		if it.Label == "Seconds" && it.TextEdit.NewText != `"Seconds"` {
			t.Errorf("a key not begun gets %q", it.TextEdit.NewText)
		}
	}
	var edit lsp.WorkspaceEdit
	c.MustCall("textDocument/rename", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": Pos(t, YAMLDef, "Two:", 0, 1), "newName": "Second step"}, &edit)
	if got := edit.Changes[uri]; len(got) != 1 {
		t.Errorf("renaming a state in YAML: %+v", got)
	}
	// a YAML error: the line the YAML library names
	broken := "StartAt: One\nStates:\n  One:\n    Type: Pass\n    End: [true\n"
	diags = c.Change(uri, 12, broken)
	if len(diags) != 1 || diags[0].Code != "INVALID_YAML" || !strings.HasPrefix(diags[0].Message, fmt.Sprintf("%d:", diags[0].Range.Start.Line+1)) {
		t.Errorf("a YAML error: %+v, want it on the line its message names", diags)
	}
	// the outline of the last good text still serves
	has(t, "a YAML Next after an error", labels(complete(t, c, uri, Pos(t, broken, "End: [true", 0, 0))), "End", "Comment")

	turi := "file:///w/template.yaml"
	diags = c.Open(turi, Template)
	path := find(t, diags, "must be a valid JSONPath")
	if want := Pos(t, Template, `"$.a["`, 0, 4); path.Range.Start != want {
		t.Errorf("the template's JSONPath error is at %+v, want %+v", path.Range, want)
	}
	var locs []lsp.Location
	c.MustCall("textDocument/definition", doc(turi, Pos(t, Template, "Next: World", 0, len("Next: Wo"))), &locs)
	if len(locs) != 1 || locs[0].Range.Start != Pos(t, Template, "World:", 0, 0) {
		t.Errorf("definition of World in a template: %+v", locs)
	}
	// a fix inside a template: the misspelt type, plain YAML
	typo := strings.Replace(Template, "OutputPath: \"$.a[\"", "OutputPath: $.a", 1)
	typo = strings.Replace(typo, "Type: Pass\n            Next: World", "Type: Pas\n            Next: World", 1)
	diags = c.Change(turi, 2, typo)
	pas := find(t, diags, "Instance value (\"Pas\")")
	if want := Span(t, typo, "Pas\n", 0); pas.Range != (lsp.Range{Start: want.Start, End: Pos(t, typo, "Pas\n", 0, 3)}) {
		t.Errorf("the misspelt type in a template is at %+v", pas.Range)
	}
	var actions []lsp.CodeAction
	c.MustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": turi}, "range": pas.Range,
		"context": map[string]any{"diagnostics": []any{pas}}}, &actions)
	if len(actions) != 1 || actions[0].Edit.Changes[turi][0].NewText != "Pass" {
		t.Errorf("the fix in a template: %+v", actions)
	}
	c.Change(turi, 3, Template)
	// a placeholder of the template's own DefinitionSubstitutions
	subbed := strings.Replace(Template, "            End: true\n", "            Comment: ${Owner}\n            End: true\n", 1) +
		"      DefinitionSubstitutions:\n        Owner: team-a\n"
	if diags := c.Change(turi, 4, subbed); len(diags) != 1 {
		t.Errorf("a template with a substitution: %+v, want only the JSONPath error", diags)
	}
	var h *lsp.Hover
	c.MustCall("textDocument/hover", doc(turi, Pos(t, subbed, "${Owner}", 0, 3)), &h)
	if h == nil || !strings.Contains(h.Contents.Value, "team-a") {
		t.Errorf("hover on a template's placeholder: %+v", h)
	}
	c.Change(turi, 5, Template)
	var syms []lsp.DocumentSymbol
	c.MustCall("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": turi}}, &syms)
	if len(syms) != 1 || syms[0].Name != "Flow" || len(syms[0].Children) != 2 {
		t.Errorf("a template's symbols: %+v", syms)
	}
}

// StringTemplate is a CloudFormation template in JSON whose definition
// is a DefinitionString.
const StringTemplate = `{
  "Resources": {
    "Machine": {
      "Type": "AWS::StepFunctions::StateMachine",
      "Properties": {
        "DefinitionString": "{\"StartAt\": \"A\", \"States\": {\"A\": {\"Type\": \"Pass\", \"Next\": \"B\"}}}",
        "RoleArn": "arn:aws:iam::123456789012:role/r"
      }
    }
  }
}
`

func edges(t *testing.T, c *Client) {
	// a JSON file that is no state machine: nothing to say
	if diags := c.Open("file:///w/package.json", `{"name": "x", "version": "1.0.0"}`); len(diags) != 0 {
		t.Errorf("a package.json: %+v", diags)
	}
	if diags := c.Open("file:///w/compose.yaml", "services:\n  web:\n    image: [x\n"); len(diags) != 0 {
		t.Errorf("a broken YAML file that is no state machine: %+v", diags)
	}
	// a DefinitionString: its diagnostics stand on the property
	diags := c.Open("file:///w/stack.json", StringTemplate)
	miss := find(t, diags, "Missing 'Next' target: B")
	if want := Span(t, StringTemplate, `"DefinitionString"`, 0); miss.Range != want {
		t.Errorf("a DefinitionString's diagnostic is at %+v, want the property %+v", miss.Range, want)
	}
	// incremental changes: a range replaced
	uri := "file:///w/incremental.asl.json"
	text := `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`
	if diags := c.Open(uri, text); len(diags) != 0 {
		t.Fatalf("a valid definition: %+v", diags)
	}
	c.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": Span(t, text, `"End": true`, 0), "text": `"Next": "Z"`}}})
	diags = c.Diagnostics(uri, 2)
	changed := strings.Replace(text, `"End": true`, `"Next": "Z"`, 1)
	if m := find(t, diags, "Missing 'Next' target: Z"); m.Range != (lsp.Range{Start: Pos(t, changed, `"Z"`, 0, 1), End: Pos(t, changed, `"Z"`, 0, 2)}) {
		t.Errorf("after an incremental change: %+v", m)
	}
	// an AWS SDK Resource, an unknown placeholder
	sdk := `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:listBuckets", "Parameters": {"B": "${Bucket}"}, "End": true}}}`
	diags = c.Open("file:///w/sdk.asl.json", sdk)
	if w := find(t, diags, "${Bucket} has no substitution"); w.Severity != 2 || w.Range != (lsp.Range{Start: Pos(t, sdk, "${Bucket}", 0, 0), End: Pos(t, sdk, "${Bucket}", 0, len("${Bucket}"))}) {
		t.Errorf("an unknown placeholder: %+v, want a warning on it", w)
	}
	var h *lsp.Hover
	c.MustCall("textDocument/hover", doc("file:///w/sdk.asl.json", Pos(t, sdk, "aws-sdk", 0, 2)), &h)
	if h == nil || !strings.Contains(h.Contents.Value, "s3 API's ListBuckets action") {
		t.Errorf("hover on an AWS SDK Resource: %+v", h)
	}
	c.MustCall("textDocument/hover", doc("file:///w/sdk.asl.json", Pos(t, sdk, "${Bucket}", 0, 3)), &h)
	if h == nil || !strings.Contains(h.Contents.Value, "has no substitution") {
		t.Errorf("hover on an unknown placeholder: %+v", h)
	}
	// requests on a document not open, and bad parameters
	if err := c.Call("textDocument/definition", doc("file:///w/nothing.json", lsp.Position{}), nil); err == nil {
		t.Error("a request on a document not open was answered")
	}
	if err := c.Call("textDocument/rename", map[string]any{"textDocument": 7}, nil); err == nil || err.(*RPCError).Code != -32602 {
		t.Errorf("bad parameters: %v, want -32602", err)
	}
	// closing a document clears its diagnostics
	c.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": "file:///w/sdk.asl.json"}})
	if err := c.Call("textDocument/hover", doc("file:///w/sdk.asl.json", lsp.Position{}), nil); err == nil {
		t.Error("a closed document is still served")
	}
}
