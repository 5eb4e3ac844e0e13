package api_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/stepd/stepd/store/sqlite"
)

// TestTerraformReplay replays, with the AWS SDK for Go v2 that the
// Terraform AWS provider uses, the calls the provider makes (its
// internal/service/sfn) for aws_sfn_state_machine, aws_sfn_alias and
// aws_sfn_activity through create, refresh, update, tag changes and
// destroy, and checks that what was sent comes back the same from the
// Describe operations and ListTagsForResource: no drift on the next plan.
func TestTerraformReplay(t *testing.T) {
	st, err := sqlite.Open(context.Background(), t.TempDir()+"/db")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, st, nil)
	ctx := context.Background()
	tagsOf := func(arn string) map[string]string {
		t.Helper()
		out, err := c.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
		if err != nil {
			t.Fatalf("ListTagsForResource: %v", err)
		}
		m := map[string]string{}
		for _, tg := range out.Tags {
			m[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
		}
		return m
	}
	sfnTags := func(m map[string]string) []types.Tag {
		var out []types.Tag
		for k, v := range m {
			out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		return out
	}

	// aws_sfn_state_machine: the plan validates the definition; create;
	// read (DescribeStateMachine, ListStateMachineVersions, tags).
	def1 := `{"Comment":"tf","StartAt":"P","States":{"P":{"Type":"Pass","Result":{"v":1},"End":true}}}`
	tags := map[string]string{"env": "test", "team": "a"}
	v, err := c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(def1), Type: types.StateMachineTypeStandard})
	if err != nil || v.Result != types.ValidateStateMachineDefinitionResultCodeOk {
		t.Fatalf("ValidateStateMachineDefinition: %+v %v", v, err)
	}
	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Definition: aws.String(def1), Name: aws.String("tf-machine"), Publish: true,
		RoleArn: aws.String(role), Tags: sfnTags(tags), Type: types.StateMachineTypeStandard,
		EncryptionConfiguration: &types.EncryptionConfiguration{Type: types.EncryptionTypeAwsOwnedKey},
		TracingConfiguration:    &types.TracingConfiguration{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	smARN := aws.ToString(created.StateMachineArn)
	type smState struct {
		ARN, Definition, Name, Role, Revision, Version, Created, Description string
		Type                                                                 types.StateMachineType
		Status                                                               types.StateMachineStatus
		Tracing                                                              bool
		Encryption                                                           types.EncryptionType
		Tags                                                                 map[string]string
	}
	read := func() smState {
		t.Helper()
		d, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smARN)})
		if err != nil {
			t.Fatalf("DescribeStateMachine: %v", err)
		}
		s := smState{ARN: aws.ToString(d.StateMachineArn), Definition: aws.ToString(d.Definition), Name: aws.ToString(d.Name), Role: aws.ToString(d.RoleArn),
			Revision: aws.ToString(d.RevisionId), Created: aws.ToTime(d.CreationDate).String(), Description: aws.ToString(d.Description), Type: d.Type, Status: d.Status}
		if d.TracingConfiguration == nil || d.EncryptionConfiguration == nil {
			t.Fatalf("DescribeStateMachine without tracing or encryption configuration: %+v", d)
		}
		s.Tracing, s.Encryption = d.TracingConfiguration.Enabled, d.EncryptionConfiguration.Type
		versions, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smARN)})
		if err != nil {
			t.Fatalf("ListStateMachineVersions: %v", err)
		}
		if len(versions.StateMachineVersions) > 0 {
			s.Version = aws.ToString(versions.StateMachineVersions[0].StateMachineVersionArn)
		}
		s.Tags = tagsOf(smARN)
		return s
	}
	got := read()
	want := smState{ARN: smARN, Definition: def1, Name: "tf-machine", Role: role, Revision: got.Revision, Version: aws.ToString(created.StateMachineVersionArn),
		Created: got.Created, Type: types.StateMachineTypeStandard, Status: types.StateMachineStatusActive, Tracing: true, Encryption: types.EncryptionTypeAwsOwnedKey, Tags: tags}
	if got.Revision != "" || got.Version != smARN+":1" || !equalState(got, want) { // no revisionId before an update, as on AWS
		t.Fatalf("after create:\n got %+v\nwant %+v", got, want)
	}
	// The next plan refreshes: nothing moved.
	if again := read(); !equalState(again, got) {
		t.Fatalf("refresh drifted:\n got %+v\nwant %+v", again, got)
	}

	// Update: definition and tracing change, published (version_description
	// is computed, so it is sent empty); the provider waits until Describe
	// shows the change, then reads.
	def2 := `{"Comment":"tf","StartAt":"P","States":{"P":{"Type":"Pass","Result":{"v":2},"End":true}}}`
	if _, err := c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(def2), Type: types.StateMachineTypeStandard}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{Definition: aws.String(def2), Publish: true, RoleArn: aws.String(role), StateMachineArn: aws.String(smARN),
		TracingConfiguration: &types.TracingConfiguration{Enabled: false}, VersionDescription: aws.String("")}); err != nil {
		t.Fatal(err)
	}
	got = read()
	want.Definition, want.Tracing, want.Version, want.Revision = def2, false, smARN+":2", got.Revision
	if !equalState(got, want) || got.Revision == "" {
		t.Fatalf("after update:\n got %+v\nwant %+v", got, want)
	}
	// Tags change through TagResource and UntagResource only.
	if _, err := c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smARN), Tags: sfnTags(map[string]string{"owner": "b"})}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: aws.String(smARN), TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	want.Tags = map[string]string{"env": "test", "owner": "b"}
	if got := read(); !equalState(got, want) {
		t.Fatalf("after the tag change:\n got %+v\nwant %+v", got, want)
	}

	// aws_sfn_alias: create (description sent empty), read, update, delete.
	v1, v2 := smARN+":1", smARN+":2"
	routes := []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v1), Weight: 20}, {StateMachineVersionArn: aws.String(v2), Weight: 80}}
	a, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("tf-alias"), Description: aws.String(""), RoutingConfiguration: routes})
	if err != nil {
		t.Fatal(err)
	}
	aliasARN := aws.ToString(a.StateMachineAliasArn)
	readAlias := func(want []types.RoutingConfigurationListItem, description string) {
		t.Helper()
		d, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN)})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(d.StateMachineAliasArn) != aliasARN || aws.ToString(d.Name) != "tf-alias" || aws.ToString(d.Description) != description ||
			d.CreationDate == nil || len(d.RoutingConfiguration) != len(want) {
			t.Fatalf("DescribeStateMachineAlias: %+v", d)
		}
		for i := range want {
			if aws.ToString(d.RoutingConfiguration[i].StateMachineVersionArn) != aws.ToString(want[i].StateMachineVersionArn) || d.RoutingConfiguration[i].Weight != want[i].Weight {
				t.Fatalf("route %d: %+v, want %+v", i, d.RoutingConfiguration[i], want[i])
			}
		}
	}
	readAlias(routes, "")
	readAlias(routes, "") // refresh
	routes = []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v2), Weight: 100}}
	if _, err := c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN), RoutingConfiguration: routes}); err != nil {
		t.Fatal(err)
	}
	readAlias(routes, "")
	if _, err := c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN), Description: aws.String("prod")}); err != nil {
		t.Fatal(err)
	}
	readAlias(routes, "prod")
	if _, err := c.DeleteStateMachineAlias(ctx, &sfn.DeleteStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeStateMachineAlias(ctx, &sfn.DescribeStateMachineAliasInput{StateMachineAliasArn: aws.String(aliasARN)}); apiCode(err) != "ResourceNotFound" {
		t.Fatalf("a deleted alias: %v, want ResourceNotFound (the provider's not-found)", err)
	}

	// aws_sfn_activity: create with tags and an encryption configuration,
	// read, tag change, delete.
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("tf-activity"), Tags: sfnTags(map[string]string{"k": "v"}),
		EncryptionConfiguration: &types.EncryptionConfiguration{Type: types.EncryptionTypeAwsOwnedKey}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // create's read, then a refresh
		d, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: act.ActivityArn})
		if err != nil || aws.ToString(d.Name) != "tf-activity" || d.CreationDate == nil || d.EncryptionConfiguration == nil ||
			d.EncryptionConfiguration.Type != types.EncryptionTypeAwsOwnedKey {
			t.Fatalf("DescribeActivity: %+v %v", d, err)
		}
		if got := tagsOf(aws.ToString(act.ActivityArn)); !maps.Equal(got, map[string]string{"k": "v"}) {
			t.Fatalf("activity tags: %v", got)
		}
	}
	if _, err := c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: act.ActivityArn, Tags: sfnTags(map[string]string{"k2": "v2"})}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: act.ActivityArn, TagKeys: []string{"k"}}); err != nil {
		t.Fatal(err)
	}
	if got := tagsOf(aws.ToString(act.ActivityArn)); !maps.Equal(got, map[string]string{"k2": "v2"}) {
		t.Fatalf("activity tags after the change: %v", got)
	}
	if _, err := c.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: act.ActivityArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: act.ActivityArn}); apiCode(err) != "ActivityDoesNotExist" {
		t.Fatalf("a deleted activity: %v", err)
	}
	// An activity made again with the same name has none of the old tags.
	again, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("tf-activity")})
	if err != nil {
		t.Fatal(err)
	}
	if got := tagsOf(aws.ToString(again.ActivityArn)); len(got) != 0 {
		t.Errorf("a recreated activity kept the tags %v", got)
	}

	// Destroy the state machine: the provider waits until Describe says it
	// does not exist.
	if _, err := c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(smARN)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smARN)}); apiCode(err) != "StateMachineDoesNotExist" {
		t.Fatalf("a deleted state machine: %v", err)
	}
	if _, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: aws.String(smARN)}); apiCode(err) != "StateMachineDoesNotExist" {
		t.Errorf("the versions of a deleted state machine: %v, want StateMachineDoesNotExist", err)
	}
}

func equalState[T any](a, b T) bool {
	return fmtState(a) == fmtState(b)
}

func fmtState(v any) string { return fmt.Sprintf("%+v", v) }
