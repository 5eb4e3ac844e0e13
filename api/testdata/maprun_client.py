"""boto3 against stepd serve: a Distributed Map's Map Run (DescribeMapRun,
ListMapRuns, UpdateMapRun, ListExecutions by mapRunArn, a child's
DescribeExecution and history) and RedriveExecution of the failed parent.
Driven by api's TestMapRunBoto3. Usage: python3 maprun_client.py URL"""
import json
import sys
import time

import boto3
import botocore.config
from botocore.exceptions import ClientError

url = sys.argv[1]
c = boto3.client("stepfunctions", endpoint_url=url, region_name="us-east-1",
                 aws_access_key_id="test", aws_secret_access_key="test",
                 config=botocore.config.Config(inject_host_prefix=False))
role = "arn:aws:iam::123456789012:role/r"


def ok(what):
    print("ok  ", what, flush=True)


def code(fn, **kw):
    try:
        fn(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"]
    raise AssertionError(f"{fn.__name__}: no error")


def until(fn, what):
    for _ in range(400):
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def task():
    t = c.get_activity_task(activityArn=act, workerName="py")
    assert t.get("taskToken"), t
    return t["taskToken"]


act = c.create_activity(name="work")["activityArn"]
sm = c.create_state_machine(name="dmap", roleArn=role, definition=json.dumps(
    {"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Items", "MaxConcurrency": 1, "End": True,
                                      "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                                                        "StartAt": "W", "States": {"W": {"Type": "Task", "Resource": act, "End": True}}}}}}))
arn = sm["stateMachineArn"]
ex = c.start_execution(stateMachineArn=arn, name="one", input="[1, 2, 3]")["executionArn"]
first = task()
runs = until(lambda: c.list_map_runs(executionArn=ex)["mapRuns"], "the Map Run")
assert len(runs) == 1 and runs[0]["executionArn"] == ex, runs
run = runs[0]["mapRunArn"]
assert run.startswith("arn:aws:states:us-east-1:123456789012:mapRun:dmap/Items:"), run
assert runs[0]["stateMachineArn"] == "arn:aws:states:us-east-1:123456789012:stateMachine:dmap/Items", runs
d = until(lambda: (lambda d: d if d["executionCounts"]["running"] == 1 else None)(c.describe_map_run(mapRunArn=run)), "one child running")
assert d["status"] == "RUNNING" and d["maxConcurrency"] == 1 and d["executionCounts"]["pending"] == 2 and d["itemCounts"]["total"] == 3, d
ok("DescribeMapRun, ListMapRuns")

c.update_map_run(mapRunArn=run, maxConcurrency=3)
second, third = task(), task()
d = until(lambda: (lambda d: d if d["executionCounts"]["running"] == 3 else None)(c.describe_map_run(mapRunArn=run)), "three running")
assert d["maxConcurrency"] == 3, d
assert code(c.update_map_run, mapRunArn=run) == "ValidationException"
assert code(c.describe_map_run, mapRunArn=run + "x") == "ResourceNotFound"
ok("UpdateMapRun")

# No tolerance: the first failure fails the Map Run and aborts the others.
c.send_task_failure(taskToken=first, error="Broken", cause="item 1")
until(lambda: c.describe_execution(executionArn=ex)["status"] == "FAILED", "the parent to fail")
d = until(lambda: (lambda d: d if d["status"] == "FAILED" else None)(c.describe_map_run(mapRunArn=run)), "the Map Run to fail")
assert d["executionCounts"]["failed"] == 1 and d["executionCounts"]["aborted"] == 2, d
kids = c.list_executions(mapRunArn=run)["executions"]
assert len(kids) == 3 and all(k["stateMachineArn"] == runs[0]["stateMachineArn"] for k in kids), kids
failed = c.list_executions(mapRunArn=run, statusFilter="FAILED")["executions"]
assert len(failed) == 1, failed
k = c.describe_execution(executionArn=failed[0]["executionArn"])
assert k["mapRunArn"] == run and k["status"] == "FAILED" and k["error"] == "Broken" and k["input"] == "1", k
smx = c.describe_state_machine_for_execution(executionArn=k["executionArn"])
assert smx["mapRunArn"] == run and json.loads(smx["definition"])["StartAt"] == "W", smx
h = [e["type"] for e in c.get_execution_history(executionArn=k["executionArn"])["events"]]
assert h[0] == "ExecutionStarted" and h[-1] == "ExecutionFailed" and "ActivityFailed" in h, h
parent = [e["type"] for e in c.get_execution_history(executionArn=ex)["events"]]
assert "MapRunStarted" in parent and "MapRunFailed" in parent and not [t for t in parent if t.startswith("Activity")], parent
ok("ListExecutions by mapRunArn, a child's DescribeExecution and history")

d = c.describe_execution(executionArn=ex)
assert d["redriveStatus"] == "REDRIVABLE" and d["redriveCount"] == 0, d
assert c.describe_execution(executionArn=k["executionArn"])["redriveStatus"] == "REDRIVABLE_BY_MAP_RUN"
r = c.redrive_execution(executionArn=ex)
assert r["redriveDate"], r
tokens = [task(), task(), task()]
for t in tokens:
    c.send_task_success(taskToken=t, output='"done"')
until(lambda: c.describe_execution(executionArn=ex)["status"] == "SUCCEEDED", "the redriven execution to succeed")
d = c.describe_execution(executionArn=ex)
assert d["redriveCount"] == 1 and d["redriveStatus"] == "NOT_REDRIVABLE" and d["output"] == '["done","done","done"]', d
assert c.describe_map_run(mapRunArn=run)["redriveCount"] == 1
assert c.describe_map_run(mapRunArn=run)["status"] == "SUCCEEDED"
assert len(c.list_executions(stateMachineArn=arn, redriveFilter="REDRIVEN")["executions"]) == 1
assert len(c.list_executions(stateMachineArn=arn, redriveFilter="NOT_REDRIVEN")["executions"]) == 0
parent = [e["type"] for e in c.get_execution_history(executionArn=ex)["events"]]
assert parent.count("ExecutionRedriven") == 1 and parent.count("MapRunRedriven") == 1, parent
assert code(c.redrive_execution, executionArn=ex) == "ExecutionNotRedrivable"
ok("RedriveExecution")
