"""boto3 against stepd serve: versions, aliases, the members of issue 17
(tracing and encryption configurations, traceHeader, includedData,
ValidateStateMachineDefinition's severity and maxResults, activity tags)
and their errors. Driven by api's TestBoto3Versions.
Usage: python3 boto3_versions.py URL"""
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
        return e.response["Error"]["Code"]
    raise AssertionError(f"{fn.__name__}: no error")


def ok(what):
    print("ok  ", what, flush=True)


def definition(result):
    return json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": result, "End": True}}})


def wait(arn):
    for _ in range(400):
        d = c.describe_execution(executionArn=arn)
        if d["status"] != "RUNNING":
            return d
        time.sleep(0.025)
    raise AssertionError(f"{arn} still running")


sm = c.create_state_machine(name="pyv", roleArn=role, definition=definition("one"), publish=True, versionDescription="first",
                            tracingConfiguration={"enabled": True}, encryptionConfiguration={"type": "AWS_OWNED_KEY"})
arn, v1 = sm["stateMachineArn"], sm["stateMachineVersionArn"]
assert v1 == arn + ":1", v1
d = c.describe_state_machine(stateMachineArn=arn)
assert d["tracingConfiguration"] == {"enabled": True}, d
assert d["encryptionConfiguration"]["type"] == "AWS_OWNED_KEY", d
assert c.describe_state_machine(stateMachineArn=arn, includedData="METADATA_ONLY")["definition"] == "{}"
dv = c.describe_state_machine(stateMachineArn=v1)
assert dv["stateMachineArn"] == v1 and dv["description"] == "first" and json.loads(dv["definition"])["States"]["P"]["Result"] == "one", dv
ok("create_state_machine with publish, tracing and encryption; describe_state_machine of a version")

assert code(c.create_state_machine, name="kms", roleArn=role, definition=definition("x"),
            encryptionConfiguration={"type": "CUSTOMER_MANAGED_KMS_KEY", "kmsKeyId": "alias/k"}) == "InvalidEncryptionConfiguration"
ok("a customer managed KMS key is refused")

u = c.update_state_machine(stateMachineArn=arn, definition=definition("two"), publish=True, versionDescription="second")
v2 = u["stateMachineVersionArn"]
assert v2 == arn + ":2", u
assert c.publish_state_machine_version(stateMachineArn=arn)["stateMachineVersionArn"] == v2
assert code(c.publish_state_machine_version, stateMachineArn=arn, revisionId="stale") == "ConflictException"
versions = c.list_state_machine_versions(stateMachineArn=arn)["stateMachineVersions"]
assert [v["stateMachineVersionArn"] for v in versions] == [v2, v1], versions
ok("update_state_machine with publish, publish_state_machine_version, list_state_machine_versions")

alias = c.create_state_machine_alias(name="live", description="all on one",
                                     routingConfiguration=[{"stateMachineVersionArn": v1, "weight": 100}])["stateMachineAliasArn"]
assert alias == arn + ":live", alias
a = c.describe_state_machine_alias(stateMachineAliasArn=alias)
assert a["name"] == "live" and a["description"] == "all on one" and a["routingConfiguration"] == [{"stateMachineVersionArn": v1, "weight": 100}], a
assert [x["stateMachineAliasArn"] for x in c.list_state_machine_aliases(stateMachineArn=arn)["stateMachineAliases"]] == [alias]
assert code(c.delete_state_machine_version, stateMachineVersionArn=v1) == "ConflictException"
assert code(c.create_state_machine_alias, name="bad", routingConfiguration=[{"stateMachineVersionArn": v1, "weight": 60},
                                                                             {"stateMachineVersionArn": v2, "weight": 60}]) == "ValidationException"
ok("create/describe/list_state_machine_aliases; the version an alias routes to cannot be deleted")

e = c.start_execution(stateMachineArn=alias, name="via-alias", traceHeader="Root=1-5759e988-bd862e3fe1be46a994272793")["executionArn"]
d = wait(e)
assert d["output"] == '"one"' and d["stateMachineVersionArn"] == v1 and d["stateMachineAliasArn"] == alias, d
assert d["traceHeader"] == "Root=1-5759e988-bd862e3fe1be46a994272793", d
meta = c.describe_execution(executionArn=e, includedData="METADATA_ONLY")
assert "input" not in meta and "output" not in meta, meta
listed = c.list_executions(stateMachineArn=alias)["executions"]
assert [x["name"] for x in listed] == ["via-alias"] and listed[0]["stateMachineAliasArn"] == alias, listed
c.update_state_machine_alias(stateMachineAliasArn=alias, routingConfiguration=[{"stateMachineVersionArn": v2, "weight": 100}])
d = wait(c.start_execution(stateMachineArn=alias)["executionArn"])
assert d["output"] == '"two"' and d["stateMachineVersionArn"] == v2, d
assert [x["name"] for x in c.list_executions(stateMachineArn=v1)["executions"]] == ["via-alias"]
ok("executions on an alias: routed, recorded, listed; update_state_machine_alias")

r = c.validate_state_machine_definition(definition=json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}, "B": {"Type": "Pass", "End": True},
                                                                                         "C": {"Type": "Pass", "Next": "X"}}}))
assert r["result"] == "FAIL" and all(x["severity"] == "ERROR" for x in r["diagnostics"]), r
r1 = c.validate_state_machine_definition(definition=json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "X"}, "B": {"Type": "Pass", "Next": "Y"}}}),
                                         maxResults=1)
assert len(r1["diagnostics"]) == 1 and r1["truncated"] is True, r1
ok("validate_state_machine_definition: severity ERROR by default, maxResults")

act = c.create_activity(name="pyact", tags=[{"key": "k", "value": "v"}], encryptionConfiguration={"type": "AWS_OWNED_KEY"})["activityArn"]
assert c.describe_activity(activityArn=act)["encryptionConfiguration"]["type"] == "AWS_OWNED_KEY"
assert c.list_tags_for_resource(resourceArn=act)["tags"] == [{"key": "k", "value": "v"}]
c.tag_resource(resourceArn=act, tags=[{"key": "k2", "value": "v2"}])
c.untag_resource(resourceArn=act, tagKeys=["k"])
assert c.list_tags_for_resource(resourceArn=act)["tags"] == [{"key": "k2", "value": "v2"}]
ok("activity tags and encryption configuration")

c.delete_state_machine_alias(stateMachineAliasArn=alias)
assert code(c.describe_state_machine_alias, stateMachineAliasArn=alias) == "ResourceNotFound"
c.delete_state_machine_version(stateMachineVersionArn=v1)
assert [v["stateMachineVersionArn"] for v in c.list_state_machine_versions(stateMachineArn=arn)["stateMachineVersions"]] == [v2]
assert code(c.list_executions, stateMachineArn=arn, mapRunArn=arn + ":x") == "ValidationException"
ok("delete_state_machine_alias, delete_state_machine_version; a member stepd does not implement is refused")
