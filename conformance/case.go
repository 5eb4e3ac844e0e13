// Package conformance loads, runs and compares test cases in the format of
// the AWS-recorded conformance corpus (see the corpus README): a state
// machine definition, an input, mocks and the expected outcome and
// execution history as AWS Step Functions produced them.
//
// The project's own tests use it to run every recorded case, and `stepd
// test` uses it to run users' case files (Load, Check, Reporter).
//
// Comparison (CompareOutcome, CompareHistory, CompareTestState,
// CompareInvalidDefinition, CompareValidation) applies the corpus's
// placeholder rules to expected values: the case's placeholders map
// (concrete values in the engine's strings are replaced by their
// placeholders, longest first), the ARN partition and region (aws,
// us-east-1), wildcards (any "<...>" part of a string, and the bare words
// date, datetime and timestamp; a wildcard that is a whole value matches
// any JSON value), <uuid:N> placeholders (the same N must stand for the
// same text throughout one comparison, except inside Map and Parallel
// segments where it is a plain wildcard), and the contents of
// SdkHttpMetadata and SdkResponseMetadata objects are ignored.
//
// Histories are compared in two modes. Strict: every event, id and
// previousEventId in order. Tolerant (the one pass/fail uses): the events
// outside top-level Map and Parallel states in order, with ids while the
// histories stay aligned; the events of each Map or Parallel state (from
// its Entered to its Exited event) as a multiset without ids, since AWS
// interleaves concurrent iterations and branches in no particular order.
// Recordings with compare.parallelBranchEventsSorted only match
// tolerantly, and their lost ParallelStateSucceeded/Failed events are not
// required.
//
// Known failures are listed in a text file, one case per line:
//
//	<aspect> <case name> <one-line reason>
//
// where aspect is "outcome" (status, output, error, cause; or the
// response of a definition check) or "history" (the full event history).
// Blank lines and lines starting with # are ignored. Known.Complaints
// reports a failing case that is not listed, a listed case that passes
// (the list only shrinks) and a listed case that does not exist.
//
// It must not import cmd/stepd, the only layer above it, nor bench beside
// it.
package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/template"
	"github.com/stepd/stepd/value"
)

// Case is one conformance case.
type Case struct {
	Name     string
	Kind     string // execution, test-state, invalid-definition, validate-definition
	Category string
	Source   string
	Type     string // STANDARD or EXPRESS
	File     string
	// DefinitionFile is the definition's file when the case names one
	// with "definitionFile" (a stepd extension).
	DefinitionFile string

	Definition       any    // the definition as a JSON value, when it was JSON
	DefinitionString string // the raw definition text, when it was not
	Input            any
	Mocks            any    // nil or the mocks object
	Config           string // a resource registry file (stepd extension), "" for none
	// MockConfig is the AWS Step Functions Local MockConfigFile the case
	// names with "mockConfigFile" (a stepd extension), nil for none;
	// TestCase is the test case of it that serves the case's Task states.
	MockConfig     *mock.Config
	MockConfigFile string
	TestCase       string

	Expected *value.Object
	// Outcome fields of Expected, for execution cases.
	Status       string
	Output       any
	Error, Cause any
	History      []any // nil when not recorded

	StateMachineName string
	ExecutionName    string
	RoleArn          string
	Placeholders     [][2]string // placeholder → concrete value, in file order
	Features         []string
	Waits            []any         // the "waits" list, when the machine has Wait states
	Compare          *value.Object // the "compare" hints, nil when absent
	SortedParallel   bool          // compare.parallelBranchEventsSorted
	Request          *value.Object // test-state: the TestState call parameters
	Recorded         string        // recording date, as the corpus writes it
	Validated        any           // last AWS validation (ISO-8601 text) or nil
	Raw              *value.Object // the whole case as read
}

// Has reports whether the case lists a feature.
func (c *Case) Has(feature string) bool { return slices.Contains(c.Features, feature) }

// Load reads cases from files and directories. A case's definitionFile
// (a stepd extension) may be JSON, YAML or a SAM or CloudFormation
// template (see readDefinitionFile). A directory is searched
// recursively for *.json files, in name order, and files that are not cases
// (no "expected" member: definitions, mock configurations) are skipped. A
// file holds one case or an array of cases.
func Load(paths ...string) ([]*Case, error) {
	var out []*Case
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			cs, err := loadFile(p, false)
			if err != nil {
				return nil, err
			}
			out = append(out, cs...)
			continue
		}
		var files []string
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(files)
		for _, f := range files {
			cs, err := loadFile(f, true)
			if err != nil {
				return nil, err
			}
			out = append(out, cs...)
		}
	}
	return out, nil
}

func loadFile(path string, skipOthers bool) ([]*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := value.Parse(data)
	if err != nil {
		return nil, value.Locate(path, data, err)
	}
	base := strings.TrimSuffix(filepath.Base(path), ".json")
	var objs []any
	if arr, ok := v.([]any); ok {
		objs = arr
	} else {
		objs = []any{v}
	}
	var out []*Case
	for i, e := range objs {
		o, ok := e.(*value.Object)
		if skipOthers && (!ok || !o.Has("expected")) {
			return nil, nil
		}
		if !ok {
			return nil, fmt.Errorf("%s: a case must be a JSON object", path)
		}
		name := base
		if len(objs) > 1 {
			name = fmt.Sprintf("%s[%d]", base, i)
		}
		c, err := fromObject(o, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if f := str(o, "definitionFile"); f != "" && c.Definition == nil {
			// A stepd extension: the definition in a file of its own,
			// relative to the case file.
			defPath := relativeTo(path, f)
			c.DefinitionFile = defPath
			if err := c.readDefinitionFile(o, defPath); err != nil {
				return nil, fmt.Errorf("%s: definitionFile: %w", path, err)
			}
		}
		if err := loadMockConfig(c, o, filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if f := str(o, "config"); f != "" {
			// A stepd extension: Task states served by the resource
			// registry in this file (as with --config), relative to the
			// case file; mocks, when given too, take precedence.
			c.Config = relativeTo(path, f)
		}
		c.File = path
		out = append(out, c)
	}
	return out, nil
}

// loadMockConfig reads the MockConfigFile a case names (a stepd
// extension): "mockConfigFile" relative to the case file and "testCase",
// the name of one of its test cases. The state machine is the case's
// run.stateMachineName, or the file's only state machine.
func loadMockConfig(c *Case, o *value.Object, dir string) error {
	f, tc := str(o, "mockConfigFile"), str(o, "testCase")
	switch {
	case f == "" && tc == "":
		return nil
	case f == "":
		return fmt.Errorf("case %s: testCase names a test case of a MockConfigFile: mockConfigFile is required with it", c.Name)
	case tc == "":
		return fmt.Errorf("case %s: mockConfigFile needs testCase, the name of the test case to use", c.Name)
	case c.Mocks != nil:
		return fmt.Errorf("case %s: give either mocks or mockConfigFile, not both", c.Name)
	}
	p := f
	if !filepath.IsAbs(f) {
		p = filepath.Join(dir, f)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("mockConfigFile: %w", err)
	}
	if v, err := value.Parse(data); err != nil {
		return fmt.Errorf("mockConfigFile: %w", value.Locate(p, data, err))
	} else if c.MockConfig, err = mock.FromValue(v); err != nil {
		return fmt.Errorf("mockConfigFile %s: %w", p, err)
	}
	if c.StateMachineName == "" {
		names := c.MockConfig.StateMachines()
		if len(names) != 1 {
			return fmt.Errorf("case %s: mockConfigFile %s has %d state machines (%s): name one with run.stateMachineName", c.Name, p, len(names), strings.Join(names, ", "))
		}
		c.StateMachineName = names[0]
	}
	// Check the test case now, so that a typo is reported when loading.
	if _, err := c.MockConfig.Invoker(c.StateMachineName, tc); err != nil {
		return fmt.Errorf("case %s: mockConfigFile %s: %w", c.Name, p, err)
	}
	c.MockConfigFile, c.TestCase = p, tc
	return nil
}

// relativeTo resolves the file f a case file names: as it is when
// absolute, else relative to the case file's folder.
func relativeTo(caseFile, f string) string {
	if filepath.IsAbs(f) {
		return f
	}
	return filepath.Join(filepath.Dir(caseFile), f)
}

// readDefinitionFile reads a case's definitionFile: a definition (JSON or
// YAML) or a SAM or CloudFormation template, whose state machine the case
// names with "stateMachine" (unless it has one only) and whose parameters
// it gives with "parameters" (an object of strings).
func (c *Case) readDefinitionFile(o *value.Object, defPath string) error {
	data, err := os.ReadFile(defPath)
	if err != nil {
		return err
	}
	var v any
	if definition.IsYAML(defPath, data) {
		v, err = template.Read(defPath, data, nil)
	} else {
		v, err = definition.Parse(defPath, data, nil)
	}
	if err != nil {
		return err
	}
	if !template.IsTemplate(v) {
		c.Definition = v
		return nil
	}
	params := map[string]string{}
	pv, _ := o.Get("parameters")
	po, _ := pv.(*value.Object)
	for k, p := range po.All {
		s, ok := p.(string)
		if !ok {
			return fmt.Errorf("parameters.%s: want a string", k)
		}
		params[k] = s
	}
	sms, err := template.Parse(defPath, data, template.Options{Parameters: params})
	if err != nil {
		return err
	}
	sm, err := template.Find(sms, str(o, "stateMachine"))
	if err != nil {
		return fmt.Errorf("%s: %w (name it with \"stateMachine\")", defPath, err)
	}
	if c.Definition, err = value.ParseString(sm.Definition); err != nil {
		c.Definition, c.DefinitionString = nil, sm.Definition
	}
	if !o.Has("type") {
		c.Type = sm.Type
	}
	if c.StateMachineName == "" {
		c.StateMachineName = sm.Name
	}
	return nil
}

func str(o *value.Object, key string) string {
	v, _ := o.Get(key)
	s, _ := v.(string)
	return s
}

// FromValue reads one case from a case file's JSON object; name is the
// case's name when the object gives none. The files a case may name
// (definitionFile, mockConfigFile, config) are not read: a case built
// this way carries its definition and mocks inline.
func FromValue(o *value.Object, name string) (*Case, error) { return fromObject(o, name) }

func fromObject(o *value.Object, defaultName string) (*Case, error) {
	c := &Case{Raw: o, Name: str(o, "name"), Kind: str(o, "kind"), Category: str(o, "category"), Source: str(o, "source"), Type: str(o, "type")}
	if c.Name == "" {
		c.Name = defaultName
	}
	if c.Kind == "" {
		c.Kind = "execution"
	}
	if c.Type == "" {
		c.Type = "STANDARD"
	}
	c.Definition, _ = o.Get("definition")
	c.DefinitionString = str(o, "definitionString")
	if in, ok := o.Get("input"); ok {
		c.Input = in
	} else {
		c.Input = value.NewObject(0)
	}
	c.Mocks, _ = o.Get("mocks")
	exp, _ := o.Get("expected")
	c.Expected, _ = exp.(*value.Object)
	if c.Expected == nil {
		return nil, fmt.Errorf("case %s has no expected object", c.Name)
	}
	if c.Kind == "execution" {
		// Every member of expected is optional: what is absent is not
		// checked.
		c.Status = str(c.Expected, "status")
		switch c.Status {
		case "", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED":
		default:
			return nil, fmt.Errorf("case %s: expected.status must be SUCCEEDED, FAILED, TIMED_OUT or ABORTED, not %q", c.Name, c.Status)
		}
		c.Output, _ = c.Expected.Get("output")
		c.Error, _ = c.Expected.Get("error")
		c.Cause, _ = c.Expected.Get("cause")
		h, _ := c.Expected.Get("history")
		c.History, _ = h.([]any)
	}
	if run, ok := o.Get("run"); ok {
		ro, _ := run.(*value.Object)
		c.StateMachineName = str(ro, "stateMachineName")
		c.ExecutionName = str(ro, "executionName")
		c.RoleArn = str(ro, "roleArn")
	}
	if ph, ok := o.Get("placeholders"); ok {
		po, _ := ph.(*value.Object)
		for k, v := range po.All {
			if s, ok := v.(string); ok {
				c.Placeholders = append(c.Placeholders, [2]string{k, s})
			}
		}
	}
	if fs, ok := o.Get("features"); ok {
		arr, _ := fs.([]any)
		for _, f := range arr {
			if s, ok := f.(string); ok {
				c.Features = append(c.Features, s)
			}
		}
	}
	if cmp, ok := o.Get("compare"); ok {
		c.Compare, _ = cmp.(*value.Object)
		if v, _ := c.Compare.Get("parallelBranchEventsSorted"); v == true {
			c.SortedParallel = true
		}
	}
	if w, ok := o.Get("waits"); ok {
		c.Waits, _ = w.([]any)
	}
	if r, ok := o.Get("request"); ok {
		c.Request, _ = r.(*value.Object)
	}
	if c.Kind == "test-state" && c.Request == nil {
		return nil, fmt.Errorf("case %s: a test-state case needs a request object", c.Name)
	}
	c.Recorded = str(o, "recorded")
	c.Validated, _ = o.Get("validated")
	if c.Category == "" {
		if i := strings.IndexByte(c.Name, '.'); i > 0 {
			c.Category = c.Name[:i]
		} else {
			c.Category = "cases"
		}
	}
	return c, nil
}

// UsesJSONataOrVariables reports whether an execution case uses JSONata or
// workflow variables (the selection issue 3 measures; the complement is
// the JSONPath-only selection of issue 2).
func (c *Case) UsesJSONataOrVariables() bool {
	return c.Has("jsonata") || c.Has("assign") || usesJSONataOrAssign(c.Definition)
}

// usesJSONataOrAssign reports whether a definition has a QueryLanguage
// of JSONata or an Assign field anywhere.
func usesJSONataOrAssign(v any) bool {
	switch v := v.(type) {
	case *value.Object:
		for k, e := range v.All {
			if k == "Assign" || (k == "QueryLanguage" && e == "JSONata") || usesJSONataOrAssign(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if usesJSONataOrAssign(e) {
				return true
			}
		}
	}
	return false
}
