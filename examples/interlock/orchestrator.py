"""The orchestrator Lambda of Interlock (seed 004), as a stepd registry
command: the event on standard input, the result on standard output.
Sensor readiness and job runs are kept in $INTERLOCK_STATE (a JSON file)."""
import json
import os
import sys

event = json.load(sys.stdin)
path = os.environ["INTERLOCK_STATE"]
state = json.load(open(path)) if os.path.exists(path) else {"evaluations": 0, "checks": 0}
mode = event["mode"]
if mode == "evaluate":
    state["evaluations"] += 1
    # Sensors report ready on the second evaluation.
    out = {"status": "passed" if state["evaluations"] >= 2 else "pending"}
elif mode == "trigger":
    out = {"runId": "run-%s-%s" % (event["pipelineId"], event["date"]), "metadata": {"engine": "glue"}}
elif mode == "check-job":
    state["checks"] += 1
    out = {"event": "success"} if state["checks"] >= 2 else {}
else:
    out = {}
json.dump(state, open(path, "w"))
json.dump(out, sys.stdout)
