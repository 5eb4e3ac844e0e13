package awssdk_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/api"
	"github.com/stepd/stepd/conformance"
	"github.com/stepd/stepd/internal/shared"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// emulatorLacks are result members AWS adds that the emulators do not
// (server-side encryption and checksums by default, S3's AcceptRanges) or
// whose values depend on the server (response headers): they are left out
// of the comparison when the emulator's result has none.
var emulatorLacks = []string{"ServerSideEncryption", "ChecksumCRC32", "ChecksumType", "AcceptRanges"}

// TestRecordedCases runs the AWS-recorded cases of the AWS SDK and
// optimized integrations end to end, against the emulators instead of
// their mocks, and compares with what AWS answered: outputs, error names
// and causes.
func TestRecordedCases(t *testing.T) {
	inv := setup(t, "s3rver", "dynalite")
	dir := shared.CasesDir(t)
	names := []string{
		"services.aws_sdk_task_service.s3_get_object.binary", "services.aws_sdk_task_service.s3_get_object.empty_binary",
		"services.aws_sdk_task_service.s3_get_object.str", "services.aws_sdk_task_service.s3_put_object.list",
		"services.aws_sdk_task_service.s3_put_object.num", "services.aws_sdk_task_service.s3_put_object.str",
		"services.aws_sdk_task_service.dynamodb_put_update_get_item",
		"services.dynamodb_task_service.base_integrations.DYNAMODB_PUT_DELETE_ITEM",
		"services.dynamodb_task_service.base_integrations.DYNAMODB_PUT_QUERY",
		"error_handling.aws_sdk.dynamodb_put_item_no_such_table", "error_handling.aws_sdk.dynamodb_invalid_param",
		"error_handling.aws_sdk.no_such_bucket", "error_handling.task_service_dynamodb.put_item_invalid_table_name",
		"services.aws_sdk_task_service.sfn_send_task_outcome_with_no_such_token.state_machine_template0",
	}
	// A registry with the emulators' endpoints, as a user would write it.
	endpoints := map[string]string{}
	for _, n := range []string{"s3rver", "dynalite"} {
		e := startedURL(t, n)
		endpoints[map[string]string{"s3rver": "s3", "dynalite": "dynamodb"}[n]] = e
	}
	// Step Functions itself is stepd's own API.
	svc := service.New(service.Config{Store: memory.New()})
	srv := httptest.NewServer(api.New(svc, nil))
	t.Cleanup(func() {
		srv.Close()
		svc.Close()
	})
	endpoints["sfn"] = srv.URL
	cfg, _ := json.Marshal(map[string]any{"Aws": map[string]any{"Endpoints": endpoints}})
	cfgPath := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cases, err := conformance.Load(filepath.Join(dir, name+".json"))
			if err != nil || len(cases) != 1 {
				t.Fatalf("loading %s: %v", name, err)
			}
			c := cases[0]
			prepare(t, inv, c)
			c.Mocks, c.Config = nil, cfgPath // the emulators, not the mocks
			out, err := conformance.RunExecution(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(c.Recorded, "-2023,") {
				// Recorded before AWS's causes counted the SDK's attempts.
				out.Cause = strings.ReplaceAll(out.Cause, " (SDK Attempt Count: 1)", "")
				out.Output = dropAttemptCount(out.Output)
			}
			c.Output = relax(c.Output, out.Output)
			if !strings.Contains(fmtOutput(out.Output), "Extended Request ID") {
				// s3rver sends no x-amz-id-2, so the SDK has no extended ID.
				c.Output = dropExtendedID(c.Output)
			}
			if diffs := conformance.CompareOutcome(c, out); len(diffs) > 0 {
				t.Errorf("differs from AWS's recording (%s: %s):\n%s", out.Error, out.Cause, conformance.Format(diffs))
			}
		})
	}
}

func startedURL(t *testing.T, name string) string {
	t.Helper()
	return awstestURL(t, name)
}

// prepare creates what a case's recording had: its S3 buckets and objects
// (the case's setup), and the DynamoDB table of its input.
func prepare(t *testing.T, inv task.Invoker, c *conformance.Case) {
	t.Helper()
	if setup, found := c.Raw.Get("setup"); found {
		s3, _ := value.AsObject(setup).Get("s3")
		buckets, _ := value.AsObject(s3).Get("buckets")
		for _, b := range buckets.([]any) {
			call(t, inv, "arn:aws:states:::aws-sdk:s3:createBucket", `{"Bucket":`+value.String(b)+`}`)
		}
		objects, _ := value.AsObject(s3).Get("objects")
		for _, o := range objects.([]any) {
			obj := value.AsObject(o)
			b, _ := obj.Get("bucket")
			k, _ := obj.Get("key")
			body, _ := obj.Get("body")
			putRaw(t, b.(string), k.(string), body.(string))
		}
	}
	if table, found := value.AsObject(c.Input).Get("TableName"); found && !strings.HasPrefix(table.(string), "no_such") && !strings.HasPrefix(table.(string), "/") {
		r := call(t, inv, "arn:aws:states:::aws-sdk:dynamodb:createTable", `{"TableName":`+value.String(table)+`,
			"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],
			"BillingMode":"PAY_PER_REQUEST"}`)
		if r.Failed() && r.Error != "DynamoDb.ResourceInUseException" { // made by an earlier case
			t.Fatalf("createTable: %s: %s", r.Error, r.Cause)
		}
		waitActive(t, inv, table.(string))
	}
}

// relax adapts an expected output to an emulator: members only AWS adds are
// dropped when the result lacks them, the HTTP headers AWS sent are those
// the emulator sent (their names and HttpStatusCode are compared), and the
// recording's "date" placeholder matches any time.
func relax(want, got any) any {
	w, isObj := want.(*value.Object)
	g, _ := got.(*value.Object)
	if !isObj {
		if arr, isArr := want.([]any); isArr {
			garr, _ := got.([]any)
			out := make([]any, len(arr))
			for i := range arr {
				var gi any
				if i < len(garr) {
					gi = garr[i]
				}
				out[i] = relax(arr[i], gi)
			}
			return out
		}
		if want == "date" {
			return "<date>"
		}
		return want
	}
	out := value.NewObject(w.Len())
	for k, v := range w.All {
		var gv any
		if g != nil {
			gv, _ = g.Get(k)
		}
		if gv == nil && g != nil && !g.Has(k) && contains(emulatorLacks, k) {
			continue
		}
		switch k {
		case "AllHttpHeaders", "HttpHeaders":
			// AWS's headers are not the emulator's; each side has headers.
			if gv != nil {
				v = gv
			}
		case "RequestId":
			v = "<request_id>"
		}
		out.Set(k, relax(v, gv))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fmtOutput(v any) string { return value.String(v) }

func dropExtendedID(v any) any {
	parsed, err := value.ParseString(strings.ReplaceAll(value.String(v), ", Extended Request ID: <extended_request_id>", ""))
	if err != nil {
		return v
	}
	return parsed
}

// putRaw stores an object whose body is the given text, as the recording's
// setup did with boto3 (Step Functions' putObject would send JSON text).
func putRaw(t *testing.T, bucket, key, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, awstestURL(t, "s3rver")+"/"+bucket+"/"+key, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "binary/octet-stream")
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: "S3RVER", SecretAccessKey: "S3RVER"}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s/%s: %s", bucket, key, resp.Status)
	}
}

func dropAttemptCount(v any) any {
	if v == nil {
		return nil
	}
	parsed, err := value.ParseString(strings.ReplaceAll(value.String(v), " (SDK Attempt Count: 1)", ""))
	if err != nil {
		return v
	}
	return parsed
}
