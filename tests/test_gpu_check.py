"""tools/gpu_check.sh, the GPU checks' one command, as a dry run on the CUDA simulator.

CI has no GPU, so the script's device run cannot happen here; its `--simulator` mode runs the same
three steps (the CUDA backend's tests, bench_fusion.py's GPU section, chapter 9 executed in a
kernel) with the simulator, which is what keeps the script from rotting between GPU sessions.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
SCRIPT = REPOSITORY / "tools" / "gpu_check.sh"

pytestmark = pytest.mark.xdist_group("gpu-check")  # one worker, one dry run for both tests


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_check_out")
    # as from a developer's shell: without this run's pytest-xdist variables, which the script's own
    # pytest would take for its own (tests/conftest.py reads PYTEST_XDIST_WORKER)
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    done = subprocess.run(["bash", str(SCRIPT), "--simulator"], env={**env, "OUT": str(out)},
                          capture_output=True, text=True, timeout=600)
    return done, out


@pytest.mark.slow
def test_dry_run_passes_every_step_and_says_so(dry_run):
    done, out = dry_run
    summary = (out / "summary.txt").read_text()
    assert done.returncode == 0, f"gpu_check.sh --simulator failed (exit {done.returncode}):\n{summary}\n{done.stderr[-3000:]}"
    verdicts = [line for line in summary.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert [v.split(" (")[0] for v in verdicts] == [
        "PASS CUDA backend tests on the simulator",
        "PASS bench_fusion.py --gpu-only --gpu-simulator",
        "PASS chapter 9 executed",
    ], summary
    assert summary.rstrip().endswith("0 step(s) failed")
    assert "gpu: none" in summary and "numba-cuda" in summary, "the machine's facts head the summary"


@pytest.mark.slow
def test_dry_run_keeps_the_figures_and_the_executed_chapter(dry_run):
    _, out = dry_run
    records = {r["benchmark"]: r for r in map(json.loads, (out / "bench.jsonl").read_text().splitlines())}
    assert set(records) == {"machine", "gpu_gelu", "gpu_training_step"}, "--gpu-only: the GPU section alone"
    assert records["gpu_gelu"]["simulated"] and records["gpu_training_step"]["simulated"]
    tests = (out / "pytest.log").read_text()
    assert re.search(r"\b\d+ passed\b", tests) and "failed" not in tests and "error" not in tests, tests
    notebook = nbformat.read(out / "ch09_fusion.ipynb", as_version=4)
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert outputs and not [o for o in outputs if o.output_type == "error"], "chapter 9 ran without an error"
    summary = (out / "summary.txt").read_text()
    assert "chapter 9: ran on the CUDA simulator" in summary, summary
    assert "chapter 9's training step" in summary and "host/device copies a call" in summary, summary
