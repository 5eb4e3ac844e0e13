package template

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stepd/stepd/definition"
	"github.com/stepd/stepd/validate"
	"github.com/stepd/stepd/value"
)

func load(t *testing.T, path string, opts Options) []*StateMachine {
	t.Helper()
	sms, err := Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, sm := range sms {
		if r := validate.Definition([]byte(sm.Definition), sm.Type); !r.OK() {
			t.Errorf("%s: the definition does not validate: %s\n%s", sm.LogicalID, validate.Message(r.Diagnostics), sm.Definition)
		}
		for _, u := range definition.Find(mustParse(t, sm.Definition)) {
			if u.Resource {
				t.Errorf("%s: placeholder left in a Resource: %v", sm.LogicalID, u)
			}
		}
	}
	return sms
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return v
}

func get(t *testing.T, def string, path ...string) any {
	t.Helper()
	var v any = mustParse(t, def)
	for _, p := range path {
		o, ok := v.(*value.Object)
		if !ok {
			t.Fatalf("no %s in %s", p, def)
		}
		v, _ = o.Get(p)
	}
	return v
}

func TestSAM(t *testing.T) {
	sms := load(t, "testdata/sam/template.yaml", Options{})
	if len(sms) != 2 {
		t.Fatalf("got %d state machines", len(sms))
	}
	o := sms[0]
	if o.LogicalID != "OrderStateMachine" || o.Name != "orders-dev" || o.Type != "STANDARD" || o.ResourceType != SAMStateMachine {
		t.Errorf("got %+v", o)
	}
	if got := get(t, o.Definition, "States", "CheckStock", "Resource"); got != "arn:aws:lambda:us-east-1:123456789012:function:check-stock-dev" {
		t.Errorf("CheckStock's Resource: %v", got)
	}
	if got := get(t, o.Definition, "States", "Charge", "Parameters", "FunctionName"); got != "arn:aws:lambda:us-east-1:123456789012:function:stepd-template-charge" {
		t.Errorf("Charge's FunctionName: %v", got)
	}
	if got := get(t, o.Definition, "States", "Record", "Parameters", "TableName"); got != "orders-dev" {
		t.Errorf("TableName: %v", got)
	}
	if got := get(t, o.Definition, "States", "CheckStock", "Retry"); value.String(got) != `[{"ErrorEquals":["States.Timeout"],"MaxAttempts":2,"BackoffRate":1.5}]` {
		t.Errorf("Retry (number text kept): %s", value.String(got))
	}
	if want := `{"level":"ALL","includeExecutionData":true,"destinations":[{"cloudWatchLogsLogGroup":{"logGroupArn":"arn:aws:logs:us-east-1:123456789012:log-group:/aws/vendedlogs/states/orders-dev:*"}}]}`; value.String(o.Logging) != want {
		t.Errorf("logging: %s", value.String(o.Logging))
	}
	if value.String(o.Tracing) != `{"enabled":true}` {
		t.Errorf("tracing: %s", value.String(o.Tracing))
	}
	if o.Tags["team"] != "orders" || o.Tags["stateMachine:createdBy"] != "SAM" ||
		!regexp.MustCompile(`^arn:aws:iam::123456789012:role/stepd-template-OrderStateMachineRole-[A-Z0-9]{12}$`).MatchString(o.RoleARN) {
		t.Errorf("tags %v, role %s", o.Tags, o.RoleARN)
	}
	if !strings.HasSuffix(o.DefinitionFile, filepath.Join("statemachine", "orders.asl.yaml")) {
		t.Errorf("definition file %s", o.DefinitionFile)
	}
	s := sms[1]
	if s.Name != "ShipStateMachine" || s.Type != "STANDARD" {
		t.Errorf("got %+v", s)
	}
	if got := get(t, s.Definition, "States", "Order", "Parameters", "StateMachineArn"); got != "arn:aws:states:us-east-1:123456789012:stateMachine:orders-dev" {
		t.Errorf("StateMachineArn: %v", got)
	}
	if got := get(t, s.Definition, "Comment"); got != "Ships what orders-dev took" {
		t.Errorf("Comment: %v", got)
	}

	// Parameters, the region and account, a condition.
	sms = load(t, "testdata/sam/template.yaml", Options{Region: "eu-west-1", Account: "111122223333", StackName: "shop", Parameters: map[string]string{"Stage": "prod"}})
	o = sms[0]
	if o.Name != "orders-prod" || o.Type != "STANDARD" {
		t.Errorf("got %s %s", o.Name, o.Type)
	}
	if got := get(t, o.Definition, "States", "Charge", "Parameters", "FunctionName"); got != "arn:aws:lambda:eu-west-1:111122223333:function:shop-charge" {
		t.Errorf("FunctionName: %v", got)
	}
	if _, err := Load("testdata/sam/template.yaml", Options{Parameters: map[string]string{"Stage": "qa"}}); err == nil || !strings.Contains(err.Error(), "AllowedValues") {
		t.Errorf("a value outside AllowedValues: %v", err)
	}
	if _, err := Load("testdata/sam/template.yaml", Options{Parameters: map[string]string{"Nope": "x"}}); err == nil || !strings.Contains(err.Error(), "--parameter Nope") {
		t.Errorf("an unknown parameter: %v", err)
	}
	// A resource's value given by the user wins.
	sms = load(t, "testdata/sam/template.yaml", Options{Parameters: map[string]string{"CheckStockFunction.Arn": "arn:aws:lambda:us-east-1:123456789012:function:other"}})
	if got := get(t, sms[0].Definition, "States", "CheckStock", "Resource"); got != "arn:aws:lambda:us-east-1:123456789012:function:other" {
		t.Errorf("Resource: %v", got)
	}
}

func TestCFN(t *testing.T) {
	_, err := Load("testdata/cfn/template.json", Options{})
	if err == nil || !strings.Contains(err.Error(), "parameter BucketName has no Default: give it with --parameter BucketName=VALUE") || !strings.Contains(err.Error(), "/Resources/ReportStateMachine/Properties/DefinitionSubstitutions/Bucket/Ref") {
		t.Fatalf("a parameter without a default: %v", err)
	}
	sms := load(t, "testdata/cfn/template.json", Options{Parameters: map[string]string{"BucketName": "reports"}})
	r := sms[0]
	if r.Name != "report" || r.RoleARN != "arn:aws:iam::123456789012:role/service/report-states" || r.Tags["stack"] != "stepd-template" || r.Tags["app"] != "reports" {
		t.Errorf("got %+v", r)
	}
	if got := get(t, r.Definition, "States", "Build", "Resource"); got != "arn:aws:lambda:us-east-1:123456789012:function:report-worker" {
		t.Errorf("Resource: %v", got)
	}
	if got := get(t, r.Definition, "States", "Store", "Parameters", "Bucket"); got != "reports" {
		t.Errorf("Bucket: %v", got)
	}

	sms = load(t, "testdata/cfn/sub.yaml", Options{Region: "eu-west-1"})
	j := sms[0]
	if j.Name != "Jobs" || !regexp.MustCompile(`^arn:aws:iam::123456789012:role/stepd-sub-Role-[A-Z0-9]{12}$`).MatchString(j.RoleARN) {
		t.Errorf("got %+v", j)
	}
	if got := get(t, j.Definition, "Comment"); got != "Queue a job; ${Literal} stays" {
		t.Errorf("Comment: %v", got)
	}
	if got := get(t, j.Definition, "States", "Send", "Parameters", "QueueUrl"); got != "https://sqs.eu-west-1.amazonaws.com/123456789012/stepd-sub-jobs" {
		t.Errorf("QueueUrl: %v", got)
	}
	if got := value.String(get(t, j.Definition, "States", "Send", "Retry")); got != `[{"ErrorEquals":["States.ALL"],"MaxAttempts":5}]` {
		t.Errorf("Retry: %v", got)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, tpl, want string }{
		{"unknown type", `
Resources:
  Secret: {Type: AWS::CloudFront::Distribution}
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      RoleArn: arn:aws:iam::123456789012:role/r
      DefinitionString: !Sub '{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"${Secret}","End":true}}}'
`, "Ref Secret: stepd cannot tell what CloudFormation gives for a AWS::CloudFront::Distribution; give the value with --parameter Secret=VALUE"},
		{"unknown property", `
Resources:
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      RoleArn: r
      DefinitionString: '{}'
      Definitions: {}
`, "/Resources/SM/Properties/Definitions: AWS::StepFunctions::StateMachine has no property Definitions"},
		{"s3", `
Resources:
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      RoleArn: r
      DefinitionS3Location: {Bucket: b, Key: k}
`, "DefinitionS3Location: stepd reads no S3 objects"},
		{"two definitions", `
Resources:
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: r, DefinitionString: '{}', Definition: {}}
`, "give one of Definition and DefinitionString"},
		{"unknown tag", "Resources:\n  SM: !Foo x\n", "!Foo: unknown tag"},
		{"no state machine", "Resources:\n  Q: {Type: AWS::SQS::Queue}\n", "no state machine"},
		{"missing resource", `
Resources:
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: !GetAtt Nope.Arn, DefinitionString: '{}'}
`, "/Resources/SM/Properties/RoleArn/Fn::GetAtt: Fn::GetAtt Nope.Arn: the template has no parameter or resource Nope"},
		{"bad attribute", `
Resources:
  F: {Type: AWS::Lambda::Function, Properties: {FunctionName: f}}
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: r, DefinitionString: !Sub '${F.Version}'}
`, "Fn::GetAtt F.Version: stepd gives a AWS::Lambda::Function's Arn only"},
		{"import", `
Resources:
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: !ImportValue shared-role, DefinitionString: '{}'}
`, "Fn::ImportValue: stepd deploys no other stacks"},
		{"cycle", `
Resources:
  A: {Type: AWS::Lambda::Function, Properties: {FunctionName: !Ref B}}
  B: {Type: AWS::Lambda::Function, Properties: {FunctionName: !Ref A}}
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: r, DefinitionString: !Ref A}
`, "refers to itself"},
		{"substitution cycle", `
Resources:
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: r, DefinitionString: '${A}', DefinitionSubstitutions: {A: '${B}', B: '${A}'}}
`, "cycle"},
		{"same name", `
Resources:
  A:
    Type: AWS::StepFunctions::StateMachine
    Properties: {RoleArn: r, StateMachineName: x, DefinitionString: '{}'}
  B:
    Type: AWS::Serverless::StateMachine
    Properties: {Name: x, Definition: {}}
`, "the state machines A and B are both named x"},
		{"bad type", `
Resources:
  SM:
    Type: AWS::Serverless::StateMachine
    Properties: {Type: FAST, Definition: {}}
`, "/Resources/SM/Properties/Type: want STANDARD or EXPRESS"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, "t.yaml")
		if err := os.WriteFile(path, []byte(c.tpl), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant an error with %q", c.name, err, c.want)
		}
	}
}

func TestConditionsAndFunctions(t *testing.T) {
	tpl := `
Parameters:
  Env: {Type: String, Default: test}
  Zones: {Type: CommaDelimitedList, Default: "a, b"}
Conditions:
  IsTest: !Equals [test, !Ref Env]
  Both: !And [!Condition IsTest, !Not [!Equals [!Ref Env, prod]]]
  Never: !Or [!Equals [1, 2], !Equals [a, b]]
Resources:
  Skipped:
    Type: AWS::StepFunctions::StateMachine
    Condition: Never
    Properties: {RoleArn: r, DefinitionString: '{}'}
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      RoleArn: !Sub arn:${AWS::Partition}:iam::${AWS::AccountId}:role/x
      Definition:
        StartAt: P
        States:
          P:
            Type: Pass
            Result:
              both: !If [Both, yes, no]
              second: !Select [1, !Ref Zones]
              split: !Split [",", "x,y"]
              az: !Select [0, !GetAZs '']
              b64: !Base64 hi
              json: !ToJsonString {a: [1, 2]}
              len: !Length [1, 2, 3]
              gone: !Ref AWS::NoValue
              stack: !Ref AWS::StackName
            End: true
`
	path := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(path, []byte(tpl), 0o644); err != nil {
		t.Fatal(err)
	}
	sms := load(t, path, Options{})
	if len(sms) != 1 || sms[0].LogicalID != "SM" {
		t.Fatalf("got %d state machines", len(sms))
	}
	want := `{"both":"yes","second":"b","split":["x","y"],"az":"us-east-1a","b64":"aGk=","json":"{\"a\":[1,2]}","len":3,"stack":"stepd-app"}`
	if got := value.String(get(t, sms[0].Definition, "States", "P", "Result")); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := Find(sms, "Nope"); err == nil || !strings.Contains(err.Error(), "has no state machine \"Nope\" (it has SM)") {
		t.Errorf("Find: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/sam/template.yaml", "testdata/cfn/template.json", "testdata/cfn/sub.yaml"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("Resources:\n  S: {Type: AWS::StepFunctions::StateMachine, Properties: {RoleArn: !If [C, a, b], DefinitionString: !Sub ['${x}', {x: !Select [0, !Split [',', 'p,q']]}]}}\nConditions:\n  C: !Equals [!Ref AWS::Region, x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sms, err := Parse("fuzz.yaml", data, Options{})
		if err != nil {
			return
		}
		for _, sm := range sms {
			if sm.Name == "" || (sm.Type != "STANDARD" && sm.Type != "EXPRESS") {
				t.Fatalf("state machine without a name or type: %+v", sm)
			}
		}
	})
}
