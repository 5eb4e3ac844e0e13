"""boto3 against stepd serve: the API answers of issue 30, each as AWS
recorded it (the LocalStack snapshots of test_sfn_api*.py, which note
AWS's answers) or, where AWS recorded none, as the botocore model has it.
Driven by api's TestBoto3Recorded.
Usage: python3 boto3_recorded.py URL"""
import json
import sys
import time

import boto3
import botocore.config
from botocore.exceptions import ClientError

url = sys.argv[1]
config = botocore.config.Config(inject_host_prefix=False)
c = boto3.client("stepfunctions", endpoint_url=url, region_name="us-east-1",
                 aws_access_key_id="test", aws_secret_access_key="test", config=config)
# A client that sends what boto3 would refuse itself, as the recorded tests did.
raw = boto3.client("stepfunctions", endpoint_url=url, region_name="us-east-1",
                   aws_access_key_id="test", aws_secret_access_key="test",
                   config=botocore.config.Config(inject_host_prefix=False, parameter_validation=False))
role = "arn:aws:iam::123456789012:role/r"
base = {"Comment": "BASE_PASS_RESULT", "StartAt": "State_1",
        "States": {"State_1": {"Type": "Pass", "Result": {"Arg1": "argument1"}, "End": True}}}


def definition(comment=None):
    d = json.loads(json.dumps(base))
    if comment:
        d["Comment"] = comment
    return json.dumps(d)


def error(fn, **kw):
    try:
        fn(**kw)
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["Error"]["Message"]
    raise AssertionError(f"{fn.__name__}: no error")


def ok(what):
    print("ok  ", what, flush=True)


def wait(arn):
    for _ in range(4000):  # 100 s at most: a busy machine may be slow
        d = c.describe_execution(executionArn=arn)
        if d["status"] != "RUNNING":
            return d
        time.sleep(0.025)
    raise AssertionError(f"{arn} still running")


# test_create_update_state_machine_base_definition: no revisionId until an update.
arn = c.create_state_machine(name="rec", roleArn=role, definition=definition())["stateMachineArn"]
d = c.describe_state_machine(stateMachineArn=arn)
assert "revisionId" not in d, d
assert d["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False}, d
u = c.update_state_machine(stateMachineArn=arn, definition=definition("R1"))
assert "revisionId" in u and "stateMachineVersionArn" not in u, u
assert c.describe_state_machine(stateMachineArn=arn)["revisionId"] == u["revisionId"]
# test_create_update_state_machine_same_parameters: an update that changes nothing keeps it.
assert c.update_state_machine(stateMachineArn=arn, definition=definition("R1"))["revisionId"] == u["revisionId"]
ok("revisionId: absent before the first update, then the update's")

# test_create_publish_describe_no_version_description, test_empty_revision_with_publish_*.
pub = c.create_state_machine(name="recpub", roleArn=role, definition=definition(), publish=True)
v1 = pub["stateMachineVersionArn"]
dv = c.describe_state_machine(stateMachineArn=v1)
assert "revisionId" not in dv and "description" not in dv, dv
for _ in range(2):
    up = c.update_state_machine(stateMachineArn=pub["stateMachineArn"], definition=definition(), publish=True)
    assert "revisionId" not in up and up["stateMachineVersionArn"] == v1, up
e = c.start_execution(stateMachineArn=v1)["executionArn"]
wait(e)
fe = c.describe_state_machine_for_execution(executionArn=e)
assert "revisionId" not in fe, fe
ok("a version of a never-updated state machine, an empty published update, DescribeStateMachineForExecution: no revisionId")

# test_update_state_machine: UpdateStateMachine on a version's ARN.
v2 = c.update_state_machine(stateMachineArn=arn, definition=definition("R2"), publish=True)["stateMachineVersionArn"]
for publish in (False, True):
    assert error(c.update_state_machine, stateMachineArn=v2, definition=definition("R3"), publish=publish) == \
        ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{v2}'")
ok("UpdateStateMachine of a version: StateMachineDoesNotExist")

# test_publish_state_machine_version: the conflict's message.
r2 = c.update_state_machine(stateMachineArn=arn, definition=definition("R4"))["revisionId"]
r3 = c.update_state_machine(stateMachineArn=arn, definition=definition("R5"))["revisionId"]
assert error(c.publish_state_machine_version, stateMachineArn=arn, revisionId=r2) == \
    ("ConflictException", f"Failed to publish the State Machine version for revision {r2}. The current State Machine revision is {r3}.")
ok("PublishStateMachineVersion with a stale revision: AWS's message")

# test_create_with_version_description_no_publish.
assert error(c.create_state_machine, name="nopub", roleArn=role, definition=definition(), versionDescription="d") == \
    ("ValidationException", "Version description can only be set when publish is true")
ok("versionDescription without publish: AWS's message")

# test_incomplete_logging_configuration: destinations [] is answered back; none is left out.
lg = c.create_state_machine(name="reclog", roleArn=role, definition=definition(), loggingConfiguration={"destinations": []})["stateMachineArn"]
assert c.describe_state_machine(stateMachineArn=lg)["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False, "destinations": []}
lg0 = c.create_state_machine(name="reclog0", roleArn=role, definition=definition(), loggingConfiguration={})["stateMachineArn"]
assert c.describe_state_machine(stateMachineArn=lg0)["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False}
ok("loggingConfiguration: destinations [] kept")

# test_describe_invalid_arn_sm and the other InvalidArn cases.
assert error(c.describe_state_machine, stateMachineArn="not_a_valid_arn") == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: not_a_valid_arn'")
assert error(c.list_executions, stateMachineArn="invalid_state_machine_arn") == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_state_machine_arn'")
assert error(c.describe_execution, executionArn="invalid_state_machine_arn") == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_state_machine_arn'")
assert error(c.get_execution_history, executionArn="invalid_state_machine_arn") == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_state_machine_arn'")
ok("InvalidArn: 'Invalid ARN prefix'")

# test_invalid_start_execution_input.
assert error(c.start_execution, stateMachineArn=arn, input="not json") == \
    ("InvalidExecutionInput", "Invalid State Machine Execution Input: 'Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')'")
assert error(c.start_execution, stateMachineArn=arn, input="{'not': 'json'}") == \
    ("InvalidExecutionInput", "Invalid State Machine Execution Input: 'Unexpected character (''' (code 39)): was expecting double-quote to start field name'")
assert error(c.start_execution, stateMachineArn=arn, input="") == \
    ("InvalidExecutionInput", "Invalid State Machine Execution Input: 'Invalid execution input.'")
for text in ("1", '"abc"', "null"):
    c.start_execution(stateMachineArn=arn, input=text)
ok("StartExecution's input: empty and malformed refused in AWS's words; a number, a string, null accepted")

# test_start_sync_execution's answer, on ListExecutions of an Express state machine.
ex = c.create_state_machine(name="recexp", roleArn=role, definition=definition(), type="EXPRESS")["stateMachineArn"]
assert error(c.list_executions, stateMachineArn=ex) == ("StateMachineTypeNotSupported", "This operation is not supported by this type of state machine")
ok("ListExecutions of an Express state machine: StateMachineTypeNotSupported")

# test_start_async_describe_history_execution: an Express execution's ARN.
xa = c.start_execution(stateMachineArn=ex)["executionArn"]
for fn in (c.describe_execution, c.stop_execution, c.get_execution_history):
    assert error(fn, executionArn=xa) == ("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: express'"), fn
ok("DescribeExecution, StopExecution, GetExecutionHistory of an Express execution: InvalidArn")

# The variable references, sorted.
vr = c.create_state_machine(name="recvars", roleArn=role, definition=json.dumps({
    "QueryLanguage": "JSONata", "StartAt": "A",
    "States": {"A": {"Type": "Pass", "Output": "{% $zeta & $alpha & $mid %}", "End": True}}}))["stateMachineArn"]
assert c.describe_state_machine(stateMachineArn=vr)["variableReferences"] == {"A": ["alpha", "mid", "zeta"]}
ok("variableReferences sorted")

# test_sfn_api_aliasing: AWS's messages.
routes = [{"stateMachineVersionArn": v2, "weight": 100}]
alias = c.create_state_machine_alias(name="live", routingConfiguration=routes)["stateMachineAliasArn"]
assert error(c.create_state_machine_alias, name="live", description="other", routingConfiguration=routes) == \
    ("ConflictException", "Failed to create alias because an alias with the same name and a different routing configuration already exists.")
assert error(c.create_state_machine_alias, name="x", routingConfiguration=[{"stateMachineVersionArn": arn, "weight": 100}]) == \
    ("ValidationException", f"Routing configuration must contain state machine version ARNs. Received: [{arn}]")
assert error(c.create_state_machine_alias, name="x", routingConfiguration=[{"stateMachineVersionArn": v2, "weight": 50}, {"stateMachineVersionArn": v2, "weight": 50}]) == \
    ("ValidationException", f"Routing configuration must contain distinct state machine version ARNs. Received: [{v2}, {v2}]")
assert error(c.create_state_machine_alias, name="x", routingConfiguration=[{"stateMachineVersionArn": v2, "weight": 70}]) == \
    ("ValidationException", "Sum of routing configuration weights must equal 100. Received: [70]")
assert error(raw.create_state_machine_alias, name="x", routingConfiguration=[{"stateMachineVersionArn": v2, "weight": 101}]) == \
    ("ValidationException", "1 validation error detected: Value '101' at 'routingConfiguration.1.member.weight' failed to satisfy constraint: Member must have value less than or equal to 100")
assert error(c.create_state_machine_alias, name="123", routingConfiguration=routes) == \
    ("ValidationException", "1 validation error detected: Value '123' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?=.*[a-zA-Z_\\-\\.])[a-zA-Z0-9_\\-\\.]+$")
assert error(c.create_state_machine_alias, name="gone", routingConfiguration=[{"stateMachineVersionArn": arn + ":99", "weight": 100}]) == \
    ("ResourceNotFound", f"Resource not found: '{arn}:99'")
assert error(c.delete_state_machine_version, stateMachineVersionArn=v2) == \
    ("ConflictException", "Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [live]")
assert error(c.update_state_machine_alias, stateMachineAliasArn=arn + ":nosuch", description="d") == \
    ("ResourceNotFound", "Request references a resource that does not exist.")
c.delete_state_machine_alias(stateMachineAliasArn=arn + ":nosuch")
c.delete_state_machine_alias(stateMachineAliasArn=alias)
ok("aliases: AWS's messages; deleting a missing alias succeeds")

# ListStateMachineVersions of a missing state machine.
assert error(c.list_state_machine_versions, stateMachineArn=arn + "-missing") == \
    ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{arn}-missing'")
# test_list_sms_pagination / test_list_executions_pagination: long tokens.
assert error(c.list_state_machines, nextToken="x" * 1025) == \
    ("ValidationException", "1 validation error detected: Value '" + "x" * 1025 + "' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to 1024")
assert error(c.list_executions, stateMachineArn=arn, nextToken="x" * 3097) == \
    ("ValidationException", "1 validation error detected: Value '" + "x" * 3097 + "' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to 3096")
ok("ListStateMachineVersions of a missing state machine; nextToken bounds")

# An HTTP Task without a connection is refused when it is created.
http = json.dumps({"StartAt": "H", "States": {"H": {"Type": "Task", "Resource": "arn:aws:states:::http:invoke",
                                                     "Parameters": {"ApiEndpoint": "https://example.com", "Method": "GET"}, "End": True}}})
assert error(c.create_state_machine, name="rechttp", roleArn=role, definition=http) == \
    ("InvalidDefinition", "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: The field 'Authentication' is required but was missing at /States/H/Parameters'")
ok("an HTTP Task without Authentication: InvalidDefinition")
