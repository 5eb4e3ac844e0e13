package awssdk_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/internal/testlog"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awssdk"
	"github.com/stepd/stepd/value"
)

const emulators = "testdata/emulators"

func TestMain(m *testing.M) {
	code := testlog.Run(m)
	awstest.StopEmulators()
	os.Exit(code)
}

// setup starts the emulators and returns an invoker whose endpoints are
// theirs, with s3rver's credentials (it checks signatures).
func setup(t *testing.T, names ...string) *awssdk.Invoker {
	t.Helper()
	awstest.Env(t, "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "S3RVER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
	endpoints := map[string]string{}
	for _, n := range names {
		e := awstest.StartEmulator(t, emulators, n)
		switch n {
		case "s3rver":
			endpoints["s3"] = e.URL
		case "dynalite":
			endpoints["dynamodb"] = e.URL
		case "fauxqs":
			endpoints["sqs"], endpoints["sns"] = e.URL, e.URL
		}
	}
	inv, err := awssdk.New(awssdk.Config{Endpoints: endpoints})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func awstestURL(t *testing.T, name string) string {
	return awstest.StartEmulator(t, emulators, name).URL
}

func call(t *testing.T, inv task.Invoker, resource, params string) task.Result {
	t.Helper()
	in, err := value.ParseString(params)
	if err != nil {
		t.Fatal(err)
	}
	return inv.Invoke(context.Background(), &task.Request{Resource: resource, Pattern: patternOf(resource), StateName: "T", Input: in})
}

// patternOf is the integration pattern that ends resource, which the
// interpreter gives its requests (task.Request.Pattern).
func patternOf(resource string) task.Pattern {
	for _, p := range []task.Pattern{task.Sync, task.Sync2, task.WaitForTaskToken} {
		if strings.HasSuffix(resource, p.Suffix()) {
			return p
		}
	}
	return task.RequestResponse
}

func ok(t *testing.T, r task.Result) *value.Object {
	t.Helper()
	if r.Failed() {
		t.Fatalf("failed: %s: %s", r.Error, r.Cause)
	}
	obj, isObj := r.Output.(*value.Object)
	if !isObj {
		t.Fatalf("output %s is not an object", value.String(r.Output))
	}
	return obj
}

func get(t *testing.T, obj *value.Object, path string) any {
	t.Helper()
	var v any = obj
	for _, k := range strings.Split(path, ".") {
		o, isObj := v.(*value.Object)
		if !isObj {
			t.Fatalf("%s: %s is not an object", path, value.String(v))
		}
		var found bool
		if v, found = o.Get(k); !found {
			t.Fatalf("%s: no %s in %s", path, k, value.String(o))
		}
	}
	return v
}

func wantFailure(t *testing.T, r task.Result, errName, causePrefix string) {
	t.Helper()
	if r.Error != errName || !strings.HasPrefix(r.Cause, causePrefix) {
		t.Fatalf("got %s: %s\nwant %s: %s...", r.Error, r.Cause, errName, causePrefix)
	}
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func TestS3(t *testing.T) {
	inv := setup(t, "s3rver")
	const sdk = "arn:aws:states:::aws-sdk:s3:"
	ok(t, call(t, inv, sdk+"createBucket", `{"Bucket":"stepd-bucket-0"}`))
	// Blobs as Step Functions sends them: the value's JSON text, a
	// string's with its quotes (the recorded ETags are these bodies' MD5).
	for _, c := range []struct{ body, text string }{
		{`"text data"`, `"text data"`}, {`0`, "0"}, {`["List","Data"]`, `["List","Data"]`},
	} {
		out := ok(t, call(t, inv, sdk+"putObject", `{"Bucket":"stepd-bucket-0","Key":"k","Body":`+c.body+`}`))
		if got := get(t, out, "ETag"); got != md5hex(c.text) {
			t.Errorf("putObject %s: ETag %v, want %s", c.body, got, md5hex(c.text))
		}
	}
	ok(t, call(t, inv, sdk+"putObject", `{"Bucket":"stepd-bucket-0","Key":"dir/file key","Body":"binary data","ContentType":"binary/octet-stream","Metadata":{"who":"stepd"}}`))
	out := ok(t, call(t, inv, sdk+"getObject", `{"Bucket":"stepd-bucket-0","Key":"dir/file key"}`))
	for k, want := range map[string]any{"Body": `"binary data"`, "ContentLength": value.Number("13"),
		"ContentType": "binary/octet-stream", "ETag": md5hex(`"binary data"`)} {
		if got := get(t, out, k); !value.Equal(got, want) {
			t.Errorf("getObject %s = %s, want %s", k, value.String(got), value.String(want))
		}
	}
	if got := get(t, out, "Metadata.who"); got != "stepd" {
		t.Errorf("getObject Metadata = %v", got)
	}
	if lm, isString := get(t, out, "LastModified").(string); !isString || !strings.HasSuffix(lm, "Z") {
		t.Errorf("LastModified = %v, want ISO 8601 text", lm)
	}
	list := ok(t, call(t, inv, sdk+"listObjectsV2", `{"Bucket":"stepd-bucket-0","Prefix":"dir/"}`))
	contents, _ := get(t, list, "Contents").([]any)
	if len(contents) != 1 || get(t, contents[0].(*value.Object), "Key") != "dir/file key" || get(t, list, "KeyCount") != value.Number("1") {
		t.Errorf("listObjectsV2 = %s", value.String(list))
	}
	wantFailure(t, call(t, inv, sdk+"getObject", `{"Bucket":"stepd-bucket-0","Key":"nope"}`),
		"S3.NoSuchKeyException", "The specified key does not exist. (Service: S3, Status Code: 404, Request ID: ")
	wantFailure(t, call(t, inv, sdk+"listObjects", `{"Bucket":"someNonexistentBucketName"}`),
		"S3.NoSuchBucketException", "The specified bucket does not exist (Service: S3, Status Code: 404, Request ID: ")
	ok(t, call(t, inv, sdk+"deleteObject", `{"Bucket":"stepd-bucket-0","Key":"k"}`))
}

func TestDynamoDB(t *testing.T) {
	inv := setup(t, "dynalite")
	const sdk = "arn:aws:states:::aws-sdk:dynamodb:"
	ok(t, call(t, inv, sdk+"createTable", `{"TableName":"sfn_test_table","KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],
		"AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST"}`))
	waitActive(t, inv, "sfn_test_table")
	// The recorded case services.aws_sdk_task_service.dynamodb_put_update_get_item.
	if out := ok(t, call(t, inv, sdk+"putItem", `{"TableName":"sfn_test_table","Item":{"data":{"S":"HelloWorld"},"id":{"S":"id1"}}}`)); out.Len() != 0 {
		t.Errorf("putItem = %s, want {}", value.String(out))
	}
	out := ok(t, call(t, inv, sdk+"updateItem", `{"TableName":"sfn_test_table","Key":{"id":{"S":"id1"}},"UpdateExpression":"set S=:r",
		"ExpressionAttributeValues":{":r":{"S":"HelloWorldUpdated"}},"ReturnValues":"UPDATED_NEW"}`))
	if want := `{"Attributes":{"S":{"S":"HelloWorldUpdated"}}}`; value.String(out) != want {
		t.Errorf("updateItem = %s, want %s", value.String(out), want)
	}
	out = ok(t, call(t, inv, sdk+"getItem", `{"TableName":"sfn_test_table","Key":{"id":{"S":"id1"}}}`))
	item, _ := get(t, out, "Item").(*value.Object)
	if item == nil || item.Len() != 3 || value.String(get(t, item, "S")) != `{"S":"HelloWorldUpdated"}` {
		t.Errorf("getItem = %s", value.String(out))
	}
	q := ok(t, call(t, inv, sdk+"query", `{"TableName":"sfn_test_table","KeyConditionExpression":"id = :id","ExpressionAttributeValues":{":id":{"S":"id1"}}}`))
	// Members by name, as Step Functions returns them (the model has Items first).
	if strings.Join(q.Keys(), ",") != "Count,Items,ScannedCount" || get(t, q, "Count") != value.Number("1") {
		t.Errorf("query = %s, want Count 1, Items, ScannedCount in this order", value.String(q))
	}
	// Errors as recorded: a modeled one by its name, others as DynamoDbException.
	wantFailure(t, call(t, inv, sdk+"putItem", `{"TableName":"no_such_sfn_test_table","Item":{"id":{"S":"id1"}}}`),
		"DynamoDb.ResourceNotFoundException", "Requested resource not found (Service: DynamoDb, Status Code: 400, Request ID: ")
	wantFailure(t, call(t, inv, sdk+"putItem", `{"TableName":"sfn_test_table","Item":{"id":{"S":"id1"}},"ConditionExpression":"attribute_not_exists(id)"}`),
		"DynamoDb.ConditionalCheckFailedException", "The conditional request failed (Service: DynamoDb, Status Code: 400")
	wantFailure(t, call(t, inv, sdk+"putItem", `{"TableName":"sfn_test_table","Item":null}`),
		"DynamoDb.DynamoDbException", "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null (Service: DynamoDb, Status Code: 400")

	// The optimized integrations add the SDK's HTTP metadata.
	const opt = "arn:aws:states:::dynamodb:"
	out = ok(t, call(t, inv, opt+"putItem", `{"TableName":"sfn_test_table","Item":{"id":{"S":"id2"},"n":{"N":"1"}}}`))
	if get(t, out, "SdkHttpMetadata.HttpStatusCode") != value.Number("200") || get(t, out, "SdkHttpMetadata.HttpHeaders.Content-Type") != "application/x-amz-json-1.0" {
		t.Errorf("dynamodb:putItem = %s", value.String(out))
	}
	if _, isString := get(t, out, "SdkResponseMetadata.RequestId").(string); !isString {
		t.Errorf("dynamodb:putItem SdkResponseMetadata = %s", value.String(out))
	}
	out = ok(t, call(t, inv, opt+"updateItem", `{"TableName":"sfn_test_table","Key":{"id":{"S":"id2"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}},"ReturnValues":"ALL_NEW"}`))
	if value.String(get(t, out, "Attributes.n")) != `{"N":"2"}` {
		t.Errorf("dynamodb:updateItem = %s", value.String(out))
	}
	out = ok(t, call(t, inv, opt+"getItem", `{"TableName":"sfn_test_table","Key":{"id":{"S":"id2"}}}`))
	if value.String(get(t, out, "Item.n")) != `{"N":"2"}` {
		t.Errorf("dynamodb:getItem = %s", value.String(out))
	}
	ok(t, call(t, inv, opt+"deleteItem", `{"TableName":"sfn_test_table","Key":{"id":{"S":"id2"}}}`))
	wantFailure(t, call(t, inv, opt+"putItem", `{"TableName":"sfn_test_table","Item":{"id":{"S":"id1"}},"ConditionExpression":"attribute_not_exists(id)"}`),
		"DynamoDB.ConditionalCheckFailedException", "The conditional request failed (Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ConditionalCheckFailedException; Request ID: ")
	if out = ok(t, call(t, inv, opt+"getItem", `{"TableName":"sfn_test_table","Key":{"id":{"S":"id2"}}}`)); out.Has("Item") {
		t.Errorf("after deleteItem, getItem = %s", value.String(out))
	}
}

func TestSQSAndSNS(t *testing.T) {
	inv := setup(t, "fauxqs")
	q := ok(t, call(t, inv, "arn:aws:states:::aws-sdk:sqs:createQueue", `{"QueueName":"stepd-queue"}`))
	url, _ := get(t, q, "QueueUrl").(string)
	if url == "" {
		t.Fatalf("createQueue = %s", value.String(q))
	}
	// The optimized integration sends a JSON MessageBody as its text.
	out := ok(t, call(t, inv, "arn:aws:states:::sqs:sendMessage", `{"QueueUrl":"`+url+`","MessageBody":{"hello":"world","n":1}}`))
	if get(t, out, "MD5OfMessageBody") != strings.Trim(md5hex(`{"hello":"world","n":1}`), `"`) || get(t, out, "SdkHttpMetadata.HttpStatusCode") != value.Number("200") {
		t.Errorf("sqs:sendMessage = %s", value.String(out))
	}
	if _, isString := get(t, out, "MessageId").(string); !isString || strings.Join(out.Keys(), ",") != "MD5OfMessageBody,MessageId,SdkHttpMetadata,SdkResponseMetadata" {
		t.Errorf("sqs:sendMessage = %s", value.String(out))
	}
	got := ok(t, call(t, inv, "arn:aws:states:::aws-sdk:sqs:receiveMessage", `{"QueueUrl":"`+url+`","MaxNumberOfMessages":10}`))
	msgs, _ := get(t, got, "Messages").([]any)
	if len(msgs) != 1 || get(t, msgs[0].(*value.Object), "Body") != `{"hello":"world","n":1}` {
		t.Errorf("receiveMessage = %s", value.String(got))
	}
	// Errors: AWS SDK integrations as the AWS SDK for Java 2.x names them,
	// optimized ones as 1.x did.
	wantFailure(t, call(t, inv, "arn:aws:states:::aws-sdk:sqs:sendMessage", `{"QueueUrl":"`+url+`-none","MessageBody":"x"}`),
		"Sqs.QueueDoesNotExistException", "The specified queue does not exist. (Service: Sqs, Status Code: 400, Request ID: ")
	wantFailure(t, call(t, inv, "arn:aws:states:::sqs:sendMessage", `{"QueueUrl":"`+url+`-none","MessageBody":"x"}`),
		"SQS.QueueDoesNotExistException", "The specified queue does not exist. (Service: AmazonSQS; Status Code: 400; Error Code: ")

	topic := ok(t, call(t, inv, "arn:aws:states:::aws-sdk:sns:createTopic", `{"Name":"stepd-topic"}`))
	arn, _ := get(t, topic, "TopicArn").(string)
	if !strings.HasPrefix(arn, "arn:aws:sns:") {
		t.Fatalf("createTopic = %s", value.String(topic))
	}
	pub := ok(t, call(t, inv, "arn:aws:states:::sns:publish", `{"TopicArn":"`+arn+`","Message":{"hello":"world"}}`))
	if _, isString := get(t, pub, "MessageId").(string); !isString || get(t, pub, "SdkHttpMetadata.HttpStatusCode") != value.Number("200") {
		t.Errorf("sns:publish = %s", value.String(pub))
	}
	// A query-protocol error: the code NotFound is the model's NotFoundException.
	wantFailure(t, call(t, inv, "arn:aws:states:::sns:publish", `{"TopicArn":"`+arn+`-none","Message":"x"}`), "SNS.NotFoundException", "")
	wantFailure(t, call(t, inv, "arn:aws:states:::aws-sdk:sns:publish", `{"TopicArn":"`+arn+`-none","Message":"x"}`), "Sns.NotFoundException", "")
	topics := ok(t, call(t, inv, "arn:aws:states:::aws-sdk:sns:listTopics", `{}`))
	if l, _ := get(t, topics, "Topics").([]any); len(l) == 0 {
		t.Errorf("listTopics = %s", value.String(topics))
	}
}

// Without credentials or a region a call fails at once with a clear
// cause; it never reaches the network.
func TestNoCredentials(t *testing.T) {
	awstest.Env(t, "")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	inv, err := awssdk.New(awssdk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	wantFailure(t, call(t, inv, "arn:aws:states:::sqs:sendMessage", `{"QueueUrl":"q","MessageBody":"x"}`),
		"States.TaskFailed", "sqs:sendMessage: no region: set AWS_REGION")
	inv, err = awssdk.New(awssdk.Config{Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	wantFailure(t, call(t, inv, "arn:aws:states:::aws-sdk:s3:listBuckets", `{}`),
		"States.TaskFailed", "s3:listBuckets: no AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or sign in with aws sso login)")
}

// Parameters that do not fit the API fail the state before any call.
func TestBadParameters(t *testing.T) {
	awstest.Env(t, "us-east-1")
	inv, err := awssdk.New(awssdk.Config{Endpoints: map[string]string{"dynamodb": "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	for params, want := range map[string]string{
		`{"TableName":"t","Itme":{}}`:      "the parameter Itme is not a member of the API's input",
		`{"TableName":1}`:                  "the parameter TableName must be a string",
		`{"TableName":"t","Item":[1]}`:     "the parameter Item must be an object",
		`{"TableName":"t","Item":{"a":1}}`: "the parameter Item.a must be an object",
		`[1]`:                              "the parameters must be an object",
	} {
		wantFailure(t, call(t, inv, "arn:aws:states:::aws-sdk:dynamodb:putItem", params), "States.Runtime", "dynamodb:putItem: "+want)
	}
	for resource, want := range map[string]string{
		"arn:aws:states:::aws-sdk:nosuchservice:doIt": "names an unknown service",
		"arn:aws:states:::aws-sdk:dynamodb:doIt":      "names an unknown action",
	} {
		r := call(t, inv, resource, `{}`)
		if r.Error != "States.Runtime" || !strings.Contains(r.Cause, want) {
			t.Errorf("%s: %s: %s", resource, r.Error, r.Cause)
		}
	}
	if inv.Serves(&task.Request{Resource: "arn:aws:states:::aws-sdk:dynamodb:doIt"}) || inv.Serves(&task.Request{Resource: "arn:aws:states:::dynamodb:putItem.sync", Pattern: task.Sync}) || !inv.Serves(&task.Request{Resource: "arn:aws:states:::ecs:runTask.sync", Pattern: task.Sync}) {
		t.Error("Serves an unknown action or a .sync that is not a job's, or not ecs:runTask.sync")
	}
	if !inv.Serves(&task.Request{Resource: "arn:aws:states:::aws-sdk:ec2:describeInstances"}) || !inv.Serves(&task.Request{Resource: "arn:aws:states:::sqs:sendMessage.waitForTaskToken", Pattern: task.WaitForTaskToken}) {
		t.Error("does not serve ec2:describeInstances or sqs:sendMessage.waitForTaskToken")
	}
	if inv.Serves(&task.Request{Resource: "arn:aws:states:::ecs:runTask.sync"}) || inv.Serves(&task.Request{Resource: "arn:aws:states:::ecs:runTask.sync:2", Pattern: task.Sync2}) || inv.Serves(&task.Request{Resource: "arn:aws:states:::ecs:runTask", Pattern: task.Sync}) {
		t.Error("Serves a resource whose suffix is not its request's pattern, or .sync:2")
	}
	// No answer: a clear cause, as States.TaskFailed.
	wantFailure(t, call(t, inv, "arn:aws:states:::aws-sdk:dynamodb:listTables", `{}`), "States.TaskFailed", "dynamodb:listTables: Unable to execute HTTP request: ")
}

// waitActive waits until a new table can be written (dynalite makes it
// ACTIVE after a timer, as DynamoDB does).
func waitActive(t *testing.T, inv task.Invoker, table string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		out := ok(t, call(t, inv, "arn:aws:states:::aws-sdk:dynamodb:describeTable", `{"TableName":"`+table+`"}`))
		if get(t, out, "Table.TableStatus") == "ACTIVE" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("table %s is not ACTIVE after 2 s", table)
}

// Endpoints as the AWS SDKs read them: AWS_ENDPOINT_URL_<SERVICE> over
// AWS_ENDPOINT_URL over the shared configuration's services section;
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS turns them all off.
func TestEndpointsFromTheEnvironment(t *testing.T) {
	awstest.Env(t, "")
	dyn := awstest.StartEmulator(t, emulators, "dynalite").URL
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("[profile local]\nregion = eu-west-1\nservices = emulators\n\n[services emulators]\ndynamodb =\n  endpoint_url = "+dyn+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", cfg)
	t.Setenv("AWS_PROFILE", "local")
	const list = "arn:aws:states:::aws-sdk:dynamodb:listTables"
	try := func() task.Result {
		inv, err := awssdk.New(awssdk.Config{TimeoutSeconds: 5})
		if err != nil {
			t.Fatal(err)
		}
		return call(t, inv, list, `{}`)
	}
	ok(t, try()) // the services section
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	wantFailure(t, try(), "States.TaskFailed", "dynamodb:listTables: Unable to execute HTTP request: ") // the global variable wins
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", dyn)
	ok(t, try()) // the service's variable wins over the global one
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:1")
	ok(t, awssdkWithEndpoint(t, dyn, list)) // the registry's Endpoints win over them all
}

func awssdkWithEndpoint(t *testing.T, url, resource string) task.Result {
	t.Helper()
	inv, err := awssdk.New(awssdk.Config{Endpoints: map[string]string{"dynamodb": url}})
	if err != nil {
		t.Fatal(err)
	}
	return call(t, inv, resource, `{}`)
}

// An optimized integration's call that gets no answer fails as AWS records
// it: a host that does not resolve is <Service>.SdkClientException with
// Java's reason (LocalStack's AWS-validated
// test_task_service_sqs.py::TestTaskServiceSqs::test_send_message_no_such_queue:
// "Unable to execute HTTP request: no-such-queue-73e08fde: Name or service
// not known"); the AWS SDK integrations keep stepd's own cause.
func TestOptimizedNoAnswer(t *testing.T) {
	awstest.Env(t, "us-east-1")
	inv, err := awssdk.New(awssdk.Config{Endpoints: map[string]string{
		"sqs": "http://no-such-queue-73e08fde.invalid", "sns": "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, inv, "arn:aws:states:::sqs:sendMessage", `{"QueueUrl":"http://no-such-queue-73e08fde.invalid","MessageBody":"x"}`)
	if r.Error != "SQS.SdkClientException" || r.Cause != "Unable to execute HTTP request: no-such-queue-73e08fde.invalid: Name or service not known" {
		t.Errorf("sqs:sendMessage to a host that does not resolve = %s: %s", r.Error, r.Cause)
	}
	wantFailure(t, call(t, inv, "arn:aws:states:::sns:publish", `{"TopicArn":"arn:aws:sns:us-east-1:111111111111:t","Message":"x"}`),
		"SNS.SdkClientException", "Unable to execute HTTP request: ")
	wantFailure(t, call(t, inv, "arn:aws:states:::aws-sdk:sqs:sendMessage", `{"QueueUrl":"q","MessageBody":"x"}`),
		"States.TaskFailed", "sqs:sendMessage: Unable to execute HTTP request: ")
}
