package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunTemplateNested: stepd run of one state machine of a template
// serves the template's others to states:startExecution as stepd serve
// does: .sync:2 (JSON values), .sync (JSON text), request-response (the
// start's answer), a child that fails, and a state machine that starts
// itself, which ends at stepd run's nesting bound.
func TestRunTemplateNested(t *testing.T) {
	t.Parallel()
	tpl := writeFile(t, "nested.yaml", `AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Resources:
  Child:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Check
        States:
          Check:
            Type: Choice
            Choices: [{Variable: $.fail, BooleanEquals: true, Next: Fail}]
            Default: Done
          Fail: {Type: Fail, Error: Child.Failed, Cause: as asked}
          Done: {Type: Pass, Parameters: {"doubled.$": "States.MathAdd($.n, $.n)", "id.$": "$$.Execution.Id"}, End: true}
  Parent:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Sync2
        States:
          Sync2:
            Type: Task
            Resource: arn:aws:states:::states:startExecution.sync:2
            Parameters: {StateMachineArn: !Ref Child, Input: {"n.$": "$.n", "fail.$": "$.fail"}, Name: first}
            ResultSelector: {"out.$": "$.Output", "status.$": "$.Status", "arn.$": "$.ExecutionArn"}
            ResultPath: $.sync2
            Next: Sync
          Sync:
            Type: Task
            Resource: arn:aws:states:::states:startExecution.sync
            Parameters: {StateMachineArn: !GetAtt Child.Arn, Input: {"n": 5, "fail": false}}
            ResultSelector: {"out.$": "$.Output"}
            ResultPath: $.sync
            Next: Fire
          Fire:
            Type: Task
            Resource: arn:aws:states:::states:startExecution
            Parameters: {StateMachineArn: !Ref Child, Input: {"n": 1, "fail": false}, Name: fired}
            ResultSelector: {"arn.$": "$.ExecutionArn", "hasDate.$": "States.ArrayContains(States.Array('StartDate'), 'StartDate')"}
            ResultPath: $.fire
            End: true
  Loop:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Again
        States:
          Again:
            Type: Task
            Resource: arn:aws:states:::states:startExecution.sync:2
            Parameters: {StateMachineArn: !Ref Loop}
            End: true
`)
	const sm = "arn:aws:states:us-east-1:123456789012:"
	code, stdout, stderr := runMain(t, "", "run", tpl, "--state-machine", "Parent", "--input", `{"n":21,"fail":false}`)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var out struct {
		Sync2 struct {
			Out    map[string]any
			Status string
			Arn    string
		}
		Sync struct{ Out string }
		Fire struct {
			Arn     string
			HasDate bool
		}
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Sync2.Status != "SUCCEEDED" || out.Sync2.Arn != sm+"execution:Child:first" || out.Sync2.Out["doubled"] != 42.0 || out.Sync2.Out["id"] != sm+"execution:Child:first" {
		t.Errorf(".sync:2: %+v", out.Sync2)
	}
	if !strings.HasPrefix(out.Sync.Out, `{"doubled":10,"id":"`+sm+`execution:Child:`) {
		t.Errorf(".sync gives the output as JSON text: %q", out.Sync.Out)
	}
	if out.Fire.Arn != sm+"execution:Child:fired" || !out.Fire.HasDate {
		t.Errorf("request-response: %+v", out.Fire)
	}

	// A child that fails fails its .sync task with its DescribeExecution.
	code, _, stderr = runMain(t, "", "run", tpl, "--state-machine", "Parent", "--input", `{"n":1,"fail":true}`)
	if code != exitFail || !strings.Contains(stderr, "error: States.TaskFailed") || !strings.Contains(stderr, `"Cause":"as asked","Error":"Child.Failed"`) || !strings.Contains(stderr, `"Status":"FAILED"`) {
		t.Errorf("a failing child: exit %d\n%s", code, stderr)
	}
	// A state machine that starts itself ends.
	code, _, stderr = runMain(t, "", "run", tpl, "--state-machine", "Loop")
	if code != exitFail || !strings.Contains(stderr, "stepd run nests at most 10 executions") {
		t.Errorf("a loop: exit %d\n%s", code, stderr)
	}
	// A state machine of no template is still the handlers' to serve.
	def := writeFile(t, "alone.json", `{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","Parameters":{"StateMachineArn":"`+sm+`stateMachine:Child"},"End":true}}}`)
	if code, _, stderr := runMain(t, "", "run", def); code != exitFail || !strings.Contains(stderr, "no handler for resource arn:aws:states:::states:startExecution.sync:2") {
		t.Errorf("a definition file: exit %d\n%s", code, stderr)
	}
}
