package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/stepd/stepd/service"
)

// encryptionConfiguration is a request's or an answer's
// encryptionConfiguration.
type encryptionConfiguration = service.Encryption

// refused lists, by operation, the request members the model defines that
// stepd does not implement: a request that sets one is refused with a
// ValidationException naming it, never run as if it were absent. Members
// the model does not define are ignored, as AWS's JSON services do.
var refused = map[string]map[string]string{}

// checkRefused refuses a request that sets a member of op that stepd does
// not implement.
func checkRefused(op string, body []byte) error {
	members := refused[op]
	if len(members) == 0 {
		return nil
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		return nil // decode answers it
	}
	for name, what := range members {
		if v, ok := in[name]; ok && string(v) != "null" {
			return validation("%s: the member '%s' (%s) is not supported by stepd", op, name, what)
		}
	}
	return nil
}

// includedData checks an includedData member: ALL_DATA (the default) or
// METADATA_ONLY, which leaves out definitions, inputs and outputs.
func includedData(v string) (metadataOnly bool, err error) {
	switch v {
	case "", "ALL_DATA":
		return false, nil
	case "METADATA_ONLY":
		return true, nil
	}
	return false, validation("1 validation error detected: Value '%s' at 'includedData' failed to satisfy constraint: Member must satisfy enum value set: [ALL_DATA, METADATA_ONLY]", v)
}

func (h *Handler) publishStateMachineVersion(ctx context.Context, body []byte) (any, error) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		RevisionID      string `json:"revisionId"`
		Description     string `json:"description"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("stateMachineArn", in.StateMachineArn); err != nil {
		return nil, err
	}
	v, err := h.svc.PublishVersion(ctx, in.StateMachineArn, in.RevisionID, in.Description)
	if err != nil {
		return nil, err
	}
	return map[string]any{"stateMachineVersionArn": v.ARN, "creationDate": epoch(v.Created)}, nil
}

func (h *Handler) listStateMachineVersions(ctx context.Context, body []byte) (any, error) {
	var in struct {
		listInput
		StateMachineArn string `json:"stateMachineArn"`
	}
	return listPage(body, &in, &in.listInput, "stateMachineVersions", func(p service.Page) ([]*service.Version, string, error) {
		return h.svc.ListVersions(ctx, in.StateMachineArn, p)
	}, func(v *service.Version) map[string]any {
		return map[string]any{"stateMachineVersionArn": v.ARN, "creationDate": epoch(v.Created)}
	}, func() error { return required("stateMachineArn", in.StateMachineArn) })
}

func (h *Handler) deleteStateMachineVersion(ctx context.Context, body []byte) (any, error) {
	arn, err := arnOnly(body, "stateMachineVersionArn")
	if err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.DeleteVersion(ctx, arn)
}

// routingEntry is one entry of a routingConfiguration.
type routingEntry struct {
	StateMachineVersionArn string `json:"stateMachineVersionArn"`
	Weight                 *int   `json:"weight"`
}

func routesIn(list []routingEntry) []service.RouteInput {
	if list == nil {
		return nil
	}
	out := make([]service.RouteInput, len(list))
	for i, r := range list {
		out[i] = service.RouteInput{VersionARN: r.StateMachineVersionArn, Weight: r.Weight}
	}
	return out
}

func routesOut(list []service.Route) []routingEntry {
	out := make([]routingEntry, len(list))
	for i, r := range list {
		w := r.Weight
		out[i] = routingEntry{StateMachineVersionArn: r.VersionARN, Weight: &w}
	}
	return out
}

func (h *Handler) createStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name                 string         `json:"name"`
		Description          string         `json:"description"`
		RoutingConfiguration []routingEntry `json:"routingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	if in.RoutingConfiguration == nil {
		return nil, required("routingConfiguration", "")
	}
	a, err := h.svc.CreateAlias(ctx, in.Name, in.Description, routesIn(in.RoutingConfiguration))
	if err != nil {
		return nil, err
	}
	return map[string]any{"stateMachineAliasArn": a.ARN, "creationDate": epoch(a.Created)}, nil
}

func (h *Handler) describeStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	arn, err := arnOnly(body, "stateMachineAliasArn")
	if err != nil {
		return nil, err
	}
	a, err := h.svc.GetAlias(ctx, arn)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineAliasArn": a.ARN, "name": a.Name, "routingConfiguration": routesOut(a.Routes),
		"creationDate": epoch(a.Created), "updateDate": epoch(a.Updated)}
	if a.Description != "" {
		out["description"] = a.Description
	}
	return out, nil
}

func (h *Handler) updateStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	var in struct {
		StateMachineAliasArn string         `json:"stateMachineAliasArn"`
		Description          *string        `json:"description"`
		RoutingConfiguration []routingEntry `json:"routingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("stateMachineAliasArn", in.StateMachineAliasArn); err != nil {
		return nil, err
	}
	a, err := h.svc.UpdateAlias(ctx, in.StateMachineAliasArn, in.Description, routesIn(in.RoutingConfiguration))
	if err != nil {
		return nil, err
	}
	return map[string]any{"updateDate": epoch(a.Updated)}, nil
}

func (h *Handler) deleteStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	arn, err := arnOnly(body, "stateMachineAliasArn")
	if err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.DeleteAlias(ctx, arn)
}

func (h *Handler) listStateMachineAliases(ctx context.Context, body []byte) (any, error) {
	var in struct {
		listInput
		StateMachineArn string `json:"stateMachineArn"`
	}
	return listPage(body, &in, &in.listInput, "stateMachineAliases", func(p service.Page) ([]*service.Alias, string, error) {
		return h.svc.ListAliases(ctx, in.StateMachineArn, p)
	}, func(a *service.Alias) map[string]any {
		return map[string]any{"stateMachineAliasArn": a.ARN, "creationDate": epoch(a.Created)}
	}, func() error { return required("stateMachineArn", in.StateMachineArn) })
}

// refsOf reads what executions were started from (version, alias, trace
// header), for their answers.
func (h *Handler) refsOf(ctx context.Context, list ...*service.Execution) (map[string]*service.ExecutionRef, error) {
	refs, err := h.svc.ExecutionRefs(ctx, list...)
	if err != nil {
		return nil, fmt.Errorf("reading what executions were started from: %w", err)
	}
	return refs, nil
}
