#!/usr/bin/env bash
# Regenerate notebooks/<chapter>/ from solutions/<chapter>/ with nbgrader (all chapters when none given).
# Chapter authors run this after every edit of a source notebook; the test suite checks it was run.
#   bash tools/release.sh                  # every chapter
#   bash tools/release.sh ch02_backprop    # one chapter
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
exec "$PYTHON" -m course.release "$@"
