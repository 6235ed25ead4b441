"""Autograde throughput: `minigrad-course autograde` with 1 and 2 workers against nbgrader's own batch.

    .venv/bin/python benchmarks/bench_autograde.py            # 20 submissions of chapter 2: ~10 minutes
    .venv/bin/python benchmarks/bench_autograde.py --quick    # 4 submissions: a smoke run

A class of chapter 2 (ch02_backprop) as students hand it in: whole notebooks (prose experiments
included, the MLP training loop too), cycling through the solution, the untouched student
notebook and the chapter's wrong answers (each put into the solution notebook in place of its
answer). The same submissions are graded three ways, one after the other in this process:

* `nbgrader`: one `nbgrader autograde` run over the whole class in a scratch course (the peer:
  one process, one kernel per notebook, tests in the student's kernel);
* `minigrad-course`, `workers=1` and `workers=2` (`course.autograde.grade_class`, which the
  command line runs): every notebook in a judge kernel plus a sandboxed student process, the
  gradebook merged by the parent. Its time includes everything the command does, the set-up of
  its scratch courses too.

Each line gives wall-clock seconds and `throughput_ratio` = nbgrader's seconds / this contender's
(above 1: faster than nbgrader's batch). The grades must agree: `agree` says whether every
submission got the same score from both graders (an honest notebook has no reason to differ).
Wall time on a shared machine moves with everyone else's load: compare ratios of one run.
"""

import harness  # noqa: I001  (first: pins the BLAS libraries to one thread)

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from course.autograde import Settings, grade_class  # noqa: E402
from course.pipeline import COURSE, NbgraderCourse, read_notebook, replace_answer  # noqa: E402

CHAPTER = "ch02_backprop"


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
    return seconds, {s: r.score for s, r in course.results(CHAPTER, list(submissions)).items()}


def ours(submissions, scratch, workers, cell_timeout):
    root = Path(scratch) / f"course-{workers}"
    (root / "course").mkdir(parents=True)
    (root / "course" / "nbgrader_config.py").write_bytes((REPOSITORY / "course" / "nbgrader_config.py").read_bytes())
    (root / "solutions").mkdir()
    shutil.copytree(COURSE.solutions / CHAPTER, root / "solutions" / CHAPTER)
    folders = {}
    for student, nb in submissions.items():
        folder = Path(scratch) / f"submitted-{workers}" / student / CHAPTER
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{CHAPTER}.ipynb"))
        folders[student] = folder
    start = time.perf_counter()
    results = grade_class(Settings(CHAPTER, root=root, workers=workers, cell_timeout=cell_timeout), folders)
    return time.perf_counter() - start, {s: r.score for s, r in results.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 submissions instead of 20")
    parser.add_argument("--submissions", type=int, help="how many submissions (default 20, 4 with --quick)")
    parser.add_argument("--cell-timeout", type=int, default=120)
    args = parser.parse_args()
    count = args.submissions or (4 if args.quick else 20)
    submissions = class_of(count)
    base = {"bench": "autograde", "chapter": CHAPTER, "submissions": count, "clock": "wall",
            "command": harness.command_line(), "machine": harness.machine()}
    with tempfile.TemporaryDirectory(prefix="bench-autograde-") as scratch:
        peer_seconds, peer_scores = nbgrader_batch(submissions, scratch, args.cell_timeout)
        harness.emit({**base, "tool": "nbgrader", "workers": 1, "seconds": round(peer_seconds, 2),
                      "seconds_per_submission": round(peer_seconds / count, 2), "throughput_ratio": 1.0})
        for workers in (1, 2):
            seconds, scores = ours(submissions, scratch, workers, args.cell_timeout)
            disagree = sorted(s for s in submissions if scores.get(s) != peer_scores.get(s))
            harness.emit({**base, "tool": "minigrad-course", "workers": workers, "seconds": round(seconds, 2),
                          "seconds_per_submission": round(seconds / count, 2),
                          "throughput_ratio": round(peer_seconds / seconds, 3), "agree": not disagree,
                          **({"disagree": {s: [peer_scores.get(s), scores.get(s)] for s in disagree}} if disagree else {})})


if __name__ == "__main__":
    main()
