package service

import (
	"encoding/json"

	"github.com/stepd/stepd/execlog"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/store"
)

// LoggingConfiguration is a state machine's loggingConfiguration: which
// history events its executions log, whether with their data, and to
// which CloudWatch Logs log group (stepd writes the records to
// Config.ExecutionLogs). The type is execlog's, which the runner reads.
type (
	LoggingConfiguration = execlog.Configuration
	LogDestination       = execlog.LogDestination
	LogGroup             = execlog.LogGroup
)

// check applies AWS's rules to a logging configuration, with AWS's codes:
// the level is one of the four (OFF when absent), at most one destination,
// and exactly one, with a log group ARN ending in ":*", unless the level
// is OFF.
func checkLogging(c *LoggingConfiguration) error {
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
// (OFF, no data, no destinations member). An empty destinations list that
// was given is kept, since AWS answers it back (destinations: []).
func loggingText(c *LoggingConfiguration) string {
	if c == nil || c.Level == execlog.Off && !c.IncludeExecutionData && c.Destinations == nil {
		return ""
	}
	b, _ := json.Marshal(c)
	if c.Destinations != nil && len(c.Destinations) == 0 {
		b = append(b[:len(b)-1], `,"destinations":[]}`...)
	}
	return string(b)
}

// Logging returns a stored state machine's logging configuration (level
// OFF when it has none).
func Logging(sm *store.StateMachine) LoggingConfiguration {
	if sm == nil {
		return execlog.ParseConfiguration("")
	}
	return execlog.ParseConfiguration(sm.Logging)
}
