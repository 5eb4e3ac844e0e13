package api

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/stepd/stepd/arn"
	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

// loggingOf decodes a request's loggingConfiguration (nil when absent),
// refusing members stepd does not know.
func loggingOf(raw json.RawMessage) (*service.LoggingConfiguration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var unknown string
	eachKey(raw, func(key string) bool {
		if !namesOf(reflect.TypeOf(service.LoggingConfiguration{}))[key] {
			unknown = key // "Level" too: names are case-sensitive
			return false
		}
		return true
	})
	if unknown != "" {
		return nil, validation("loggingConfiguration: unknown member %s", quote(unknown))
	}
	var in struct {
		C *service.LoggingConfiguration `json:"loggingConfiguration"`
	}
	whole := append(append([]byte(`{"loggingConfiguration":`), raw...), '}')
	if err := json.Unmarshal(whole, &in); err != nil {
		return nil, serializationError(whole, err) // naming the member
	}
	if in.C == nil {
		return nil, nil
	}
	return in.C, nil
}

type tracingConfiguration = service.Tracing

// lengthRequired checks a required string member: absent (or null), or
// empty, which AWS answers with the member's length constraint (without
// its value when the model marks the member sensitive, as definition).
func lengthRequired(name string, v *string, sensitive bool) error {
	switch {
	case v == nil:
		return required(name, "")
	case *v == "" && sensitive:
		return validation("1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
	case *v == "":
		return validation("1 validation error detected: Value '' at '%s' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
	}
	return nil
}

func required(name, v string) error {
	if v == "" {
		return validation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", name)
	}
	return nil
}

func (h *Handler) createStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name       *string `json:"name"`
		Definition *string `json:"definition"`
		RoleArn    string  `json:"roleArn"`
		Type       string  `json:"type"`
		Tags       []tag   `json:"tags"`
		// Versions and settings (version.go).
		TracingConfiguration    *tracingConfiguration    `json:"tracingConfiguration"`
		EncryptionConfiguration *encryptionConfiguration `json:"encryptionConfiguration"`
		Publish                 bool                     `json:"publish"`
		VersionDescription      string                   `json:"versionDescription"`
		Logging                 json.RawMessage          `json:"loggingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	logging, err := loggingOf(in.Logging)
	if err != nil {
		return nil, err
	}
	if err := lengthRequired("name", in.Name, false); err != nil {
		return nil, err
	}
	if err := lengthRequired("definition", in.Definition, true); err != nil {
		return nil, err
	}
	sm, v, err := h.svc.CreateStateMachine(ctx, service.StateMachineInput{Name: *in.Name, Definition: *in.Definition, RoleARN: in.RoleArn, Type: in.Type, Tags: tagMap(in.Tags),
		Tracing: in.TracingConfiguration, Encryption: in.EncryptionConfiguration, Publish: in.Publish, VersionDescription: in.VersionDescription, Logging: logging})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineArn": sm.ARN, "creationDate": epoch(sm.Created)}
	if v != nil {
		out["stateMachineVersionArn"] = v.ARN
	}
	return out, nil
}

func arnOnly(body []byte, field string) (string, error) {
	var in map[string]any
	if err := decode(body, &in); err != nil {
		return "", err
	}
	s, ok := in[field].(string)
	if v := in[field]; !ok && v != nil {
		return "", serializationError(body, &json.UnmarshalTypeError{Value: jsonKind(v), Type: reflect.TypeOf(""), Field: field})
	}
	return s, required(field, s)
}

// jsonKind names a decoded JSON value's kind as json.UnmarshalTypeError
// does.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case bool:
		return "bool"
	case float64:
		return "number"
	}
	return "string"
}

func (h *Handler) describeStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		IncludedData    string `json:"includedData"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("stateMachineArn", in.StateMachineArn); err != nil {
		return nil, err
	}
	metadataOnly, err := includedData(in.IncludedData)
	if err != nil {
		return nil, err
	}
	sm, v, settings, err := h.svc.DescribeStateMachine(ctx, in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"stateMachineArn": sm.ARN, "name": sm.Name, "status": "ACTIVE", "definition": sm.Definition,
		"roleArn": sm.RoleARN, "type": sm.Type, "creationDate": epoch(sm.Created),
		"loggingConfiguration": loggingOut(service.Logging(sm)),
	}
	revision := sm.RevisionID
	if v != nil { // a version: its own definition, role, revision and creation
		out["stateMachineArn"], out["definition"], out["roleArn"], out["creationDate"] = v.ARN, v.Definition, v.RoleARN, epoch(v.Created)
		revision = v.RevisionID
		if v.Description != "" {
			out["description"] = v.Description
		}
	}
	if revision != "" { // none until the state machine is updated, as AWS answers
		out["revisionId"] = revision
	}
	describeSettings(out, settings, metadataOnly)
	return out, nil
}

// describeSettings adds a state machine's tracing and encryption
// configurations and its variable references to a Describe answer, and
// leaves its definition out when only metadata is asked for.
func describeSettings(out map[string]any, st service.Settings, metadataOnly bool) {
	out["tracingConfiguration"] = st.TracingOf()
	out["encryptionConfiguration"] = st.EncryptionOf()
	if metadataOnly { // as AWS answers it: the definition is required
		out["definition"] = "{}"
		return
	}
	if def, ok := out["definition"].(string); ok {
		if refs := service.VariableReferences(def); len(refs) > 0 {
			out["variableReferences"] = refs
		}
	}
}

func (h *Handler) updateStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		StateMachineArn string  `json:"stateMachineArn"`
		Definition      *string `json:"definition"`
		RoleArn         string  `json:"roleArn"`
		// Versions and settings (version.go).
		TracingConfiguration    *tracingConfiguration    `json:"tracingConfiguration"`
		EncryptionConfiguration *encryptionConfiguration `json:"encryptionConfiguration"`
		Publish                 bool                     `json:"publish"`
		VersionDescription      string                   `json:"versionDescription"`
		Logging                 json.RawMessage          `json:"loggingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	logging, err := loggingOf(in.Logging)
	if err != nil {
		return nil, err
	}
	if err := required("stateMachineArn", in.StateMachineArn); err != nil {
		return nil, err
	}
	definition := ""
	if in.Definition != nil {
		if err := lengthRequired("definition", in.Definition, true); err != nil {
			return nil, err
		}
		definition = *in.Definition
	}
	sm, v, err := h.svc.UpdateStateMachine(ctx, service.UpdateInput{ARN: in.StateMachineArn, Definition: definition, RoleARN: in.RoleArn,
		Tracing: in.TracingConfiguration, Encryption: in.EncryptionConfiguration, Publish: in.Publish, VersionDescription: in.VersionDescription, Logging: logging})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"updateDate": epoch(sm.Updated)}
	if sm.RevisionID != "" { // none when the state machine was never changed
		out["revisionId"] = sm.RevisionID
	}
	if v != nil {
		out["stateMachineVersionArn"] = v.ARN
	}
	return out, nil
}

func (h *Handler) deleteStateMachine(ctx context.Context, body []byte) (any, error) {
	arn, err := arnOnly(body, "stateMachineArn")
	if err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.DeleteStateMachine(ctx, arn)
}

type listInput struct {
	MaxResults int    `json:"maxResults"`
	NextToken  string `json:"nextToken"`
}

func (h *Handler) listStateMachines(ctx context.Context, body []byte) (any, error) {
	var in listInput
	return listPage(body, &in, &in, "stateMachines", func(p service.Page) ([]*service.StateMachine, string, error) {
		return h.svc.ListStateMachines(ctx, p)
	}, func(sm *service.StateMachine) map[string]any {
		return map[string]any{"stateMachineArn": sm.ARN, "name": sm.Name, "type": sm.Type, "creationDate": epoch(sm.Created)}
	})
}

// listPage answers a List operation: it decodes body into in (which embeds
// page), checks it, reads one page with list and returns its items under
// key, with nextToken when there is a next page.
func listPage[T, I any](body []byte, in any, page *listInput, key string, list func(service.Page) ([]T, string, error), item func(T) I, checks ...func() error) (any, error) {
	if err := decode(body, in); err != nil {
		return nil, err
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	p, err := pageOf(page.NextToken, page.MaxResults)
	if err != nil {
		return nil, err
	}
	tokenMax := 1024
	if key == "executions" {
		tokenMax = 3096 // ListExecutionsPageToken
	}
	if err := checkToken(page.NextToken, tokenMax); err != nil {
		return nil, err
	}
	got, next, err := list(p)
	if err != nil {
		return nil, err
	}
	items := make([]I, 0, len(got))
	for _, v := range got {
		items = append(items, item(v))
	}
	return &listAnswer[I]{key: key, items: items, next: next}, nil
}

func (h *Handler) describeStateMachineForExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		IncludedData string `json:"includedData"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("executionArn", in.ExecutionArn); err != nil {
		return nil, err
	}
	metadataOnly, err := includedData(in.IncludedData)
	if err != nil {
		return nil, err
	}
	e, err := h.svc.DescribeExecution(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	sm, _ := h.svc.GetStateMachine(ctx, e.StateMachineARN) // nil when deleted: OFF
	out := map[string]any{
		"stateMachineArn": e.StateMachineARN, "name": e.StateMachineName, "definition": e.Definition, "roleArn": e.RoleARN,
		"updateDate": epoch(e.Started), "loggingConfiguration": loggingOut(service.Logging(sm)),
	}
	settings, revision, err := h.svc.ExecutionSettings(ctx, e)
	if err != nil {
		return nil, err
	}
	if revision != "" {
		out["revisionId"] = revision
	}
	describeSettings(out, settings, metadataOnly)
	if run := h.svc.MapRunOf(ctx, in.ExecutionArn); run != "" {
		out["mapRunArn"] = run // a Map Run's child: its definition is the Map's ItemProcessor
	}
	return out, nil
}

type startInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	Name            string  `json:"name"`
	Input           *string `json:"input"`
	TraceHeader     string  `json:"traceHeader"`
}

func (h *Handler) start(ctx context.Context, body []byte) (service.StartInput, error) {
	var in startInput
	if err := decode(body, &in); err != nil {
		return service.StartInput{}, err
	}
	if err := required("stateMachineArn", in.StateMachineArn); err != nil {
		return service.StartInput{}, err
	}
	input := ""
	if in.Input != nil {
		if *in.Input == "" { // absent is {}, but an empty text is no JSON: AWS's answer (recorded)
			return service.StartInput{}, fault.New(fault.ErrInvalidInput, "Invalid State Machine Execution Input: 'Invalid execution input.'")
		}
		input = *in.Input
	}
	return service.StartInput{StateMachineARN: in.StateMachineArn, Name: in.Name, Input: input, TraceHeader: in.TraceHeader}, nil
}

func (h *Handler) startExecution(ctx context.Context, body []byte) (any, error) {
	in, err := h.start(ctx, body)
	if err != nil {
		return nil, err
	}
	e, err := h.svc.StartExecution(ctx, in)
	if err != nil {
		return nil, err
	}
	return &startAnswer{ExecutionArn: e.ARN, StartDate: epoch(e.Started)}, nil
}

// executionDescription is DescribeExecution's and StartSyncExecution's
// answer.
type executionDescription struct {
	ExecutionArn    string           `json:"executionArn"`
	StateMachineArn string           `json:"stateMachineArn"`
	Name            string           `json:"name"`
	Status          string           `json:"status"`
	StartDate       *float64         `json:"startDate"`
	StopDate        *float64         `json:"stopDate,omitempty"`
	Input           string           `json:"input,omitempty"`
	InputDetails    includedDetails  `json:"inputDetails"`
	Output          *string          `json:"output,omitempty"`
	OutputDetails   *includedDetails `json:"outputDetails,omitempty"`
	Error           string           `json:"error,omitempty"`
	Cause           string           `json:"cause,omitempty"`
	TraceHeader     string           `json:"traceHeader,omitempty"`
	// DescribeExecution's only.
	RedriveCount        *int     `json:"redriveCount,omitempty"`
	RedriveStatus       string   `json:"redriveStatus,omitempty"`
	RedriveStatusReason string   `json:"redriveStatusReason,omitempty"`
	RedriveDate         *float64 `json:"redriveDate,omitempty"`
	MapRunArn           string   `json:"mapRunArn,omitempty"`
	// StartSyncExecution's only.
	BillingDetails *billingDetails `json:"billingDetails,omitempty"`

	// DescribeExecution's only: what the execution was started from (version.go).
	StateMachineVersionArn string `json:"stateMachineVersionArn,omitempty"`
	StateMachineAliasArn   string `json:"stateMachineAliasArn,omitempty"`
}

type includedDetails struct {
	Included bool `json:"included"`
}

type billingDetails struct {
	BilledMemoryUsedInMB         int `json:"billedMemoryUsedInMB"`
	BilledDurationInMilliseconds int `json:"billedDurationInMilliseconds"`
}

// withoutData leaves out the input and output (includedData
// METADATA_ONLY).
func (d *executionDescription) withoutData() {
	d.Input, d.InputDetails, d.Output, d.OutputDetails = "", includedDetails{false}, nil, nil
}

func executionOutput(e *service.Execution) *executionDescription {
	out := &executionDescription{ExecutionArn: e.ARN, StateMachineArn: e.StateMachineARN, Name: e.Name, Status: e.Status,
		StartDate: epoch(e.Started), StopDate: epoch(e.Stopped), Input: e.Input, InputDetails: includedDetails{true},
		Error: e.Error, Cause: e.Cause}
	if e.Status == "SUCCEEDED" {
		out.Output, out.OutputDetails = &e.Output, &includedDetails{true}
	}
	return out
}

func (h *Handler) startSyncExecution(ctx context.Context, body []byte) (any, error) {
	var data struct {
		IncludedData string `json:"includedData"`
	}
	if err := decode(body, &data); err != nil {
		return nil, err
	}
	metadataOnly, err := includedData(data.IncludedData)
	if err != nil {
		return nil, err
	}
	in, err := h.start(ctx, body)
	if err != nil {
		return nil, err
	}
	e, err := h.svc.StartSyncExecution(ctx, in)
	if err != nil {
		return nil, err
	}
	out := executionOutput(e)
	out.TraceHeader = in.TraceHeader
	if metadataOnly {
		out.withoutData()
	} else if out.OutputDetails == nil {
		// A failed one too, with no output (test_express_sync's
		// BASE_RAISE_FAILURE, recorded).
		out.OutputDetails = &includedDetails{true}
	}
	out.BillingDetails = &billingDetails{BilledMemoryUsedInMB: 64, BilledDurationInMilliseconds: 100}
	return out, nil
}

func (h *Handler) describeExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		IncludedData string `json:"includedData"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("executionArn", in.ExecutionArn); err != nil {
		return nil, err
	}
	metadataOnly, err := includedData(in.IncludedData)
	if err != nil {
		return nil, err
	}
	e, err := h.svc.DescribeExecution(ctx, in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	mapRun := h.svc.MapRunOf(ctx, in.ExecutionArn)
	if e.Type == "EXPRESS" && mapRun == "" && ctx.Value(expressDetailsKey{}) == nil {
		// As AWS: an Express execution is described only when a Map Run
		// dispatched it.
		return nil, notExpress()
	}
	out := executionOutput(e)
	refs, err := h.refsOf(ctx, e)
	if err != nil {
		return nil, err
	}
	if r := refs[e.ARN]; r != nil {
		out.StateMachineVersionArn, out.StateMachineAliasArn, out.TraceHeader = r.VersionARN, r.AliasARN, r.TraceHeader
	}
	if metadataOnly {
		out.withoutData()
	}
	out.MapRunArn = mapRun
	redrive(out, h.svc.Redrive(ctx, e))
	return out, nil
}

func (h *Handler) listExecutions(ctx context.Context, body []byte) (any, error) {
	var in struct {
		listInput
		StateMachineArn string `json:"stateMachineArn"`
		StatusFilter    string `json:"statusFilter"`
		MapRunArn       string `json:"mapRunArn"`
		RedriveFilter   string `json:"redriveFilter"`
	}
	var refs map[string]*service.ExecutionRef
	var redrives map[string]service.Redrive
	return listPage(body, &in, &in.listInput, "executions", func(p service.Page) ([]*service.Execution, string, error) {
		var list []*service.Execution
		var next string
		var err error
		if in.MapRunArn != "" {
			list, next, err = h.svc.ListMapRunExecutions(ctx, in.MapRunArn, in.StatusFilter, p)
		} else {
			list, next, err = h.svc.ListExecutions(ctx, in.StateMachineArn, in.StatusFilter, p)
		}
		if err == nil {
			refs, err = h.refsOf(ctx, list...)
		}
		if err == nil {
			redrives, err = h.svc.Redrives(ctx, list)
		}
		if err != nil {
			return nil, "", err
		}
		return redriveFilter(list, redrives, in.RedriveFilter), next, nil
	}, func(e *service.Execution) executionItem {
		item := executionItem{ExecutionArn: e.ARN, StateMachineArn: e.StateMachineARN, Name: e.Name, Status: e.Status,
			StartDate: epoch(e.Started), StopDate: epoch(e.Stopped), MapRunArn: in.MapRunArn}
		if e.Type != "EXPRESS" && in.MapRunArn == "" {
			r := redrives[e.ARN]
			item.RedriveCount, item.RedriveDate = &r.Count, epoch(r.Date)
		}
		if r := refs[e.ARN]; r != nil {
			item.StateMachineVersionArn, item.StateMachineAliasArn = r.VersionARN, r.AliasARN
		}
		return item
	}, func() error {
		switch in.RedriveFilter {
		case "", "REDRIVEN", "NOT_REDRIVEN":
		default:
			return validation("1 validation error detected: Value '%s' at 'redriveFilter' failed to satisfy constraint: Member must satisfy enum value set: [REDRIVEN, NOT_REDRIVEN]", in.RedriveFilter)
		}
		if in.MapRunArn != "" && in.StateMachineArn != "" {
			return validation("stateMachineArn and mapRunArn cannot both be given")
		}
		if in.MapRunArn != "" {
			return nil
		}
		return required("stateMachineArn", in.StateMachineArn)
	})
}

// executionItem is an execution in ListExecutions' answer.
type executionItem struct {
	ExecutionArn    string   `json:"executionArn"`
	StateMachineArn string   `json:"stateMachineArn"`
	Name            string   `json:"name"`
	Status          string   `json:"status"`
	StartDate       *float64 `json:"startDate"`
	StopDate        *float64 `json:"stopDate,omitempty"`
	// Versions and aliases (version.go).
	StateMachineVersionArn string   `json:"stateMachineVersionArn,omitempty"`
	StateMachineAliasArn   string   `json:"stateMachineAliasArn,omitempty"`
	MapRunArn              string   `json:"mapRunArn,omitempty"`
	RedriveCount           *int     `json:"redriveCount,omitempty"`
	RedriveDate            *float64 `json:"redriveDate,omitempty"`
}

func (h *Handler) stopExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ExecutionArn string `json:"executionArn"`
		Error        string `json:"error"`
		Cause        string `json:"cause"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("executionArn", in.ExecutionArn); err != nil {
		return nil, err
	}
	if err := h.expressRefused(ctx, in.ExecutionArn); err != nil {
		return nil, err
	}
	e, err := h.svc.StopExecution(ctx, in.ExecutionArn, in.Error, in.Cause)
	if err != nil {
		return nil, err
	}
	return map[string]any{"stopDate": epoch(e.Stopped)}, nil
}

func (h *Handler) getExecutionHistory(ctx context.Context, body []byte) (any, error) {
	var in struct {
		listInput
		ExecutionArn         string `json:"executionArn"`
		ReverseOrder         bool   `json:"reverseOrder"`
		IncludeExecutionData *bool  `json:"includeExecutionData"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("executionArn", in.ExecutionArn); err != nil {
		return nil, err
	}
	if _, err := pageOf("", in.MaxResults); err != nil {
		return nil, err
	}
	if err := checkToken(in.NextToken, 1024); err != nil {
		return nil, err
	}
	if err := h.expressRefused(ctx, in.ExecutionArn); err != nil {
		return nil, err
	}
	evs, next, err := h.svc.History(ctx, in.ExecutionArn, in.NextToken, in.MaxResults, in.ReverseOrder)
	if err != nil {
		return nil, err
	}
	out := &history{events: make([][]byte, 0, len(evs)), next: next}
	if in.IncludeExecutionData == nil || *in.IncludeExecutionData {
		// As the engine recorded them (compact JSON).
		for _, ev := range evs {
			out.events = append(out.events, ev.JSON)
		}
		return out, nil
	}
	for _, v := range historyEvents(evs, false) {
		out.events = append(out.events, []byte(value.String(v)))
	}
	return out, nil
}

func (h *Handler) validateDefinition(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Definition string `json:"definition"`
		Type       string `json:"type"`
		Severity   string `json:"severity"`
		MaxResults int    `json:"maxResults"`
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
	switch in.Type {
	case "", validate.Standard, validate.Express:
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", in.Type)
	}
	switch in.Severity {
	case "", "ERROR", "WARNING":
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'severity' failed to satisfy constraint: Member must satisfy enum value set: [ERROR, WARNING]", in.Severity)
	}
	if in.MaxResults < 0 || in.MaxResults > 100 {
		return nil, validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 100 and greater than or equal to 0", in.MaxResults)
	}
	r := validate.Definition([]byte(in.Definition), in.Type)
	if in.Severity != "WARNING" { // AWS's default is ERROR: warnings only when asked for
		r.Diagnostics = r.Diagnostics.Errors()
	}
	out := validate.Response(r)
	if list, ok := out.Get("diagnostics"); ok && in.MaxResults > 0 {
		if l := list.([]any); len(l) > in.MaxResults {
			out.Set("diagnostics", l[:in.MaxResults])
			out.Set("truncated", true)
		}
	}
	return json.RawMessage(value.String(out)), nil
}

func (h *Handler) tagResource(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ResourceArn string `json:"resourceArn"`
		Tags        []tag  `json:"tags"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("resourceArn", in.ResourceArn); err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.Tag(ctx, in.ResourceArn, tagMap(in.Tags))
}

func (h *Handler) untagResource(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ResourceArn string   `json:"resourceArn"`
		TagKeys     []string `json:"tagKeys"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("resourceArn", in.ResourceArn); err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.Untag(ctx, in.ResourceArn, in.TagKeys)
}

func (h *Handler) listTags(ctx context.Context, body []byte) (any, error) {
	arn, err := arnOnly(body, "resourceArn")
	if err != nil {
		return nil, err
	}
	tags, err := h.svc.Tags(ctx, arn)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]tag, 0, len(keys))
	for _, k := range keys {
		list = append(list, tag{Key: k, Value: tags[k]})
	}
	return map[string]any{"tags": list}, nil
}

// historyEvents converts stored events into JSON values, optionally
// without execution data (input, output and parameters).
func historyEvents(evs []service.Event, includeData bool) []any {
	out := make([]any, 0, len(evs))
	for _, ev := range evs {
		v, err := value.Parse(ev.JSON)
		if err != nil {
			continue
		}
		if !includeData {
			v = stripData(v.(*value.Object))
		}
		out = append(out, v)
	}
	return out
}

func stripData(ev *value.Object) *value.Object {
	out := value.NewObject(ev.Len())
	for k, v := range ev.All {
		if d, ok := v.(*value.Object); ok && strings.HasSuffix(k, "EventDetails") {
			nd := value.NewObject(d.Len())
			for dk, dv := range d.All {
				switch dk {
				case "input", "output", "parameters":
					continue
				}
				nd.Set(dk, dv)
			}
			v = nd
		}
		out.Set(k, v)
	}
	return out
}

// loggingAnswer is a loggingConfiguration as AWS answers it: destinations
// present when the state machine was given them, even as an empty list.
type loggingAnswer struct {
	Level                string                    `json:"level"`
	IncludeExecutionData bool                      `json:"includeExecutionData"`
	Destinations         *[]service.LogDestination `json:"destinations,omitempty"`
}

func loggingOut(c service.LoggingConfiguration) loggingAnswer {
	out := loggingAnswer{Level: c.Level, IncludeExecutionData: c.IncludeExecutionData}
	if c.Destinations != nil {
		out.Destinations = &c.Destinations
	}
	return out
}

// notExpress is AWS's answer to an Express execution's ARN where it takes
// a Standard one's (recorded: DescribeExecution, StopExecution and
// GetExecutionHistory).
func notExpress() error {
	return fault.New(fault.ErrInvalidARN, "Invalid Arn: 'Resource type not valid in this context: express'")
}

// expressRefused refuses, as AWS does, an Express execution's ARN that no
// Map Run dispatched, unless the request carries the
// X-Stepd-Express-Details header (stepd's console).
func (h *Handler) expressRefused(ctx context.Context, execARN string) error {
	typ, _, ok := arn.StatesNames(execARN)
	if !ok || typ != arn.Express || ctx.Value(expressDetailsKey{}) != nil || h.svc.MapRunOf(ctx, execARN) != "" {
		return nil
	}
	return notExpress()
}
