package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

func validateCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stepd validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text (file:pointer: severity code: message) or json (the ValidateStateMachineDefinition response)")
	typ := fs.String("type", validate.Standard, "workflow type: STANDARD or EXPRESS")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: stepd validate FILE... [--format text|json] [--type STANDARD|EXPRESS]")
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
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "stepd validate: %v\n", err)
			return exitUsage
		}
		r := validate.Definition(data, *typ)
		if !r.OK() {
			failed = true
		}
		if *format == "json" {
			resp := validate.Response(r)
			if len(files) > 1 {
				resp = resp.With("file", f)
			}
			fmt.Fprintln(stdout, value.String(resp))
			continue
		}
		printDiagnostics(stdout, f, data, r.Diagnostics)
		if r.OK() {
			fmt.Fprintf(stdout, "%s: OK\n", f)
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
