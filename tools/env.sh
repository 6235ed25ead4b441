# Sourced by start.sh and test.sh: make .venv (once) and install the project into it with `extras`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
fi
# Reinstall only when pyproject.toml changed since the last install (pip's resolver costs ~10 s).
stamp=".venv/.installed-$1"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    # pip byte-compiles what it installs one file at a time, half of a fresh install's time
    # (README.md, "For developers"); compileall does it on every core. Its status is ignored: like
    # pip, it reports the files that are not Python 3.11 (torch ships one in 3.12 syntax) and goes on.
    .venv/bin/python -m pip install --quiet --no-compile -e ".[$1]"
    .venv/bin/python -m compileall -q -j 0 .venv/lib >/dev/null 2>&1 || true
    # jsonschema (under nbformat, nbgrader and jupyter_events) imports rfc3987-syntax, its optional
    # checker of the "iri" format, which builds eight Lark parsers at import: 0.8 of the 0.9 CPU-s
    # that `import nbformat` costs, in every process that reads a notebook
    # (python-jsonschema/jsonschema#1428). No schema installed here uses that format, and
    # jsonschema skips the check without the package.
    .venv/bin/python -m pip uninstall --quiet --yes rfc3987-syntax
    touch "$stamp"
fi
export PATH="$PWD/.venv/bin:$PATH"
