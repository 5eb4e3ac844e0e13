package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

func validateCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stepd validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text (file:pointer: severity code: message) or json (the ValidateStateMachineDefinition response)")
	typ := fs.String("type", validate.Standard, "workflow type: STANDARD or EXPRESS (a template's state machines have their own)")
	region := fs.String("region", arn.DefaultRegion, "region of a template's ARNs (AWS::Region)")
	account := fs.String("account", arn.DefaultAccount, "account id of a template's ARNs (AWS::AccountId)")
	defs := addDefFlags(fs, true)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: stepd validate FILE... [--format text|json] [--type STANDARD|EXPRESS] [--definition-substitutions FILE|NAME=VALUE] [--parameter NAME=VALUE] [--state-machine NAME]\n\nFILE is a definition (JSON or YAML) or a SAM or CloudFormation template, whose state machines are all checked.")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(files) == 0 || (*format != "text" && *format != "json") || (*typ != validate.Standard && *typ != validate.Express) {
		fs.Usage()
		return exitUsage
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
