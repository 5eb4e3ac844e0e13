package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/lsp"
	"github.com/stepd/stepd/validate"
)

// lspCommand serves the Language Server Protocol on stdin and stdout
// until the editor sends exit.
func lspCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stepd lsp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	typ := fs.String("type", validate.Standard, "workflow type of definition files: STANDARD or EXPRESS (a template's state machines have their own)")
	region := fs.String("region", arn.DefaultRegion, "region of a template's ARNs (AWS::Region)")
	account := fs.String("account", arn.DefaultAccount, "account id of a template's ARNs (AWS::AccountId)")
	fs.Bool("stdio", true, "speak on stdin and stdout (the only transport; accepted for editors that pass it)")
	defs := addDefFlags(fs, false, stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: stepd lsp [--type STANDARD|EXPRESS] [--definition-substitutions FILE|NAME=VALUE] [--parameter NAME=VALUE]\n\nServes the Language Server Protocol on stdin and stdout for ASL definitions (JSON, YAML) and SAM or CloudFormation templates; see docs/editors.md.")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(rest) > 0 || (*typ != validate.Standard && *typ != validate.Express) {
		fs.Usage()
		return exitUsage
	}
	subs, err := defs.substitutions()
	if err != nil {
		fmt.Fprintf(stderr, "stepd lsp: %v\n", err)
		return exitUsage
	}
	params, err := defs.parameters()
	if err != nil {
		fmt.Fprintf(stderr, "stepd lsp: %v\n", err)
		return exitUsage
	}
	s := lsp.NewServer(lsp.Options{Substitutions: subs, Parameters: params, Type: *typ, Region: *region, Account: *account})
	if err := s.Serve(ctx, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "stepd lsp: %v\n", err)
		return exitFail
	}
	return exitOK
}
