"""A throw-away PostgreSQL server for the gradebook tests, on pytest-postgresql's executor.

`postgres_server` (session scope) runs `initdb` in a temporary folder and starts the server with
`pg_ctl` on a free port of 127.0.0.1 (trust authentication, listening on 127.0.0.1 only), then
stops it and removes the folder at the end. `new_database(server)` makes a fresh, empty database
on it and gives its SQLAlchemy URL (`postgresql+psycopg://postgres@127.0.0.1:PORT/NAME`), dropping
it afterwards; `postgres_url` is one such database per test.

PostgreSQL refuses to run as root, so as root the server's files belong to the `postgres` system
user (Debian's package creates it) and pg_ctl runs as that user through `runuser`: a two-line
wrapper handed to pytest-postgresql as its pg_ctl. The binaries are Debian's
(/usr/lib/postgresql/<version>/bin, newest first) or whatever pg_ctl is on PATH.

Without PostgreSQL the tests fail where it is the test command's job to have installed it (CI, or
root, where tools/test.sh installs Debian's `postgresql`); elsewhere (a developer's machine, not
root) they are skipped.
"""

import contextlib
import glob
import os
import pwd
import shutil
import socket
import tempfile
import uuid
from pathlib import Path

import pytest

HOST = "127.0.0.1"
SERVER_USER = "postgres"  # the system user the server runs as when the tests run as root
DB_USER = "postgres"  # the database superuser initdb creates


def unavailable(reason):
    """Fail where PostgreSQL must be there (CI, or root: tools/test.sh installs it), else skip."""
    if os.environ.get("CI") or os.geteuid() == 0:
        pytest.fail(f"PostgreSQL gradebook tests cannot run: {reason} (tools/test.sh installs Debian's postgresql)",
                    pytrace=False)
    pytest.skip(f"PostgreSQL gradebook tests: {reason}")


def find_pg_ctl():
    def version(path):
        name = Path(path).parts[-3]
        return int(name) if name.isdigit() else 0

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=version, reverse=True)
    return candidates[0] if candidates else shutil.which("pg_ctl")


def free_port():
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_server():
    """pytest-postgresql's PostgreSQLExecutor, started; stopped and its folder removed at the end."""
    try:
        from pytest_postgresql.executors import PostgreSQLExecutor
    except ImportError as error:
        unavailable(f"pytest-postgresql or psycopg is not installed ({error}); pip install -e '.[dev]'")
    pg_ctl = find_pg_ctl()
    if not pg_ctl:
        unavailable("no pg_ctl under /usr/lib/postgresql/*/bin or on PATH")
    folder = Path(tempfile.mkdtemp(prefix="minigrad-postgres-"))
    executable = pg_ctl
    if os.geteuid() == 0:
        try:
            server_user = pwd.getpwnam(SERVER_USER)
        except KeyError:
            shutil.rmtree(folder, ignore_errors=True)
            unavailable(f"running as root and there is no {SERVER_USER!r} user to run the server as")
        runuser = shutil.which("runuser") or "/usr/sbin/runuser"
        executable = folder / "pg_ctl"
        executable.write_text(f'#!/bin/sh\nexec {runuser} -u {SERVER_USER} -- {pg_ctl} "$@"\n')
        executable.chmod(0o755)
        os.chown(folder, server_user.pw_uid, server_user.pw_gid)
    server = PostgreSQLExecutor(
        executable=str(executable), host=HOST, port=free_port(), datadir=str(folder / "data"),
        unixsocketdir=str(folder), logfile=str(folder / "server.log"), startparams="-w", dbname="minigrad",
        user=DB_USER, postgres_options=f"-c listen_addresses={HOST} -c max_connections=200", timeout=120,
    )
    try:
        server.start()
    except Exception as error:  # noqa: BLE001 - reported with the server's log
        log = (folder / "server.log").read_text() if (folder / "server.log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL ({pg_ctl}): {error}\n{log[-3000:]}", pytrace=False)
    try:
        yield server
    finally:
        try:
            server.stop()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def new_database(server):
    """A fresh database on `server`, as a SQLAlchemy URL for psycopg 3; dropped on exit."""
    from pytest_postgresql.janitor import DatabaseJanitor

    dbname = f"gradebook_{uuid.uuid4().hex[:12]}"
    with DatabaseJanitor(user=server.user, host=server.host, port=server.port, dbname=dbname):
        yield f"postgresql+psycopg://{server.user}@{server.host}:{server.port}/{dbname}"


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh database on the throw-away server, for one test."""
    with new_database(postgres_server) as url:
        yield url
