"""The orchestrator Lambda of Interlock (seed 004), as a stepd registry
command: the event on standard input, the result on standard output.

- evaluate: reads the pipeline's config (its validation rules) from the
  DynamoDB table interlock-pipelines and its sensors from interlock-sensors,
  and passes when every rule holds for the run's date;
- trigger: records a job run in interlock-runs (a simulated job);
- check-job: counts the checks of the run; the job succeeds on the second;
- validation-exhausted: publishes VALIDATION_EXHAUSTED to the SNS topic
  $INTERLOCK_ALERTS_TOPIC_ARN."""
import datetime
import json
import os
import sys
import uuid

from boto3.dynamodb.conditions import Key

import awsclients

PIPELINES, SENSORS, RUNS = "interlock-pipelines", "interlock-sensors", "interlock-runs"
JOB_CHECKS = 2  # the simulated job is done on its second check


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def holds(rule, sensor, date):
    """A rule holds when its sensor reported for the run's date and its
    field equals the rule's value, or is at least it."""
    if sensor is None or sensor.get("date") != date:
        return False
    v = sensor.get(rule["field"])
    if "equals" in rule:
        return v == rule["equals"]
    if "gte" in rule:
        return v is not None and v >= rule["gte"]
    raise ValueError("rule %r has neither equals nor gte" % rule)


def evaluate(event):
    item = awsclients.table(PIPELINES).get_item(Key={"pipelineId": event["pipelineId"]}).get("Item")
    if item is None:
        raise LookupError("pipeline %s has no config in %s" % (event["pipelineId"], PIPELINES))
    rules = json.loads(item["config"])["rules"]
    sensors = {}
    kw = {"KeyConditionExpression": Key("pipelineId").eq(event["pipelineId"])}
    while True:
        page = awsclients.table(SENSORS).query(**kw)
        for s in page["Items"]:
            sensors[s["sensor"]] = s
        if "LastEvaluatedKey" not in page:
            break
        kw["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    failed = [r["sensor"] for r in rules if not holds(r, sensors.get(r["sensor"]), event["date"])]
    return {"status": "pending" if failed else "passed", "failed": failed}


def trigger(event):
    run_id = "%s-%s-%s-%s" % (event["pipelineId"], event["scheduleId"], event["date"], uuid.uuid4().hex[:8])
    awsclients.table(RUNS).put_item(
        Item={"runId": run_id, "pipelineId": event["pipelineId"], "scheduleId": event["scheduleId"],
              "date": event["date"], "status": "RUNNING", "checks": 0, "triggeredAt": now()},
        ConditionExpression="attribute_not_exists(runId)")
    return {"runId": run_id, "metadata": {"engine": "glue", "table": RUNS}}


def check_job(event):
    runs = awsclients.table(RUNS)
    run = runs.update_item(Key={"runId": event["runId"]}, UpdateExpression="ADD checks :one",
                           ConditionExpression="attribute_exists(runId)",
                           ExpressionAttributeValues={":one": 1}, ReturnValues="ALL_NEW")["Attributes"]
    if run["checks"] < JOB_CHECKS:
        return {}  # still running
    runs.update_item(Key={"runId": event["runId"]}, UpdateExpression="SET #s = :s, finishedAt = :t",
                     ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues={":s": "SUCCEEDED", ":t": now()})
    return {"event": "success"}


def validation_exhausted(event):
    awsclients.client("sns").publish(
        TopicArn=os.environ["INTERLOCK_ALERTS_TOPIC_ARN"],
        Message=json.dumps({"event": "VALIDATION_EXHAUSTED", "pipelineId": event["pipelineId"], "date": event["date"]}))
    return {}


MODES = {"evaluate": evaluate, "trigger": trigger, "check-job": check_job, "validation-exhausted": validation_exhausted}

event = json.load(sys.stdin)
json.dump(MODES[event["mode"]](event), sys.stdout)
