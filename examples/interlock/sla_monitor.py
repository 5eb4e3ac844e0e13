"""The sla-monitor Lambda of Interlock (seed 004), as a stepd registry
command: it creates one-time EventBridge Scheduler entries for the warning
and breach times (through AWS_ENDPOINT_URL_SCHEDULER: stepd's Scheduler
API), which invoke it ($SLA_MONITOR_ARN) with mode fire-alert to publish
SLA_WARNING and SLA_BREACH to the SNS topic $INTERLOCK_ALERTS_TOPIC_ARN; when
the job ends it cancels the unfired entries and publishes SLA_MET if the
warning had not fired."""
import datetime
import json
import os
import sys

import awsclients

event = json.load(sys.stdin)
mode = event["mode"]


def publish(kind):
    awsclients.client("sns").publish(
        TopicArn=os.environ["INTERLOCK_ALERTS_TOPIC_ARN"], Subject=kind,
        Message=json.dumps({"event": kind, "pipelineId": event["pipelineId"], "scheduleId": event["scheduleId"], "date": event["date"]}))


if mode == "fire-alert":
    publish(event["alert"])
    json.dump({}, sys.stdout)
    sys.exit(0)

sched = awsclients.client("scheduler")
role = os.environ.get("SLA_SCHEDULER_ROLE_ARN", "arn:aws:iam::123456789012:role/interlock-scheduler")
me = os.environ["SLA_MONITOR_ARN"]


def after_completion_delete(params, **_):
    """Adds ActionAfterCompletion to CreateSchedule's JSON body, for a
    botocore whose model predates it (Debian's 1.29)."""
    body = json.loads(params["body"] or b"{}")
    body["ActionAfterCompletion"] = "DELETE"
    params["body"] = json.dumps(body).encode()


def name(kind):
    return "interlock-%s-%s-%s-%s" % (event["pipelineId"], event["scheduleId"], event["date"], kind)


if mode == "schedule":
    deadline = datetime.datetime.fromisoformat(event["deadline"].replace("Z", "+00:00"))
    expected = datetime.timedelta(seconds=event["expectedDuration"])
    at = {"warning": deadline - expected, "breach": deadline}
    extra = {"ActionAfterCompletion": "DELETE"}
    if "ActionAfterCompletion" not in sched.meta.service_model.operation_model("CreateSchedule").input_shape.members:
        sched.meta.events.register("before-call.scheduler.CreateSchedule", after_completion_delete)
        extra = {}
    for kind, t in at.items():
        sched.create_schedule(
            Name=name(kind), ScheduleExpression="at(%s)" % t.strftime("%Y-%m-%dT%H:%M:%S"), ScheduleExpressionTimezone="UTC",
            FlexibleTimeWindow={"Mode": "OFF"},
            Target={"Arn": me, "RoleArn": role, "Input": json.dumps({"mode": "fire-alert", "alert": "SLA_" + kind.upper(),
                                                                      "pipelineId": event["pipelineId"], "scheduleId": event["scheduleId"],
                                                                      "date": event["date"]})},
            **extra)
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
    if met:
        publish("SLA_MET")
    json.dump({"cancelled": cancelled, "event": "SLA_MET" if met else "SLA_MISSED"}, sys.stdout)
