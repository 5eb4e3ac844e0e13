#!/bin/sh
# Starts a child that outlives nothing: both must die on cancel.
sleep 300 &
echo $! > "$1"
wait
