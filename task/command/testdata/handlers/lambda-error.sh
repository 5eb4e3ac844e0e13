#!/bin/sh
# Fails like a Lambda function (error on stdout).
echo "{\"errorType\": \"ValueError\", \"errorMessage\": \"bad\"}"
exit 1
