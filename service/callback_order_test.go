package service_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stepd/stepd/fault"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
)

// SendTaskSuccess with a token that is not one and an output that is not
// JSON reports the token, as AWS does (recorded in
// services.aws_sdk_task_service.sfn_send_task_outcome_with_no_such_token).
func TestSendTaskSuccessChecksTheTokenFirst(t *testing.T) {
	svc := service.New(service.Config{Store: memory.New()})
	defer svc.Close()
	err := svc.SendTaskSuccess(context.Background(), "NoSuchTaskToken", "ParameterOutput")
	if !errors.Is(err, fault.ErrBadToken) || err.Error() != "Invalid Token: 'Invalid token'" {
		t.Fatalf("got %v, want InvalidToken: Invalid Token: 'Invalid token'", err)
	}
}
