package api

import (
	"context"
	"time"

	"github.com/stepd/stepd/service"
)

// activityWait is how long GetActivityTask waits for a task, as on AWS.
var activityWait = 60 * time.Second

func (h *Handler) createActivity(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name                    string                   `json:"name"`
		Tags                    []tag                    `json:"tags"`
		EncryptionConfiguration *encryptionConfiguration `json:"encryptionConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("name", in.Name); err != nil {
		return nil, err
	}
	a, err := h.svc.CreateActivity(ctx, service.ActivityInput{Name: in.Name, Tags: tagMap(in.Tags), Encryption: in.EncryptionConfiguration})
	if err != nil {
		return nil, err
	}
	return map[string]any{"activityArn": a.ARN, "creationDate": epoch(a.Created)}, nil
}

func (h *Handler) describeActivity(ctx context.Context, body []byte) (any, error) {
	arn, err := arnOnly(body, "activityArn")
	if err != nil {
		return nil, err
	}
	a, settings, err := h.svc.DescribeActivity(ctx, arn)
	if err != nil {
		return nil, err
	}
	return map[string]any{"activityArn": a.ARN, "name": a.Name, "creationDate": epoch(a.Created), "encryptionConfiguration": settings.EncryptionOf()}, nil
}

func (h *Handler) deleteActivity(ctx context.Context, body []byte) (any, error) {
	arn, err := arnOnly(body, "activityArn")
	if err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.DeleteActivity(ctx, arn)
}

func (h *Handler) listActivities(ctx context.Context, body []byte) (any, error) {
	var in listInput
	return listPage(body, &in, &in, "activities", func(p service.Page) ([]*service.Activity, string, error) {
		return h.svc.ListActivities(ctx, p)
	}, func(a *service.Activity) map[string]any {
		return map[string]any{"activityArn": a.ARN, "name": a.Name, "creationDate": epoch(a.Created)}
	})
}

func (h *Handler) getActivityTask(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ActivityArn string `json:"activityArn"`
		WorkerName  string `json:"workerName"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("activityArn", in.ActivityArn); err != nil {
		return nil, err
	}
	token, input, err := h.svc.GetActivityTask(ctx, in.ActivityArn, in.WorkerName, activityWait)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return struct{}{}, nil
	}
	return map[string]any{"taskToken": token, "input": input}, nil
}

func tokenOnly(body []byte, v any) error {
	return decode(body, v)
}

func (h *Handler) sendTaskSuccess(ctx context.Context, body []byte) (any, error) {
	var in struct {
		TaskToken string `json:"taskToken"`
		Output    string `json:"output"`
	}
	if err := tokenOnly(body, &in); err != nil {
		return nil, err
	}
	if err := required("taskToken", in.TaskToken); err != nil {
		return nil, err
	}
	if err := required("output", in.Output); err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.SendTaskSuccess(ctx, in.TaskToken, in.Output)
}

func (h *Handler) sendTaskFailure(ctx context.Context, body []byte) (any, error) {
	var in struct {
		TaskToken string `json:"taskToken"`
		Error     string `json:"error"`
		Cause     string `json:"cause"`
	}
	if err := tokenOnly(body, &in); err != nil {
		return nil, err
	}
	if err := required("taskToken", in.TaskToken); err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.SendTaskFailure(ctx, in.TaskToken, in.Error, in.Cause)
}

func (h *Handler) sendTaskHeartbeat(ctx context.Context, body []byte) (any, error) {
	var in struct {
		TaskToken string `json:"taskToken"`
	}
	if err := tokenOnly(body, &in); err != nil {
		return nil, err
	}
	if err := required("taskToken", in.TaskToken); err != nil {
		return nil, err
	}
	return struct{}{}, h.svc.SendTaskHeartbeat(ctx, in.TaskToken)
}
