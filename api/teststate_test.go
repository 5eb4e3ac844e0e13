package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/store/memory"
)

func TestTestState(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	out, err := c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(`{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload.$":"$.p"},
			"ResultSelector":{"v.$":"$.Payload"},"ResultPath":"$.r","Next":"After",
			"Catch":[{"ErrorEquals":["Boom"],"Next":"Handle"}]}`),
		RoleArn:         aws.String(role),
		Input:           aws.String(`{"p":{"x":1}}`),
		InspectionLevel: types.InspectionLevelDebug,
		Mock:            &types.MockInput{Result: aws.String(`{"Payload":{"ok":true},"StatusCode":200}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.TestExecutionStatusSucceeded || aws.ToString(out.NextState) != "After" || aws.ToString(out.Output) != `{"p":{"x":1},"r":{"v":{"ok":true}}}` {
		t.Fatalf("TestState: %+v", out)
	}
	if d := out.InspectionData; d == nil || aws.ToString(d.AfterParameters) != `{"FunctionName":"f","Payload":{"x":1}}` || aws.ToString(d.AfterResultSelector) != `{"v":{"ok":true}}` {
		t.Fatalf("inspection data: %+v", out.InspectionData)
	}
	caught, err := c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(`{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},"End":true,
			"Catch":[{"ErrorEquals":["Boom"],"Next":"Handle"}]}`),
		RoleArn: aws.String(role),
		Mock:    &types.MockInput{ErrorOutput: &types.MockErrorOutput{Error: aws.String("Boom"), Cause: aws.String("bad")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if caught.Status != types.TestExecutionStatusCaughtError || aws.ToString(caught.NextState) != "Handle" || aws.ToString(caught.Error) != "Boom" {
		t.Fatalf("caught: %+v", caught)
	}
}

// TestTestStateConfiguration sends context and stateConfiguration through
// the SDK: the reader data feeds a Map with an ItemReader, the failure
// count trips its tolerance, and the Context object is overridden.
func TestTestStateConfiguration(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	mapDef := `{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON"},"Parameters":{"Bucket":"b","Key":"k"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},
		"ToleratedFailureCount":1,"End":true}`
	ok, err := c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(mapDef), RoleArn: aws.String(role), InspectionLevel: types.InspectionLevelDebug,
		Mock:               &types.MockInput{Result: aws.String(`["A","B","C"]`)},
		StateConfiguration: &types.TestStateConfiguration{MapItemReaderData: aws.String(`[1,2,3]`), MapIterationFailureCount: aws.Int32(1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok.Status != types.TestExecutionStatusSucceeded || aws.ToString(ok.Output) != `["A","B","C"]` {
		t.Fatalf("within tolerance: %+v", ok)
	}
	over, err := c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(mapDef), RoleArn: aws.String(role),
		Mock:               &types.MockInput{Result: aws.String(`["A","B","C"]`)},
		StateConfiguration: &types.TestStateConfiguration{MapItemReaderData: aws.String(`[1,2,3]`), MapIterationFailureCount: aws.Int32(2)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if over.Status != types.TestExecutionStatusFailed || aws.ToString(over.Error) != "States.ExceedToleratedFailureThreshold" {
		t.Fatalf("over tolerance: %+v", over)
	}
	withCtx, err := c.TestState(ctx, &sfn.TestStateInput{
		Definition: aws.String(`{"Type":"Pass","Parameters":{"name.$":"$$.Execution.Name"},"End":true}`), RoleArn: aws.String(role),
		Context: aws.String(`{"Execution":{"Name":"given-name"}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(withCtx.Output) != `{"name":"given-name"}` {
		t.Fatalf("context: %+v", withCtx)
	}
}

// TestTestStateMockValidation sends mock.fieldValidationMode through the
// SDK: STRICT (the default) rejects a mocked result that breaks the API
// model, NONE lets it through.
func TestTestStateMockValidation(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	def := aws.String(`{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:s3:getObject","Parameters":{"Bucket":"b","Key":"k"},"End":true}`)
	_, err := c.TestState(ctx, &sfn.TestStateInput{Definition: def, RoleArn: aws.String(role),
		Mock: &types.MockInput{Result: aws.String(`{"StorageClass":"Papyrus"}`)}})
	if apiCode(err) != "ValidationException" || !strings.Contains(err.Error(), "Mock result schema validation error: Field 'StorageClass' is not an expected value") {
		t.Fatalf("STRICT: %v", err)
	}
	out, err := c.TestState(ctx, &sfn.TestStateInput{Definition: def, RoleArn: aws.String(role),
		Mock: &types.MockInput{Result: aws.String(`{"StorageClass":"Papyrus"}`), FieldValidationMode: types.MockResponseValidationModeNone}})
	if err != nil || out.Status != types.TestExecutionStatusSucceeded {
		t.Fatalf("NONE: %+v, %v", out, err)
	}
}
