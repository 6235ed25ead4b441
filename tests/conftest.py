"""Shared test set-up: the repository root on sys.path (for the `course` package) and a summary
of what the grading pipeline measured (solution run times, wrong-answer scores)."""

import os
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

PIPELINE_REPORT = "pipeline"  # user_properties key; xdist carries them back to the controller


def pytest_terminal_summary(terminalreporter):
    """Print the lines tests recorded with ``record_property("pipeline", line)``."""
    lines = sorted(
        value
        for outcome in ("passed", "failed")
        for report in terminalreporter.stats.get(outcome, [])
        for key, value in getattr(report, "user_properties", ())
        if key == PIPELINE_REPORT
    )
    if lines:
        terminalreporter.section("grading pipeline")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture
def rng(request):
    """A random generator of the test's own, seeded by its module and name. A module's generator drawn
    from inside a test body hands each test whatever the tests before it in its xdist worker left,
    so its inputs change with the order (that is how a near-singular matrix reached test_lstsq
    now and then); this one gives the same draws in every run and order."""
    return np.random.default_rng(_seed(request))


def _seed(request):
    """A number of the test's own, from its module and name. Not the node id: pytest-xdist appends
    "@group" to it on a worker for xdist_group tests."""
    return zlib.crc32(f"{request.node.module.__name__}::{request.node.name}".encode())


@pytest.fixture(autouse=True)
def _seeded_torch(request):
    """torch's global generator seeded per test, as `rng` is: a test that builds a PyTorch model
    with its default (random) initialization, then loads the weights into minigrad's twin, gets
    the same weights in every run and order (one such test failed once in fifteen runs unseeded).
    Only once torch is imported: this fixture does not import it for tests that do without it."""
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(_seed(request))


def pytest_configure(config):
    # Registered here too so that runs without xdist (-p no:xdist) accept the grouping mark.
    config.addinivalue_line("markers", "xdist_group(name): run these tests in one xdist worker (--dist loadgroup)")


_UNGROUPED = set()  # node ids of tests marked xdist_group that --dist loadgroup would not group


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Find the tests --dist loadgroup fails to group. The expensive fixtures (one graded class per
    chapter, one bundle per chapter) are shared by the tests of one xdist_group; without grouping
    every worker builds them again, silently doubling the suite's time. pytest-xdist marks a test's
    group by appending "@group" to its node id on the worker, which a pytest it does not support
    drops (pytest-dev/pytest-xdist#1386)."""
    if os.environ.get("PYTEST_XDIST_WORKER") and session.config.getvalue("loadgroup"):
        _UNGROUPED.update(item.nodeid for item in session.items
                          if item.get_closest_marker("xdist_group") is not None
                          and "@" not in item.nodeid.rpartition("]")[2])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Fail such a test before its fixtures run, saying why."""
    if item.nodeid in _UNGROUPED:
        pytest.fail(f"--dist loadgroup is not grouping the tests marked xdist_group: this pytest ({pytest.__version__}) "
                    "and pytest-xdist do not work together (pytest-dev/pytest-xdist#1386); install the versions "
                    "pyproject.toml asks for", pytrace=False)
