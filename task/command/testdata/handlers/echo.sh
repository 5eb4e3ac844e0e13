#!/bin/sh
# Echoes the task input.
exec cat
