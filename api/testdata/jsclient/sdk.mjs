// The AWS SDK for JavaScript v3's SFN client, configured as the README says
// (an endpoint and disableHostPrefix), through the operations a program
// uses: state machines, Standard and Express executions, history, TestState,
// validation, tags, activities, versions and aliases, and AWS's error codes. Usage: node sdk.mjs URL
import assert from "node:assert/strict";
import {
  SFNClient, CreateStateMachineCommand, StartExecutionCommand, StartSyncExecutionCommand, DescribeExecutionCommand,
  GetExecutionHistoryCommand, ListExecutionsCommand, TestStateCommand, DescribeStateMachineCommand, ListStateMachinesCommand,
  StopExecutionCommand, CreateActivityCommand, GetActivityTaskCommand, SendTaskSuccessCommand, SendTaskFailureCommand,
  ValidateStateMachineDefinitionCommand, TagResourceCommand, ListTagsForResourceCommand, DeleteStateMachineCommand,
  UpdateStateMachineCommand, PublishStateMachineVersionCommand, ListStateMachineVersionsCommand, DeleteStateMachineVersionCommand,
  CreateStateMachineAliasCommand, DescribeStateMachineAliasCommand, UpdateStateMachineAliasCommand, ListStateMachineAliasesCommand,
  DeleteStateMachineAliasCommand,
} from "@aws-sdk/client-sfn";

const c = new SFNClient({
  endpoint: process.argv[2], region: "us-east-1", disableHostPrefix: true,
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
});
const role = "arn:aws:iam::123456789012:role/r";
const def = (states, start) => JSON.stringify({ StartAt: start ?? Object.keys(states)[0], States: states });
const step = (name) => console.log("ok  ", name);

async function rejects(cmd, name, status) {
  try {
    await c.send(cmd);
  } catch (e) {
    assert.equal(e.name, name, e.message);
    assert.equal(e.$metadata.httpStatusCode, status);
    return e;
  }
  assert.fail(`${cmd.constructor.name}: no ${name}`);
}

async function finished(arn) {
  for (let i = 0; i < 200; i++) {
    const d = await c.send(new DescribeExecutionCommand({ executionArn: arn }));
    if (d.status !== "RUNNING") return d;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`${arn} still running`);
}

// A Standard execution: start, describe, stop, history (newest first, in
// pages), list by status.
const sm = await c.send(new CreateStateMachineCommand({ name: "js", roleArn: role, definition: def({ W: { Type: "Wait", Seconds: 100, End: true } }) }));
assert.match(sm.stateMachineArn, /^arn:aws:states:us-east-1:123456789012:stateMachine:js$/);
assert.ok(sm.creationDate instanceof Date);
const ex = await c.send(new StartExecutionCommand({ stateMachineArn: sm.stateMachineArn, name: "first", input: '{"a":1}' }));
assert.equal(ex.executionArn, "arn:aws:states:us-east-1:123456789012:execution:js:first");
const again = await c.send(new StartExecutionCommand({ stateMachineArn: sm.stateMachineArn, name: "first", input: '{"a":1}' }));
assert.equal(again.executionArn, ex.executionArn, "StartExecution is idempotent for the same name and input");
await rejects(new StartExecutionCommand({ stateMachineArn: sm.stateMachineArn, name: "first", input: '{"a":2}' }), "ExecutionAlreadyExists", 400);
let d = await c.send(new DescribeExecutionCommand({ executionArn: ex.executionArn }));
assert.equal(d.status, "RUNNING");
assert.equal(d.input, '{"a":1}');
assert.ok(d.startDate instanceof Date);
step("StartExecution, DescribeExecution, ExecutionAlreadyExists");
await c.send(new StopExecutionCommand({ executionArn: ex.executionArn, error: "E", cause: "C" }));
d = await c.send(new DescribeExecutionCommand({ executionArn: ex.executionArn }));
assert.equal(d.status, "ABORTED");
assert.equal(d.error, "E");
const h = await c.send(new GetExecutionHistoryCommand({ executionArn: ex.executionArn, reverseOrder: true, maxResults: 2 }));
assert.deepEqual(h.events.map((e) => e.type), ["ExecutionAborted", "WaitStateEntered"]);
assert.ok(h.events[0].timestamp instanceof Date);
const rest = await c.send(new GetExecutionHistoryCommand({ executionArn: ex.executionArn, reverseOrder: true, maxResults: 2, nextToken: h.nextToken }));
assert.deepEqual(rest.events.map((e) => e.type), ["ExecutionStarted"]);
assert.equal(rest.nextToken, undefined);
await rejects(new GetExecutionHistoryCommand({ executionArn: ex.executionArn, nextToken: "bogus" }), "InvalidToken", 400);
const aborted = await c.send(new ListExecutionsCommand({ stateMachineArn: sm.stateMachineArn, statusFilter: "ABORTED" }));
assert.deepEqual(aborted.executions.map((e) => e.name), ["first"]);
step("StopExecution, GetExecutionHistory pages, ListExecutions");

// An Express state machine answers StartSyncExecution.
const xsm = await c.send(new CreateStateMachineCommand({ name: "jsx", type: "EXPRESS", roleArn: role, definition: def({ P: { Type: "Pass", Result: { hi: 1 }, End: true } }) }));
const s = await c.send(new StartSyncExecutionCommand({ stateMachineArn: xsm.stateMachineArn, input: "{}" }));
assert.equal(s.status, "SUCCEEDED");
assert.equal(s.output, '{"hi":1}');
step("StartSyncExecution");

// TestState and ValidateStateMachineDefinition.
const t = await c.send(new TestStateCommand({ definition: JSON.stringify({ Type: "Pass", Parameters: { "x.$": "$.a" }, End: true }), roleArn: role, input: '{"a":5}', inspectionLevel: "DEBUG" }));
assert.equal(t.status, "SUCCEEDED");
assert.equal(t.output, '{"x":5}');
assert.equal(t.inspectionData.afterParameters, '{"x":5}');
const v = await c.send(new ValidateStateMachineDefinitionCommand({ definition: def({ P: { Type: "Pass", Next: "Nowhere" } }) }));
assert.equal(v.result, "FAIL");
assert.ok(v.diagnostics.some((x) => x.code === "MISSING_TRANSITION_TARGET" && x.location === "/States/P/Next"), JSON.stringify(v.diagnostics));
step("TestState, ValidateStateMachineDefinition");

// Tags.
await c.send(new TagResourceCommand({ resourceArn: sm.stateMachineArn, tags: [{ key: "team", value: "data" }] }));
assert.deepEqual((await c.send(new ListTagsForResourceCommand({ resourceArn: sm.stateMachineArn }))).tags, [{ key: "team", value: "data" }]);
step("TagResource, ListTagsForResource");

// An activity worker takes a task and answers it; a used token is refused.
const act = await c.send(new CreateActivityCommand({ name: "act" }));
const am = await c.send(new CreateStateMachineCommand({ name: "jsa", roleArn: role, definition: def({ A: { Type: "Task", Resource: act.activityArn, End: true } }) }));
const aex = await c.send(new StartExecutionCommand({ stateMachineArn: am.stateMachineArn, input: '{"job":7}' }));
const task = await c.send(new GetActivityTaskCommand({ activityArn: act.activityArn, workerName: "w" }));
assert.equal(task.input, '{"job":7}');
await c.send(new SendTaskSuccessCommand({ taskToken: task.taskToken, output: '{"done":true}' }));
const ad = await finished(aex.executionArn);
assert.equal(ad.status, "SUCCEEDED");
assert.equal(ad.output, '{"done":true}');
await rejects(new SendTaskFailureCommand({ taskToken: task.taskToken, error: "Late" }), "TaskTimedOut", 400);
step("CreateActivity, GetActivityTask, SendTaskSuccess, a used token");

// Bad input gets AWS's error codes.
await rejects(new DescribeStateMachineCommand({ stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:none" }), "StateMachineDoesNotExist", 400);
await rejects(new StartExecutionCommand({ stateMachineArn: sm.stateMachineArn, input: "{bad" }), "InvalidExecutionInput", 400);
await rejects(new CreateStateMachineCommand({ name: "bad", roleArn: role, definition: '{"StartAt":"X"}' }), "InvalidDefinition", 400);
await rejects(new StartExecutionCommand({ stateMachineArn: sm.stateMachineArn, input: JSON.stringify({ big: "x".repeat(256 * 1024) }) }), "InvalidExecutionInput", 400);
step("error codes");

const names = (await c.send(new ListStateMachinesCommand({}))).stateMachines.map((m) => m.name);
assert.deepEqual(names, ["js", "jsa", "jsx"]);
await c.send(new DeleteStateMachineCommand({ stateMachineArn: sm.stateMachineArn }));
step("ListStateMachines, DeleteStateMachine");

// Versions and aliases: publish on create and update, an alias's
// executions record the version they ran, a routed version cannot be
// deleted.
const pass = (r) => def({ P: { Type: "Pass", Result: r, End: true } });
const vsm = await c.send(new CreateStateMachineCommand({ name: "jsv", roleArn: role, definition: pass("one"), publish: true }));
assert.equal(vsm.stateMachineVersionArn, vsm.stateMachineArn + ":1");
const up = await c.send(new UpdateStateMachineCommand({ stateMachineArn: vsm.stateMachineArn, definition: pass("two"), publish: true, versionDescription: "second" }));
assert.equal(up.stateMachineVersionArn, vsm.stateMachineArn + ":2");
assert.equal((await c.send(new PublishStateMachineVersionCommand({ stateMachineArn: vsm.stateMachineArn }))).stateMachineVersionArn, up.stateMachineVersionArn);
const vl = await c.send(new ListStateMachineVersionsCommand({ stateMachineArn: vsm.stateMachineArn }));
assert.deepEqual(vl.stateMachineVersions.map((x) => x.stateMachineVersionArn), [up.stateMachineVersionArn, vsm.stateMachineVersionArn]);
const al = await c.send(new CreateStateMachineAliasCommand({ name: "live", routingConfiguration: [{ stateMachineVersionArn: vsm.stateMachineVersionArn, weight: 100 }] }));
await c.send(new UpdateStateMachineAliasCommand({ stateMachineAliasArn: al.stateMachineAliasArn, routingConfiguration: [{ stateMachineVersionArn: up.stateMachineVersionArn, weight: 100 }] }));
const da = await c.send(new DescribeStateMachineAliasCommand({ stateMachineAliasArn: al.stateMachineAliasArn }));
assert.deepEqual(da.routingConfiguration, [{ stateMachineVersionArn: up.stateMachineVersionArn, weight: 100 }]);
assert.equal((await c.send(new ListStateMachineAliasesCommand({ stateMachineArn: vsm.stateMachineArn }))).stateMachineAliases.length, 1);
const vex = await c.send(new StartExecutionCommand({ stateMachineArn: al.stateMachineAliasArn }));
const vd = await finished(vex.executionArn);
assert.equal(vd.output, '"two"');
assert.equal(vd.stateMachineVersionArn, up.stateMachineVersionArn);
assert.equal(vd.stateMachineAliasArn, al.stateMachineAliasArn);
await rejects(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: up.stateMachineVersionArn }), "ConflictException", 400);
await c.send(new DeleteStateMachineAliasCommand({ stateMachineAliasArn: al.stateMachineAliasArn }));
await c.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: up.stateMachineVersionArn }));
step("versions and aliases");
