#!/bin/sh
# "Get Job Status" (seed 003's sfn_pattern_job_poll_2_check_status): fails
# with TimeoutError once the job has run for timeout_seconds (the execution
# input's, default 30 as in the seed) — the per-loop timeout — and otherwise
# reports running, succeeded or failed.
set -eu
event=$(cat)
. "$(dirname "$0")/job.sh"
dir=$(job_dir)
if [ ! -f "$dir/job" ]; then
	printf '{"errorType":"JobNotFound","errorMessage":"no job was started for %s"}\n' "$(field Id)"
	exit 1
fi
read -r start seconds outcome <"$dir/job"
elapsed=$(($(now) - start))
timeout=$(number timeout_seconds 30)
if [ "$elapsed" -ge "$timeout" ]; then
	rm -rf "$dir"
	printf '{"errorType":"TimeoutError","errorMessage":"job run timed out in %s seconds!"}\n' "$timeout"
	exit 1
fi
if [ "$elapsed" -lt "$seconds" ]; then
	echo '{"status":"running"}'
	exit 0
fi
rm -rf "$dir"
printf '{"status":"%s"}\n' "$outcome"
