package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/template"
	"github.com/stepd/stepd/value"
)

// defFlags are the flags that say how definition files are read: the
// substitutions, and for templates the parameters and the state machine.
type defFlags struct {
	subs         multiFlag
	params       multiFlag
	stateMachine *string // nil where the command takes no --state-machine
	// warnings go to the command's stderr, after its name: what a file
	// holds that is read but may be a mistake, such as a YAML key given
	// twice (the last value is kept, as SAM CLI keeps it); told holds
	// those given, as a file may be read more than once.
	name   string
	stderr io.Writer
	told   map[string]bool
}

// addDefFlags adds --definition-substitutions and --parameter, and with
// pick --state-machine; the warnings of files read go to stderr.
func addDefFlags(fs *flag.FlagSet, pick bool, stderr io.Writer) *defFlags {
	f := &defFlags{name: fs.Name(), stderr: stderr}
	fs.Var(&f.subs, "definition-substitutions", "FILE (a JSON or YAML mapping) or NAME=VALUE: replace ${NAME} in definitions as CloudFormation's DefinitionSubstitutions do; repeatable")
	fs.Var(&f.params, "parameter", "NAME=VALUE for a SAM or CloudFormation template: a parameter, a pseudo parameter (AWS::StackName) or another resource's value (LogicalId for its Ref, LogicalId.Attribute for Fn::GetAtt); repeatable")
	if pick {
		f.stateMachine = fs.String("state-machine", "", "the state machine of a SAM or CloudFormation template to use: its name or logical id (default: the only one)")
	}
	return f
}

// substitutions reads the --definition-substitutions flags: a file when one
// of that name exists, else NAME=VALUE.
func (f *defFlags) substitutions() (definition.Substitutions, error) {
	out := definition.Substitutions{}
	for _, s := range f.subs {
		if st, err := os.Stat(s); err == nil && !st.IsDir() {
			data, err := os.ReadFile(s)
			if err != nil {
				return nil, fmt.Errorf("--definition-substitutions: %w", err)
			}
			m, err := definition.ParseSubstitutions(s, data)
			if err != nil {
				return nil, fmt.Errorf("--definition-substitutions %s: %w", s, err)
			}
			for k, v := range m {
				out[k] = v
			}
			continue
		}
		name, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("--definition-substitutions %q: no such file, and not NAME=VALUE", s)
		}
		if err := out.Set(name, v); err != nil {
			return nil, fmt.Errorf("--definition-substitutions: %w", err)
		}
	}
	return out, nil
}

// parameters reads the --parameter flags.
func (f *defFlags) parameters() (map[string]string, error) {
	out := map[string]string{}
	for _, p := range f.params {
		name, v, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--parameter %q: want NAME=VALUE", p)
		}
		out[name] = v
	}
	return out, nil
}

// loadedDef is one state machine definition read from a file.
type loadedDef struct {
	source string // the file, or file#LogicalId for a template's
	text   []byte // the definition's JSON text, substitutions applied
	// sm is the template's state machine (nil for a definition file).
	sm *template.StateMachine
	// fromTemplate: the substitutions came from the template too, so a
	// placeholder left is the template's to settle.
	fromTemplate bool
	given        string // the name given with --name, if any
}

// name is the state machine's name: the one given with --name, the
// template's, or the file's (definition.MachineName: orders.asl.json
// names orders).
func (d *loadedDef) name() string {
	switch {
	case d.given != "":
		return d.given
	case d.sm != nil:
		return d.sm.Name
	}
	return definition.MachineName(d.source)
}

// load reads a definition file (JSON or YAML) or the state machines of a
// SAM or CloudFormation template; all: every state machine of a template
// unless --state-machine names one.
func (f *defFlags) load(path string, all bool, region, account string) ([]*loadedDef, error) {
	subs, err := f.substitutions()
	if err != nil {
		return nil, err
	}
	params, err := f.parameters()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return f.loadData(path, data, all, region, account, subs, params)
}

// loadAll is load of every state machine of the file, whatever
// --state-machine picks.
func (f *defFlags) loadAll(path, region, account string) ([]*loadedDef, error) {
	pick := f.stateMachine
	f.stateMachine = nil
	defer func() { f.stateMachine = pick }()
	return f.load(path, true, region, account)
}

// loadData is load of a file's contents already read (path "-" for
// standard input).
func (f *defFlags) loadData(path string, data []byte, all bool, region, account string, subs definition.Substitutions, params map[string]string) ([]*loadedDef, error) {
	var err error
	pick := ""
	if f.stateMachine != nil {
		pick = *f.stateMachine
	}
	warn := func(msg string) {
		if f.told == nil {
			f.told = map[string]bool{}
		}
		if !f.told[msg] {
			f.told[msg] = true
			fmt.Fprintf(f.stderr, "%s: warning: %s\n", f.name, msg)
		}
	}
	var doc any
	if definition.IsYAML(path, data) {
		if doc, err = template.Read(path, data, warn); err != nil {
			return nil, err
		}
	} else if v, err := value.Parse(data); err == nil {
		doc = v // else substitutions may make it JSON; validation tells
	}
	if !template.IsTemplate(doc) {
		if pick != "" {
			return nil, fmt.Errorf("--state-machine %s: %s is a state machine definition, not a SAM or CloudFormation template", pick, path)
		}
		if len(params) > 0 {
			return nil, fmt.Errorf("--parameter: %s is a state machine definition, not a SAM or CloudFormation template (use --definition-substitutions)", path)
		}
		text := data
		if definition.IsYAML(path, data) {
			text = value.Append(nil, doc)
		}
		s, err := definition.Substitute(string(text), subs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return []*loadedDef{{source: path, text: []byte(s)}}, nil
	}
	sms, err := template.Parse(path, data, template.Options{Region: region, Account: account, Parameters: params, Warn: warn})
	if err != nil {
		return nil, err
	}
	if pick != "" || !all {
		sm, err := template.Find(sms, pick)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		sms = []*template.StateMachine{sm}
	}
	var out []*loadedDef
	for _, sm := range sms {
		s, err := definition.Substitute(sm.Definition, subs)
		if err != nil {
			return nil, fmt.Errorf("%s#%s: %w", path, sm.LogicalID, err)
		}
		out = append(out, &loadedDef{source: path + "#" + sm.LogicalID, text: []byte(s), sm: sm, fromTemplate: true})
	}
	return out, nil
}

// placeholders diagnoses the ${Name} placeholders left in a definition
// (definition.Diagnose).
func (d *loadedDef) placeholders() asl.Diagnostics {
	return definition.Diagnose(d.text, d.fromTemplate)
}

// errUnresolved reports the placeholders left in Resources, for run.
func unresolvedError(diags asl.Diagnostics) error {
	var msgs []string
	for _, d := range diags.Errors() {
		msgs = append(msgs, fmt.Sprintf("%s: %s (%s)", d.Pointer, d.Message, d.Hint))
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}
