package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release's version, set when building a release:
// go build -ldflags "-X main.version=v1.2.3". When empty, the module's
// version from the build information is used (set by go install
// github.com/stepd/stepd/cmd/stepd@v1.2.3; "(devel)" in a clone).
var version string

// buildVersion returns stepd's version and what the build information
// adds: the VCS revision and time, and whether the tree was modified.
func buildVersion() (v string, details []string) {
	v = version
	info, ok := debug.ReadBuildInfo()
	if v == "" {
		v = "(devel)"
		if ok && info.Main.Version != "" {
			v = info.Main.Version
		}
	}
	if ok {
		var rev, at, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = " (modified)"
				}
			}
		}
		if rev != "" {
			details = append(details, "commit "+rev+modified)
		}
		if at != "" {
			details = append(details, "committed "+at)
		}
	}
	details = append(details, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return v, details
}

// versionCommand prints the version: `stepd version`, `stepd --version`.
func versionCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCLI("stepd version", "usage: stepd version\n\nPrints the version, the commit when the build recorded one, and the Go\nversion and platform.\n", stdout, stderr)
	if _, code, ok := fs.parse(args); !ok {
		return code
	}
	v, details := buildVersion()
	fmt.Fprintf(stdout, "stepd %s\n", v)
	for _, d := range details {
		fmt.Fprintf(stdout, "  %s\n", d)
	}
	return exitOK
}

// versionString is stepd's version alone.
func versionString() string {
	v, _ := buildVersion()
	return v
}
