#!/bin/sh
# Succeeds without output.
cat >/dev/null
