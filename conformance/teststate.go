package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// CheckTestState runs a test-state case through stepd's TestState and
// compares the response (status, output, error, cause, next state and
// inspection data) with the recorded one.
func CheckTestState(ctx context.Context, c *Case) *Result {
	start := time.Now()
	r := &Result{Case: c}
	defer func() { r.Elapsed = time.Since(start) }()
	req := c.Request
	str := func(k string) string {
		v, _ := req.Get(k)
		s, _ := v.(string)
		return s
	}
	in := service.TestStateInput{InspectionLevel: str("inspectionLevel"), StateName: str("stateName")}
	def, _ := req.Get("definition")
	in.Definition = value.String(def)
	if t := str("definitionText"); t != "" {
		in.Definition = t
	}
	if input, ok := req.Get("input"); ok {
		in.Input = value.String(input)
	}
	if vars, ok := req.Get("variables"); ok && vars != nil {
		in.Variables = value.String(vars)
	}
	if m, ok := req.Get("mock"); ok && m != nil {
		mo, _ := m.(*value.Object)
		tm := &service.TestMock{}
		if res, ok := mo.Get("result"); ok {
			s, _ := res.(string)
			tm.Result = &s
		}
		if eo, ok := mo.Get("errorOutput"); ok {
			e, _ := eo.(*value.Object)
			errName, _ := e.Get("error")
			cause, _ := e.Get("cause")
			tm.ErrorOutput = true
			tm.Error, _ = errName.(string)
			tm.Cause, _ = cause.(string)
		}
		in.Mock = tm
	}
	if c.Mocks != nil {
		if cfg, err := task.MockConfigFromValue(c.Mocks); err == nil {
			in.Invoker, _ = cfg.Invoker("", "")
		}
	}
	svc := service.New(service.Config{Region: Region, Account: Account})
	defer svc.Close()
	out, err := svc.TestState(ctx, in)
	resp := value.NewObject(6)
	var se *service.Error
	switch {
	case errors.As(err, &se):
		resp.Set("error", se.Code)
		resp.Set("message", se.Message)
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
