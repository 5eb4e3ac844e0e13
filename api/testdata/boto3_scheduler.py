"""Drives stepd's EventBridge Scheduler API with boto3 the way seed 004's
sla-monitor does: a one-time schedule created for a deadline, read back,
cancelled (deleted) before it fires; and one due at once that starts an
execution. Usage: boto3_scheduler.py ENDPOINT STATE_MACHINE_ARN"""
import datetime
import sys
import time

import boto3

url, sm = sys.argv[1], sys.argv[2]
kw = dict(endpoint_url=url, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
sched = boto3.client("scheduler", **kw)
sfn = boto3.client("stepfunctions", **kw)
role = "arn:aws:iam::123456789012:role/scheduler"

deadline = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S")
arn = sched.create_schedule(
    Name="sla-warning-orders-2026-11-25",
    ScheduleExpression="at(%s)" % deadline,
    ScheduleExpressionTimezone="UTC",
    FlexibleTimeWindow={"Mode": "OFF"},
    ActionAfterCompletion="DELETE",
    Target={"Arn": sm, "RoleArn": role, "Input": '{"alert":"SLA_WARNING"}',
            "RetryPolicy": {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 600}},
)["ScheduleArn"]
assert arn.endswith(":schedule/default/sla-warning-orders-2026-11-25"), arn
got = sched.get_schedule(Name="sla-warning-orders-2026-11-25")
assert got["ScheduleExpression"] == "at(%s)" % deadline, got
assert got["Target"]["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 600}, got
assert isinstance(got["CreationDate"], datetime.datetime), got
pages = sched.get_paginator("list_schedules").paginate(NamePrefix="sla-")
assert [s["Name"] for p in pages for s in p["Schedules"]] == ["sla-warning-orders-2026-11-25"]
sched.delete_schedule(Name="sla-warning-orders-2026-11-25")  # the job finished in time
try:
    sched.get_schedule(Name="sla-warning-orders-2026-11-25")
    raise SystemExit("the cancelled schedule is still there")
except sched.exceptions.ResourceNotFoundException:
    pass

# A rate() schedule without StartDate fires at once.
sched.create_schedule(Name="now", ScheduleExpression="rate(1 day)", FlexibleTimeWindow={"Mode": "OFF"},
                      Target={"Arn": sm, "RoleArn": role})
for _ in range(200):
    execs = sfn.list_executions(stateMachineArn=sm)["executions"]
    if execs:
        break
    time.sleep(0.05)
assert len(execs) == 1 and execs[0]["name"].startswith("now_"), execs
try:
    sched.create_schedule(Name="bad", ScheduleExpression="rate(1 day)", FlexibleTimeWindow={"Mode": "FLEXIBLE"},
                          Target={"Arn": sm, "RoleArn": role})
    raise SystemExit("a FLEXIBLE window without MaximumWindowInMinutes was accepted")
except sched.exceptions.ValidationException as e:
    assert "MaximumWindowInMinutes" in str(e), e
print("ok")
