"""Run a chapter's student bundle as a student would, answered or untouched.

    .venv/bin/python tools/bundlecheck.py ch02_backprop [--untouched] [--wrong NAME--WHAT] [--keep DIR]

Makes the bundle (`minigrad-course release CHAPTER --bundle`), pastes the solution's answers into
its notebook (all of them; with --wrong, one answer from tests/chapters/<chapter>/wrong/ instead;
with --untouched, none), runs it top to bottom in a kernel that keeps going after errors (as
JupyterLab's Run All would if it did not stop), and prints every cell that failed: its index,
grade id and error. Then runs `minigrad-course validate` on it. Exit status 1 when a cell that
should pass failed (any cell, answered; with --wrong or --untouched, any cell that is not a test of
the exercise left wrong or unanswered).
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
    args = parser.parse_args()

    import nbformat
    from nbclient import NotebookClient

    from course.pipeline import COURSE, answer_cells, graded_name_of, nbgrader_metadata, read_notebook

    folder = Path(args.keep or tempfile.mkdtemp(prefix="bundle-"))
    script = Path(sys.executable).with_name("minigrad-course")
    subprocess.run([str(script), "release", args.chapter, "--bundle", str(folder)], check=True,
                   capture_output=True, text=True)
    notebook = folder / args.chapter / f"{args.chapter}.ipynb"
    nb = read_notebook(notebook)
    solutions = answer_cells(read_notebook(COURSE.source(args.chapter)))
    open_names = set(solutions) if args.untouched else set()
    wrong_name = None
    if args.wrong:
        wrong_name, source = COURSE.wrong_answers(args.chapter)[args.wrong]
        open_names.add(wrong_name)
    for name, cell in answer_cells(nb).items():
        if name == wrong_name:
            cell.source = source
        elif not args.untouched:
            cell.source = solutions[name].source
    nbformat.write(nb, str(notebook))
    client = NotebookClient(nb, timeout=600, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook.parent)}})
    client.execute()
    nbformat.write(nb, str(notebook))
    bad = 0
    for index, cell in enumerate(nb.cells):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if not errors:
            continue
        grade_id = nbgrader_metadata(cell).get("grade_id", "")
        owner = graded_name_of(grade_id, list(solutions)) if grade_id.startswith("test_") else None
        expected = owner in open_names
        bad += not expected
        mark = "expected" if expected else "UNEXPECTED"
        print(f"{mark:>10} cell {index} {grade_id or '(ungraded)'}: {errors[0]['ename']}: {errors[0]['evalue'][:300]}")
    done = subprocess.run([str(script), "validate", str(notebook)], capture_output=True, text=True)
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:])
    print(f"bundle in {folder}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
