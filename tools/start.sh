#!/usr/bin/env bash
# Set up everything (a virtual environment with minigrad and the course tools) and open the course.
source "$(dirname "$0")/env.sh" course
# The student's lab (tools/jupyter/): no news prompt over the first chapter, and nbgrader's
# instructor panels (Create Assignment, Formgrader, Courses) switched off; Validate stays. An
# instructor gets them back with: JUPYTER_CONFIG_PATH= jupyter lab (see course/README.md).
export JUPYTER_CONFIG_PATH="$PWD/tools/jupyter${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
# JupyterLab refuses to run as root unless told; containers and CI machines often are root.
[ "$(id -u)" = 0 ] && set -- --allow-root "$@"
exec jupyter lab --notebook-dir=notebooks "$@"
