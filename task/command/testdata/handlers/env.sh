#!/bin/sh
# Reports its environment as JSON.
printf "{\"resource\":\"%s\",\"state\":\"%s\",\"token\":\"%s\",\"extra\":\"%s\",\"dir\":\"%s\"}" "$STEPD_RESOURCE" "$STEPD_STATE_NAME" "$STEPD_TASK_TOKEN" "$EXTRA" "$(pwd)"
