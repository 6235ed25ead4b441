#!/usr/bin/env bash
# Set up everything (a virtual environment with minigrad and the course tools) and open the course.
source "$(dirname "$0")/env.sh" course
# JupyterLab refuses to run as root unless told; containers and CI machines often are root.
[ "$(id -u)" = 0 ] && set -- --allow-root "$@"
exec jupyter lab --notebook-dir=notebooks "$@"
