#!/bin/sh
# "Run Job" (seed 003's sfn_pattern_job_poll_1_run_job with its job runner):
# records the job's start time, how long it runs (the execution input's
# job_seconds, default 15 as in the seed's runner) and how it ends
# (job_outcome: succeeded, the default, or failed).
set -eu
event=$(cat)
. "$(dirname "$0")/job.sh"
dir=$(job_dir)
mkdir -p "$dir"
outcome=$(field job_outcome)
printf '%s %s %s\n' "$(now)" "$(number job_seconds 15)" "${outcome:-succeeded}" >"$dir/job"
printf '{"job_id":"%s","status":"running"}\n' "${dir##*/}"
