package service_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/validate"
)

// TestNotImplementedAtRunTime: a definition AWS accepts is created, even
// when a state holds what stepd cannot run (a validator WARNING); an
// execution that enters that state fails with States.Runtime and the
// warning's message, one that does not enter it runs.
func TestNotImplementedAtRunTime(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "stepd.db"))
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st})
	defer svc.Close()
	def := `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.read","BooleanEquals":true,"Next":"M"}],"Default":"D"},
		"D":{"Type":"Pass","End":true},
		"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"manifest.json"},"ReaderConfig":{"InputType":"MANIFEST"}},
			"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`
	var warning string
	for _, d := range validate.Definition([]byte(def), validate.Standard).Diagnostics {
		if d.Code == asl.CodeUnsupported && d.IsWarning() {
			warning = d.Message
		}
	}
	if warning == "" {
		t.Skip("stepd runs a MANIFEST reader now")
	}
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "manifest", RoleARN: "arn:aws:iam::123456789012:role/r", Definition: def})
	if err != nil {
		t.Fatalf("AWS accepts the definition; stepd: %v", err)
	}
	for _, c := range []struct {
		input, status string
	}{{`{"read":false}`, "SUCCEEDED"}, {`{"read":true}`, "FAILED"}} {
		e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Input: c.input})
		if err != nil {
			t.Fatal(err)
		}
		done, err := svc.Wait(ctx, e.ARN)
		if err != nil || done.Status != c.status {
			t.Fatalf("%s: %+v %v", c.input, done, err)
		}
		if c.status == "FAILED" && (done.Error != "States.Runtime" || !strings.HasSuffix(done.Cause, ". "+warning)) {
			t.Errorf("failure %s: %s, want the warning %q", done.Error, done.Cause, warning)
		}
	}
}
