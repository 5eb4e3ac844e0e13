package store

import (
	"context"
	"time"
)

// MapRun is a Distributed Map's Map Run as DescribeMapRun shows it.
type MapRun struct {
	ARN          string
	ExecutionARN string // the parent execution
	Status       string // RUNNING, SUCCEEDED, FAILED, ABORTED
	Started      time.Time
	Stopped      time.Time // zero while running
	// The limits in force (UpdateMapRun changes them).
	MaxConcurrency             int
	ToleratedFailureCount      int64
	ToleratedFailurePercentage float64
	// Items counts the items, Executions the child executions.
	Items, Executions MapRunCounts
	RedriveCount      int
	RedriveDate       time.Time // zero: never redriven
}

// MapRunCounts are the counters of DescribeMapRun's itemCounts and
// executionCounts.
type MapRunCounts struct {
	Pending, Running, Succeeded, Failed, TimedOut, Aborted, Total, ResultsWritten int64
	FailuresNotRedrivable, PendingRedrive                                         int64
}

// ChildExecution is a child workflow execution of a Map Run: its summary
// and, when written, the history events added since it was last written.
type ChildExecution struct {
	Execution
	MapRunARN string
	Events    []Event // ids ascending; events already stored (same id) are kept as they are
}

// Redrive is what a redriven execution records: how many times it was
// redriven and when last.
type Redrive struct {
	Count int
	Date  time.Time
}

// MapRunStore is the part of a Store that keeps Map Runs, their child
// executions and the redrive records of executions. Every backend
// implements it.
type MapRunStore interface {
	// PutMapRuns replaces the given Map Runs and child executions'
	// summaries (creating them when new) and adds the children's events,
	// in one transaction. Writing the same again changes nothing, so a
	// replay may write what it rebuilt.
	PutMapRuns(ctx context.Context, runs []*MapRun, children []*ChildExecution) error
	// GetMapRun returns a Map Run; ErrNotFound when missing.
	GetMapRun(ctx context.Context, arn string) (*MapRun, error)
	// ListMapRuns lists the Map Runs of an execution, newest first.
	ListMapRuns(ctx context.Context, executionARN string, page Page) (list []*MapRun, next string, err error)
	// GetChildExecution returns a child execution's summary (no events);
	// ErrNotFound when missing.
	GetChildExecution(ctx context.Context, arn string) (*ChildExecution, error)
	// ListChildExecutions lists a Map Run's child executions, newest first;
	// status filters when not empty. Events are not returned.
	ListChildExecutions(ctx context.Context, mapRunARN, status string, page Page) (list []*ChildExecution, next string, err error)
	// ChildEvents is Store.Events for a child execution.
	ChildEvents(ctx context.Context, arn string, after int64, limit int, reverse bool) ([]Event, error)
	// PutRedrive records an execution's redrive count and date.
	PutRedrive(ctx context.Context, executionARN string, r Redrive) error
	// GetRedrive returns an execution's redrive record (zero when it was
	// never redriven).
	GetRedrive(ctx context.Context, executionARN string) (Redrive, error)
	// GetRedrives returns the redrive records of those of the executions
	// that were redriven, by ARN, in one read (a page of a list).
	GetRedrives(ctx context.Context, executionARNs []string) (map[string]Redrive, error)
}

// PageEvents picks up to limit events of all (ascending ids) after the
// event with id after (or, reverse, before it; 0 means from the end), as
// Store.Events orders them.
func PageEvents(all []Event, after int64, limit int, reverse bool) []Event {
	if limit <= 0 {
		limit = 100
	}
	var out []Event
	if reverse {
		for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
			if after == 0 || all[i].ID < after {
				out = append(out, all[i])
			}
		}
		return out
	}
	for _, ev := range all {
		if ev.ID > after && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out
}
