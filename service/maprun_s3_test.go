package service_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/internal/testlog"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awssdk"
	"github.com/stepd/stepd/task/registry"
	"github.com/stepd/stepd/value"
)

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestMain(m *testing.M) {
	code := testlog.Run(m)
	awstest.StopEmulators()
	os.Exit(code)
}

// bucket is where a test's Distributed Map reads and writes: a folder
// standing in for a bucket, or a real S3-compatible server.
type bucket struct {
	inv task.Invoker
	put func(key, body string)
	get func(key string) string
}

func s3call(t *testing.T, inv task.Invoker, op, params string) any {
	t.Helper()
	in, err := value.ParseString(params)
	if err != nil {
		t.Fatal(err)
	}
	r := inv.Invoke(context.Background(), &task.Request{Resource: "arn:aws:states:::aws-sdk:s3:" + op, StateName: "T", Input: in})
	if r.Failed() {
		t.Fatalf("s3 %s: %s: %s", op, r.Error, r.Cause)
	}
	return r.Output
}

func folderBucket(t *testing.T) bucket {
	dir := filepath.Join(t.TempDir(), "bucket")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{Buckets: map[string]string{"stepd-maprun": dir}})
	if err != nil {
		t.Fatal(err)
	}
	return bucket{inv: reg,
		put: func(key, body string) {
			if err := os.WriteFile(filepath.Join(dir, key), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		get: func(key string) string {
			b, err := os.ReadFile(filepath.Join(dir, key))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}}
}

func s3rverBucket(t *testing.T) bucket {
	awstest.Env(t, "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "S3RVER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "S3RVER")
	e := awstest.StartEmulator(t, filepath.Join("..", "task", "awssdk", "testdata", "emulators"), "s3rver")
	inv, err := awssdk.New(awssdk.Config{Endpoints: map[string]string{"s3": e.URL}})
	if err != nil {
		t.Fatal(err)
	}
	s3call(t, inv, "createBucket", `{"Bucket":"stepd-maprun"}`)
	return bucket{inv: inv,
		put: func(key, body string) {
			// Step Functions' putObject stores a string Body with its
			// quotes: the object is uploaded as it is, with a signed PUT.
			req, err := http.NewRequest(http.MethodPut, e.URL+"/stepd-maprun/"+key, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			creds := aws.Credentials{AccessKeyID: "S3RVER", SecretAccessKey: "S3RVER"}
			if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("PUT %s: %s", key, resp.Status)
			}
		},
		get: func(key string) string {
			out := s3call(t, inv, "getObject", `{"Bucket":"stepd-maprun","Key":"`+key+`"}`)
			b, _ := out.(*value.Object).Get("Body")
			s, _ := b.(string)
			return s
		}}
}

// TestMapRunOverS3 reads a Distributed Map's items from a CSV object and
// writes its results, over the folder stand-in and over s3rver, on SQLite:
// UpdateMapRun tolerates one failure while the Map Run runs, a second
// failure exceeds it and fails the execution, RedriveExecution runs the
// failed children and the items never started, the service stops while
// they run and another finishes them; the ResultWriter's manifest then
// lists every item as succeeded.
func TestMapRunOverS3(t *testing.T) {
	for _, b := range []struct {
		name string
		make func(*testing.T) bucket
	}{{"folder", folderBucket}, {"s3rver", s3rverBucket}} {
		t.Run(b.name, func(t *testing.T) { mapRunOverS3(t, b.make(t)) })
	}
}

func mapRunOverS3(t *testing.T, b bucket) {
	ctx := context.Background()
	b.put("rows.csv", "name\nann\nbob\ncid\ndan\n")
	if got := b.get("rows.csv"); got != "name\nann\nbob\ncid\ndan\n" {
		t.Fatalf("rows.csv reads %q", got)
	}
	path := filepath.Join(t.TempDir(), "stepd.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st, Invoker: b.inv})
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","Label":"Rows","MaxConcurrency":1,"ToleratedFailureCount":0,"End":true,
		"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"FIRST_ROW"},"Parameters":{"Bucket":"stepd-maprun","Key":"rows.csv"}},
		"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"stepd-maprun","Prefix":"out"}},
		"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"W","States":{"W":{"Type":"Task","Resource":"` + act.ARN + `","End":true}}}}}}`
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "rows", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := svc.Wait(ctxTimeout(t, 2*time.Second), e.ARN); err == nil && d.Status != "RUNNING" {
		t.Fatalf("the execution ended at once: %+v", d)
	}
	first := takeTask(t, svc, act.ARN)
	r := waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Executions.Running == 1 })
	one := int64(1)
	if err := svc.UpdateMapRun(ctx, r.ARN, service.MapRunUpdate{ToleratedFailureCount: &one}); err != nil {
		t.Fatal(err)
	}
	waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.ToleratedFailureCount == 1 })
	if err := svc.SendTaskFailure(ctx, first, "Broken", "ann"); err != nil {
		t.Fatal(err)
	}
	// Tolerated: the next item starts; its failure is one too many.
	if err := svc.SendTaskFailure(ctx, takeTask(t, svc, act.ARN), "Broken", "bob"); err != nil {
		t.Fatal(err)
	}
	failed, err := svc.Wait(ctx, e.ARN)
	if err != nil || failed.Status != "FAILED" || failed.Error != "States.ExceedToleratedFailureThreshold" {
		t.Fatalf("%+v %v", failed, err)
	}
	r = waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Status == "FAILED" })
	if r.Executions.Failed != 2 || r.Executions.Pending != 2 || r.Executions.Total != 4 {
		t.Errorf("the failed Map Run: %+v", r)
	}
	if _, err := svc.RedriveExecution(ctx, e.ARN); err != nil {
		t.Fatal(err)
	}
	redriven := takeTask(t, svc, act.ARN)
	svc = restart(t, svc, st, path, service.Config{Invoker: b.inv})
	if err := svc.SendTaskSuccess(ctx, redriven, `"ok"`); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := svc.SendTaskSuccess(ctx, takeTask(t, svc, act.ARN), `"ok"`); err != nil {
			t.Fatal(err)
		}
	}
	done, err := svc.Wait(ctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
	r = waitMapRun(t, svc, e.ARN, func(r *store.MapRun) bool { return r.Status != "RUNNING" })
	if r.Status != "SUCCEEDED" || r.RedriveCount != 1 || r.Executions.Succeeded != 4 || r.Executions.Failed != 0 || r.Executions.ResultsWritten != 4 {
		t.Errorf("the redriven Map Run: %+v", r)
	}
	out, err := value.ParseString(done.Output)
	if err != nil {
		t.Fatal(err)
	}
	details, _ := out.(*value.Object).Get("ResultWriterDetails")
	key, _ := details.(*value.Object).Get("Key")
	manifest := b.get(key.(string))
	if !strings.Contains(manifest, r.ARN) {
		t.Errorf("manifest %s", manifest)
	}
	id := r.ARN[strings.LastIndexByte(r.ARN, ':')+1:]
	succeeded := b.get("out/" + id + "/SUCCEEDED_0.json")
	if n := strings.Count(succeeded, `"Status":"SUCCEEDED"`); n != 4 || strings.Contains(manifest, "FAILED_0.json") {
		t.Errorf("%d items written as succeeded; manifest %s", n, manifest)
	}
	// The written child executions are the Map Run's.
	kids, _, err := svc.ListMapRunExecutions(ctx, r.ARN, "", store.Page{})
	if err != nil || len(kids) != 4 {
		t.Fatalf("children %d %v", len(kids), err)
	}
	for _, k := range kids {
		if !strings.Contains(succeeded, k.ARN) || k.Status != "SUCCEEDED" {
			t.Errorf("child %s (%s) is not written as succeeded", k.ARN, k.Status)
		}
	}
}
