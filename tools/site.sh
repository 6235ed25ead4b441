#!/usr/bin/env bash
# Build the course's website: the nine chapters (solutions/, executed now, with their figures),
# the README, the instructor's guide and the API reference from the docstrings; Sphinx with myst-nb,
# warnings as errors. The site is DIR/html (open DIR/html/index.html).
#
#   bash tools/site.sh [--out DIR] [--cache DIR] [--execute CHAPTER,CHAPTER...] [--no-install]
#
#   --out DIR      where the site goes (default build/site): DIR/html, DIR/src (the pages laid out as in
#                  the repository, so relative links work), DIR/doctrees
#   --cache DIR    jupyter-cache of executed chapters (default build/site-cache): a rebuild
#                  executes only the chapters whose code changed
#   --execute LIST execute only these chapters; the others are rendered from source, without
#                  outputs (tests/test_site.py: one chapter executed, not all nine again)
#   --no-install   use the python on PATH as it is (the test suite's: the dev extra includes docs)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=build/site
cache=build/site-cache
install=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --cache) cache=$2; shift 2 ;;
        --execute) export SITE_EXECUTE=$2; shift 2 ;;
        --no-install) install=no; shift ;;
        *) echo "usage: bash tools/site.sh [--out DIR] [--cache DIR] [--execute CHAPTER,...] [--no-install]" >&2; exit 2 ;;
    esac
done
if [ "$install" = yes ]; then
    source tools/env.sh course,docs
fi
mkdir -p "$out" "$cache"
out=$(cd "$out" && pwd)
src="$out/src"
rm -rf "$src"
mkdir -p "$src/course" "$src/solutions"
cp docs/index.md "$src/"
mkdir -p "$src/docs" && cp docs/porting.md "$src/docs/"  # where README's link expects it
cp -r docs/api "$src/api"
cp README.md "$src/README.md"
cp course/README.md "$src/course/README.md"
for chapter in solutions/*/; do
    cp -r "$chapter" "$src/solutions/"
done
find "$src" -name .ipynb_checkpoints -prune -exec rm -rf {} +
# The book shows the solutions as plain code: nbgrader's region markers are for the release only.
python - "$src/solutions" <<'PY'
import re, sys
from pathlib import Path

import nbformat

marker = re.compile(r"^[ \t]*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)[ \t]*\n?", re.MULTILINE)
for path in Path(sys.argv[1]).glob("*/*.ipynb"):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.source = marker.sub("", cell.source)
    nbformat.write(nb, path)
PY
export SITE_CACHE="$(cd "$cache" && pwd)/jupyter-cache"
start=$(date +%s)
python -m sphinx -W --keep-going -q -b html -c docs -d "$out/doctrees" "$src" "$out/html"
echo "site: $out/html/index.html (built in $(( $(date +%s) - start )) s)"
