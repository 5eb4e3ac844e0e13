// Package execlog writes execution logs in the shape AWS Step Functions
// gives them in CloudWatch Logs: one JSON record per history event, of the
// event types the state machine's loggingConfiguration level asks for,
// with or without the execution's data, to standard output or to one file
// per log group.
//
// A record is
//
//	{"id":"3","type":"TaskStateEntered","details":{…},"previous_event_id":"2",
//	 "event_timestamp":"1700000000123","execution_arn":"arn:…","redrive_count":"0"}
//
// with every value but details a string, as AWS writes them.
//
// It imports only value, and must not import the service that writes
// through it, the interpreter or the engine, nor anything above them.
package execlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/stepd/stepd/value"
)

// The log levels of a loggingConfiguration.
const (
	All   = "ALL"
	Error = "ERROR"
	Fatal = "FATAL"
	Off   = "OFF"
)

// Includes reports whether level logs history events of type typ: ALL
// logs every event; ERROR the events of a failure (a type ending in
// Failed, TimedOut or Aborted, and FailStateEntered); FATAL the end of a
// failed execution (ExecutionFailed, ExecutionTimedOut, ExecutionAborted);
// OFF nothing.
func Includes(level, typ string) bool {
	switch level {
	case All:
		return true
	case Error:
		return typ == "FailStateEntered" || strings.HasSuffix(typ, "Failed") || strings.HasSuffix(typ, "TimedOut") || strings.HasSuffix(typ, "Aborted")
	case Fatal:
		return typ == "ExecutionFailed" || typ == "ExecutionTimedOut" || typ == "ExecutionAborted"
	}
	return false
}

// dataMembers are the members of an event's details that hold execution
// data, left out of the record when includeExecutionData is false.
var dataMembers = map[string]bool{"input": true, "inputDetails": true, "output": true, "outputDetails": true,
	"parameters": true, "assignedVariables": true, "assignedVariablesDetails": true}

// AppendRecord appends to dst the record of one history event, given as
// GetExecutionHistory's JSON object, followed by a newline.
func AppendRecord(dst, event []byte, executionARN string, includeData bool, redriveCount int) ([]byte, error) {
	v, err := value.Parse(event)
	if err != nil {
		return dst, fmt.Errorf("execution log: event: %w", err)
	}
	ev := value.AsObject(v)
	if ev == nil {
		return dst, errors.New("execution log: event: not an object")
	}
	var id, prev, typ, stamp string
	var details *value.Object
	for k, m := range ev.All {
		switch k {
		case "id":
			id = numberText(m)
		case "previousEventId":
			prev = numberText(m)
		case "type":
			typ, _ = m.(string)
		case "timestamp":
			if n, ok := m.(value.Number); ok {
				stamp = strconv.FormatInt(int64(math.Round(n.Float64()*1000)), 10)
			}
		default:
			if strings.HasSuffix(k, "EventDetails") {
				details = value.AsObject(m)
			}
		}
	}
	if id == "" || typ == "" {
		return dst, fmt.Errorf("execution log: event %.80s: no id or type", event)
	}
	if prev == "" {
		prev = "0"
	}
	dst = append(dst, `{"id":`...)
	dst = value.AppendString(dst, id)
	dst = append(dst, `,"type":`...)
	dst = value.AppendString(dst, typ)
	dst = append(dst, `,"details":{`...)
	if details != nil {
		n := 0
		for k, m := range details.All {
			if !includeData && dataMembers[k] {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = value.AppendString(dst, k)
			dst = append(dst, ':')
			dst = value.Append(dst, m)
		}
	}
	dst = append(dst, `},"previous_event_id":`...)
	dst = value.AppendString(dst, prev)
	dst = append(dst, `,"event_timestamp":`...)
	dst = value.AppendString(dst, stamp)
	dst = append(dst, `,"execution_arn":`...)
	dst = value.AppendString(dst, executionARN)
	dst = append(dst, `,"redrive_count":`...)
	dst = value.AppendString(dst, strconv.Itoa(redriveCount))
	return append(dst, "}\n"...), nil
}

func numberText(v any) string {
	if n, ok := v.(value.Number); ok {
		return string(n)
	}
	return ""
}

// LogGroupName returns the name of the log group of a CloudWatch Logs log
// group ARN, arn:PARTITION:logs:REGION:ACCOUNT:log-group:NAME:* (AWS
// requires the final ":*").
func LogGroupName(arn string) (string, error) {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) != 7 || parts[0] != "arn" || parts[2] != "logs" || parts[5] != "log-group" {
		return "", fmt.Errorf("%q is not a CloudWatch Logs log group ARN (arn:aws:logs:REGION:ACCOUNT:log-group:NAME:*)", arn)
	}
	name, ok := strings.CutSuffix(parts[6], ":*")
	if !ok {
		return "", fmt.Errorf("the log group ARN %q does not end with \":*\"", arn)
	}
	if name == "" || len(name) > 512 || strings.ContainsAny(name, ":*") {
		return "", fmt.Errorf("the log group ARN %q has no valid log group name", arn)
	}
	return name, nil
}

// FileName is the name of the file that holds a log group's records: its
// name escaped as a URL path segment (url.PathEscape: '/' becomes %2F, '%'
// becomes %25), so "/aws/vendedlogs/states/orders" is
// "%2Faws%2Fvendedlogs%2Fstates%2Forders.log", and no two names share one.
func FileName(logGroup string) string {
	return url.PathEscape(logGroup) + ".log"
}

// Destination is where records go: one file per log group in a directory,
// or one writer (standard output) for all. It is safe for concurrent use;
// each Write is one write of whole records, so records never interleave.
type Destination struct {
	dir string
	out io.Writer

	mu    sync.Mutex
	files map[string]*os.File
}

// ToDir returns a Destination writing each log group's records to a file of
// its own in dir (see FileName), appending to the files it finds.
func ToDir(dir string) (*Destination, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("execution logs: %w", err)
	}
	return &Destination{dir: dir, files: map[string]*os.File{}}, nil
}

// ToWriter returns a Destination writing every log group's records to w.
func ToWriter(w io.Writer) *Destination { return &Destination{out: w} }

// Write writes records (whole lines) of a log group, named by its ARN.
func (d *Destination) Write(logGroupARN string, records []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dir == "" {
		_, err := d.out.Write(records)
		return err
	}
	f := d.files[logGroupARN]
	if f == nil {
		name, err := LogGroupName(logGroupARN)
		if err != nil {
			return err
		}
		if f, err = os.OpenFile(filepath.Join(d.dir, FileName(name)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
			return fmt.Errorf("execution logs: %w", err)
		}
		d.files[logGroupARN] = f
	}
	_, err := f.Write(records)
	return err
}

// Close closes the files.
func (d *Destination) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for k, f := range d.files {
		errs = append(errs, f.Close())
		delete(d.files, k)
	}
	return errors.Join(errs...)
}

// Configuration is a state machine's loggingConfiguration: which history
// events its executions log (Level: ALL, ERROR, FATAL or OFF), whether
// with their data, and to which CloudWatch Logs log group.
type Configuration struct {
	Level                string           `json:"level"`
	IncludeExecutionData bool             `json:"includeExecutionData"`
	Destinations         []LogDestination `json:"destinations,omitempty"`
}

// LogDestination is one destination of a Configuration.
type LogDestination struct {
	CloudWatchLogsLogGroup *LogGroup `json:"cloudWatchLogsLogGroup,omitempty"`
}

// LogGroup names a CloudWatch Logs log group.
type LogGroup struct {
	LogGroupArn string `json:"logGroupArn"`
}

// ParseConfiguration reads a configuration as a store keeps it (its JSON
// text; empty for none): level OFF when it has none.
func ParseConfiguration(text string) Configuration {
	c := Configuration{Level: Off}
	if text != "" {
		_ = json.Unmarshal([]byte(text), &c)
	}
	return c
}
