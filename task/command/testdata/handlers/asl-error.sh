#!/bin/sh
# Logs, then fails with an ASL error object on stderr.
echo "working..." >&2
echo "{\"Error\":\"My.Error\",\"Cause\":{\"why\":1}}" >&2
exit 3
