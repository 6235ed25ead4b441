#!/usr/bin/env bash
# Run the whole test suite: library, notebooks through nbgrader, benchmarks' smoke runs, browser.
source "$(dirname "$0")/env.sh" course,dev
# The browser test drives Debian's Chromium; install it where we can (root on Debian).
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "WARNING: could not install chromium; the browser test will be skipped" >&2
fi
# The PostgreSQL gradebook tests start a throw-away server from Debian's binaries
# (/usr/lib/postgresql/*/bin); install them where we can. Without them those tests fail in CI and
# as root, and are skipped elsewhere.
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! command -v pg_ctl >/dev/null \
        && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) \
        || echo "WARNING: could not install postgresql; the PostgreSQL gradebook tests will fail" >&2
fi
# The slowest tests are listed at the end: the suite must stay well under its time budget.
exec python -m pytest -n "${PYTEST_WORKERS:-auto}" --dist loadgroup --durations=15 "$@"
