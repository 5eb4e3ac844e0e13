package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// TestDescribeExpressExecution: DescribeExecution of an Express execution
// is InvalidArn, as on AWS, for the AWS SDK; with stepd's
// X-Stepd-Express-Details header (the console's) it is described.
func TestDescribeExpressExecution(t *testing.T) {
	t.Parallel()
	client, _ := newClient(t, nil, nil)
	ctx := context.Background()
	sm, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("x"), Type: types.StateMachineTypeExpress,
		RoleArn:    aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	start, err := client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(*start.ExecutionArn, ":express:") {
		t.Fatalf("an Express execution's ARN: %s", *start.ExecutionArn)
	}
	_, err = client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: start.ExecutionArn})
	if apiCode(err) != "InvalidArn" || !strings.Contains(err.Error(), "Resource type not valid in this context: express") {
		t.Fatalf("DescribeExecution of an Express execution: %v, want InvalidArn", err)
	}
	_, err = client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: start.ExecutionArn}, func(o *sfn.Options) {
		o.HTTPClient = headerClient{"X-Stepd-Express-Details", "1"}
	})
	if err != nil {
		t.Fatalf("DescribeExecution of an Express execution with X-Stepd-Express-Details: %v", err)
	}
}

// headerClient sends every request with one more header.
type headerClient struct{ name, value string }

func (c headerClient) Do(r *http.Request) (*http.Response, error) {
	r.Header.Set(c.name, c.value)
	return http.DefaultClient.Do(r)
}
