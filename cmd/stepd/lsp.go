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
	// A usage error is one line; -h prints the usage and the flags.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	rest, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stderr, "usage: stepd lsp [--type STANDARD|EXPRESS] [--definition-substitutions FILE|NAME=VALUE] [--parameter NAME=VALUE]\n\nServes the Language Server Protocol on stdin and stdout for ASL definitions (JSON, YAML) and SAM or CloudFormation templates; see docs/editors.md.")
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return exitOK
	case err != nil:
		return lspUsageError(stderr, err.Error())
	case len(rest) > 0:
		return lspUsageError(stderr, fmt.Sprintf("unexpected argument %q: stepd lsp takes only flags", rest[0]))
	case *typ != validate.Standard && *typ != validate.Express:
		return lspUsageError(stderr, fmt.Sprintf("--type %q: want STANDARD or EXPRESS", *typ))
	}
	subs, err := defs.substitutions()
	if err != nil {
		return lspUsageError(stderr, err.Error())
	}
	params, err := defs.parameters()
	if err != nil {
		return lspUsageError(stderr, err.Error())
	}
	s := lsp.NewServer(lsp.Options{Substitutions: subs, Parameters: params, Type: *typ, Region: *region, Account: *account})
	if err := s.Serve(ctx, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "stepd lsp: %v\n", err)
		return exitFail
	}
	return exitOK
}

// lspUsageError prints a usage error in one line, and where help is.
func lspUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "stepd lsp: %s\nrun 'stepd lsp -h' for help\n", msg)
	return exitUsage
}
