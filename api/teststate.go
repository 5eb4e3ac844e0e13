package api

import (
	"context"
	"encoding/json"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

func (h *Handler) testState(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Definition      string `json:"definition"`
		Input           string `json:"input"`
		InspectionLevel string `json:"inspectionLevel"`
		Variables       string `json:"variables"`
		StateName       string `json:"stateName"`
		Context         string `json:"context"`
		RevealSecrets   bool   `json:"revealSecrets"`
		RoleArn         string `json:"roleArn"` // accepted as for a state machine: stepd assumes no IAM role
		Config          *struct {
			RetrierRetryCount        int    `json:"retrierRetryCount"`
			MapIterationFailureCount *int   `json:"mapIterationFailureCount"`
			MapItemReaderData        string `json:"mapItemReaderData"`
		} `json:"stateConfiguration"`
		Mock *struct {
			Result              *string `json:"result"`
			FieldValidationMode string  `json:"fieldValidationMode"`
			ErrorOutput         *struct {
				Error string `json:"error"`
				Cause string `json:"cause"`
			} `json:"errorOutput"`
		} `json:"mock"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var def struct {
		Definition *string `json:"definition"`
	}
	_ = decode(body, &def) // decoded above
	if err := lengthRequired("definition", def.Definition, true); err != nil {
		return nil, err
	}
	if e := validate.CheckDefinitionLength("definition", in.Definition); e != nil {
		return nil, validation("%s", e.Message)
	}
	req := service.TestStateInput{Definition: in.Definition, StateName: in.StateName, Input: in.Input, Variables: in.Variables,
		InspectionLevel: in.InspectionLevel, Context: in.Context, RevealSecrets: in.RevealSecrets}
	if c := in.Config; c != nil {
		req.RetryCount, req.ItemReaderData = c.RetrierRetryCount, c.MapItemReaderData
		if n := c.MapIterationFailureCount; n != nil {
			req.MapFailures, req.MapFailuresSet = *n, true
		}
	}
	if m := in.Mock; m != nil {
		req.Mock = &service.TestMock{Result: m.Result, FieldValidationMode: m.FieldValidationMode}
		if eo := m.ErrorOutput; eo != nil {
			req.Mock.ErrorOutput, req.Mock.Error, req.Mock.Cause = true, eo.Error, eo.Cause
		}
	}
	out, err := h.svc.TestState(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := map[string]any{"status": out.Status}
	if out.HasOutput {
		resp["output"] = value.String(out.Output)
	}
	if out.Error != "" {
		resp["error"] = out.Error
	}
	if out.Cause != "" {
		resp["cause"] = out.Cause
	}
	if out.NextState != "" {
		resp["nextState"] = out.NextState
	}
	if insp := out.Inspection; insp != nil {
		data := map[string]any{}
		for k, v := range insp.All {
			switch k {
			case "errorDetails", "maxConcurrency", "toleratedFailureCount", "toleratedFailurePercentage":
				data[k] = json.RawMessage(value.String(v))
			default:
				data[k] = value.String(v) // JSON text, as the API returns it
			}
		}
		resp["inspectionData"] = data
	}
	return resp, nil
}

// TestStateRequest builds a TestState input from the request's parameters
// as a JSON object (definition, input, variables and context may be JSON
// values or JSON text; mock, stateName, inspectionLevel and
// stateConfiguration as the API names them): the form of the recorded
// TestState cases. (HTTP requests are decoded by the handler, which
// insists on the API's types.)
func TestStateRequest(req *value.Object) service.TestStateInput {
	str := func(k string) string {
		v, _ := req.Get(k)
		s, _ := v.(string)
		return s
	}
	text := func(k string) string {
		v, ok := req.Get(k)
		if !ok || v == nil {
			return ""
		}
		if s, isStr := v.(string); isStr {
			return s
		}
		return value.String(v)
	}
	in := service.TestStateInput{InspectionLevel: str("inspectionLevel"), StateName: str("stateName"),
		Definition: text("definition"), Input: text("input"), Variables: text("variables"), Context: text("context")}
	if t := str("definitionText"); t != "" {
		in.Definition = t
	}
	if m, ok := req.Get("mock"); ok && m != nil {
		mo, _ := m.(*value.Object)
		tm := &service.TestMock{}
		if res, ok := mo.Get("result"); ok {
			s, _ := res.(string)
			tm.Result = &s
		}
		if fvm, ok := mo.Get("fieldValidationMode"); ok {
			tm.FieldValidationMode, _ = fvm.(string)
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
	if rs, ok := req.Get("revealSecrets"); ok {
		in.RevealSecrets, _ = rs.(bool)
	}
	if sc, ok := req.Get("stateConfiguration"); ok {
		so, _ := sc.(*value.Object)
		count := func(k string) int {
			n, _ := so.Get(k)
			f, _ := n.(value.Number)
			return int(f.Float64())
		}
		in.RetryCount, in.MapFailures = count("retrierRetryCount"), count("mapIterationFailureCount")
		in.MapFailuresSet = so.Has("mapIterationFailureCount")
		if d, ok := so.Get("mapItemReaderData"); ok {
			in.ItemReaderData, _ = d.(string)
		}
	}
	return in
}
