#!/bin/sh
# Answers, leaving a background child holding stdout open.
echo "{\"done\":true}"
sleep 300 &
