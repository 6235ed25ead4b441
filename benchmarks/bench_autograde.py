"""Autograde throughput: nbgrader's own batch against `minigrad-course autograde` with a 1- and a
2-worker pool and on a local 2-worker Dask cluster, in one run.

    .venv/bin/python benchmarks/bench_autograde.py                    # 20 submissions of chapter 2
    .venv/bin/python benchmarks/bench_autograde.py --submissions 8    # a shorter class
    .venv/bin/python benchmarks/bench_autograde.py --quick            # 3 submissions: a smoke run

A class of chapter 2 (ch02_backprop) as students hand it in: whole notebooks (prose experiments
included, the MLP training loop too), cycling through the solution, the untouched student
notebook and the chapter's wrong answers (each put into the solution notebook in place of its
answer). The same submissions are graded four ways, one after the other in this process:

* `nbgrader`: one `nbgrader autograde` run over the whole class in a scratch course (the peer:
  one process, one kernel per notebook, tests in the student's kernel, no sandbox);
* `pool` with 1 and 2 workers (`course.autograde.grade_class`, which `minigrad-course autograde
  --workers N` runs): every notebook in a judge kernel beside a sandboxed student process, the
  gradebook merged by the parent;
* `dask`, `grade_class` with `--cluster local:2`: the same grading, each submission a task on a
  local Dask cluster of two worker processes (started and stopped inside the timing).

Our contenders' seconds include everything the command does: `prepare` (the chapter generated
into a template course and registered in the gradebook), `cluster` (starting and stopping the
Dask cluster), the `class` (the chapter's own solution graded through the judge as its first
task, beside the students': a chapter that cannot be judged is refused) and the `merge` into the
gradebook; each line gives those phases (`phases`, seconds).

Lines (JSON): `machine` (CPU model, load average before the run, ...), one line per contender
with wall seconds, `submissions_per_minute` and `throughput_ratio` = nbgrader's seconds / the
contender's (above 1: faster than nbgrader's batch), and `agree` (every submission got the same
score as from nbgrader: an honest notebook has no reason to differ); then `summary`, with the
cluster's `overhead_seconds_per_submission` (its class phase against the 2-worker pool's, per
submission) and the load average after the run. Wall time on a shared machine moves with
everyone else's load: compare ratios of one run.
"""

import harness  # noqa: I001  (first: pins the BLAS libraries to one thread)

import argparse
import functools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

import course.autograde as autograde  # noqa: E402
import course.cluster as cluster_module  # noqa: E402
from course.pipeline import COURSE, NbgraderCourse, read_notebook, replace_answer  # noqa: E402

CHAPTER = "ch02_backprop"
CONTENDERS = [("pool", 1, None), ("pool", 2, None), ("dask", 2, "local:2")]  # (tool, workers, --cluster)
# grade_class's phases, timed where it calls them (module globals, looked up by name at each call)
PHASES = [(autograde, "prepare", "prepare"), (autograde, "merge_into_gradebook", "merge"),
          (cluster_module.DaskPool, "__enter__", "cluster"), (cluster_module.DaskPool, "__exit__", "cluster")]


def class_of(count):
    """{student: notebook}: solution, stub and wrong answers in turn, `count` of them."""
    solution = read_notebook(COURSE.source(CHAPTER))
    kinds = [("solution", solution), ("stub", read_notebook(COURSE.release(CHAPTER)))]
    kinds += [(f"wrong-{variant}", replace_answer(solution, name, source))
              for variant, (name, source) in sorted(COURSE.wrong_answers(CHAPTER).items())]
    return {f"s{i:02d}-{kinds[i % len(kinds)][0]}": kinds[i % len(kinds)][1] for i in range(count)}


def nbgrader_batch(submissions, scratch, cell_timeout):
    course = NbgraderCourse.scratch(Path(scratch) / "nbgrader", [CHAPTER])
    course.generate([CHAPTER], database=True)
    for student, nb in submissions.items():
        course.submit(CHAPTER, student, nb)
    start = time.perf_counter()
    course.autograde(CHAPTER, timeout=cell_timeout)
    seconds = time.perf_counter() - start
    return seconds, {s: r.score for s, r in course.results(CHAPTER, list(submissions)).items()}, {}


def timed_phases():
    """Wrap grade_class's phases to record their seconds in the dict returned."""
    phases = {}

    def timing(name, function):
        @functools.wraps(function)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - start
        return timed

    for owner, attribute, name in PHASES:
        setattr(owner, attribute, timing(name, getattr(owner, attribute)))
    return phases


def ours(submissions, scratch, workers, cluster, cell_timeout, phases):
    label = f"{cluster or 'pool'}-{workers}".replace(":", "")
    root = Path(scratch) / f"course-{label}"
    (root / "course").mkdir(parents=True)
    shutil.copy2(REPOSITORY / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    shutil.copytree(COURSE.solutions / CHAPTER, root / "solutions" / CHAPTER)
    folders = {}
    for student, nb in submissions.items():
        folder = Path(scratch) / f"submitted-{label}" / student / CHAPTER
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{CHAPTER}.ipynb"))
        folders[student] = folder
    phases.clear()
    settings = autograde.Settings(CHAPTER, root=root, workers=workers, cluster=cluster, cell_timeout=cell_timeout)
    start = time.perf_counter()
    results = autograde.grade_class(settings, folders)
    seconds = time.perf_counter() - start
    split = {name: phases.get(name, 0.0) for name in ("prepare", "cluster", "merge")}
    split["class"] = seconds - sum(split.values())
    return seconds, {s: r.score for s, r in results.items()}, {k: round(v, 2) for k, v in split.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 submissions instead of 20")
    parser.add_argument("--submissions", type=int, help="how many submissions (default 20, 3 with --quick)")
    parser.add_argument("--cell-timeout", type=int, default=120)
    args = parser.parse_args()
    count = args.submissions or (3 if args.quick else 20)
    submissions = class_of(count)
    base = {"bench": "autograde", "chapter": CHAPTER, "submissions": count, "clock": "wall"}
    harness.emit({"benchmark": "machine", "command": harness.command_line(), "quick": args.quick, **base,
                  **harness.machine()})
    phases = timed_phases()
    records = {}
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as scratch:
        peer_seconds, peer_scores, _ = nbgrader_batch(submissions, scratch, args.cell_timeout)
        records["nbgrader-1"] = record = {"benchmark": "autograde", "tool": "nbgrader", "workers": 1,
                                          "seconds": round(peer_seconds, 2)}
        harness.emit(throughput(record, count, peer_seconds))
        for tool, workers, cluster in CONTENDERS:
            seconds, scores, split = ours(submissions, scratch, workers, cluster, args.cell_timeout, phases)
            disagree = sorted(s for s in submissions if scores.get(s) != peer_scores.get(s))
            record = {"benchmark": "autograde", "tool": tool, "workers": workers, "seconds": round(seconds, 2),
                      "phases": split, "agree": not disagree,
                      **({"disagree": {s: [peer_scores.get(s), scores.get(s)] for s in disagree}} if disagree else {})}
            records[f"{tool}-{workers}"] = record
            harness.emit(throughput(record, count, peer_seconds))
    harness.emit(summary(records, count))


def throughput(record, count, peer_seconds):
    record["submissions_per_minute"] = round(60 * count / record["seconds"], 2)
    record["throughput_ratio"] = round(peer_seconds / record["seconds"], 3)
    return record


def summary(records, count):
    """Each contender's ratio to nbgrader, and what the cluster costs per submission beyond the
    2-worker pool (same parallelism; the class phases compared, set-up and the cluster's start
    and stop apart)."""
    pool, dask = records["pool-2"], records["dask-2"]
    return {"benchmark": "summary", "ratios": {name: r["throughput_ratio"] for name, r in records.items()},
            "all_agree": all(r.get("agree", True) for r in records.values()),
            "pool_2_not_slower_than_nbgrader": pool["throughput_ratio"] >= 1.0,
            "overhead_seconds_per_submission": round((dask["phases"]["class"] - pool["phases"]["class"]) / count, 2),
            "dask_over_pool_2": round(dask["seconds"] / pool["seconds"], 3),
            "load_average_after": os.getloadavg()}


if __name__ == "__main__":
    main()
