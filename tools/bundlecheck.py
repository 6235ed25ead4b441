"""Run a chapter's student bundle as a student would, answered or untouched.

    .venv/bin/python tools/bundlecheck.py ch02_backprop [--untouched] [--wrong NAME--WHAT] [--keep DIR] [--validate]

Makes the bundle (`minigrad-course release CHAPTER --bundle`, without regenerating the release),
pastes the solution's answers into its notebook (all of them; with --wrong, one answer from
tests/chapters/<chapter>/wrong/ instead; with --untouched, none), runs it top to bottom in a
kernel that keeps going after errors (as JupyterLab's Run All would if it did not stop), and
prints every cell that failed: its index, grade id and error. With --validate, then runs
`minigrad-course validate` on it. Exit status 1 when a cell failed that should not have: any
cell, answered; with --wrong, any cell but that exercise's tests and the exceptions its
library.json lists; with --untouched, any cell but a test whose message names its exercise.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter")
    parser.add_argument("--untouched", action="store_true")
    parser.add_argument("--wrong", help="a wrong answer's file name (without .py)")
    parser.add_argument("--keep", type=Path, help="where to leave the executed bundle")
    parser.add_argument("--validate", action="store_true", help="also run `minigrad-course validate` on it")
    args = parser.parse_args()

    import nbformat

    from course.bundle import answered, failed_cells, make_bundle, run_notebook
    from course.pipeline import COURSE, answer_cells, read_notebook

    folder = make_bundle(args.chapter, args.keep or tempfile.mkdtemp(prefix="bundle-"))
    notebook = folder / f"{args.chapter}.ipynb"
    solutions = {name: cell.source for name, cell in answer_cells(read_notebook(COURSE.source(args.chapter))).items()}
    answers, open_names, exceptions = ({}, set(solutions), {}) if args.untouched else (dict(solutions), set(), {})
    if args.wrong:
        name, answers[name] = COURSE.wrong_answers(args.chapter)[args.wrong]
        open_names.add(name)
        exceptions = COURSE.bundle_exceptions(args.chapter).get(name, {})
    nb = run_notebook(answered(read_notebook(notebook), answers), folder)
    nbformat.write(nb, str(notebook))
    bad = 0
    for index, grade_id, owner, error in failed_cells(nb, list(solutions)):
        expected = owner in open_names and (not args.untouched or f"not implemented yet: {owner}" in error)
        excused = grade_id in exceptions.get("cells", [])
        bad += not (expected or excused)
        mark = "expected" if expected else "excused" if excused else "UNEXPECTED"
        print(f"{mark:>10} cell {index} {grade_id or '(ungraded)'}: {error[:300]}")
    if args.validate:
        script = Path(sys.executable).with_name("minigrad-course")
        done = subprocess.run([str(script), "validate", str(notebook)], capture_output=True, text=True)
        print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:])
    print(f"bundle in {folder}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
