package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/store/sqlite"
)

func passDef(result string) string {
	return `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"` + result + `","End":true}}}`
}

// waitEnded polls DescribeExecution until the execution has ended.
func waitEnded(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 400; i++ {
		d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != types.ExecutionStatusRunning {
			return d
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("execution %s still running", arn)
	return nil
}

// TestVersionsAndAliases drives versions and aliases through the AWS SDK
// for Go on a SQLite store: publishing (on create, on update, by itself,
// idempotently, with revision checks), executions of versions and of an
// alias routed by weight, the executions listed by version and alias, and
// AWS's conflicts and errors.
func TestVersionsAndAliases(t *testing.T) {
	st, err := sqlite.Open(context.Background(), t.TempDir()+"/db")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, st, nil)
	ctx := context.Background()
	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("v"), RoleArn: aws.String(role), Definition: aws.String(passDef("one")),
		Publish: true, VersionDescription: aws.String("first")})
	if err != nil {
		t.Fatal(err)
	}
	smARN := aws.ToString(created.StateMachineArn)
	v1 := aws.ToString(created.StateMachineVersionArn)
	if v1 != smARN+":1" {
		t.Fatalf("version of CreateStateMachine with publish: %q", v1)
	}
	d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(v1)})
	if err != nil || aws.ToString(d.StateMachineArn) != v1 || aws.ToString(d.Description) != "first" || aws.ToString(d.Definition) != passDef("one") || d.RevisionId != nil {
		t.Fatalf("DescribeStateMachine of version 1: %+v %v", d, err)
	}
	// As AWS answers: no revisionId until the state machine is updated;
	// its first revision is INITIAL to PublishStateMachineVersion.
	const rev1 = "INITIAL"
	// Publishing the same revision again returns version 1.
	p, err := c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(smARN)})
	if err != nil || aws.ToString(p.StateMachineVersionArn) != v1 {
		t.Fatalf("publishing the same revision: %+v %v", p, err)
	}
	// An update publishes version 2; the state machine has the new definition, version 1 the old.
	u, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), Definition: aws.String(passDef("two")), Publish: true,
		VersionDescription: aws.String("second")})
	if err != nil || aws.ToString(u.StateMachineVersionArn) != smARN+":2" || u.RevisionId == nil {
		t.Fatalf("update with publish: %+v %v", u, err)
	}
	v2 := aws.ToString(u.StateMachineVersionArn)
	_, err = c.PublishStateMachineVersion(ctx, &sfn.PublishStateMachineVersionInput{StateMachineArn: aws.String(smARN), RevisionId: aws.String(rev1)})
	if want := "Failed to publish the State Machine version for revision INITIAL. The current State Machine revision is " + aws.ToString(u.RevisionId) + "."; apiCode(err) != "ConflictException" || !strings.Contains(err.Error(), want) {
		t.Errorf("publishing with a stale revision id: %v, want ConflictException %q", err, want)
	}
	// An update that changes nothing keeps the revision, so publishing is idempotent.
	same, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), Definition: aws.String(passDef("two")), RoleArn: aws.String(role), Publish: true})
	if err != nil || aws.ToString(same.RevisionId) != aws.ToString(u.RevisionId) || aws.ToString(same.StateMachineVersionArn) != v2 {
		t.Errorf("an update that changes nothing: %+v %v", same, err)
	}
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: aws.String(smARN), VersionDescription: aws.String("x"), Definition: aws.String(passDef("three"))}); apiCode(err) != "ValidationException" {
		t.Errorf("versionDescription without publish: %v", err)
	}
	list, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smARN)})
	if err != nil || len(list.StateMachineVersions) != 2 || aws.ToString(list.StateMachineVersions[0].StateMachineVersionArn) != v2 {
		t.Fatalf("ListStateMachineVersions: %+v %v", list, err)
	}

	// An execution of version 1 runs version 1's definition.
	ex, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(v1), Name: aws.String("on-v1"), TraceHeader: aws.String("Root=1-abc")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(aws.ToString(ex.ExecutionArn), ":execution:v:on-v1") {
		t.Errorf("execution ARN of a version's execution: %s", aws.ToString(ex.ExecutionArn))
	}
	done := waitEnded(t, c, aws.ToString(ex.ExecutionArn))
	if aws.ToString(done.Output) != `"one"` || aws.ToString(done.StateMachineVersionArn) != v1 || done.StateMachineAliasArn != nil ||
		aws.ToString(done.StateMachineArn) != smARN || aws.ToString(done.TraceHeader) != "Root=1-abc" {
		t.Errorf("DescribeExecution of version 1's execution: output %s version %s alias %v sm %s trace %v", aws.ToString(done.Output),
			aws.ToString(done.StateMachineVersionArn), done.StateMachineAliasArn, aws.ToString(done.StateMachineArn), done.TraceHeader)
	}
	fe, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: ex.ExecutionArn})
	if err != nil || aws.ToString(fe.Definition) != passDef("one") || fe.RevisionId != nil {
		t.Errorf("DescribeStateMachineForExecution: %+v %v", fe, err)
	}

	// Aliases: the same configuration again is the same alias; another is a conflict.
	routes := []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v1), Weight: 50}, {StateMachineVersionArn: aws.String(v2), Weight: 50}}
	a, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("live"), Description: aws.String("half and half"), RoutingConfiguration: routes})
	if err != nil || aws.ToString(a.StateMachineAliasArn) != smARN+":live" {
		t.Fatalf("CreateStateMachineAlias: %+v %v", a, err)
	}
	aliasARN := aws.ToString(a.StateMachineAliasArn)
	if again, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("live"), Description: aws.String("half and half"), RoutingConfiguration: routes}); err != nil || aws.ToString(again.StateMachineAliasArn) != aliasARN {
		t.Errorf("the same alias again: %+v %v", again, err)
	}
	if _, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("live"), RoutingConfiguration: routes[:1]}); apiCode(err) != "ValidationException" ||
		!strings.HasSuffix(err.Error(), "Sum of routing configuration weights must equal 100. Received: [50]") {
		t.Errorf("weights summing to 50: %v", err)
	}
	one := []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v1), Weight: 100}}
	if _, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("live"), RoutingConfiguration: one}); apiCode(err) != "ConflictException" ||
		!strings.HasSuffix(err.Error(), "Failed to create alias because an alias with the same name and a different routing configuration already exists.") {
		t.Errorf("an alias with the same name and other routes: %v", err)
	}
	if _, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("gone"), RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(smARN + ":9"), Weight: 100}}}); apiCode(err) != "ResourceNotFound" ||
		!strings.HasSuffix(err.Error(), "Resource not found: '"+smARN+":9'") {
		t.Errorf("an alias to a missing version: %v", err)
	}
	if _, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("123"), RoutingConfiguration: one}); apiCode(err) != "ValidationException" {
		t.Errorf("an alias named with digits only: %v", err)
	}
	if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); apiCode(err) != "ConflictException" ||
		!strings.HasSuffix(err.Error(), "Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [live]") {
		t.Errorf("deleting a version an alias routes to: %v", err)
	}
	// Executions on the alias are routed by weight and record the alias.
	seen := map[string]int{}
	for i := range 40 {
		e, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(aliasARN), Name: aws.String(fmt.Sprint("a", i))})
		if err != nil {
			t.Fatal(err)
		}
		d := waitEnded(t, c, aws.ToString(e.ExecutionArn))
		if aws.ToString(d.StateMachineAliasArn) != aliasARN {
			t.Fatalf("an alias's execution records alias %q", aws.ToString(d.StateMachineAliasArn))
		}
		want := map[string]string{v1: `"one"`, v2: `"two"`}[aws.ToString(d.StateMachineVersionArn)]
		if want == "" || aws.ToString(d.Output) != want {
			t.Fatalf("an alias's execution ran version %q with output %s", aws.ToString(d.StateMachineVersionArn), aws.ToString(d.Output))
		}
		seen[aws.ToString(d.StateMachineVersionArn)]++
	}
	if seen[v1] == 0 || seen[v2] == 0 { // each has 2^-40 odds of never being drawn
		t.Errorf("40 executions of a 50/50 alias went %v", seen)
	}
	// Moving all the weight to version 2.
	if _, err := c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN),
		RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v2), Weight: 100}}}); err != nil {
		t.Fatal(err)
	}
	da, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN)})
	if err != nil || aws.ToString(da.Description) != "half and half" || len(da.RoutingConfiguration) != 1 || da.RoutingConfiguration[0].Weight != 100 || aws.ToString(da.Name) != "live" {
		t.Fatalf("DescribeStateMachineAlias after update: %+v %v", da, err)
	}
	for i := range 3 {
		e, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(aliasARN), Name: aws.String(fmt.Sprint("b", i))})
		if err != nil {
			t.Fatal(err)
		}
		if d := waitEnded(t, c, aws.ToString(e.ExecutionArn)); aws.ToString(d.StateMachineVersionArn) != v2 {
			t.Errorf("after the update, an alias's execution ran %s", aws.ToString(d.StateMachineVersionArn))
		}
	}
	// ListExecutions by version and by alias.
	byV1, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(v1), MaxResults: 1000})
	if err != nil || len(byV1.Executions) != 1+seen[v1] {
		t.Fatalf("executions of version 1: %d %v, want %d", len(byV1.Executions), err, 1+seen[v1])
	}
	for _, e := range byV1.Executions {
		if aws.ToString(e.StateMachineVersionArn) != v1 {
			t.Errorf("an execution listed under version 1 has version %q", aws.ToString(e.StateMachineVersionArn))
		}
	}
	byAlias, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(aliasARN), MaxResults: 1000})
	if err != nil || len(byAlias.Executions) != 43 || aws.ToString(byAlias.Executions[0].StateMachineAliasArn) != aliasARN {
		t.Fatalf("executions of the alias: %d %v", len(byAlias.Executions), err)
	}
	all, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), MaxResults: 1000})
	if err != nil || len(all.Executions) != 44 {
		t.Fatalf("executions of the state machine: %d %v", len(all.Executions), err)
	}
	aliases, err := c.ListStateMachineAliases(ctx, &sfn.ListStateMachineAliasesInput{StateMachineArn: aws.String(smARN)})
	if err != nil || len(aliases.StateMachineAliases) != 1 || aws.ToString(aliases.StateMachineAliases[0].StateMachineAliasArn) != aliasARN {
		t.Fatalf("ListStateMachineAliases: %+v %v", aliases, err)
	}
	// Version 1 is free now; deleting it twice succeeds, as on AWS.
	for range 2 {
		if _, err := c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v1)}); err != nil {
			t.Fatalf("deleting version 1: %v", err)
		}
	}
	if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(v1)}); apiCode(err) != "StateMachineDoesNotExist" {
		t.Errorf("starting a deleted version: %v", err)
	}
	if _, err := c.DeleteStateMachineAlias(ctx, &sfn.DeleteStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN)}); apiCode(err) != "ResourceNotFound" {
		t.Errorf("a deleted alias: %v", err)
	}
	// Deleting the state machine deletes its versions.
	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(smARN)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(v2)}); apiCode(err) != "StateMachineDoesNotExist" {
		t.Errorf("a version of a deleted state machine: %v", err)
	}
}

// TestAliasLimit: a state machine has at most 100 aliases.
func TestAliasLimit(t *testing.T) {
	c, _ := newClient(t, nil, nil)
	ctx := context.Background()
	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("l"), RoleArn: aws.String(role), Definition: aws.String(passDef("x")), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	one := []types.RoutingConfigurationListItem{{StateMachineVersionArn: created.StateMachineVersionArn, Weight: 100}}
	for i := range 101 {
		_, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String(fmt.Sprint("a", i)), RoutingConfiguration: one})
		if i < 100 && err != nil {
			t.Fatalf("alias %d: %v", i, err)
		}
		if i == 100 && apiCode(err) != "ServiceQuotaExceededException" {
			t.Errorf("the 101st alias: %v, want ServiceQuotaExceededException", err)
		}
	}
}

// TestSyncExecutionOfVersion: StartSyncExecution runs the definition of
// the version or alias it names.
func TestSyncExecutionOfVersion(t *testing.T) {
	c, _ := newClient(t, nil, nil)
	ctx := context.Background()
	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("x"), Type: types.StateMachineTypeExpress, RoleArn: aws.String(role),
		Definition: aws.String(passDef("one")), Publish: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: created.StateMachineArn, Definition: aws.String(passDef("two"))}); err != nil {
		t.Fatal(err)
	}
	a, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("a"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: created.StateMachineVersionArn, Weight: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	for arn, want := range map[string]string{aws.ToString(created.StateMachineArn): `"two"`, aws.ToString(created.StateMachineVersionArn): `"one"`, aws.ToString(a.StateMachineAliasArn): `"one"`} {
		out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: aws.String(arn), TraceHeader: aws.String("t")})
		if err != nil || aws.ToString(out.Output) != want || aws.ToString(out.TraceHeader) != "t" {
			t.Errorf("StartSyncExecution of %s: %+v %v, want output %s", arn, out, err, want)
		}
	}
}
