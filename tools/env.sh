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
    .venv/bin/python -m pip install --quiet -e ".[$1]"
    touch "$stamp"
fi
export PATH="$PWD/.venv/bin:$PATH"
