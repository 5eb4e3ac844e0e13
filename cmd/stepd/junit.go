package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stepd/stepd/conformance"
)

// junitResult is one case for the JUnit report: a result, or the reason it
// was skipped.
type junitResult struct {
	c    *conformance.Case
	r    *conformance.Result
	skip string
}

// The JUnit XML report, in the shape CI systems read (Jenkins, GitLab,
// GitHub actions' reporters): testsuites → testsuite (one per case file)
// → testcase, with failure, error or skipped, and the required
// properties, system-out and system-err elements.
type junitSuites struct {
	XMLName  xml.Name      `xml:"testsuites"`
	Name     string        `xml:"name,attr"`
	Tests    int           `xml:"tests,attr"`
	Failures int           `xml:"failures,attr"`
	Errors   int           `xml:"errors,attr"`
	Skipped  int           `xml:"skipped,attr"`
	Time     string        `xml:"time,attr"`
	Suites   []*junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string       `xml:"name,attr"`
	Tests      int          `xml:"tests,attr"`
	Failures   int          `xml:"failures,attr"`
	Errors     int          `xml:"errors,attr"`
	Skipped    int          `xml:"skipped,attr"`
	Time       string       `xml:"time,attr"`
	Timestamp  string       `xml:"timestamp,attr"`
	Hostname   string       `xml:"hostname,attr"`
	Properties struct{}     `xml:"properties"`
	Cases      []*junitCase `xml:"testcase"`
	SystemOut  string       `xml:"system-out"`
	SystemErr  string       `xml:"system-err"`
	seconds    float64
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(f float64) string { return fmt.Sprintf("%.3f", f) }

// writeJUnit writes the results as JUnit XML: a case that does not match
// is a failure (its message the first difference, its text all of them),
// one that cannot run an error.
func writeJUnit(path string, results []junitResult) error {
	host, _ := os.Hostname()
	now := time.Now().UTC().Format("2006-01-02T15:04:05")
	root := &junitSuites{Name: "stepd test"}
	bySuite := map[string]*junitSuite{}
	total := 0.0
	for _, jr := range results {
		file := jr.c.File
		s := bySuite[file]
		if s == nil {
			s = &junitSuite{Name: filepath.ToSlash(file), Timestamp: now, Hostname: host}
			bySuite[file] = s
			root.Suites = append(root.Suites, s)
		}
		tc := &junitCase{Name: jr.c.Name, Classname: jr.c.Category}
		s.Tests++
		root.Tests++
		secs := 0.0
		switch {
		case jr.r == nil:
			tc.Skipped = &junitProblem{Message: jr.skip}
			s.Skipped++
			root.Skipped++
		case jr.r.Err != nil:
			secs = jr.r.Elapsed.Seconds()
			tc.Error = &junitProblem{Message: jr.r.Err.Error(), Type: "CaseError", Text: jr.r.Explain()}
			s.Errors++
			root.Errors++
		case !jr.r.Passed():
			secs = jr.r.Elapsed.Seconds()
			explain := jr.r.Explain()
			// The message is the first difference: "output: $.a: want 1, got 2".
			lines := strings.SplitN(explain, "\n", 3)
			msg := lines[0]
			if len(lines) > 1 && strings.HasSuffix(msg, ":") {
				msg += " " + strings.TrimSpace(lines[1])
			}
			tc.Failure = &junitProblem{Message: msg, Type: "Mismatch", Text: explain}
			s.Failures++
			root.Failures++
		default:
			secs = jr.r.Elapsed.Seconds()
		}
		tc.Time = seconds(secs)
		s.seconds += secs
		total += secs
		s.Cases = append(s.Cases, tc)
	}
	for _, s := range root.Suites {
		s.Time = seconds(s.seconds)
	}
	root.Time = seconds(total)
	data, err := xml.MarshalIndent(root, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	data = append([]byte(xml.Header), append(data, '\n')...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}
