"""The engine benchmark's and the examples benchmark's quick runs: every measurement is there and well formed.

No timing thresholds here (a shared machine makes them flaky, and speed is the benchmark's job, not
the test suite's): what is checked is that the script runs, that the contenders agreed on their
results (the script raises otherwise), and that its JSON lines are complete and self-consistent.
"""

import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPT = BENCHMARKS / "bench_engine.py"
# issue 13, "Eager engine"
TARGETS = {"per_op_4x4": 0.8, "mlp_step": 1.0, "chain_backward": 0.75, "tanh_chain_forward_backward": 0.75, "char_rnn_epoch": 1.0}
WITHOUT_NUMPY = {"char_rnn_epoch"}  # a self-learner's model against PyTorch alone: no floor written by hand
MEASURED = set(TARGETS) | {"chain_forward", "chain_forward_backward", "deep_mlp_forward_backward",
                           "tiny_mlp_step", "tiny_mlp_step_cold_caches"}
FLOOR = "mlp_step_numpy_floor"  # the MLP step against numpy by hand, within 3 %

pytestmark = pytest.mark.xdist_group("benchmarks-smoke")  # one worker runs each script's quick run once


def _quick_run(script):
    done = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{script.name} --quick failed:\n{done.stderr[-4000:]}"
    lines = done.stdout.splitlines()
    parsed = []
    for number, line in enumerate(lines, 1):
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError as error:
            pytest.fail(f"line {number} of the output is not JSON ({error}): {line!r}")
    return parsed


@pytest.fixture(scope="module")
def records():
    return _quick_run(SCRIPT)


def _measurements(records):
    return {r["benchmark"]: r for r in records if r["benchmark"] in MEASURED}


def test_every_measurement_is_reported_once_between_machine_and_summary(records):
    names = [r["benchmark"] for r in records]
    assert names[0] == "machine" and names[-1] == "summary", names
    assert sorted(names[1:-1]) == sorted(MEASURED), names


def test_machine_line_says_what_was_measured_and_how(records):
    machine = records[0]
    assert "bench_engine.py --quick" in machine["command"]
    assert machine["quick"] is True and machine["clock"] == "cpu"
    for key in ("python", "numpy", "torch", "processor", "platform"):
        assert isinstance(machine[key], str) and machine[key], key
    assert isinstance(machine["cpu_count"], int) and machine["cpu_count"] >= 1
    # The CPU kind, from /proc/cpuinfo: the model name may be a bare "AMD EPYC" for Zen 4 and Zen 5 alike.
    if platform.machine() == "x86_64" and os.path.exists("/proc/cpuinfo"):
        cpu = machine["cpu"]
        assert cpu["vendor"] and cpu["family"].isdigit() and cpu["model"].isdigit(), cpu
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split(":")[1].split()
        assert cpu["vector_extensions"] and set(cpu["vector_extensions"]) <= set(flags), cpu


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_figures_are_positive_and_the_ratio_is_minigrad_over_pytorch(records, name):
    record = _measurements(records)[name]
    contenders = {"minigrad", "pytorch"} | ({"numpy"} if name not in WITHOUT_NUMPY else set())
    contenders |= {"micrograd"} if name.startswith("chain") else set()
    for contender in contenders:
        figure = record[contender]
        assert isinstance(figure, float) and math.isfinite(figure) and figure > 0, (contender, figure)
        assert record["median"][contender] >= figure, f"{contender}: the median is below the minimum"
    assert set(record["median"]) == contenders
    assert record["ratio"] == pytest.approx(record["minigrad"] / record["pytorch"], rel=1e-2, abs=2e-3)
    assert record["runs"] >= 2 and isinstance(record["unit"], str) and record["unit"]


def test_each_target_is_the_issues_and_its_verdict_follows_the_ratio(records):
    measured = _measurements(records)
    summary = records[-1]
    for name, target in TARGETS.items():
        record = measured[name]
        assert record["target"] == target
        assert record["met"] == (record["ratio"] <= target), record
        assert summary["targets"][name] == {"ratio": record["ratio"], "target": target, "met": record["met"]}
    mlp = measured["mlp_step"]
    assert summary["targets"][FLOOR] == {"ratio": mlp["ratio_to_numpy"], "target": 1.03,
                                         "met": mlp["ratio_to_numpy"] <= 1.03}
    assert set(summary["targets"]) == set(TARGETS) | {FLOOR}
    assert summary["all_met"] == all(t["met"] for t in summary["targets"].values())
    for name in MEASURED - set(TARGETS):
        assert "target" not in measured[name] and "met" not in measured[name], name


def test_mlp_step_breaks_each_library_down_by_phase(records):
    phases = _measurements(records)["mlp_step"]["phases_us_median"]
    assert set(phases) == {"minigrad", "pytorch", "numpy"}  # the floor's phases show where the gap lies
    for library, times in phases.items():
        assert list(times) == ["zero_grad+model", "loss", "backward", "optimizer"], (library, times)
        assert all(isinstance(t, float) and t > 0 for t in times.values()), (library, times)


def test_tiny_mlp_lines_give_each_engines_overhead_over_the_floor_warm_and_cold(records):
    measured = _measurements(records)
    warm, cold = measured["tiny_mlp_step"], measured["tiny_mlp_step_cold_caches"]
    for record in (warm, cold):
        assert record["sizes"] == [8, 8, 8, 10] and record["batch"] == 4
        assert record["overhead_us"] == {
            engine: pytest.approx(record[engine] - record["numpy"], abs=0.1) for engine in ("minigrad", "pytorch")
        }
    assert warm["evicting_products"] == 0 and cold["evicting_products"] == 6
    assert cold["product_shapes"] == [[64, 784], [784, 256]]
    # the six products are in every contender's cold step: the floor itself pays for them
    assert cold["numpy"] > warm["numpy"]


def test_chain_shows_micrograd_failing_at_the_default_recursion_limit(records):
    record = _measurements(records)["chain_backward"]
    assert record["micrograd_default_limit"] == 1000
    assert record["micrograd_at_depth_1000"].startswith("RecursionError"), record["micrograd_at_depth_1000"]
    assert 500 < record["micrograd_deepest_at_default_limit"] < 1000, record["micrograd_deepest_at_default_limit"]
    assert record["ops"] == _measurements(records)["chain_forward"]["ops"] > 1000


# --------------------------------------------------------------------------- benchmarks/bench_examples.py
EXAMPLES = sorted(p.stem for p in (BENCHMARKS.parent / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def example_records():
    return _quick_run(BENCHMARKS / "bench_examples.py")


def test_examples_benchmark_measures_every_example_once(example_records):
    names = [r["benchmark"] for r in example_records]
    assert names[0] == "machine" and names[-1] == "summary", names
    assert sorted(names[1:-1]) == sorted(f"{name}_step" for name in EXAMPLES), names
    machine = example_records[0]
    assert "bench_examples.py --quick" in machine["command"] and machine["clock"] == "cpu"
    for key in ("processor", "python", "numpy", "torch"):
        assert isinstance(machine[key], str) and machine[key], key


def test_examples_benchmark_figures_and_ratios(example_records):
    steps = example_records[1:-1]
    for record in steps:
        for contender in ("minigrad", "pytorch"):
            figure = record[contender]
            assert isinstance(figure, float) and math.isfinite(figure) and figure > 0, (record["benchmark"], contender)
            assert record["median"][contender] >= figure, record
        assert record["unit"] == "ms" and record["runs"] >= 2 and record["calls_per_run"] >= 1
        assert record["ratio"] == pytest.approx(record["minigrad"] / record["pytorch"], rel=1e-2, abs=2e-3)
        assert record["parameters"] > 0 and record["what"]
    summary = example_records[-1]
    assert summary["ratios"] == {r["benchmark"]: r["ratio"] for r in steps}
    geometric = math.exp(sum(math.log(r["ratio"]) for r in steps) / len(steps))
    assert summary["geometric_mean_ratio"] == pytest.approx(geometric, rel=1e-2)
