package awssdk

import (
	"strings"
	"testing"

	"github.com/stepd/stepd/task/awsmodel"
	"github.com/stepd/stepd/value"
)

// Requests of the protocols no emulator here speaks, checked against the
// wire format the AWS API references document.
func TestBuildRequest(t *testing.T) {
	for _, c := range []struct {
		service, action, params   string
		method, path, query, body string
	}{
		{"route53", "changeResourceRecordSets", `{"HostedZoneId":"Z1","ChangeBatch":{"Changes":[{"Action":"UPSERT","ResourceRecordSet":{"Name":"a.example.com","Type":"A","TTL":60,"ResourceRecords":[{"Value":"192.0.2.1"}]}}]}}`,
			"POST", "/2013-04-01/hostedzone/Z1/rrset/", "",
			`<ChangeResourceRecordSetsRequest xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><ChangeBatch><Changes><Change><Action>UPSERT</Action><ResourceRecordSet><Name>a.example.com</Name><Type>A</Type><TTL>60</TTL><ResourceRecords><ResourceRecord><Value>192.0.2.1</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`},
		{"ec2", "describeInstances", `{"InstanceIds":["i-1","i-2"],"Filters":[{"Name":"tag:a","Values":["b"]}]}`,
			"POST", "/", "", "Action=DescribeInstances&Filter.1.Name=tag%3Aa&Filter.1.Value.1=b&InstanceId.1=i-1&InstanceId.2=i-2&Version=2016-11-15"},
		{"sns", "publish", `{"TopicArn":"arn:t","Message":"m","MessageAttributes":{"k":{"DataType":"String","StringValue":"v"}}}`,
			"POST", "/", "", "Action=Publish&Message=m&MessageAttributes.entry.1.Name=k&MessageAttributes.entry.1.Value.DataType=String&MessageAttributes.entry.1.Value.StringValue=v&TopicArn=arn%3At&Version=2010-03-31"},
		{"lambda", "invoke", `{"FunctionName":"f","Qualifier":"prod","Payload":{"a":1}}`,
			"POST", "/2015-03-31/functions/f/invocations", "Qualifier=prod", `{"a":1}`},
		{"s3", "putObject", `{"Bucket":"b","Key":"a/b c","Body":"x"}`,
			"PUT", "/b/a/b%20c", "", `"x"`},
		{"apigateway", "getRestApi", `{"RestApiId":"r1"}`, "GET", "/restapis/r1", "", ""},
		{"sfn", "startSyncExecution", `{"StateMachineArn":"arn:sm"}`, "POST", "/", "", `{"stateMachineArn":"arn:sm"}`},
		// An object for a string member goes as its JSON text.
		{"sfn", "startExecution", `{"StateMachineArn":"arn:sm","Input":{"a":[1,"é"]}}`, "POST", "/", "", `{"stateMachineArn":"arn:sm","input":"{\"a\":[1,\"é\"]}"}`},
		{"sfn", "startExecution", `{"StateMachineArn":"arn:sm","Input":"{\"a\":1}"}`, "POST", "/", "", `{"stateMachineArn":"arn:sm","input":"{\"a\":1}"}`},
	} {
		api, op, ok, err := awsmodel.Operation(c.service, c.action)
		if !ok || err != nil {
			t.Fatalf("%s:%s: %v", c.service, c.action, err)
		}
		params, err := value.ParseString(c.params)
		if err != nil {
			t.Fatal(err)
		}
		r, err := buildRequest(api, op, params)
		if err != nil {
			t.Errorf("%s:%s: %v", c.service, c.action, err)
			continue
		}
		if c.action == "startSyncExecution" && r.hostPrefix != "sync-" {
			t.Errorf("sfn:startSyncExecution: host prefix %q, want sync-", r.hostPrefix)
		}
		if r.method != c.method || r.path != c.path || r.query.Encode() != c.query || string(r.body) != c.body {
			t.Errorf("%s:%s:\n got %s %s ? %s\n     %s\nwant %s %s ? %s\n     %s", c.service, c.action,
				r.method, r.path, r.query.Encode(), r.body, c.method, c.path, c.query, c.body)
		}
	}
}

func TestServiceName(t *testing.T) {
	for id, want := range map[string]string{"DynamoDB": "DynamoDb", "SFN": "Sfn", "S3": "S3", "EventBridge": "EventBridge",
		"ACM PCA": "AcmPca", "CloudWatch Logs": "CloudWatchLogs", "EC2": "Ec2", "SageMaker": "SageMaker", "SQS": "Sqs"} {
		if got := ServiceName(id); got != want {
			t.Errorf("ServiceName(%q) = %q, want %q", id, got, want)
		}
	}
	if !strings.HasPrefix(ServiceName("API Gateway"), "ApiGateway") {
		t.Error(ServiceName("API Gateway"))
	}
}
