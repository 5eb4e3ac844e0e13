"""boto3 (Debian's python3-boto3) against stepd serve, configured as the
README says: endpoint_url and inject_host_prefix=False. Driven by api's
TestPythonAndCLIClients. Usage: python3 boto3_client.py URL"""
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


def code(fn, **kw):
    try:
        fn(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    raise AssertionError(f"{fn.__name__}: no error")


def ok(what):
    print("ok  ", what, flush=True)


sm = c.create_state_machine(name="py", roleArn=role, definition=json.dumps(
    {"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThan": 1, "Next": "Big"}], "Default": "Small"},
                                "Big": {"Type": "Pass", "Result": "big", "End": True},
                                "Small": {"Type": "Fail", "Error": "TooSmall", "Cause": "n <= 1"}}}))
arn = sm["stateMachineArn"]
assert arn == "arn:aws:states:us-east-1:123456789012:stateMachine:py", arn
big = c.start_execution(stateMachineArn=arn, name="big", input='{"n": 2}')["executionArn"]
small = c.start_execution(stateMachineArn=arn, name="small", input='{"n": 0}')["executionArn"]
for e in (big, small):
    for _ in range(200):
        d = c.describe_execution(executionArn=e)
        if d["status"] != "RUNNING":
            break
        time.sleep(0.025)
d = c.describe_execution(executionArn=big)
assert d["status"] == "SUCCEEDED" and d["output"] == '"big"', d
d = c.describe_execution(executionArn=small)
assert d["status"] == "FAILED" and d["error"] == "TooSmall" and d["cause"] == "n <= 1", d
ok("start_execution, describe_execution")

events = c.get_execution_history(executionArn=small)["events"]
assert [e["type"] for e in events] == ["ExecutionStarted", "ChoiceStateEntered", "ChoiceStateExited", "FailStateEntered", "ExecutionFailed"], events
assert events[-1]["executionFailedEventDetails"] == {"error": "TooSmall", "cause": "n <= 1"}, events[-1]
pages = c.get_paginator("get_execution_history").paginate(executionArn=big, PaginationConfig={"PageSize": 2})
assert sum(len(p["events"]) for p in pages) == 6
listed = c.list_executions(stateMachineArn=arn, statusFilter="FAILED")["executions"]
assert [e["name"] for e in listed] == ["small"], listed
ok("get_execution_history (and its paginator), list_executions")

x = c.create_state_machine(name="pyx", type="EXPRESS", roleArn=role, definition=json.dumps(
    {"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {"sum.$": "States.MathAdd($.a, $.b)"}, "End": True}}}))
s = c.start_sync_execution(stateMachineArn=x["stateMachineArn"], input='{"a": 2, "b": 3}')
assert s["status"] == "SUCCEEDED" and s["output"] == '{"sum":5}', s
ok("start_sync_execution")

assert code(c.describe_execution, executionArn="arn:aws:states:us-east-1:123456789012:execution:py:none") == ("ExecutionDoesNotExist", 400)
assert code(c.start_execution, stateMachineArn=arn, input="[") == ("InvalidExecutionInput", 400)
assert code(c.create_state_machine, name="bad", roleArn=role, definition="{}")[0] == "InvalidDefinition"
assert code(c.list_executions, stateMachineArn=arn, nextToken="bogus") == ("InvalidToken", 400)
ok("error codes")

# Bytes AWS refuses (docs/compatibility.md): boto3 sends NUL as \u0000 and a
# lone surrogate as \ud800; a name or an ARN holding either is refused with
# its own error, an input holding a lone surrogate reads it as U+FFFD.
assert code(c.start_execution, stateMachineArn=arn, name="a\u0000b") == ("InvalidName", 400)
assert code(c.start_execution, stateMachineArn=arn, name="a\ud800b") == ("InvalidName", 400)
assert code(c.describe_execution, executionArn=big + "\u0000") == ("InvalidArn", 400)
s = c.start_sync_execution(stateMachineArn=x["stateMachineArn"], input='{"a": 2, "b": 3, "s": "\ud800", "z": "\\u0000"}')
assert s["status"] == "SUCCEEDED" and s["output"] == '{"sum":5}', s
s = c.create_state_machine(name="pyecho", type="EXPRESS", roleArn=role, definition=json.dumps(
    {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}))
s = c.start_sync_execution(stateMachineArn=s["stateMachineArn"], input='{"s": "x\ud800y", "z": "\\u0000"}')
assert s["status"] == "SUCCEEDED" and json.loads(s["output"]) == {"s": "x\ufffdy", "z": "\u0000"}, s
ok("bytes AWS refuses: NUL and lone surrogates")
