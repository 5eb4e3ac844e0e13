package awsmodel

import (
	"errors"
	"testing"

	"github.com/stepd/stepd/task/awsmodel/internal/wire"
	"github.com/stepd/stepd/value"
)

func TestResultShape(t *testing.T) {
	tests := []struct {
		resource string
		want     bool
	}{
		{"arn:aws:states:::aws-sdk:kms:encrypt", true},
		{"arn:aws:states:::aws-sdk:lambda:getFunction", true},
		{"arn:aws:states:::aws-sdk:s3:listObjectsV2", true},
		{"arn:aws:states:::aws-sdk:sfn:startExecution", true},
		{"arn:aws:states:::aws-sdk:eventbridge:putEvents", true},
		{"arn:aws:states:::aws-sdk:cloudwatchlogs:putLogEvents", true},
		{"arn:aws:states:::aws-sdk:emrcontainers:startJobRun", true},
		{"arn:aws:states:::aws-sdk:redshiftdata:executeStatement", true},
		{"arn:aws-us-gov:states:::aws-sdk:sqs:sendMessage", true},
		{"arn:aws:states:::dynamodb:putItem", true},
		{"arn:aws:states:::lambda:invoke", true},
		{"arn:aws:states:::events:putEvents", true},
		{"arn:aws:states:::states:startExecution", true},
		{"arn:aws:states:::sns:publish", true},
		{"arn:aws:states:::sqs:sendMessage.waitForTaskToken", false},
		{"arn:aws:states:::states:startExecution.sync:2", false},
		{"arn:aws:states:::glue:startJobRun.sync", false},
		{"arn:aws:states:::aws-sdk:kms:noSuchAction", false},
		{"arn:aws:states:::aws-sdk:nosuchservice:doIt", false},
		{"arn:aws:states:::apigateway:invoke", false},
		{"arn:aws:states:::http:invoke", false},
		{"arn:aws:lambda:us-east-1:111111111111:function:fn", false},
		{"arn:aws:states:us-east-1:111111111111:activity:act", false},
		{"", false},
		{"arn:aws:states:::aws-sdk:kms", false},
	}
	for _, tt := range tests {
		_, ok, err := ResultShape(tt.resource)
		if err != nil {
			t.Fatalf("%s: %v", tt.resource, err)
		}
		if ok != tt.want {
			t.Errorf("ResultShape(%q) found %v, want %v", tt.resource, ok, tt.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for s, want := range map[string]Mode{"": Strict, "STRICT": Strict, "PRESENT": Present, "NONE": None} {
		if got, err := ParseMode(s); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"strict", "LAX", " NONE"} {
		if _, err := ParseMode(s); !errors.Is(err, ErrMode) {
			t.Errorf("ParseMode(%q) error %v, want ErrMode", s, err)
		}
	}
}

// TestCheckModels checks results against the embedded models of the
// services AWS's recorded TestState cases use.
func TestCheckModels(t *testing.T) {
	tests := []struct {
		resource, result string
		mode             Mode
		want             string // the error, or "" for none
	}{
		{"arn:aws:states:::aws-sdk:kms:encrypt", `{"CiphertextBlob": ""}`, Strict, "Field 'CiphertextBlob' is smaller than the minimum length"},
		{"arn:aws:states:::aws-sdk:kms:encrypt", `{"CiphertextBlob": 123}`, Present, "Field 'CiphertextBlob' must be a string"},
		{"arn:aws:states:::aws-sdk:kms:encrypt", `{"CiphertextBlob": "AQID", "KeyId": "k"}`, Strict, ""},
		{"arn:aws:states:::aws-sdk:lambda:getFunction", `{"Configuration": {"MemorySize": 127}}`, Strict, "Field 'MemorySize' is less than the minimum value"},
		{"arn:aws:states:::aws-sdk:lambda:getFunction", `{"Configuration": {"MemorySize": 10241}}`, Present, "Field 'MemorySize' exceeds the maximum value"},
		{"arn:aws:states:::aws-sdk:lambda:getFunction", `{"Configuration": {"MemorySize": 10240}}`, Strict, ""},
		{"arn:aws:states:::aws-sdk:lambda:getFunction", `{"Configuration": "none"}`, Strict, "Field 'Configuration' must be an object"},
		{"arn:aws:states:::aws-sdk:s3:getObject", `{"StorageClass": "Papyrus"}`, Strict, "Field 'StorageClass' is not an expected value"},
		{"arn:aws:states:::aws-sdk:s3:getObject", `{"StorageClass": "GLACIER", "LastModified": "2024-01-01T00:00:00Z"}`, Strict, ""},
		{"arn:aws:states:::aws-sdk:s3:getObject", `{"ContentLength": "9000"}`, Strict, "Field 'ContentLength' must be a number"},
		{"arn:aws:states:::aws-sdk:s3:getObject", `{"DeleteMarker": "yes"}`, Strict, "Field 'DeleteMarker' must be a boolean"},
		{"arn:aws:states:::aws-sdk:s3:getObject", `{"LastModified": true}`, Strict, "Field 'LastModified' must be a string"},
		{"arn:aws:states:::aws-sdk:s3:getObject", `{"Metadata": {"a": 1}}`, Strict, "Field 'Metadata' must be a string"},
		{"arn:aws:states:::dynamodb:putItem", `{"ConsumedCapacity": {"CapacityUnits": "123.45"}}`, Strict, "Field 'CapacityUnits' must be a number"},
		{"arn:aws:states:::dynamodb:putItem", `{"SdkHttpMetadata": {"HttpStatusCode": 200}}`, Strict, ""},
		{"arn:aws:states:::events:putEvents", `{"Entries": "not a list"}`, Strict, "Field 'Entries' must be an array"},
		{"arn:aws:states:::events:putEvents", `{"Entries": [{"EventId": 1}]}`, Strict, "Field 'EventId' must be a string"},
		{"arn:aws:states:::events:putEvents", `{"Entries": [{"EventId": "e"}], "FailedEntryCount": 0}`, Strict, ""},
		{"arn:aws:states:::events:putEvents", `{"random": "json"}`, Strict, ""},
		{"arn:aws:states:::events:putEvents", `{"Entries": null}`, Strict, ""},
		{"arn:aws:states:::lambda:invoke", `{"StatusCode": "200"}`, Present, "Field 'StatusCode' must be a number"},
		// The optimized integration returns Lambda's Payload as JSON.
		{"arn:aws:states:::lambda:invoke", `{"StatusCode": 200, "Payload": {"a": [1]}}`, Strict, ""},
		{"arn:aws:states:::aws-sdk:lambda:invoke", `{"Payload": {"a": [1]}}`, Strict, "Field 'Payload' must be a string"},
		{"arn:aws:states:::lambda:invoke", `[1, 2]`, Strict, "Result must be an object"},
		{"arn:aws:states:::states:startExecution", `{"ExecutionArn": "arn"}`, Strict, "Field 'StartDate' is required"},
		{"arn:aws:states:::states:startExecution", `{"ExecutionArn": "arn"}`, Present, ""},
		{"arn:aws:states:::states:startExecution", `{"ExecutionArn": "arn", "StartDate": "2024-01-01T00:00:00Z"}`, Strict, ""},
		{"arn:aws:states:::aws-sdk:sfn:startExecution", `{"ExecutionArn": 1, "StartDate": 1.7e9}`, Strict, "Field 'ExecutionArn' must be a string"},
		{"arn:aws:states:::aws-sdk:s3:getObject", `{"ContentLength": "9000"}`, None, ""},
		{"arn:aws:states:::states:startExecution", `{}`, None, ""},
	}
	for _, tt := range tests {
		shape, ok, err := ResultShape(tt.resource)
		if err != nil || !ok {
			t.Fatalf("%s: no model (%v)", tt.resource, err)
		}
		v, err := value.ParseString(tt.result)
		if err != nil {
			t.Fatal(err)
		}
		err = shape.Check(v, tt.mode)
		got := ""
		if err != nil {
			got = err.Error()
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Errorf("%s %s: error %T, want *FieldError", tt.resource, tt.result, err)
			}
		}
		if got != tt.want {
			t.Errorf("%s %s (mode %d): got %q, want %q", tt.resource, tt.result, tt.mode, got, tt.want)
		}
	}
}

func ptr(f float64) *float64 { return &f }

// TestCheckKinds checks each kind of problem and each mode against a
// made-up model.
func TestCheckKinds(t *testing.T) {
	svc := &wire.Service{Shapes: []wire.Shape{
		{Type: wire.Any},
		{Type: wire.Structure, Required: []string{"Name"}, Members: []wire.Member{
			{Name: "Name", Shape: 2}, {Name: "Count", Shape: 3}, {Name: "Ratio", Shape: 4},
			{Name: "On", Shape: 5}, {Name: "Tags", Shape: 6}, {Name: "Attrs", Shape: 7},
			{Name: "Color", Shape: 8}, {Name: "Data", Shape: 9}, {Name: "At", Shape: 10},
			{Name: "Doc", Shape: 0}, {Name: "Child", Shape: 1},
		}},
		{Type: wire.String, Min: ptr(1), Max: ptr(3)},
		{Type: wire.Integer, Min: ptr(0), Max: ptr(10)},
		{Type: wire.Float, Min: ptr(-1.5), Max: ptr(1.5)},
		{Type: wire.Boolean},
		{Type: wire.List, Elem: 2, Min: ptr(1), Max: ptr(2)},
		{Type: wire.Map, Elem: 3, Max: ptr(1)},
		{Type: wire.String, Enum: []string{"RED", "GREEN"}},
		{Type: wire.Blob, Max: ptr(4)},
		{Type: wire.Timestamp},
	}}
	sdk := Shape{svc: svc, i: 1}
	optimized := Shape{svc: svc, i: 1, optimized: true}
	tests := []struct {
		shape  Shape
		result string
		mode   Mode
		want   string
	}{
		{sdk, `{"Name": "ab"}`, Strict, ""},
		{sdk, `{}`, Strict, "Field 'Name' is required"},
		{sdk, `{"Name": null}`, Strict, "Field 'Name' is required"},
		{sdk, `{}`, Present, ""},
		{sdk, `{"Name": 1}`, None, ""},
		{sdk, `"text"`, Strict, "Result must be an object"},
		{sdk, `"text"`, None, ""},
		{sdk, `{"Name": 1}`, Present, "Field 'Name' must be a string"},
		{sdk, `{"Name": ""}`, Present, "Field 'Name' is smaller than the minimum length"},
		{sdk, `{"Name": "abcd"}`, Present, "Field 'Name' exceeds the maximum length"},
		{sdk, `{"Name": "äöü"}`, Present, ""},
		{sdk, `{"Count": "1"}`, Present, "Field 'Count' must be a number"},
		{sdk, `{"Count": -1}`, Present, "Field 'Count' is less than the minimum value"},
		{sdk, `{"Count": 11}`, Present, "Field 'Count' exceeds the maximum value"},
		{sdk, `{"Count": 10}`, Present, ""},
		{sdk, `{"Ratio": -1.6}`, Present, "Field 'Ratio' is less than the minimum value"},
		{sdk, `{"Ratio": 1.6}`, Present, "Field 'Ratio' exceeds the maximum value"},
		{sdk, `{"Ratio": 1.5e0}`, Present, ""},
		{sdk, `{"On": 1}`, Present, "Field 'On' must be a boolean"},
		{sdk, `{"On": false}`, Present, ""},
		{sdk, `{"Tags": {}}`, Present, "Field 'Tags' must be an array"},
		{sdk, `{"Tags": []}`, Present, "Field 'Tags' is smaller than the minimum length"},
		{sdk, `{"Tags": ["a", "b", "c"]}`, Present, "Field 'Tags' exceeds the maximum length"},
		{sdk, `{"Tags": ["a", 2]}`, Present, "Field 'Tags' must be a string"},
		{sdk, `{"Attrs": []}`, Present, "Field 'Attrs' must be an object"},
		{sdk, `{"Attrs": {"a": 1, "b": 2}}`, Present, "Field 'Attrs' exceeds the maximum length"},
		{sdk, `{"Attrs": {"a": "1"}}`, Present, "Field 'Attrs' must be a number"},
		{sdk, `{"Color": "BLUE"}`, Present, "Field 'Color' is not an expected value"},
		{sdk, `{"Color": "red"}`, Present, "Field 'Color' is not an expected value"},
		{sdk, `{"Color": "RED"}`, Present, ""},
		{sdk, `{"Data": {"x": 1}}`, Present, "Field 'Data' must be a string"},
		{sdk, `{"Data": "abcde"}`, Present, "Field 'Data' exceeds the maximum length"},
		{optimized, `{"Data": {"x": 1}}`, Present, ""},
		{sdk, `{"At": "2024-01-01T00:00:00Z"}`, Present, ""},
		{sdk, `{"At": 1700000000}`, Present, ""},
		{sdk, `{"At": []}`, Present, "Field 'At' must be a string"},
		{sdk, `{"Doc": [{"anything": true}]}`, Present, ""},
		{sdk, `{"Child": {"Count": 1}}`, Strict, "Field 'Name' is required"},
		{sdk, `{"Name": "a", "Child": {"Count": 1}}`, Present, ""},
		{sdk, `{"Name": "a", "Child": {"Name": "b", "On": "no"}}`, Strict, "Field 'On' must be a boolean"},
		{sdk, `{"Name": "a", "Unknown": {"any": "thing"}}`, Strict, ""},
	}
	for _, tt := range tests {
		v, err := value.ParseString(tt.result)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := tt.shape.Check(v, tt.mode); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s (mode %d, optimized %v): got %q, want %q", tt.result, tt.mode, tt.shape.optimized, got, tt.want)
		}
	}
}

// TestEmbeddedModels loads the embedded models and checks that every
// service the generator keeps by default is there.
func TestEmbeddedModels(t *testing.T) {
	services, err := load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lambda", "s3", "dynamodb", "sqs", "sns", "events", "eventbridge", "kms", "ecs", "glue",
		"athena", "batch", "stepfunctions", "sfn", "states", "secretsmanager", "ssm", "sagemaker"} {
		if services[name] == nil {
			t.Errorf("no model for %s", name)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"Configuration": {"MemorySize": 127}}`, `{"Entries": [{"EventId": 1}]}`, `[]`, `null`, `{"Payload": {"a": 1}}`} {
		f.Add("arn:aws:states:::aws-sdk:lambda:getFunction", s)
		f.Add("arn:aws:states:::events:putEvents", s)
	}
	f.Fuzz(func(t *testing.T, resource, result string) {
		shape, ok, err := ResultShape(resource)
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.ParseString(result)
		if !ok || err != nil {
			return
		}
		for _, m := range []Mode{Strict, Present, None} {
			if err := shape.Check(v, m); err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) || m == None {
					t.Fatalf("mode %d: %v", m, err)
				}
			}
		}
	})
}

// TestCheckResult: TestState's check of a mocked result in one call.
func TestCheckResult(t *testing.T) {
	var fe *FieldError
	if err := CheckResult("arn:aws:states:::lambda:invoke", "", "text"); !errors.As(err, &fe) || fe.Member() != "" {
		t.Errorf("a text result of lambda:invoke: %v, want a *FieldError for the result itself", err)
	}
	if err := CheckResult("arn:aws:states:::lambda:invoke", "NONE", "text"); err != nil {
		t.Errorf("NONE: %v", err)
	}
	if err := CheckResult("arn:aws:lambda:us-east-1:1:function:f", "", "text"); err != nil {
		t.Errorf("a resource without a model: %v", err)
	}
	if err := CheckResult("arn:aws:states:::lambda:invoke", "LAX", "text"); !errors.Is(err, ErrMode) {
		t.Errorf("mode LAX: %v, want ErrMode", err)
	}
}
