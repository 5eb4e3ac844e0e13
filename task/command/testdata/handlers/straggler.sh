#!/bin/sh
# Answers, leaving a background child holding stdout open; the child's
# process ID goes to the file named by $1.
echo "{\"done\":true}"
sleep 3600 &
echo $! > "$1"
