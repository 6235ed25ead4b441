"""`minigrad-course`: the instructor's command line, one subcommand per nbgrader step.

    minigrad-course release [CHAPTER ...] [--bundle DIR]   student notebooks (and student bundles)
    minigrad-course autograde CHAPTER [--submissions DIR|ZIP] [--workers N | --cluster ADDR] [--db-url URL] ...
    minigrad-course feedback CHAPTER [--student ID ...]    HTML per student, hidden tests hidden
    minigrad-course grades [CHAPTER ...] [--csv FILE]      CSV export and a per-exercise summary
    minigrad-course validate NOTEBOOK ... [--json]         what a student's Validate button does, cell by cell
    minigrad-course strength [CHAPTER ...]                 how many wrong answers each chapter catches
    minigrad-course mine [CHAPTER ...] [--notebooks DIR]    a student's answers as their own minigrad, run on later chapters

Everything runs on nbgrader itself (course/nbgrader_config.py); see course/README.md.
"""

import argparse
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from .pipeline import REPOSITORY, PipelineError, graded_name_of


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return args.run(args) or 0
    except PipelineError as error:
        print(f"minigrad-course {args.command}: {error}", file=sys.stderr)
        return 1


def _parser():
    parser = argparse.ArgumentParser(prog="minigrad-course", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", type=Path, default=REPOSITORY,
                        help="the course folder (solutions/, notebooks/, course/); default: this repository")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    release = commands.add_parser("release", help="generate the student notebooks from solutions/")
    release.add_argument("chapters", nargs="*", help="chapters (default: all)")
    release.add_argument("--bundle", type=Path, metavar="DIR",
                         help="also write each chapter's student bundle (notebook + minigrad without answers) into DIR")
    release.set_defaults(run=_release)

    autograde = commands.add_parser("autograde", help="grade a class's submissions of one chapter")
    autograde.add_argument("chapter")
    autograde.add_argument("--submissions", type=Path,
                           help="submitted/<student>/<chapter>/ folder or a zip of one (default: course/submitted)")
    autograde.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                           help="submissions graded in parallel (default: CPU count, at most 4)")
    autograde.add_argument("--db-url", help="the gradebook (default: sqlite course/gradebook.db); any SQLAlchemy URL")
    autograde.add_argument("--cell-timeout", type=int, default=60, help="seconds a cell of the student's may run")
    autograde.add_argument("--notebook-timeout", type=int, default=600, help="seconds a whole notebook may run")
    autograde.add_argument("--memory-mb", type=int, default=1024, help="memory of a student's process, in MiB")
    autograde.add_argument("--cluster", metavar="ADDRESS",
                           help="grade on a Dask cluster: a scheduler's address (tcp://host:8786) or local:N")
    autograde.set_defaults(run=_autograde)

    feedback = commands.add_parser("feedback", help="HTML feedback per student (hidden tests stay hidden)")
    feedback.add_argument("chapter")
    feedback.add_argument("--student", action="append", help="only these students (repeatable)")
    feedback.add_argument("--db-url")
    feedback.set_defaults(run=_feedback)

    grades = commands.add_parser("grades", help="export grades as CSV and summarise each exercise")
    grades.add_argument("chapters", nargs="*", help="chapters (default: all in the gradebook)")
    grades.add_argument("--csv", type=Path, help="where to write the CSV (default: course/grades.csv)")
    grades.add_argument("--db-url")
    grades.set_defaults(run=_grades)

    validate = commands.add_parser("validate", help="run a notebook's tests as the Validate button does")
    validate.add_argument("notebooks", nargs="+", type=Path)
    validate.add_argument("--json", action="store_true", help="a JSON report per notebook (for an LMS)")
    validate.set_defaults(run=_validate)

    strength = commands.add_parser("strength", help="grade each chapter's wrong-answer corpus through autograde")
    strength.add_argument("chapters", nargs="*", help="chapters (default: all)")
    strength.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    strength.set_defaults(run=_strength)

    mine = commands.add_parser("mine", help="run later chapters on a minigrad made of your own answers")
    mine.add_argument("chapters", nargs="*", help="the chapters whose answers to use (default: all); the run "
                                                  "starts at the first of them and goes to the last chapter")
    mine.add_argument("--notebooks", type=Path, help="your answered notebooks, <DIR>/<chapter>/<chapter>.ipynb "
                                                     "(default: the course's notebooks/)")
    mine.add_argument("--quick", action="store_true", help="only the notebooks' exercises and visible tests, "
                                                           "not their demonstrations")
    mine.add_argument("--keep", type=Path, metavar="DIR", help="where to leave your minigrad (default: a temporary folder)")
    mine.set_defaults(run=_mine)
    return parser


def _course(args):
    from .pipeline import Course

    root = Path(args.course).resolve()
    return Course(root, root / "tests" / "chapters")


def _gradebook(args):
    return args.db_url or "sqlite:///" + str(Path(args.course).resolve() / "course" / "gradebook.db")


# --------------------------------------------------------------------------- release
def _release(args):
    from .bundle import make_bundle
    from .release import release

    course = _course(args)
    chapters = args.chapters or course.chapters()
    unknown = [c for c in chapters if not course.source(c).exists()]
    if unknown:
        raise PipelineError(f"no source notebook for {unknown}; chapters: {course.chapters()}")
    for line in release(chapters, course):  # each chapter's text twin first, then nbgrader
        print(line)
    if args.bundle:
        for chapter in chapters:
            print(f"bundle   {make_bundle(chapter, args.bundle, course)}")


# --------------------------------------------------------------------------- autograde
def _autograde(args):
    from tqdm.auto import tqdm

    from .autograde import Settings, find_submissions, grade_class

    settings = Settings(args.chapter, root=Path(args.course).resolve(), workers=args.workers, db_url=args.db_url,
                        cell_timeout=args.cell_timeout, notebook_timeout=args.notebook_timeout,
                        memory_mb=args.memory_mb, cluster=args.cluster)
    if not _course(args).source(args.chapter).exists():
        raise PipelineError(f"no chapter {args.chapter!r} under {settings.root / 'solutions'}")
    source = args.submissions or settings.root / "course" / "submitted"
    with tempfile.TemporaryDirectory(prefix="minigrad-submissions-") as unpacked:
        submissions = find_submissions(source, args.chapter, unpacked)
        if not submissions:
            raise PipelineError(f"no submissions of {args.chapter} in {source} (expected <student>/{args.chapter}/)")
        where = f"on the Dask cluster {settings.cluster}" if settings.cluster else f"with {args.workers} worker(s)"
        print(f"autograding {len(submissions)} submissions of {args.chapter} {where}")
        started = time.monotonic()
        with tqdm(total=len(submissions), desc=f"autograde {args.chapter}", unit="notebook") as bar:
            results = grade_class(settings, submissions, _Advance(bar))
    print(class_table(results))
    print(f"\n{len(results)} submissions in {time.monotonic() - started:.0f} s; gradebook: {settings.gradebook}")
    return 0


def class_table(results):
    """Who got what, then what needs the instructor's attention."""
    rows = [(r.student, f"{r.score:g}", f"{r.max_score:g}", f"{100 * r.score / r.max_score:.0f}%" if r.max_score else "-",
             "yes" if r.attention else "") for r in sorted(results.values(), key=lambda r: r.student)]
    text = table(("student", "score", "max", "%", "attention"), rows)
    attention = [r for r in sorted(results.values(), key=lambda r: r.student) if r.attention]
    if attention:
        text += "\n\nneeds attention:"
        for result in attention:
            text += f"\n  {result.student}:" + "".join(f"\n    - {line}" for line in result.attention)
    return text


def table(header, rows):
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


class _Advance:
    """A progress callback for `grade_class` that moves a tqdm bar (whose total it may set)."""

    def __init__(self, bar):
        self.bar = bar

    @property
    def total(self):
        return self.bar.total

    @total.setter
    def total(self, value):
        self.bar.reset(total=value)

    def __call__(self, result):
        self.bar.set_postfix_str(f"{result.student}: {result.score:g}/{result.max_score:g}")
        self.bar.update()


# --------------------------------------------------------------------------- feedback
def _feedback(args):
    from .feedback import generate_feedback

    for path in generate_feedback(Path(args.course).resolve(), args.chapter, args.student, _gradebook(args)):
        print(f"feedback {path}")


# --------------------------------------------------------------------------- grades
def _grades(args):
    from nbgrader.api import Gradebook

    out = args.csv or Path(args.course).resolve() / "course" / "grades.csv"
    rows, cells = [], {}
    with Gradebook(_gradebook(args)) as gradebook:
        chapters = args.chapters or [a.name for a in gradebook.assignments]
        for chapter in chapters:
            assignment = gradebook.find_assignment(chapter)
            names = sorted({c.name for nb in assignment.notebooks for c in nb.solution_cells})
            for submission in assignment.submissions:
                rows.append({"student": submission.student.id, "chapter": chapter, "score": submission.score,
                             "max_score": submission.max_score, "late_penalty": submission.late_submission_penalty,
                             "needs_manual_grade": submission.needs_manual_grade})
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        exercise = graded_name_of(grade.name, names) or grade.name
                        cells.setdefault((chapter, exercise), []).append((grade.score, grade.max_score))
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=["student", "chapter", "score", "max_score", "late_penalty",
                                                  "needs_manual_grade"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {out}\n")
    print(exercise_table(cells))


def exercise_table(cells):
    """Per exercise: mean score, and how many submissions got it fully right or not at all."""
    rows = []
    for (chapter, exercise), scores in sorted(cells.items()):
        by_student = len(scores)
        got = sum(s for s, _ in scores)
        most = sum(m for _, m in scores)
        rows.append((chapter, exercise, f"{100 * got / most:.0f}%" if most else "-", by_student,
                     sum(s >= m for s, m in scores), sum(s == 0 for s, _ in scores)))
    return table(("chapter", "exercise", "mean", "test cells graded", "full", "zero"), rows)


# --------------------------------------------------------------------------- validate
def _validate(args):
    from .feedback import validate_notebook, validation_report

    if args.json:
        reports = [validation_report(path) for path in args.notebooks]
        print(json.dumps(reports, indent=1))
        return 0 if all(r.get("passed") for r in reports) else 1
    failed = 0
    for path in args.notebooks:
        ok, report = validate_notebook(path)
        print(report)
        failed += not ok
    return 1 if failed else 0


# --------------------------------------------------------------------------- strength
def _strength(args):
    from tqdm.auto import tqdm

    from .strength import chapter_strength

    course = _course(args)
    rows = []
    for chapter in args.chapters or course.chapters():
        with tqdm(desc=f"strength {chapter}", unit="notebook") as bar:
            report = chapter_strength(chapter, course, workers=args.workers, progress=_Advance(bar))
        rows.append(report.row())
        if report.escaped:
            print(f"{chapter}: wrong answers that scored full marks: {', '.join(report.escaped)}")
    print(table(("chapter", "wrong answers", "lose points", "solution", "stub", "library"), rows))


# --------------------------------------------------------------------------- mine
def _mine(args):
    from .mine import mine

    course = _course(args)
    runs = mine(args.notebooks or course.notebooks, args.chapters or None, course, quick=args.quick, keep=args.keep,
                progress=lambda text: print(text, flush=True))
    failed = [run.chapter for run in runs if run.failures]
    print(f"{len(runs) - len(failed)} chapters ran clean on your minigrad" +
          (f"; cells failed in {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

