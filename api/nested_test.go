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

func TestNestedExecutions(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	child, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("child"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"And":[{"Variable":"$.fail","IsPresent":true},{"Variable":"$.fail","BooleanEquals":true}],"Next":"F"}],"Default":"P"},
			"P":{"Type":"Pass","Parameters":{"doubled.$":"States.MathAdd($.n, $.n)","input.$":"$"},"End":true},
			"F":{"Type":"Fail","Error":"ChildError","Cause":"asked to fail"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(child.StateMachineArn)
	parentDef := `{"StartAt":"Sync2","States":{
		"Sync2":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"` + arn + `","Input":{"n.$":"$.n","AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$":"$$.Execution.Id"}},"ResultSelector":{"out.$":"$.Output"},"ResultPath":"$.sync2","Next":"Sync"},
		"Sync":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync","Parameters":{"StateMachineArn":"` + arn + `","Input":{"n":5}},"ResultSelector":{"out.$":"$.Output"},"ResultPath":"$.sync","Next":"Fire"},
		"Fire":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution","Parameters":{"StateMachineArn":"` + arn + `","Input":{"n":1}},"ResultSelector":{"arn.$":"$.ExecutionArn"},"ResultPath":"$.fire","Next":"Failing"},
		"Failing":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"` + arn + `","Input":{"fail":true}},
			"Catch":[{"ErrorEquals":["States.TaskFailed"],"ResultPath":"$.failed","Next":"Done"}],"End":true},
		"Done":{"Type":"Pass","End":true}}}`
	parent, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("parent"), RoleArn: aws.String(role), Definition: aws.String(parentDef)})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: parent.StateMachineArn, Input: aws.String(`{"n":21}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := waitDone(t, c, aws.ToString(ex.ExecutionArn))
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("parent: %+v %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	out := aws.ToString(d.Output)
	for _, want := range []string{
		// The child is associated with its parent when the definition
		// passes the parent's id, and its input is left as given otherwise.
		`"sync2":{"out":{"doubled":42,"input":{"n":21,"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID":"` + aws.ToString(ex.ExecutionArn) + `"}}}`,
		`"sync":{"out":"{\"doubled\":10,\"input\":{\"n\":5}}"}`,
		`"fire":{"arn":"arn:aws:states:us-east-1:123456789012:execution:child:`,
		// The child's description, its members by name as AWS records it.
		`"failed":{"Error":"States.TaskFailed","Cause":"{\"Cause\":\"asked to fail\",\"Error\":\"ChildError\",\"ExecutionArn\"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output %s\nlacks %s", out, want)
		}
	}
	list, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: child.StateMachineArn})
	if err != nil || len(list.Executions) != 4 {
		t.Fatalf("children: %v %v", len(list.Executions), err)
	}
}

func TestStopParentStopsSyncChild(t *testing.T) {
	t.Parallel()
	c, _ := newClient(t, memory.New(), nil)
	ctx := context.Background()
	child, _ := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("slowchild"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)})
	parent, _ := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("waitingparent"), RoleArn: aws.String(role),
		Definition: aws.String(`{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync","Parameters":{"StateMachineArn":"` + aws.ToString(child.StateMachineArn) + `"},"End":true}}}`)})
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: parent.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	var childArn string
	for i := 0; i < 200 && childArn == ""; i++ {
		l, _ := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: child.StateMachineArn})
		if len(l.Executions) == 1 {
			childArn = aws.ToString(l.Executions[0].ExecutionArn)
		}
	}
	if childArn == "" {
		t.Fatal("the child did not start")
	}
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: ex.ExecutionArn}); err != nil {
		t.Fatal(err)
	}
	if d := waitDone(t, c, childArn); d.Status != types.ExecutionStatusAborted {
		t.Fatalf("child after parent stop: %s", d.Status)
	}
}
