package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/memory"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/value"
)

// losingStore loses the first step of one execution that records a
// TaskSucceeded event, as a crash between a child's end and its parent's
// commit of the child's result would.
type losingStore struct {
	store.Store
	arn  string
	lost atomic.Bool
}

func (s *losingStore) AppendStep(ctx context.Context, st *store.Step) error {
	if st.ExecutionARN == s.arn {
		if s.lost.Load() {
			return errors.New("the disk went away") // until the crash: the driver retries
		}
		for _, ev := range st.Events {
			if ev.Type == "TaskSucceeded" {
				s.lost.Store(true)
				return errors.New("the disk went away")
			}
		}
	}
	return s.Store.AppendStep(ctx, st)
}

const parentARN = "arn:aws:states:us-east-1:123456789012:execution:parent:p1"

// startSyncParent creates the state machine "child" with childDef and the
// state machine "parent", whose one Task starts the child with .sync:2 and
// the input {"n":21}, keeping outputPath of the result; it starts the parent
// as p1 (parentARN) and returns the child state machine's ARN.
func startSyncParent(ctx context.Context, t *testing.T, svc *service.Service, childDef, outputPath string) string {
	t.Helper()
	const role = "arn:aws:iam::123456789012:role/x"
	child, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "child", RoleARN: role, Definition: childDef})
	if err != nil {
		t.Fatal(err)
	}
	parent, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "parent", RoleARN: role,
		Definition: `{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2",
			"Parameters":{"StateMachineArn":"` + child.ARN + `","Input":{"n":21}},"OutputPath":"` + outputPath + `","End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: parent.ARN, Name: "p1"}); err != nil {
		t.Fatal(err)
	}
	return child.ARN
}

// TestSyncChildEndedBeforeParentCommitted: the .sync:2 child succeeded,
// but the parent's step recording it was lost. After the restart the parent
// runs its task again, finds the child it started (same name and input) and
// takes its result, rather than failing on ExecutionAlreadyExists or
// starting another child.
func TestSyncChildEndedBeforeParentCommitted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mem := memory.New()
	losing := &losingStore{Store: mem, arn: parentARN}
	svc1 := service.New(service.Config{Store: losing})
	childSM := startSyncParent(ctx, t, svc1,
		`{"StartAt":"P","States":{"P":{"Type":"Pass","Parameters":{"doubled.$":"States.MathAdd($.n, $.n)"},"End":true}}}`, `$.Output`)
	// The parent's driver retries the commit that fails; the server
	// crashes meanwhile (Close abandons the driver).
	for !losing.lost.Load() {
		if ctx.Err() != nil {
			t.Fatal("the parent never tried to commit the child's result")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if e, err := mem.GetExecution(ctx, parentARN); err != nil || e.Status != "RUNNING" {
		t.Fatalf("before the restart: %+v %v", e, err)
	}
	children, _, err := svc1.ListExecutions(ctx, childSM, "", store.Page{})
	if err != nil || len(children) != 1 || children[0].Status != "SUCCEEDED" {
		t.Fatalf("the child before the restart: %+v %v", children, err)
	}
	svc1.Close()

	svc2 := service.New(service.Config{Store: mem})
	defer svc2.Close()
	if n, err := svc2.Runner().Resume(ctx); err != nil || n != 1 {
		t.Fatalf("Resume = %d, %v", n, err)
	}
	e, err := svc2.Wait(ctx, parentARN)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != "SUCCEEDED" || e.Output != `{"doubled":42}` {
		t.Fatalf("parent after the restart: %s %s %s %s", e.Status, e.Output, e.Error, e.Cause)
	}
	if children, _, err := svc2.ListExecutions(ctx, childSM, "", store.Page{}); err != nil || len(children) != 1 {
		t.Fatalf("children after the restart: %d, %v; want the one", len(children), err)
	}
}

// gatedStore holds up reading the steps of one execution (the child) until
// another (the parent) commits a step, or half a second has passed: with
// it, a parent resumed before its child is rebuilt acts on a child that has
// no runner yet.
type gatedStore struct {
	store.Store
	parent, child string
	once          sync.Once
	stepped       chan struct{}
}

func (s *gatedStore) AppendStep(ctx context.Context, st *store.Step) error {
	if st.ExecutionARN == s.parent {
		s.once.Do(func() { close(s.stepped) })
	}
	return s.Store.AppendStep(ctx, st)
}

func (s *gatedStore) Steps(ctx context.Context, arn string) ([]*store.Step, error) {
	if arn == s.child {
		select {
		case <-s.stepped:
		case <-time.After(500 * time.Millisecond):
		}
	}
	return s.Store.Steps(ctx, arn)
}

// ScanRunning is the store's, with the child's steps held up as Steps
// holds them (Resume reads them through the scan).
func (s *gatedStore) ScanRunning(ctx context.Context, fn func(e *store.Execution, steps []*store.Step) error) error {
	return s.Store.ScanRunning(ctx, func(e *store.Execution, steps []*store.Step) error {
		if e.ARN == s.child {
			select {
			case <-s.stepped:
			case <-time.After(500 * time.Millisecond):
			}
		}
		return fn(e, steps)
	})
}

// TestResumedParentWaitsForResumedChild: after a restart, a parent's
// re-dispatched .sync:2 task waits for its child even when the child is
// rebuilt after the parent (the store lists executions in start order),
// instead of failing on a child that is RUNNING but not yet resumed.
func TestResumedParentWaitsForResumedChild(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tokens := make(chan string, 4)
	queue := task.InvokerFunc(func(ctx context.Context, req *task.Request) task.Result {
		tokens <- req.TaskToken
		return task.Result{Output: value.ObjectOf("MessageId", "m-1")}
	})
	mem := memory.New()
	svc1 := service.New(service.Config{Store: mem, Invoker: queue})
	childSM := startSyncParent(ctx, t, svc1, `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken",
		"Parameters":{"QueueUrl":"q","MessageBody.$":"$$.Task.Token"},"ResultPath":"$.answer","End":true}}}`, `$.Output.answer`)
	token := <-tokens
	children, _, err := svc1.ListExecutions(ctx, childSM, "", store.Page{})
	if err != nil || len(children) != 1 {
		t.Fatalf("children: %+v %v", children, err)
	}
	svc1.Close()

	gated := &gatedStore{Store: mem, parent: parentARN, child: children[0].ARN, stepped: make(chan struct{})}
	svc2 := service.New(service.Config{Store: gated, Invoker: queue})
	defer svc2.Close()
	if n, err := svc2.Runner().Resume(ctx); err != nil || n != 2 {
		t.Fatalf("Resume = %d, %v", n, err)
	}
	if err := svc2.SendTaskSuccess(ctx, token, `{"ok":true}`); err != nil {
		t.Fatalf("SendTaskSuccess with the token from before the restart: %v", err)
	}
	e, err := svc2.Wait(ctx, parentARN)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != "SUCCEEDED" || e.Output != `{"ok":true}` {
		t.Fatalf("parent after the restart: %s %s %s %s", e.Status, e.Output, e.Error, e.Cause)
	}
}

// TestSyncChildSubmitted: a .sync:2 parent records TaskSubmitted with the
// child's ARN and start date (what StartExecution answered) before it
// waits, then TaskSucceeded with the child's description.
func TestSyncChildSubmitted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := service.New(service.Config{Store: memory.New()})
	defer svc.Close()
	childSM := startSyncParent(ctx, t, svc, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":0,"End":true}}}`, `$.Output`)
	if e, err := svc.Wait(ctx, parentARN); err != nil || e.Status != "SUCCEEDED" {
		t.Fatalf("parent: %+v %v", e, err)
	}
	children, _, err := svc.ListExecutions(ctx, childSM, "", store.Page{})
	if err != nil || len(children) != 1 {
		t.Fatalf("children: %+v %v", children, err)
	}
	events, _, err := svc.History(ctx, parentARN, "", 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var submitted string
	for _, ev := range events {
		types = append(types, ev.Type)
		if ev.Type == "TaskSubmitted" {
			submitted = string(ev.JSON)
		}
	}
	// StartExecution's answer with the SDK's HTTP metadata, members by
	// name, as AWS records it.
	var ev struct {
		Details struct {
			Output string `json:"output"`
		} `json:"taskSubmittedEventDetails"`
	}
	if err := json.Unmarshal([]byte(submitted), &ev); err != nil {
		t.Fatalf("TaskSubmitted %s: %v", submitted, err)
	}
	out, err := value.ParseString(ev.Details.Output)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := out.(*value.Object)
	arnV, _ := o.Get("ExecutionArn")
	start, _ := o.Get("StartDate")
	if !slices.Equal(types, []string{"ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSubmitted", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"}) ||
		!slices.Equal(o.Keys(), []string{"ExecutionArn", "SdkHttpMetadata", "SdkResponseMetadata", "StartDate"}) ||
		arnV != children[0].ARN || value.String(start) != fmt.Sprint(children[0].Started.UnixMilli()) {
		t.Fatalf("history %v; TaskSubmitted %s", types, submitted)
	}
	meta, _ := o.Get("SdkHttpMetadata")
	hdr, _ := meta.(*value.Object).Get("HttpHeaders")
	length, _ := hdr.(*value.Object).Get("Content-Length")
	body := `{"executionArn":"` + children[0].ARN + `","startDate":`
	if n, _ := strconv.Atoi(length.(string)); n <= len(body) || n > len(body)+len("1.234567890123E9}") {
		t.Errorf("Content-Length %v for %s…", length, body)
	}
}

// TestNestedStartErrors: a startExecution task that StartExecution refuses
// fails with StepFunctions.<AWS's code>Exception and the refusal's message.
func TestNestedStartErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := service.New(service.Config{Store: memory.New()})
	defer svc.Close()
	const role = "arn:aws:iam::123456789012:role/x"
	missing := "arn:aws:states:us-east-1:123456789012:stateMachine:missing"
	for i, tt := range []struct{ arn, want, cause string }{
		{missing, "StepFunctions.StateMachineDoesNotExistException", "State Machine Does Not Exist: '" + missing + "'"},
		{"arn:aws:states:us-east-1:123456789012:activity:a", "StepFunctions.InvalidArnException", "Invalid Arn: 'Resource type not valid in this context: activity'"},
	} {
		parent, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: fmt.Sprintf("parent%d", i), RoleARN: role,
			Definition: `{"StartAt":"S","States":{"S":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution",
				"Parameters":{"StateMachineArn":"` + tt.arn + `"},"End":true}}}`})
		if err != nil {
			t.Fatal(err)
		}
		e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: parent.ARN})
		if err != nil {
			t.Fatal(err)
		}
		// The cause carries the details the AWS SDK for Java adds, as
		// AWS records them.
		suffix := regexp.MustCompile(` \(Service: AWSStepFunctions; Status Code: 400; Error Code: [A-Za-z]+; Request ID: [0-9a-f-]{36}; Proxy: null\)$`)
		if e, err = svc.Wait(ctx, e.ARN); err != nil || e.Status != "FAILED" || e.Error != tt.want ||
			!strings.HasPrefix(e.Cause, tt.cause+" (") || !suffix.MatchString(e.Cause) {
			t.Errorf("%s: %+v %v, want %s: %s", tt.arn, e, err, tt.want, tt.cause)
		}
	}
}
