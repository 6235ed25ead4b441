#!/usr/bin/env bash
# Regenerate notebooks/<chapter>/ from the chapter's twin and solution notebook (all chapters when none given):
# the older of twins/<chapter>/<chapter>.py and solutions/<chapter>/<chapter>.ipynb is first rewritten from
# the other (course/twins.py), then nbgrader makes the student notebook from solutions/<chapter>/.
# Chapter authors run this after every edit of a chapter; the test suite checks it was run.
#   bash tools/release.sh                  # every chapter
#   bash tools/release.sh ch02_backprop    # one chapter
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
exec "$PYTHON" -m course.release "$@"
