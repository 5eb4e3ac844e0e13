#!/bin/sh
# Fails without an error object.
echo "line 1" >&2
echo "oops: disk full" >&2
exit 2
