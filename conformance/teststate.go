package conformance

import (
	"context"
	"time"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/task/mock"
	"github.com/stepd/stepd/value"
)

// CheckTestState runs a test-state case through stepd's TestState and
// compares the response (status, output, error, cause, next state and
// inspection data) with the recorded one.
func CheckTestState(ctx context.Context, c *Case) *Result {
	start := time.Now()
	r := &Result{Case: c}
	defer func() { r.Elapsed = time.Since(start) }()
	in := api.TestStateRequest(c.Request)
	if c.Mocks != nil {
		if cfg, err := mock.FromValue(c.Mocks); err == nil {
			in.Invoker, _ = cfg.Invoker("", "")
		}
	}
	svc := service.New(service.Config{Region: Region, Account: Account, MockResults: awsmodel.CheckResult})
	defer svc.Close()
	out, err := svc.TestState(ctx, in)
	resp := value.NewObject(6)
	code, message, rejected := api.AWSError(err)
	switch {
	case rejected:
		resp.Set("error", code)
		resp.Set("message", message)
	case err != nil:
		r.Err = err
		return r
	default:
		resp.Set("status", out.Status)
		if out.HasOutput {
			resp.Set("output", value.String(out.Output))
		}
		if out.Error != "" {
			resp.Set("error", out.Error)
		}
		if out.Cause != "" {
			resp.Set("cause", out.Cause)
		}
		if out.NextState != "" {
			resp.Set("nextState", out.NextState)
		}
		if insp := out.Inspection; insp != nil {
			data := value.NewObject(insp.Len())
			for k, v := range insp.All {
				switch k {
				case "errorDetails", "maxConcurrency", "toleratedFailureCount", "toleratedFailurePercentage":
					data.Set(k, v)
				default:
					data.Set(k, value.String(v))
				}
			}
			resp.Set("inspectionData", data)
		}
	}
	r.OutcomeErr = CompareTestState(c, resp)
	r.OutcomeOK = len(r.OutcomeErr) == 0
	return r
}
