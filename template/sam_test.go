package template

import (
	"regexp"
	"strings"
	"testing"
)

// TestSAMSample loads a template written as the public AWS SAM samples
// are: functions, a table, a queue and a topic that CloudFormation names,
// the REST and HTTP APIs SAM makes for Api and HttpApi events, the role
// SAM makes for a function, AWS::StackId taken apart, a duplicate key.
// Each resolves to a placeholder of the shape AWS gives, and --parameter
// overrides any of them.
func TestSAMSample(t *testing.T) {
	const path = "testdata/sam/samples/order-api.yaml"
	var warned []string
	sms := load(t, path, Options{Warn: func(m string) { warned = append(warned, m) }})
	if len(warned) != 1 || warned[0] != path+`:78:7: the key "Type" appears twice in this mapping, on lines 77 and 78: the value of line 78 is kept` {
		t.Errorf("warnings %q", warned)
	}
	o := sms[0]
	if o.Name != "OrderWorkflow" || o.Type != "STANDARD" {
		t.Errorf("name %s, type %s (the last Type wins)", o.Name, o.Type)
	}
	re := func(s string) *regexp.Regexp { return regexp.MustCompile("^" + s + "$") }
	const acct = "arn:aws:lambda:us-east-1:123456789012:function:"
	for _, c := range []struct {
		name string
		got  any
		want *regexp.Regexp
	}{
		{"function ARN", get(t, o.Definition, "States", "Validate", "Resource"), re(acct + `stepd-order-api-ValidateOrderFunction-[A-Z0-9]{12}`)},
		{"function name", get(t, o.Definition, "States", "Price", "Parameters", "FunctionName"), re(`stepd-order-api-PriceOrderFunction-[A-Z0-9]{12}`)},
		{"table", get(t, o.Definition, "States", "Record", "Parameters", "TableName"), re(`stepd-order-api-OrdersTable-[A-Z0-9]{12}`)},
		{"FIFO queue", get(t, o.Definition, "States", "Notify", "Branches"), nil},
		{"REST API", get(t, o.Definition, "States", "Validate", "Parameters", "api"), re(`https://[a-z0-9]{10}\.execute-api\.us-east-1\.amazonaws\.com/Prod/validate`)},
		{"HTTP API", get(t, o.Definition, "States", "Price", "Parameters", "Payload", "url"), re(`https://[a-z0-9]{10}\.execute-api\.us-east-1\.amazonaws\.com/price`)},
		{"function role", get(t, o.Definition, "States", "Validate", "Parameters", "role"), re(`arn:aws:iam::123456789012:role/stepd-order-api-ValidateOrderFunctionRole-[A-Z0-9]{12}`)},
		{"stack id parts", get(t, o.Definition, "Comment"), re(`Validate, price and record an order \(stack [0-9a-f]{4}, [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\)`)},
		{"role of the state machine", o.RoleARN, re(`arn:aws:iam::123456789012:role/stepd-order-api-OrderWorkflowRole-[A-Z0-9]{12}`)},
	} {
		if c.want == nil {
			continue
		}
		s, _ := c.got.(string)
		if !c.want.MatchString(s) {
			t.Errorf("%s: %v, want %s", c.name, c.got, c.want)
		}
	}
	if q := o.Definition; !regexp.MustCompile(`"QueueUrl": "https://sqs\.us-east-1\.amazonaws\.com/123456789012/stepd-order-api-OrderQueue-[A-Z0-9]{12}\.fifo"`).MatchString(q) ||
		!regexp.MustCompile(`"TopicArn": "arn:aws:sns:us-east-1:123456789012:stepd-order-api-OrderTopic-[A-Z0-9]{12}"`).MatchString(q) {
		t.Errorf("queue or topic:\n%s", q)
	}
	if got := get(t, sms[1].Definition, "States", "RunOrder", "Parameters", "StateMachineArn"); got != "arn:aws:states:us-east-1:123456789012:stateMachine:OrderWorkflow" {
		t.Errorf("the other state machine: %v", got)
	}
	// The same template and stack give the same values; another stack
	// name gives others, and AWS::StackId follows it.
	again := load(t, path, Options{Warn: func(string) {}})
	if again[0].Definition != o.Definition {
		t.Error("the placeholders changed between two loads")
	}
	other := load(t, path, Options{Warn: func(string) {}, Parameters: map[string]string{"AWS::StackName": "sam-app"}})
	if d := other[0].Definition; !strings.Contains(d, "function:sam-app-ValidateOrderFunction-") || strings.Contains(d, "stepd-order-api") {
		t.Errorf("with AWS::StackName=sam-app:\n%s", d)
	}
	// With one hyphen in the stack name, as in SAM's "sam-app", item 7 of
	// AWS::StackId split at '-' is the UUID's last group.
	if c := get(t, other[0].Definition, "Comment").(string); !re(`Validate, price and record an order \(stack ([0-9a-f]{12}), [0-9a-f-]{24}([0-9a-f]{12})\)`).MatchString(c) ||
		re(`.*stack ([0-9a-f]{12}).*`).FindStringSubmatch(c)[1] != c[len(c)-13:len(c)-1] {
		t.Errorf("with AWS::StackName=sam-app: %s", c)
	}

	// --parameter settles any of them.
	given := map[string]string{
		"ValidateOrderFunction.Arn":     acct + "validate",
		"PriceOrderFunction":            "price",
		"OrdersTable":                   "orders",
		"OrderQueue":                    "https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo",
		"OrderTopic":                    "arn:aws:sns:us-east-1:123456789012:t",
		"ServerlessRestApi":             "rest123456",
		"ServerlessHttpApi":             "http123456",
		"ValidateOrderFunctionRole.Arn": "arn:aws:iam::123456789012:role/fn",
		"OrderWorkflowRole.Arn":         "arn:aws:iam::123456789012:role/sm",
		"AWS::StackId":                  "arn:aws:cloudformation:us-east-1:123456789012:stack/my-app/11111111-2222-4333-8444-555555555555",
	}
	sms = load(t, path, Options{Warn: func(string) {}, Parameters: given})
	o = sms[0]
	for _, c := range []struct {
		got  any
		want string
	}{
		{get(t, o.Definition, "States", "Validate", "Resource"), acct + "validate"},
		{get(t, o.Definition, "States", "Price", "Parameters", "FunctionName"), "price"},
		{get(t, o.Definition, "States", "Record", "Parameters", "TableName"), "orders"},
		{get(t, o.Definition, "States", "Validate", "Parameters", "api"), "https://rest123456.execute-api.us-east-1.amazonaws.com/Prod/validate"},
		{get(t, o.Definition, "States", "Price", "Parameters", "Payload", "url"), "https://http123456.execute-api.us-east-1.amazonaws.com/price"},
		{get(t, o.Definition, "States", "Validate", "Parameters", "role"), "arn:aws:iam::123456789012:role/fn"},
		{get(t, o.Definition, "Comment"), "Validate, price and record an order (stack 555555555555, 11111111-2222-4333-8444-555555555555)"},
		{o.RoleARN, "arn:aws:iam::123456789012:role/sm"},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %s", c.got, c.want)
		}
	}
	// A resource SAM does not generate is still an unknown name.
	for _, bad := range []string{"ServerlessRestApiX", "OrderTopicRole.Arn", "NopeRole"} {
		if _, err := Load(path, Options{Warn: func(string) {}, Parameters: map[string]string{bad: "x"}}); err == nil || !strings.Contains(err.Error(), "--parameter "+bad) {
			t.Errorf("--parameter %s: %v", bad, err)
		}
	}
}

// TestStackName: the default stack name is valid for CloudFormation and
// holds a hyphen; a name CloudFormation refuses is refused.
func TestStackName(t *testing.T) {
	for path, want := range map[string]string{
		"template.yaml":          "stepd-template",
		"dir/my_app.v2.yml":      "stepd-my-app-v2",
		"1st.json":               "stepd-1st",
		strings.Repeat("a", 200): "stepd-" + strings.Repeat("a", 122),
	} {
		got := DefaultStackName(path)
		if got != want || checkStackName(got) != nil {
			t.Errorf("DefaultStackName(%q) = %q, want %q", path, got, want)
		}
	}
	for _, bad := range []string{"1app", "my_app", "", strings.Repeat("a", 129)} {
		if _, err := Load("testdata/sam/samples/order-api.yaml", Options{Warn: func(string) {}, Parameters: map[string]string{"AWS::StackName": bad}}); err == nil || !strings.Contains(err.Error(), "is not valid for CloudFormation") {
			t.Errorf("stack name %q: %v", bad, err)
		}
	}
	// The documented idiom for a unique suffix works with the default.
	if got := stackID("us-east-1", "123456789012", "stepd-template"); len(strings.Split(got, "-")) != 8 {
		t.Errorf("%s splits into %d parts at '-'", got, len(strings.Split(got, "-")))
	}
}

// TestSAMSampleNetworked: a workflow in the style of the ECS, Batch and
// Secrets Manager samples: ids and ARNs of the shape AWS gives.
func TestSAMSampleNetworked(t *testing.T) {
	sms := load(t, "testdata/sam/samples/fargate-job.yaml", Options{})
	d := sms[0].Definition
	re := func(s string) *regexp.Regexp { return regexp.MustCompile("^" + s + "$") }
	const scope = `us-east-1:123456789012:`
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"States", "Secret", "Parameters", "SecretId"}, `arn:aws:secretsmanager:` + scope + `secret:stepd-fargate-job-ApiSecret-[A-Z0-9]{12}-[A-Za-z0-9]{6}`},
		{[]string{"States", "RunTask", "Parameters", "Cluster"}, `arn:aws:ecs:` + scope + `cluster/stepd-fargate-job-Cluster-[A-Z0-9]{12}`},
		{[]string{"States", "RunTask", "Parameters", "TaskDefinition"}, `arn:aws:ecs:` + scope + `task-definition/stepd-fargate-job-TaskDefinition-[A-Z0-9]{12}:1`},
		{[]string{"States", "SubmitJob", "Parameters", "JobQueue"}, `arn:aws:batch:` + scope + `job-queue/stepd-fargate-job-JobQueue-[A-Z0-9]{12}`},
		{[]string{"States", "SubmitJob", "Parameters", "JobDefinition"}, `arn:aws:batch:` + scope + `job-definition/stepd-fargate-job-JobDefinition-[A-Z0-9]{12}:1`},
	} {
		if got, _ := get(t, d, c.path...).(string); !re(c.want).MatchString(got) {
			t.Errorf("%v: %q, want %s", c.path, got, c.want)
		}
	}
	if !regexp.MustCompile(`"Subnets":\["subnet-[0-9a-f]{17}"\]`).MatchString(d) || !regexp.MustCompile(`"SecurityGroups":\["sg-[0-9a-f]{17}"\]`).MatchString(d) ||
		!regexp.MustCompile(`"Value":"https://[a-z0-9]{32}\.lambda-url\.us-east-1\.on\.aws/"`).MatchString(d) {
		t.Errorf("network ids or the function URL:\n%s", d)
	}
}
