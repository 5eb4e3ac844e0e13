package main

import (
	"context"
	"fmt"
	"io"
)

func testCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "stepd test: not implemented yet")
	return exitUsage
}
