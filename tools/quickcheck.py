"""A developer's quick loop for one chapter's graded tests, without nbgrader or a kernel.

    .venv/bin/python tools/quickcheck.py ch01_graph [--only solution,release,library,wrong.*]

Runs the chapter's submissions (those `tests/test_pipeline.py` grades: the solution, the released
stub, the library's answers, every wrong answer) through the nbgrader cells of each notebook
(setup, helpers, answers, tests: what `trimmed_notebook` keeps), each submission in a fresh
process, and prints which graded cells pass. It is a fast approximation of the pipeline, not a
replacement: `tests/test_pipeline.py` (nbgrader itself) is the proof.
"""

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run_cells(path):
    """Executed in a child: {grade_id: error text or None} for the graded cells of the notebook at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import nbformat

    nb = nbformat.read(path, as_version=4)
    namespace = {"__name__": "__main__"}
    verdicts = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta:
            continue
        try:
            exec(compile(cell.source, f"<{meta.get('grade_id')}>", "exec"), namespace)
            error = None
        except BaseException as exc:  # noqa: BLE001 - a cell's failure is the verdict
            error = f"{type(exc).__name__}: {str(exc)[:300]}"
        if meta.get("grade") and not meta.get("solution"):
            verdicts[meta["grade_id"]] = error
    return verdicts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter")
    parser.add_argument("--only", default="*", help="comma-separated patterns of submission names")
    args = parser.parse_args()
    import nbformat

    from course.pipeline import chapter_submissions, trimmed_notebook

    patterns = args.only.split(",")
    failed = False
    for name, nb in chapter_submissions(args.chapter).items():
        if not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "nb.ipynb")
            nbformat.write(trimmed_notebook(nb), path)
            code = f"import sys, json; sys.path.insert(0, {str(ROOT)!r}); from tools.quickcheck import run_cells; " \
                   f"print(json.dumps(run_cells({path!r})))"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=scratch)
        try:
            verdicts = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            print(f"{name}: the run failed\n{done.stderr[-2000:]}")
            failed = True
            continue
        passed = [g for g, e in verdicts.items() if e is None]
        lost = {g: e for g, e in verdicts.items() if e is not None}
        expect_full = name in ("solution", "library")
        ok = not lost if expect_full else (not passed if name == "release" else bool(lost))
        failed |= not ok
        print(f"{'ok ' if ok else 'BAD'} {name}: {len(passed)}/{len(verdicts)} cells pass")
        shown = lost if expect_full or name.startswith("wrong") else {g: "passed" for g in passed}
        for grade_id, error in shown.items():
            if name.startswith("wrong") and ok:
                print(f"      loses {grade_id}: {error}")
            elif not ok or expect_full:
                print(f"      {grade_id}: {error}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
