package awssdk_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepd/stepd/asl"
	"github.com/stepd/stepd/engine"
	"github.com/stepd/stepd/internal/awstest"
	"github.com/stepd/stepd/interp"
	"github.com/stepd/stepd/service"
	"github.com/stepd/stepd/store"
	"github.com/stepd/stepd/store/sqlite"
	"github.com/stepd/stepd/task"
	"github.com/stepd/stepd/task/awssdk"
	"github.com/stepd/stepd/value"
)

// The job integrations (ECS, Batch, Glue, CodeBuild, Athena) run against
// moto's server. What moto does with the jobs: ECS tasks (FARGATE) move
// one status per DescribeTasks to STOPPED with exit code 0, and StopTask
// stops them; Batch jobs (without docker) succeed at once; Glue job runs
// move STARTING, RUNNING, SUCCEEDED, one per GetJobRun, and moto has no
// BatchStopJobRun; CodeBuild builds succeed at the first BatchGetBuilds
// and StopBuild stops them; Athena queries move QUEUED, RUNNING,
// SUCCEEDED and StopQueryExecution cancels them. moto's state manager
// (/moto-api/state-manager) slows ECS tasks and Athena queries down for
// the tests that stop them. No moto job ends in failure by itself, so
// failures are jobs stopped from outside.

const states = "arn:aws:states:::"

// motoInvoker returns an invoker whose services are moto's, polling jobs
// every 50 ms.
func motoInvoker(t *testing.T) (*awssdk.Invoker, string) {
	t.Helper()
	awstest.Env(t, "us-east-1")
	m := awstest.StartMoto(t)
	endpoints := map[string]string{}
	for _, s := range []string{"ecs", "batch", "glue", "codebuild", "athena", "iam", "s3"} {
		endpoints[s] = m.URL
	}
	inv, err := awssdk.New(awssdk.Config{Endpoints: endpoints, PollSeconds: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	return inv, m.URL
}

// motoAPI posts to moto's own API (its configuration, its state manager).
func motoAPI(t *testing.T, url, path, body string) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: %s", path, resp.Status)
	}
}

// slow makes moto's jobs of a model (ecs::task, athena::execution) move to
// their next status only after n describe calls, until the test ends.
func slow(t *testing.T, url, model string, n int) {
	motoAPI(t, url, "/moto-api/state-manager/set-transition", `{"model_name":"`+model+`","transition":{"progression":"manual","times":`+value.String(value.Int(int64(n)))+`}}`)
	t.Cleanup(func() { motoAPI(t, url, "/moto-api/state-manager/unset-transition", `{"model_name":"`+model+`"}`) })
}

// ecsSetup makes a cluster and a task definition.
func ecsSetup(t *testing.T, inv task.Invoker) {
	ok(t, call(t, inv, states+"aws-sdk:ecs:createCluster", `{"ClusterName":"jobs"}`))
	ok(t, call(t, inv, states+"aws-sdk:ecs:registerTaskDefinition", `{"Family":"work","ContainerDefinitions":[{"Name":"app","Image":"busybox","Memory":128,"Essential":true}]}`))
}

const runTask = `{"Cluster":"jobs","TaskDefinition":"work","LaunchType":"FARGATE"}`

// run runs a one-state machine whose Task has resource and parameters
// (and extra fields) with a journal, to its end or until ctx ends.
func run(ctx context.Context, t *testing.T, inv task.Invoker, resource, params, extra string, j *memJournal) *engine.Driver {
	t.Helper()
	sm, err := asl.Parse([]byte(`{"StartAt":"Job","States":{"Job":{"Type":"Task","Resource":"` + resource + `","Parameters":` + params + extra + `,"End":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := interp.Compile(sm)
	if err != nil {
		t.Fatal(err)
	}
	d := engine.New(p, engine.Config{Invoker: inv, Clock: engine.RealClock{}, Journal: j, Submit: true})
	info := interp.Info{ExecutionARN: "arn:aws:states:us-east-1:123456789012:execution:m:" + t.Name(), StartTime: time.Now()}
	j.steps = append(j.steps, cloneStep(d.Start(info, value.NewObject(0), info.StartTime)))
	j.program, j.info = p, info
	go d.Run(ctx)
	return d
}

func finish(t *testing.T, d *engine.Driver) *interp.Execution {
	t.Helper()
	select {
	case <-d.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the execution did not end within 60 s")
	}
	return d.Execution()
}

// memJournal keeps the steps, as a store would.
type memJournal struct {
	steps   []*store.Step
	program *interp.Program
	info    interp.Info
	commits chan struct{}
}

func (j *memJournal) AppendStep(_ context.Context, s *store.Step) error {
	j.steps = append(j.steps, cloneStep(s))
	if j.commits != nil {
		j.commits <- struct{}{}
	}
	return nil
}

func cloneStep(s *store.Step) *store.Step {
	c := *s
	c.Input = append([]byte(nil), s.Input...)
	c.Events = make([]store.Event, len(s.Events))
	for i, e := range s.Events {
		c.Events[i] = store.Event{ID: e.ID, Type: e.Type, JSON: append([]byte(nil), e.JSON...)}
	}
	return &c
}

func history(x *interp.Execution) (types string, byType map[string]*value.Object) {
	byType = map[string]*value.Object{}
	var ts []string
	for _, e := range x.History() {
		ts = append(ts, e.Type)
		v, err := value.Parse(e.AppendJSON(nil, true))
		if err != nil {
			panic(err)
		}
		byType[e.Type] = v.(*value.Object)
	}
	return strings.Join(ts, " "), byType
}

const syncHistory = "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskSucceeded TaskStateExited ExecutionSucceeded"

// TestJobsRequestResponse: without a pattern, the start call's answer in
// Step Functions' shape (PascalCase, the SDK's HTTP metadata, times in
// epoch milliseconds); API errors named as Step Functions names them.
func TestJobsRequestResponse(t *testing.T) {
	inv, _ := motoInvoker(t)
	ecsSetup(t, inv)
	out := ok(t, call(t, inv, states+"ecs:runTask", runTask))
	task0 := get(t, out, "Tasks").([]any)[0].(*value.Object)
	if s := get(t, task0, "LastStatus"); s == "STOPPED" {
		t.Errorf("request-response waited for the task: %s", value.String(task0))
	}
	get(t, out, "SdkHttpMetadata.HttpStatusCode")
	get(t, out, "SdkResponseMetadata")
	if f := get(t, out, "Failures"); len(asList(f)) != 0 {
		t.Errorf("Failures %s", value.String(f))
	}
	wantFailure(t, call(t, inv, states+"ecs:runTask", `{"Cluster":"nowhere","TaskDefinition":"work","LaunchType":"FARGATE"}`),
		"ECS.ClusterNotFoundException", "")

	ok(t, call(t, inv, states+"aws-sdk:glue:createJob", `{"Name":"etl","Role":"arn:aws:iam::123456789012:role/glue","Command":{"Name":"glueetl","ScriptLocation":"s3://scripts/etl.py"}}`))
	g := ok(t, call(t, inv, states+"glue:startJobRun", `{"JobName":"etl"}`))
	if get(t, g, "JobName") != "etl" || !strings.HasPrefix(get(t, g, "JobRunId").(string), "jr_") {
		t.Errorf("glue:startJobRun: %s", value.String(g))
	}
	wantFailure(t, call(t, inv, states+"glue:startJobRun.waitForTaskToken", `{"JobName":"etl"}`), "States.Runtime", "the resource")
}

// TestJobsSync runs each job integration with .sync to the job's end: the
// start call's answer is recorded (TaskSubmitted), the output is the job
// as the service describes it when it ended.
func TestJobsSync(t *testing.T) {
	inv, url := motoInvoker(t)
	ecsSetup(t, inv)
	role := get(t, ok(t, call(t, inv, states+"aws-sdk:iam:createRole", `{"RoleName":"jobs","AssumeRolePolicyDocument":"{}"}`)), "Role.Arn").(string)
	motoAPI(t, url, "/moto-api/config", `{"batch":{"use_docker":false}}`)
	ok(t, call(t, inv, states+"aws-sdk:batch:createComputeEnvironment", `{"ComputeEnvironmentName":"stepd-ce","Type":"UNMANAGED","ServiceRole":"`+role+`"}`))
	ok(t, call(t, inv, states+"aws-sdk:batch:createJobQueue", `{"JobQueueName":"queue","State":"ENABLED","Priority":1,"ComputeEnvironmentOrder":[{"Order":1,"ComputeEnvironment":"stepd-ce"}]}`))
	ok(t, call(t, inv, states+"aws-sdk:batch:registerJobDefinition", `{"JobDefinitionName":"jd","Type":"container","ContainerProperties":{"Image":"busybox","Vcpus":1,"Memory":128,"Command":["true"]}}`))
	ok(t, call(t, inv, states+"aws-sdk:glue:createJob", `{"Name":"etl-sync","Role":"`+role+`","Command":{"Name":"glueetl","ScriptLocation":"s3://scripts/etl.py"}}`))
	ok(t, call(t, inv, states+"aws-sdk:codebuild:createProject", `{"Name":"build","Source":{"Type":"S3","Location":"sources/app.zip"},"Artifacts":{"Type":"S3","Location":"artifacts"},"Environment":{"Type":"LINUX_CONTAINER","Image":"aws/codebuild/standard:7.0","ComputeType":"BUILD_GENERAL1_SMALL"},"ServiceRole":"`+role+`"}`))

	for _, c := range []struct {
		resource, params, path, want string
	}{
		{"ecs:runTask.sync", runTask, "LastStatus", "STOPPED"},
		{"batch:submitJob.sync", `{"JobName":"j","JobQueue":"queue","JobDefinition":"jd"}`, "Status", "SUCCEEDED"},
		{"glue:startJobRun.sync", `{"JobName":"etl-sync"}`, "JobRunState", "SUCCEEDED"},
		{"codebuild:startBuild.sync", `{"ProjectName":"build"}`, "Build.BuildStatus", "SUCCEEDED"},
		{"athena:startQueryExecution.sync", `{"QueryString":"SELECT 1","ResultConfiguration":{"OutputLocation":"s3://results/"}}`, "QueryExecution.Status.State", "SUCCEEDED"},
	} {
		t.Run(c.resource, func(t *testing.T) {
			x := finish(t, run(context.Background(), t, inv, states+c.resource, c.params, "", &memJournal{}))
			types, ev := history(x)
			if types != syncHistory {
				t.Fatalf("history %s, want %s", types, syncHistory)
			}
			submitted := get(t, ev["TaskSubmitted"], "taskSubmittedEventDetails.output").(string)
			if !strings.Contains(submitted, `"SdkHttpMetadata"`) {
				t.Errorf("TaskSubmitted's output is not the start call's answer: %s", submitted)
			}
			out := x.Output().(*value.Object)
			if got := get(t, out, c.path); got != c.want {
				t.Errorf("%s = %v, want %s; output %s", c.path, got, c.want, value.String(out))
			}
			if strings.HasPrefix(c.resource, "athena:") {
				// Times as the AWS SDK for Java 1.x writes them: epoch milliseconds.
				if _, isNum := get(t, out, "QueryExecution.Status.SubmissionDateTime").(value.Number); !isNum {
					t.Errorf("SubmissionDateTime is not epoch milliseconds: %s", value.String(out))
				}
			}
			if strings.Contains(value.String(out), "SdkHttpMetadata") {
				t.Errorf("the .sync output carries the start call's metadata: %s", value.String(out))
			}
		})
	}
}

// TestJobsSyncFailed: a job that ends badly (here a query cancelled from
// outside while the state waits) fails the state with States.TaskFailed
// and the job as described as the cause.
func TestJobsSyncFailed(t *testing.T) {
	inv, url := motoInvoker(t)
	slow(t, url, "athena::execution", 1000)
	j := &memJournal{commits: make(chan struct{}, 16)}
	d := run(context.Background(), t, inv, states+"athena:startQueryExecution.sync", `{"QueryString":"SELECT 2"}`, "", j)
	<-j.commits // TaskSubmitted
	_, ev := history2(j)
	id := get(t, ev, "QueryExecutionId").(string)
	ok(t, call(t, inv, states+"aws-sdk:athena:stopQueryExecution", `{"QueryExecutionId":"`+id+`"}`))
	x := finish(t, d)
	f := x.Failure()
	if x.Status() != interp.Failed || f.Error != "States.TaskFailed" {
		t.Fatalf("status %s failure %+v", x.Status(), f)
	}
	cause, err := value.ParseString(f.Cause)
	if err != nil {
		t.Fatalf("cause %q: %v", f.Cause, err)
	}
	if s := get(t, cause.(*value.Object), "QueryExecution.Status.State"); s != "CANCELLED" {
		t.Errorf("cause %s", f.Cause)
	}
}

// history2 reads the output of the TaskSubmitted committed to j.
func history2(j *memJournal) (string, *value.Object) {
	for _, s := range j.steps {
		for _, e := range s.Events {
			if e.Type == "TaskSubmitted" {
				v, _ := value.Parse(e.JSON)
				d, _ := v.(*value.Object).Get("taskSubmittedEventDetails")
				out, _ := d.(*value.Object).Get("output")
				o, _ := value.ParseString(out.(string))
				return e.Type, o.(*value.Object)
			}
		}
	}
	return "", nil
}

// TestJobsSyncStopped: a state that gives up on its job (TimeoutSeconds)
// stops it: ECS StopTask, Athena StopQueryExecution.
func TestJobsSyncStopped(t *testing.T) {
	inv, url := motoInvoker(t)
	ecsSetup(t, inv)
	slow(t, url, "ecs::task", 1000)
	slow(t, url, "athena::execution", 1000)
	j := &memJournal{}
	x := finish(t, run(context.Background(), t, inv, states+"ecs:runTask.sync", runTask, `,"TimeoutSeconds":1`, j))
	if types, _ := history(x); !strings.Contains(types, "TaskSubmitted TaskTimedOut ExecutionFailed") {
		t.Fatalf("history %s", types)
	}
	_, started := history2(j)
	arn := get(t, started, "Tasks").([]any)[0].(*value.Object)
	taskArn := get(t, arn, "TaskArn").(string)
	// The task's goroutine stops the job after the execution has moved on.
	eventually(t, func() (bool, string) {
		desc := ok(t, call(t, inv, states+"aws-sdk:ecs:describeTasks", `{"Cluster":"jobs","Tasks":["`+taskArn+`"]}`))
		t0 := get(t, desc, "Tasks").([]any)[0].(*value.Object)
		return get(t, t0, "DesiredStatus") == "STOPPED" && strings.Contains(get(t, t0, "StoppedReason").(string), "Step Functions"), value.String(t0)
	}, "the timed-out task was not stopped")

	j = &memJournal{}
	x = finish(t, run(context.Background(), t, inv, states+"athena:startQueryExecution.sync", `{"QueryString":"SELECT 3"}`, `,"TimeoutSeconds":1`, j))
	if x.Status() != interp.Failed || x.Failure().Error != "States.Timeout" {
		t.Fatalf("status %s failure %+v", x.Status(), x.Failure())
	}
	_, started = history2(j)
	eventually(t, func() (bool, string) {
		q := ok(t, call(t, inv, states+"aws-sdk:athena:getQueryExecution", `{"QueryExecutionId":"`+get(t, started, "QueryExecutionId").(string)+`"}`))
		return get(t, q, "QueryExecution.Status.State") == "CANCELLED", value.String(q)
	}, "the timed-out query was not stopped")
}

// eventually waits up to 20 s for cond to hold.
func eventually(t *testing.T, cond func() (bool, string), msg string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		done, state := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", msg, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJobsSyncResume: an execution abandoned while its job runs (a
// crash, a shutdown) leaves the job running; rebuilt from its steps, it
// waits for that job, and starts no second one.
func TestJobsSyncResume(t *testing.T) {
	inv, url := motoInvoker(t)
	ok(t, call(t, inv, states+"aws-sdk:ecs:createCluster", `{"ClusterName":"resume"}`))
	ok(t, call(t, inv, states+"aws-sdk:ecs:registerTaskDefinition", `{"Family":"work","ContainerDefinitions":[{"Name":"app","Image":"busybox","Memory":128}]}`))
	slow(t, url, "ecs::task", 3)
	ctx, cancel := context.WithCancel(context.Background())
	j := &memJournal{commits: make(chan struct{}, 16)}
	d := run(ctx, t, inv, states+"ecs:runTask.sync", `{"Cluster":"resume","TaskDefinition":"work","LaunchType":"FARGATE"}`, "", j)
	<-j.commits // TaskSubmitted
	cancel()
	<-d.Done()
	list := ok(t, call(t, inv, states+"aws-sdk:ecs:listTasks", `{"Cluster":"resume"}`))
	arns := asList(get(t, list, "TaskArns"))
	if len(arns) != 1 {
		t.Fatalf("%d tasks after the start", len(arns))
	}
	desc := ok(t, call(t, inv, states+"aws-sdk:ecs:describeTasks", `{"Cluster":"resume","Tasks":["`+arns[0].(string)+`"]}`))
	if s := get(t, get(t, desc, "Tasks").([]any)[0].(*value.Object), "DesiredStatus"); s != "RUNNING" {
		t.Fatalf("the abandoned execution stopped its task (desired status %v)", s)
	}

	r := engine.New(j.program, engine.Config{Invoker: inv, Clock: engine.RealClock{}, Journal: &memJournal{}, Submit: true})
	if err := r.Replay(j.info, value.NewObject(0), j.steps); err != nil {
		t.Fatal(err)
	}
	go r.Run(context.Background())
	x := finish(t, r)
	if types, _ := history(x); types != syncHistory {
		t.Fatalf("resumed history %s", types)
	}
	if got := get(t, x.Output().(*value.Object), "TaskArn"); got != arns[0] {
		t.Errorf("resumed output is task %v, want %v", got, arns[0])
	}
	if n := len(asList(get(t, ok(t, call(t, inv, states+"aws-sdk:ecs:listTasks", `{"Cluster":"resume"}`)), "TaskArns"))); n != 1 {
		t.Errorf("%d tasks after the resumed run, want the one", n)
	}
}

// TestJobsSyncServiceRestart: stepd serve's service on a SQLite file is
// closed while an ecs:runTask.sync state waits for its task, and a new
// service on the same file resumes the execution: it waits for the task
// the first one started (still running: a shutdown stops no job) and
// starts none.
func TestJobsSyncServiceRestart(t *testing.T) {
	inv, url := motoInvoker(t)
	ok(t, call(t, inv, states+"aws-sdk:ecs:createCluster", `{"ClusterName":"restart"}`))
	ok(t, call(t, inv, states+"aws-sdk:ecs:registerTaskDefinition", `{"Family":"work","ContainerDefinitions":[{"Name":"app","Image":"busybox","Memory":128}]}`))
	slow(t, url, "ecs::task", 1000000)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepd.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: st, Invoker: inv})
	sm, _, err := svc.CreateStateMachine(ctx, service.StateMachineInput{Name: "jobs", RoleARN: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt":"Run","States":{"Run":{"Type":"Task","Resource":"arn:aws:states:::ecs:runTask.sync","Parameters":{"Cluster":"restart","TaskDefinition":"work","LaunchType":"FARGATE"},"End":true}}}`})
	if err != nil {
		t.Fatal(err)
	}
	e, err := svc.StartExecution(ctx, service.StartInput{StateMachineARN: sm.ARN, Name: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, func() (bool, string) {
		evs, _, err := svc.History(ctx, e.ARN, "", 100, false)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		return strings.Contains(strings.Join(types, " "), "TaskSubmitted"), strings.Join(types, " ")
	}, "no TaskSubmitted")
	svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	arns := asList(get(t, ok(t, call(t, inv, states+"aws-sdk:ecs:listTasks", `{"Cluster":"restart"}`)), "TaskArns"))
	if len(arns) != 1 {
		t.Fatalf("%d tasks started", len(arns))
	}
	desc := ok(t, call(t, inv, states+"aws-sdk:ecs:describeTasks", `{"Cluster":"restart","Tasks":["`+arns[0].(string)+`"]}`))
	if s := get(t, get(t, desc, "Tasks").([]any)[0].(*value.Object), "DesiredStatus"); s != "RUNNING" {
		t.Fatalf("the shutdown stopped the task (desired status %v)", s)
	}

	slow(t, url, "ecs::task", 1)
	st2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	svc2 := service.New(service.Config{Store: st2, Invoker: inv})
	defer svc2.Close()
	if n, err := svc2.Runner().Resume(ctx); err != nil || n != 1 {
		t.Fatalf("resumed %d: %v", n, err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done, err := svc2.Wait(wctx, e.ARN)
	if err != nil || done.Status != "SUCCEEDED" {
		t.Fatalf("%+v %v", done, err)
	}
	if !strings.Contains(done.Output, arns[0].(string)) {
		t.Errorf("output %s is not the first task's", done.Output)
	}
	if n := len(asList(get(t, ok(t, call(t, inv, states+"aws-sdk:ecs:listTasks", `{"Cluster":"restart"}`)), "TaskArns"))); n != 1 {
		t.Errorf("%d tasks after the restart, want the one", n)
	}
}
