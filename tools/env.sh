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
    touch "$stamp"
fi
export PATH="$PWD/.venv/bin:$PATH"
