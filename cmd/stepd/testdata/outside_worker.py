"""A worker outside stepd: it answers one task through the Step Functions API
(botocore), as a real task-token sender or activity worker does.

    outside_worker.py ENDPOINT token EXECUTION_ARN success OUTPUT
    outside_worker.py ENDPOINT token EXECUTION_ARN failure [ERROR [CAUSE]]
    outside_worker.py ENDPOINT activity ACTIVITY_ARN success OUTPUT
    outside_worker.py ENDPOINT activity ACTIVITY_ARN failure [ERROR [CAUSE]]

"token" waits until the execution's callback task is submitted and takes its
token from the task's parameters (any member named TaskToken), as a queue
consumer would read it from the message. "activity" takes the next task of
the activity (GetActivityTask). A failure without ERROR sends no error
member at all. It prints what it sent as JSON and exits 0, or exits 1.
"""

import json
import sys
import time

import botocore.session
from botocore.config import Config


def client(endpoint):
    session = botocore.session.get_session()
    return session.create_client(
        "stepfunctions",
        region_name="us-east-1",
        endpoint_url=endpoint,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(read_timeout=90, retries={"max_attempts": 1}),
    )


def find_token(value):
    if isinstance(value, dict):
        for key, member in value.items():
            if key == "TaskToken" and isinstance(member, str):
                return member
            found = find_token(member)
            if found:
                return found
    if isinstance(value, list):
        for member in value:
            found = find_token(member)
            if found:
                return found
    return None


def submitted_token(sfn, execution_arn, deadline):
    """The token of the execution's task, once its TaskSubmitted is recorded."""
    while time.time() < deadline:
        events = sfn.get_execution_history(executionArn=execution_arn, maxResults=1000)["events"]
        token = None
        for event in events:
            if event["type"] == "TaskScheduled":
                token = find_token(json.loads(event["taskScheduledEventDetails"]["parameters"]))
            if event["type"] == "TaskSubmitted" and token:
                return token
        time.sleep(0.02)
    raise SystemExit("no submitted task with a TaskToken in " + execution_arn)


def main(argv):
    endpoint, kind, target, outcome = argv[1:5]
    rest = argv[5:]
    sfn = client(endpoint)
    if kind == "token":
        token = submitted_token(sfn, target, time.time() + 30)
    elif kind == "activity":
        task = sfn.get_activity_task(activityArn=target, workerName="outside-worker")
        token = task.get("taskToken")
        if not token:
            raise SystemExit("no task for " + target)
    else:
        raise SystemExit("unknown kind " + kind)
    if outcome == "success":
        sfn.send_task_success(taskToken=token, output=rest[0])
        sent = {"success": rest[0]}
    elif outcome == "failure":
        request = {"taskToken": token}
        if len(rest) > 0:
            request["error"] = rest[0]
        if len(rest) > 1:
            request["cause"] = rest[1]
        sfn.send_task_failure(**request)
        sent = {"failure": {k: v for k, v in request.items() if k != "taskToken"}}
    else:
        raise SystemExit("unknown outcome " + outcome)
    print(json.dumps(sent))


if __name__ == "__main__":
    main(sys.argv)
