"""The sla-monitor Lambda of Interlock (seed 004), as a stepd registry
command: it creates one-time EventBridge Scheduler entries for the warning
and breach times (through stepd's Scheduler API at $SCHEDULER_ENDPOINT),
cancels the unfired ones when the job ends, and records fired alerts in
$INTERLOCK_ALERTS."""
import datetime
import json
import os
import sys

import boto3

event = json.load(sys.stdin)
mode = event["mode"]
if mode == "fire-alert":
    with open(os.environ["INTERLOCK_ALERTS"], "a") as f:
        f.write(json.dumps(event) + "\n")
    json.dump({}, sys.stdout)
    sys.exit(0)

sched = boto3.client("scheduler", endpoint_url=os.environ["SCHEDULER_ENDPOINT"], region_name="us-east-1",
                     aws_access_key_id="local", aws_secret_access_key="local")
role = "arn:aws:iam::123456789012:role/interlock-scheduler"
me = os.environ["SLA_MONITOR_ARN"]


def name(kind):
    return "interlock-%s-%s-%s-%s" % (event["pipelineId"], event["scheduleId"], event["date"], kind)


if mode == "schedule":
    deadline = datetime.datetime.fromisoformat(event["deadline"].replace("Z", "+00:00"))
    expected = datetime.timedelta(seconds=event["expectedDuration"])
    at = {"warning": deadline - expected, "breach": deadline}
    for kind, t in at.items():
        sched.create_schedule(
            Name=name(kind), ScheduleExpression="at(%s)" % t.strftime("%Y-%m-%dT%H:%M:%S"), ScheduleExpressionTimezone="UTC",
            FlexibleTimeWindow={"Mode": "OFF"}, ActionAfterCompletion="DELETE",
            Target={"Arn": me, "RoleArn": role, "Input": json.dumps({"mode": "fire-alert", "alert": "SLA_" + kind.upper(),
                                                                      "pipelineId": event["pipelineId"], "date": event["date"]})})
    json.dump({k: v.strftime("%Y-%m-%dT%H:%M:%SZ") for k, v in (("warningAt", at["warning"]), ("breachAt", at["breach"]))}, sys.stdout)
elif mode == "cancel":
    cancelled = []
    for kind in ("warning", "breach"):
        try:
            sched.delete_schedule(Name=name(kind))
            cancelled.append(kind)
        except sched.exceptions.ResourceNotFoundException:
            pass  # already fired (and deleted itself)
    met = "warning" in cancelled
    json.dump({"cancelled": cancelled, "event": "SLA_MET" if met else "SLA_MISSED"}, sys.stdout)
