// Package asl holds the Amazon States Language definition model and its
// parser. A definition is parsed once into an immutable StateMachine; the
// interpreter compiles paths, templates and expressions from the raw fields
// kept here.
//
// The parser accepts the ASL that AWS Step Functions accepts: the top-level
// fields (StartAt, States, Comment, TimeoutSeconds, Version, QueryLanguage),
// the eight state types with their JSONPath-mode and JSONata-mode fields,
// Retry and Catch, Parallel branches and Map item processors (including the
// legacy Iterator and Parameters). It checks structure — field types,
// required fields, Next/End, unknown state types and missing transition
// targets — and reports every problem it finds as a Diagnostic located by a
// JSON pointer, with AWS's error codes. Each Parallel branch and Map item
// processor is its own scope for transitions. A state's effective query
// language is its own QueryLanguage, else the top-level one — also inside
// a Map or Parallel, whose language nested states do not inherit; a state
// may opt into JSONata but not back into JSONPath in a JSONata machine, and
// an item processor cannot declare one. Deeper validation (reachability,
// field legality per query language, path syntax) belongs to the validator.
//
// It imports only value, and must not import validate or interp, which
// build on it, nor anything above them; like every pure package it reaches
// no net/http, os/exec, database/sql or AWS SDK package (internal/layer).
package asl

import (
	"fmt"
	"strings"

	"github.com/stepd/stepd/value"
)

// The query languages.
const (
	JSONPath = "JSONPath"
	JSONata  = "JSONata"
)

// StateMachine is a parsed state machine: the top level, a Parallel branch
// or a Map item processor.
type StateMachine struct {
	Comment        string
	StartAt        string
	States         map[string]*State
	Names          []string // state names in declaration order
	TimeoutSeconds int
	HasTimeout     bool
	Version        string
	QueryLanguage  string // effective: JSONPath (default) or JSONata
	Pointer        string // JSON pointer of this machine ("" at top level)
	Raw            *value.Object
}

// Field is an optional JSON member kept raw.
type Field struct {
	Set   bool
	Value any
}

// PathField is an optional path member: absent, null, or a path string.
type PathField struct {
	Set  bool
	Null bool
	Path string
}

// State is one state. Fields that do not apply to its type are zero.
type State struct {
	Name, Type, Comment string
	Pointer             string // e.g. "/States/P/Branches/0/States/X"
	QueryLanguage       string // effective
	Next                string
	End                 bool
	Raw                 *value.Object
	// NotImplemented, when set, says what AWS accepts in this state that
	// stepd cannot run: the definition is valid (a WARNING with
	// CodeUnsupported), and an execution that enters the state fails with
	// States.Runtime and this message.
	NotImplemented string

	InputPath, OutputPath, ResultPath                             PathField
	Parameters, ResultSelector, Result, Arguments, Output, Assign Field

	// Task
	Resource                                 string
	TimeoutSeconds, HeartbeatSeconds         Field
	TimeoutSecondsPath, HeartbeatSecondsPath string
	Credentials                              Field
	Retry                                    []*Retrier
	Catch                                    []*Catcher

	// Choice
	Choices []*ChoiceRule
	Default string

	// Wait
	Seconds, Timestamp         Field
	SecondsPath, TimestampPath string

	// Fail
	Error, Cause         Field
	ErrorPath, CausePath string

	// Parallel
	Branches []*StateMachine

	// Map
	ItemProcessor                                             *StateMachine
	ProcessorMode                                             string // INLINE (default) or DISTRIBUTED
	ExecutionType                                             string
	ItemsPath                                                 PathField
	Items, ItemSelector                                       Field
	MaxConcurrency                                            Field
	MaxConcurrencyPath                                        string
	ToleratedFailureCount, ToleratedFailurePercentage         Field
	ToleratedFailureCountPath, ToleratedFailurePercentagePath string
	ItemReader, ItemBatcher, ResultWriter                     Field
	Batcher                                                   *ItemBatcher  // ItemBatcher, parsed
	Reader                                                    *ItemReader   // ItemReader, parsed
	Writer                                                    *ResultWriter // ResultWriter, parsed
	Label                                                     string

	hasNext, hasDefault bool // Next, Default present (a state may be named "")
}

// ItemBatcher is a Distributed Map's ItemBatcher: how many items (or
// bytes of items) each iteration receives, as {"BatchInput":…,"Items":[…]}.
// In JSONPath the limits are literals or reference paths; in JSONata
// literals or expressions (then in the Field, unevaluated).
type ItemBatcher struct {
	MaxItemsPerBatch, MaxInputBytesPerBatch         Field
	MaxItemsPerBatchPath, MaxInputBytesPerBatchPath string
	BatchInput                                      Field
	Pointer                                         string
}

// ItemReader is a Distributed Map's ItemReader: where its items come from.
// Resource is arn:aws:states:::s3:getObject (one object, read as InputType
// says) or arn:aws:states:::s3:listObjectsV2 (the objects under a prefix);
// Parameters (JSONPath) or Arguments (JSONata) give the Bucket and Key or
// Prefix.
type ItemReader struct {
	Resource   string
	Action     string // getObject or listObjectsV2
	Parameters Field  // Parameters or Arguments
	// ReaderConfig.
	InputType         string   // CSV, JSON, JSONL, PARQUET or MANIFEST
	ManifestType      string   // S3_INVENTORY or ATHENA_DATA: the object lists the files to read
	Transformation    string   // LOAD_AND_FLATTEN: read the listed objects (listObjectsV2)
	ItemsPointer      string   // JSON: a JSON Pointer to the array of items
	CSVHeaderLocation string   // FIRST_ROW (default) or GIVEN
	CSVHeaders        []string // GIVEN
	CSVDelimiter      string   // COMMA (default), PIPE, SEMICOLON, SPACE, TAB
	MaxItems          Field    // a literal, or a JSONata expression
	MaxItemsPath      string
	Pointer           string
}

// ResultWriter is a Distributed Map's ResultWriter: the child executions'
// results are written to Amazon S3 (arn:aws:states:::s3:putObject) under
// the Parameters' (JSONPath) or Arguments' (JSONata) Bucket and Prefix,
// shaped as its WriterConfig says.
type ResultWriter struct {
	Resource   string // "" with WriterConfig alone: the results are not written
	Parameters Field  // Parameters or Arguments
	// WriterConfig: how the results are shaped, in the state's output and
	// in the files written.
	OutputType     string // JSON (default) or JSONL
	Transformation string // NONE (default with a Resource), COMPACT (default without), FLATTEN
	Pointer        string
}

// Retrier is one element of a Retry list.
type Retrier struct {
	ErrorEquals     []string
	IntervalSeconds int     // default 1
	MaxAttempts     int     // default 3
	BackoffRate     float64 // default 2.0
	MaxDelaySeconds int
	HasMaxDelay     bool
	JitterStrategy  string // FULL or NONE (default)
	Comment         string
	Pointer         string
}

// Catcher is one element of a Catch list.
type Catcher struct {
	ErrorEquals    []string
	Next           string
	ResultPath     PathField
	Output, Assign Field
	Comment        string
	Pointer        string

	hasNext bool
}

// ChoiceRule is a Choice rule or a nested boolean expression.
type ChoiceRule struct {
	Variable       string // JSONPath mode
	Operator       string // e.g. "StringEquals", "NumericLessThanPath", "IsPresent"; "" for And/Or/Not
	Operand        any    // the operator's value (a path string for *Path operators)
	And, Or        []*ChoiceRule
	Not            *ChoiceRule
	Condition      Field // JSONata mode
	Next           string
	Output, Assign Field
	Comment        string
	Pointer        string

	hasNext bool
}

// Diagnostic is one problem found in a definition.
type Diagnostic struct {
	Pointer  string // JSON pointer, e.g. "/States/Check/Next"; "" when the problem has no location
	Code     string // e.g. SCHEMA_VALIDATION_FAILED, MISSING_TRANSITION_TARGET
	Message  string
	Severity string // ERROR (also when empty) or WARNING
	Err      error  // the underlying error, if any (a *value.SyntaxError for malformed JSON)
	// Hint is advice for people, outside AWS's message (which the API
	// answers unchanged): for an unknown field, the nearest known one
	// ("did you mean 'End'?").
	Hint string
}

// Severities.
const (
	SeverityError   = "ERROR"
	SeverityWarning = "WARNING"
)

// IsWarning reports whether the diagnostic is only a warning.
func (d Diagnostic) IsWarning() bool { return d.Severity == SeverityWarning }

func (d Diagnostic) String() string {
	if d.Pointer == "" {
		return d.Code + ": " + d.Message
	}
	return fmt.Sprintf("%s: %s at %s", d.Code, d.Message, d.Pointer)
}

// The diagnostic codes.
const (
	CodeSchema         = "SCHEMA_VALIDATION_FAILED"
	CodeMissingTarget  = "MISSING_TRANSITION_TARGET"
	CodeInvalidJSON    = "INVALID_JSON_DESCRIPTION"
	CodeMissingEnd     = "MISSING_END_STATE"
	CodeDuplicateState = "DUPLICATE_STATE_NAME"
	CodeInvalidName    = "INVALID_STATE_NAME"
	// CodeUnsupported marks a field AWS accepts that stepd cannot run: a
	// WARNING (the definition is valid, as on AWS), and an execution that
	// enters the state fails with the same message (State.NotImplemented).
	// Never silently ignored.
	CodeUnsupported = "UNSUPPORTED_FEATURE"
)

// Diagnostics is a list of problems; it is an error when not empty.
type Diagnostics []Diagnostic

// Errors returns the diagnostics that are not warnings.
func (d Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, x := range d {
		if !x.IsWarning() {
			out = append(out, x)
		}
	}
	return out
}

func (d Diagnostics) Error() string {
	switch len(d) {
	case 0:
		return "no errors"
	case 1:
		return d[0].String()
	}
	return fmt.Sprintf("%s (and %d more errors)", d[0].String(), len(d)-1)
}

// Unwrap returns the underlying errors of the diagnostics, so that
// errors.As finds, for example, the *value.SyntaxError of malformed JSON.
func (d Diagnostics) Unwrap() []error {
	var errs []error
	for _, x := range d {
		if x.Err != nil {
			errs = append(errs, x.Err)
		}
	}
	return errs
}

// Err returns d as an error, or nil when d is empty.
func (d Diagnostics) Err() error {
	if len(d) == 0 {
		return nil
	}
	return d
}

// Walk calls fn for every state of sm and of its nested machines, depth
// first in declaration order. fn returns false to skip a state's nested
// machines.
func Walk(sm *StateMachine, fn func(*StateMachine, *State) bool) {
	for _, name := range sm.Names {
		st := sm.States[name]
		if !fn(sm, st) {
			continue
		}
		for _, b := range st.Branches {
			Walk(b, fn)
		}
		if st.ItemProcessor != nil {
			Walk(st.ItemProcessor, fn)
		}
	}
}

// escape escapes a name for use in a JSON pointer.
func escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
