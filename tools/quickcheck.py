"""A developer's quick loop for one chapter's graded tests, without nbgrader or a kernel.

    .venv/bin/python tools/quickcheck.py ch01_graph [--only solution,release,library,wrong.*]

Runs the chapter's submissions (those `tests/test_pipeline.py` grades: the solution, the released
stub, the library's answers, every wrong answer) through the nbgrader cells of each notebook
(setup, helpers, answers, tests: what `trimmed_notebook` keeps) as the student's own kernel runs
them (`course.pipeline.local_verdicts`), and prints which graded cells pass. It is a fast approximation of the pipeline, not a
replacement: `tests/test_pipeline.py` (nbgrader itself) is the proof.
"""

import argparse
import fnmatch
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter")
    parser.add_argument("--only", default="*", help="comma-separated patterns of submission names")
    args = parser.parse_args()
    from course.pipeline import chapter_submissions, local_verdicts, trimmed_notebook

    patterns = args.only.split(",")
    chosen = {name: trimmed_notebook(nb) for name, nb in chapter_submissions(args.chapter).items()
              if any(fnmatch.fnmatch(name, p) for p in patterns)}
    failed = False
    for name, verdicts in local_verdicts(chosen).items():
        passed = [g for g, e in verdicts.items() if e is None]
        lost = {g: e for g, e in verdicts.items() if e is not None}
        expect_full = name in ("solution", "library")
        ok = not lost if expect_full else (not passed if name == "release" else bool(lost))
        failed |= not ok
        print(f"{'ok ' if ok else 'BAD'} {name}: {len(passed)}/{len(verdicts)} cells pass")
        for grade_id, error in (lost if name != "release" else {g: "passed" for g in passed}).items():
            print(f"      {'loses ' if name.startswith('wrong') else ''}{grade_id}: {error}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
