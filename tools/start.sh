#!/usr/bin/env bash
# Set up everything (a virtual environment with minigrad and the course tools) and open the course.
source "$(dirname "$0")/env.sh" course
exec jupyter lab --notebook-dir=notebooks "$@"
