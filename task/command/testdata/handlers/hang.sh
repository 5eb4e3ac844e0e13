#!/bin/sh
# Starts a child that outlives nothing: both must die on cancel.
sleep 3600 &
echo $! > "$1"
wait
