"""Shared test set-up: the repository root on sys.path (for the `course` package) and a summary
of what the grading pipeline measured (solution run times, wrong-answer scores)."""

import sys
from pathlib import Path

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


def pytest_configure(config):
    # Registered here too so that runs without xdist (-p no:xdist) accept the grouping mark.
    config.addinivalue_line("markers", "xdist_group(name): run these tests in one xdist worker (--dist loadgroup)")
