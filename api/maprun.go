package api

import (
	"context"
	"strings"

	"github.com/stepd/stepd/service"
)

// The Map Run operations: DescribeMapRun, ListMapRuns, UpdateMapRun
// (ListExecutions by mapRunArn and DescribeExecution's mapRunArn are in
// statemachines_executions.go).

type mapRunCounts struct {
	Pending               int64 `json:"pending"`
	Running               int64 `json:"running"`
	Succeeded             int64 `json:"succeeded"`
	Failed                int64 `json:"failed"`
	TimedOut              int64 `json:"timedOut"`
	Aborted               int64 `json:"aborted"`
	Total                 int64 `json:"total"`
	ResultsWritten        int64 `json:"resultsWritten"`
	FailuresNotRedrivable int64 `json:"failuresNotRedrivable"`
	PendingRedrive        int64 `json:"pendingRedrive"`
}

func countsOut(c service.MapRunCounts) mapRunCounts {
	return mapRunCounts{Pending: c.Pending, Running: c.Running, Succeeded: c.Succeeded, Failed: c.Failed, TimedOut: c.TimedOut, Aborted: c.Aborted,
		Total: c.Total, ResultsWritten: c.ResultsWritten, FailuresNotRedrivable: c.FailuresNotRedrivable, PendingRedrive: c.PendingRedrive}
}

func (h *Handler) describeMapRun(ctx context.Context, body []byte) (any, error) {
	a, err := arnOnly(body, "mapRunArn")
	if err != nil {
		return nil, err
	}
	r, err := h.svc.DescribeMapRun(ctx, a)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"mapRunArn": r.ARN, "executionArn": r.ExecutionARN, "status": r.Status, "startDate": epoch(r.Started),
		"maxConcurrency": r.MaxConcurrency, "toleratedFailurePercentage": r.ToleratedFailurePercentage,
		"toleratedFailureCount": r.ToleratedFailureCount, "itemCounts": countsOut(r.Items), "executionCounts": countsOut(r.Executions),
		"redriveCount": r.RedriveCount}
	if !r.Stopped.IsZero() {
		out["stopDate"] = epoch(r.Stopped)
	}
	if !r.RedriveDate.IsZero() {
		out["redriveDate"] = epoch(r.RedriveDate)
	}
	return out, nil
}

// mapRunStateMachine is the state machine ARN AWS gives a Map Run's child
// executions: arn:…:stateMachine:<machine>/<label>.
func mapRunStateMachine(mapRunARN string) string {
	a, _, _ := strings.Cut(mapRunARN, ":mapRun:")
	rest := mapRunARN[min(len(a)+len(":mapRun:"), len(mapRunARN)):]
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return a + ":stateMachine:" + rest
}

func (h *Handler) listMapRuns(ctx context.Context, body []byte) (any, error) {
	var in struct {
		listInput
		ExecutionArn string `json:"executionArn"`
	}
	return listPage(body, &in, &in.listInput, "mapRuns", func(p service.Page) ([]*service.MapRun, string, error) {
		return h.svc.ListMapRuns(ctx, in.ExecutionArn, p)
	}, func(r *service.MapRun) map[string]any {
		item := map[string]any{"executionArn": r.ExecutionARN, "mapRunArn": r.ARN, "stateMachineArn": mapRunStateMachine(r.ARN), "startDate": epoch(r.Started)}
		if !r.Stopped.IsZero() {
			item["stopDate"] = epoch(r.Stopped)
		}
		return item
	}, func() error { return required("executionArn", in.ExecutionArn) })
}

func (h *Handler) updateMapRun(ctx context.Context, body []byte) (any, error) {
	var in struct {
		MapRunArn                  string   `json:"mapRunArn"`
		MaxConcurrency             *int     `json:"maxConcurrency"`
		ToleratedFailurePercentage *float64 `json:"toleratedFailurePercentage"`
		ToleratedFailureCount      *int64   `json:"toleratedFailureCount"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("mapRunArn", in.MapRunArn); err != nil {
		return nil, err
	}
	err := h.svc.UpdateMapRun(ctx, in.MapRunArn, service.MapRunUpdate{MaxConcurrency: in.MaxConcurrency,
		ToleratedFailureCount: in.ToleratedFailureCount, ToleratedFailurePercentage: in.ToleratedFailurePercentage})
	if err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// redrive sets DescribeExecution's redrive members.
func redrive(out *executionDescription, r service.RedriveInfo) {
	if r.Status == "" {
		return
	}
	out.RedriveCount, out.RedriveDate, out.RedriveStatus = &r.Count, epoch(r.Date), r.Status
	if r.Status == service.NotRedrivable {
		out.RedriveStatusReason = r.Reason
	}
}

// redriveFilter keeps the executions of a page that were redriven
// (REDRIVEN) or never were (NOT_REDRIVEN); "" keeps all.
func redriveFilter(list []*service.Execution, redrives map[string]service.Redrive, filter string) []*service.Execution {
	if filter == "" {
		return list
	}
	out := list[:0:0]
	for _, e := range list {
		if redriven := redrives[e.ARN].Count > 0; redriven == (filter == "REDRIVEN") {
			out = append(out, e)
		}
	}
	return out
}

func (h *Handler) redriveExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		ClientToken  string `json:"clientToken"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("executionArn", in.ExecutionArn); err != nil {
		return nil, err
	}
	if len(in.ClientToken) > 64 {
		return nil, validation("1 validation error detected: Value at 'clientToken' failed to satisfy constraint: Member must have length less than or equal to 64")
	}
	at, err := h.svc.RedriveExecution(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	return map[string]any{"redriveDate": epoch(at)}, nil
}
