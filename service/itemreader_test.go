package service_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task/registry"
)

// The items a Distributed Map's ItemReader read are committed with the step
// that received them: after a restart the execution goes on with the same
// items, although the object has changed since.
func TestItemReaderReplay(t *testing.T) {
	t.Run("CSV", func(t *testing.T) { readerReplay(t, []byte("name\nann\nbob\n")) })
	// A GZIP object is no UTF-8 text: the answer committed must give back
	// its bytes.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("name\nann\nbob\n"))
	zw.Close()
	t.Run("GZIP", func(t *testing.T) { readerReplay(t, gz.Bytes()) })
}

func readerReplay(t *testing.T, object []byte) {
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "bucket")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "rows.csv"), object, 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Config{Buckets: map[string]string{"b": data}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "stepd.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st, Invoker: reg})
	act, err := svc.CreateActivity(ctx, service.ActivityInput{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	def := `{"StartAt":"M","States":{
		"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV"},"Parameters":{"Bucket":"b","Key":"rows.csv"}},
			"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"Next":"Work"},
		"Work":{"Type":"Task","Resource":"` + act.ARN + `","End":true}}}`
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "reader", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	// Take the activity task (the Map has read its items), then kill the
	// service and change the object.
	_, before, err := svc.GetActivityTask(ctx, act.ARN, "w", 20*time.Second)
	if err != nil || before == "" {
		t.Fatalf("no activity task: %v", err)
	}
	svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if want := `[{"name":"ann"},{"name":"bob"}]`; before != want {
		t.Fatalf("the Map read %s, want %s", before, want)
	}
	if err := os.WriteFile(filepath.Join(data, "rows.csv"), []byte("name\ncid\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	st2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	svc2 := service.New(service.Config{Store: st2, Invoker: reg})
	defer svc2.Close()
	if n, err := svc2.Runner().Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resumed %d: %v", n, err)
	}
	token, after, err := svc2.GetActivityTask(ctx, act.ARN, "w", 20*time.Second)
	if err != nil || token == "" {
		t.Fatalf("no activity task after the restart: %v", err)
	}
	if after != before {
		t.Errorf("after the restart the activity's input is %s, before it %s", after, before)
	}
	if err := svc2.SendTaskSuccess(ctx, token, `"done"`); err != nil {
		t.Fatal(err)
	}
	if done, err := svc2.Wait(ctx, e.ARN); err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
}
