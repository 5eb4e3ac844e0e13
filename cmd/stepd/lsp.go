package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/lsp"
	"github.com/stepd/stepd/validate"
)

const lspUsage = `usage: stepd lsp [--type STANDARD|EXPRESS] [--definition-substitutions FILE|NAME=VALUE] [--parameter NAME=VALUE]

Serves the Language Server Protocol on stdin and stdout for ASL definitions
(JSON, YAML) and SAM or CloudFormation templates; see docs/editors.md.
`

// lspCommand serves the Language Server Protocol on stdin and stdout
// until the editor sends exit.
func lspCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCLI("stepd lsp", lspUsage, stdout, stderr)
	fs.positional("", 0, 0)
	typ := fs.String("type", validate.Standard, "workflow type of definition files: STANDARD or EXPRESS (a template's state machines have their own)")
	region := fs.String("region", arn.DefaultRegion, "region of a template's ARNs (AWS::Region)")
	account := fs.String("account", arn.DefaultAccount, "account id of a template's ARNs (AWS::AccountId)")
	fs.Bool("stdio", true, "speak on stdin and stdout (the only transport; accepted for editors that pass it)")
	defs := addDefFlags(fs.FlagSet, false, stderr)
	if _, code, ok := fs.parse(args); !ok {
		return code
	}
	if *typ != validate.Standard && *typ != validate.Express {
		return fs.fail("--type %q: want STANDARD or EXPRESS", *typ)
	}
	subs, err := defs.substitutions()
	if err != nil {
		return fs.fail("%v", err)
	}
	params, err := defs.parameters()
	if err != nil {
		return fs.fail("%v", err)
	}
	s := lsp.NewServer(lsp.Options{Substitutions: subs, Parameters: params, Type: *typ, Region: *region, Account: *account})
	if err := s.Serve(ctx, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "stepd lsp: %v\n", err)
		return exitFail
	}
	return exitOK
}
