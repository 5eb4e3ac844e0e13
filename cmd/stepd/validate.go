package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

const validateUsage = `usage: stepd validate FILE... [--format text|json] [--type STANDARD|EXPRESS] [flags]

Checks definitions as AWS does (ValidateStateMachineDefinition). FILE is a
definition (JSON or YAML) or a SAM or CloudFormation template, whose state
machines are all checked. Exit code 0 when every one is valid, 1 when one
is not, 2 for bad usage or a file that cannot be read.
`

func validateCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCLI("stepd validate", validateUsage, stdout, stderr)
	fs.positional("FILE", 1, -1)
	format := fs.String("format", "text", "output format: text (file:pointer: severity code: message) or json (the ValidateStateMachineDefinition response)")
	typ := fs.String("type", validate.Standard, "workflow type: STANDARD or EXPRESS (a template's state machines have their own)")
	region := fs.String("region", arn.DefaultRegion, "region of a template's ARNs (AWS::Region)")
	account := fs.String("account", arn.DefaultAccount, "account id of a template's ARNs (AWS::AccountId)")
	defs := addDefFlags(fs.FlagSet, true, stderr)
	files, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		return fs.fail("--format must be text or json, not %q", *format)
	}
	if *typ != validate.Standard && *typ != validate.Express {
		return fs.fail("--type must be STANDARD or EXPRESS, not %q", *typ)
	}
	failed := false
	var loaded []*loadedDef
	for _, f := range files {
		ds, err := defs.load(f, true, *region, *account)
		if err != nil {
			fmt.Fprintf(stderr, "stepd validate: %v\n", err)
			return exitUsage
		}
		loaded = append(loaded, ds...)
	}
	for _, d := range loaded {
		t := *typ
		if d.sm != nil {
			t = d.sm.Type
		}
		r := validate.Definition(d.text, t)
		r.Diagnostics = append(r.Diagnostics, d.placeholders()...)
		if !r.OK() {
			failed = true
		}
		if *format == "json" {
			resp := validate.Response(r)
			if len(loaded) > 1 {
				resp = resp.With("file", d.source)
			}
			fmt.Fprintln(stdout, value.String(resp))
			continue
		}
		printDiagnostics(stdout, d.source, d.text, r.Diagnostics)
		if r.OK() {
			fmt.Fprintf(stdout, "%s: OK\n", d.source)
		}
	}
	if failed {
		return exitFail
	}
	return exitOK
}

// printDiagnostics prints one line per diagnostic of the definition data
// read from file: file:pointer: severity code: message (and a hint, such
// as the field meant), or file:line:col: message for malformed JSON.
func printDiagnostics(w io.Writer, file string, data []byte, diags asl.Diagnostics) {
	for _, d := range diags {
		var fe *value.FileError
		if errors.As(value.Locate(file, data, d.Err), &fe) {
			fmt.Fprintln(w, fe.Error())
			continue
		}
		hint := ""
		if d.Hint != "" {
			hint = " (" + d.Hint + ")"
		}
		sev := d.Severity
		if sev == "" {
			sev = asl.SeverityError
		}
		ptr := d.Pointer
		if ptr == "" {
			ptr = "/"
		}
		fmt.Fprintf(w, "%s:%s: %s %s: %s%s\n", file, ptr, sev, d.Code, d.Message, hint)
	}
}
