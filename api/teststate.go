package api

import (
	"context"
	"encoding/json"

	"github.com/stepd/stepd/service"
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
	if err := required("definition", in.Definition); err != nil {
		return nil, err
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
