package service

import (
	"context"
	"encoding/json"
	"time"

	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/store"
)

// LoggingConfiguration is a state machine's loggingConfiguration: which
// history events its executions log (Level: ALL, ERROR, FATAL or OFF),
// whether with their data, and to which CloudWatch Logs log group (stepd
// writes the records to Config.ExecutionLogs).
type LoggingConfiguration struct {
	Level                string           `json:"level"`
	IncludeExecutionData bool             `json:"includeExecutionData"`
	Destinations         []LogDestination `json:"destinations,omitempty"`
}

// LogDestination is one destination of a LoggingConfiguration.
type LogDestination struct {
	CloudWatchLogsLogGroup *LogGroup `json:"cloudWatchLogsLogGroup,omitempty"`
}

// LogGroup names a CloudWatch Logs log group.
type LogGroup struct {
	LogGroupArn string `json:"logGroupArn"`
}

// check applies AWS's rules to a logging configuration, with AWS's codes:
// the level is one of the four (OFF when absent), at most one destination,
// and exactly one, with a log group ARN ending in ":*", unless the level
// is OFF.
func (c *LoggingConfiguration) check() error {
	switch c.Level {
	case "":
		c.Level = execlog.Off
	case execlog.All, execlog.Error, execlog.Fatal, execlog.Off:
	default:
		return fault.New(fault.ErrValidation, "1 validation error detected: Value '%s' at 'loggingConfiguration.level' failed to satisfy constraint: Member must satisfy enum value set: [ALL, ERROR, FATAL, OFF]", c.Level)
	}
	if len(c.Destinations) > 1 || c.Level != execlog.Off && len(c.Destinations) != 1 {
		return fault.New(fault.ErrInvalidLogging, "Invalid Logging Configuration: Must specify exactly one Log Destination.")
	}
	for i, d := range c.Destinations {
		if d.CloudWatchLogsLogGroup == nil || d.CloudWatchLogsLogGroup.LogGroupArn == "" {
			return fault.New(fault.ErrInvalidLogging, "Invalid Logging Configuration: 'loggingConfiguration.destinations[%d].cloudWatchLogsLogGroup.logGroupArn' is required.", i)
		}
		if n := len(d.CloudWatchLogsLogGroup.LogGroupArn); n > 256 {
			return fault.New(fault.ErrValidation, "1 validation error detected: Value at 'loggingConfiguration.destinations.%d.member.cloudWatchLogsLogGroup.logGroupArn' failed to satisfy constraint: Member must have length less than or equal to 256", i+1)
		}
		if _, err := execlog.LogGroupName(d.CloudWatchLogsLogGroup.LogGroupArn); err != nil {
			return fault.New(fault.ErrInvalidLogging, "Invalid Logging Configuration: 'loggingConfiguration.destinations[%d].cloudWatchLogsLogGroup.logGroupArn': %v.", i, err)
		}
	}
	return nil
}

// text is the configuration as the store keeps it: empty for the default
// (OFF, no data, no destination).
func (c *LoggingConfiguration) text() string {
	if c == nil || c.Level == execlog.Off && !c.IncludeExecutionData && len(c.Destinations) == 0 {
		return ""
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// Logging returns a stored state machine's logging configuration (level
// OFF when it has none).
func Logging(sm *store.StateMachine) LoggingConfiguration {
	c := LoggingConfiguration{Level: execlog.Off}
	if sm != nil && sm.Logging != "" {
		_ = json.Unmarshal([]byte(sm.Logging), &c)
	}
	return c
}

// logSetup is what an execution logs, from its state machine's
// configuration: nothing (nil) when the level is OFF or the service has no
// destination, so that an execution that logs nothing pays nothing.
type logSetup struct {
	level    string
	data     bool
	logGroup string
}

func (s *Service) logSetup(text string) *logSetup {
	if s.cfg.ExecutionLogs == nil || text == "" {
		return nil
	}
	c := Logging(&store.StateMachine{Logging: text})
	if c.Level == execlog.Off || len(c.Destinations) == 0 || c.Destinations[0].CloudWatchLogsLogGroup == nil {
		return nil
	}
	return &logSetup{level: c.Level, data: c.IncludeExecutionData, logGroup: c.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn}
}

// logSetupOf is logSetup for an execution rebuilt (Resume, a dormant one
// waking, a claim): its state machine's configuration is read once for
// all the executions of a state machine resumed within a few seconds,
// rather than once each.
func (s *Service) logSetupOf(ctx context.Context, smARN string) *logSetup {
	if s.cfg.ExecutionLogs == nil {
		return nil
	}
	type memo struct {
		text string
		at   time.Time
	}
	if v, ok := s.logMemo.Load(smARN); ok && time.Since(v.(memo).at) < 5*time.Second {
		return s.logSetup(v.(memo).text)
	}
	sm, err := s.store.GetStateMachine(ctx, smARN)
	if err != nil {
		return nil // deleted: nothing to log to
	}
	s.logMemo.Store(smARN, memo{sm.Logging, time.Now()})
	return s.logSetup(sm.Logging)
}

// logged is the journal of an execution that logs: it writes the records
// of each step's events once the step is committed.
type logged struct {
	engine.Journal
	s   *Service
	arn string
	set *logSetup
	buf []byte // the driver commits one step at a time
}

func (l *logged) AppendStep(ctx context.Context, st *store.Step) error {
	err := l.Journal.AppendStep(ctx, st)
	if err == nil {
		l.buf = l.s.writeLog(l.buf[:0], l.arn, l.set, st)
	}
	return err
}

// writeLog writes the records of a committed step's events that the
// setup's level includes, reusing buf; a record that cannot be written is
// reported in the server's log, and the execution goes on.
func (s *Service) writeLog(buf []byte, arn string, set *logSetup, st *store.Step) []byte {
	for _, ev := range st.Events {
		if !execlog.Includes(set.level, ev.Type) {
			continue
		}
		var err error
		if buf, err = execlog.AppendRecord(buf, ev.JSON, arn, set.data, 0); err != nil {
			s.log.Warn("execution log: cannot write an event", "execution", arn, "event", ev.ID, "err", err)
		}
	}
	if len(buf) > 0 {
		if err := s.cfg.ExecutionLogs.Write(set.logGroup, buf); err != nil {
			s.log.Warn("execution log: cannot write", "execution", arn, "logGroup", set.logGroup, "err", err)
		}
	}
	return buf
}
