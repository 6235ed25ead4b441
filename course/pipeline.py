"""The course's grading pipeline, on nbgrader itself: release, trim, substitute answers, autograde.

Everything here drives the real ``nbgrader`` command in a throwaway copy of the course (a
`NbgraderCourse.scratch`), so the course's own ``course/`` folder, gradebook and ``notebooks/`` are never
touched unless a caller asks for it (``tools/release.sh`` writes ``notebooks/``). Scores come from
nbgrader's gradebook, per grade cell, never from parsing logs.

Each nbgrader start costs seconds, so work is batched: one ``generate_assignment`` per scratch
course and one ``autograde`` for any number of submissions (one fake student per submission).

Notebook conventions relied on (see the chapter conventions of the course):
  * ``solutions/<chapter>/<chapter>.ipynb`` is the source; ``notebooks/<chapter>/`` the release;
  * an answer cell carries nbgrader metadata ``solution: true`` and ``grade_id`` = the graded name;
  * ``<corpus>/<chapter>/library.json`` maps graded names to ``"module:attribute.path"`` in minigrad;
  * ``<corpus>/<chapter>/wrong/<graded name>--<description>.py`` replaces that answer cell's source.
"""

import copy
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path

import nbformat

COURSE_DIR = Path(__file__).resolve().parent
REPOSITORY = COURSE_DIR.parent
CONFIG = COURSE_DIR / "nbgrader_config.py"
# Files nbgrader itself never copies into a release (CourseDirectory.ignore's defaults).
IGNORED = (".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback")
WRONG_SEPARATOR = "--"
BUNDLE_EXCEPTIONS = "bundle exceptions"  # library.json's key for them: no graded name has a space


class PipelineError(RuntimeError):
    """nbgrader failed, or a chapter breaks the conventions the pipeline relies on."""


# --------------------------------------------------------------------------- the course on disk
@dataclass(frozen=True)
class Course:
    """Where a course's chapters live: `root` holds solutions/ and notebooks/; `corpus` holds the
    per-chapter test corpus (library.json and wrong/). The real course is `COURSE`; the test suite
    also runs a tiny self-test course through the same code."""

    root: Path
    corpus: Path

    @property
    def solutions(self):
        return self.root / "solutions"

    @property
    def notebooks(self):
        return self.root / "notebooks"

    def chapters(self):
        """The chapter folders under solutions/, sorted (ch01_..., ch02_...)."""
        if not self.solutions.is_dir():
            return []
        return sorted(p.name for p in self.solutions.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))

    def source(self, chapter):
        return self.solutions / chapter / f"{chapter}.ipynb"

    def release(self, chapter):
        return self.notebooks / chapter / f"{chapter}.ipynb"

    def library(self, chapter):
        """{graded name: "module:attribute.path"} from the chapter's library.json ({} when absent)."""
        entries = self._library_json(chapter)
        entries.pop(BUNDLE_EXCEPTIONS, None)
        path = self.corpus / chapter / "library.json"
        if not all(isinstance(v, str) and ":" in v for v in entries.values()):
            raise PipelineError(f'{path}: expected {{"graded name": "module:attribute.path", ...}}, got {entries!r}')
        return entries

    def bundle_exceptions(self, chapter):
        """{graded name: {"cells": [grade ids], "reason": why}}: the test cells of other exercises that a
        wrong answer to that graded function deliberately fails too (library.json's "bundle exceptions")."""
        exceptions = self._library_json(chapter).get(BUNDLE_EXCEPTIONS, {})
        path = self.corpus / chapter / "library.json"
        if not all(isinstance(e, dict) and isinstance(e.get("cells"), list) and e.get("reason")
                   for e in exceptions.values()):
            raise PipelineError(f'{path}: "{BUNDLE_EXCEPTIONS}" maps a graded name to {{"cells": [...], '
                                f'"reason": "..."}}, got {exceptions!r}')
        return exceptions

    def _library_json(self, chapter):
        path = self.corpus / chapter / "library.json"
        if not path.exists():
            return {}
        try:
            entries = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise PipelineError(f"{path}: not valid JSON: {error}") from None
        if not isinstance(entries, dict):
            raise PipelineError(f'{path}: expected {{"graded name": "module:attribute.path", ...}}, got {entries!r}')
        return entries

    def wrong_answers(self, chapter):
        """{variant: (graded name, replacement source)} for each wrong/<name>--<description>.py."""
        variants = {}
        for path in sorted((self.corpus / chapter / "wrong").glob("*.py")):
            name, separator, description = path.stem.partition(WRONG_SEPARATOR)
            if not separator or not name or not description:
                raise PipelineError(f"{path}: wrong answers are named <graded name>{WRONG_SEPARATOR}<description>.py")
            variants[path.stem] = (name, path.read_text())
        return variants


COURSE = Course(REPOSITORY, REPOSITORY / "tests" / "chapters")


# --------------------------------------------------------------------------- notebook surgery
def read_notebook(path):
    return nbformat.read(str(path), as_version=4)


def nbgrader_metadata(cell):
    """The cell's nbgrader metadata ({} for cells nbgrader does not manage)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def is_written_answer(cell):
    """A manually graded answer (nbgrader: solution and grade both set), e.g. a short essay.

    Autograding leaves these at zero until a person grades them, so the pipeline's checks —
    full marks, zero on stubs, wrong answers lose points — are about the autograded cells only.
    """
    meta = nbgrader_metadata(cell)
    return bool(meta.get("solution") and meta.get("grade"))


def answer_cells(nb):
    """{grade_id: cell} of the code answer cells (graded functions), in notebook order."""
    return {
        nbgrader_metadata(c)["grade_id"]: c
        for c in nb.cells
        if nbgrader_metadata(c).get("solution") and not is_written_answer(c)
    }


def grade_cells(nb):
    """{grade_id: cell} of the autograded cells (the tests that carry points), in notebook order."""
    return {
        nbgrader_metadata(c)["grade_id"]: c
        for c in nb.cells
        if nbgrader_metadata(c).get("grade") and not is_written_answer(c)
    }


def written_answers(nb):
    """{grade_id: cell} of the manually graded answers."""
    return {nbgrader_metadata(c)["grade_id"]: c for c in nb.cells if is_written_answer(c)}


def graded_name_of(grade_id, names):
    """The graded name a test cell belongs to by the convention test_<name>_<aspect> (the longest
    of `names` that matches), or None."""
    matches = [n for n in names if grade_id == f"test_{n}" or grade_id.startswith(f"test_{n}_")]
    return max(matches, key=len, default=None)


def trimmed_notebook(nb):
    """A copy with only nbgrader's cells (setup, locked helpers, answers, tests).

    Ungraded experiments (training loops, plots) are what make a chapter slow; tests must not
    depend on them, so grading the trimmed notebook is both fast and a check of that rule.
    """
    trimmed = copy.deepcopy(nb)
    trimmed.cells = [c for c in trimmed.cells if nbgrader_metadata(c)]
    return trimmed


def replace_answer(nb, name, source):
    """A copy of `nb` whose answer cell `name` holds `source` instead."""
    replaced = copy.deepcopy(nb)
    cells = answer_cells(replaced)
    if name not in cells:
        raise PipelineError(f"no answer cell with grade_id {name!r}; answer cells: {sorted(cells)}")
    cells[name].source = source
    return replaced


def library_source(name, spec):
    """The answer-cell source that binds `name` to the library object `spec` ("module:attr.path").

    ``minigrad.graph:topological_sort`` gives ``from minigrad.graph import topological_sort``;
    a dotted path such as ``minigrad.ops:mul.vjp`` imports the head under a private alias and
    assigns the attribute, so no name of the notebook is shadowed.
    """
    module, _, path = spec.partition(":")
    head, *rest = path.split(".")
    if not rest:
        return f"from {module} import {head}" + ("" if head == name else f" as {name}")
    alias = f"_library_{head}"
    return f"from {module} import {head} as {alias}\n{name} = {alias}.{'.'.join(rest)}"


def execution_seconds(nb):
    """Seconds the kernel spent executing `nb` (first cell's start to last cell's reply), from the
    timings nbclient records in each cell's metadata; None if the notebook carries none."""
    starts, ends = [], []
    for cell in nb.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
            starts.append(_timestamp(timing["iopub.execute_input"]))
            ends.append(_timestamp(timing["shell.execute_reply"]))
    return (max(ends) - min(starts)).total_seconds() if starts else None


def _timestamp(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def cell_error(cell):
    """'ErrorName: message' of the error a code cell raised, or None."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}".strip()
    return None


# --------------------------------------------------------------------------- grading results
@dataclass
class GradedCell:
    name: str
    score: float
    max_score: float
    error: str | None = None  # what the cell raised in the autograded notebook

    @property
    def full(self):
        return self.score >= self.max_score

    def __str__(self):
        text = f"{self.name} {self.score:g}/{self.max_score:g}"
        return f"{text} ({_shorten(self.error)})" if self.error else text


@dataclass
class GradedSubmission:
    """One fake student's autograded notebook: a score per grade cell, read from the gradebook."""

    student: str
    cells: dict = field(default_factory=dict)  # grade_id -> GradedCell, in notebook order
    seconds: float | None = None  # kernel execution time of the autograded notebook
    problem: str | None = None  # why nbgrader could not autograde it (a dead kernel, ...), if so

    @property
    def score(self):
        return sum(c.score for c in self.cells.values())

    @property
    def max_score(self):
        return sum(c.max_score for c in self.cells.values())

    def lost(self):
        """The grade cells that scored below their maximum."""
        return [c for c in self.cells.values() if not c.full]

    def earned(self):
        """The grade cells that scored anything at all."""
        return [c for c in self.cells.values() if c.score > 0]

    def __str__(self):
        text = f"{self.student}: {self.score:g}/{self.max_score:g}"
        return f"{text} (not autograded: {self.problem})" if self.problem else text


def _shorten(text, limit=200):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- nbgrader in a scratch course
def nbgrader_command():
    """The nbgrader console script of the running environment."""
    script = Path(sys.executable).with_name("nbgrader")
    return [str(script)] if script.exists() else [sys.executable, "-m", "nbgrader"]


class NbgraderCourse:
    """A course folder that nbgrader runs in: `root` holds solutions/, notebooks/ and
    course/nbgrader_config.py, and nbgrader writes submissions, autograded notebooks and the
    gradebook under root/course/. `NbgraderCourse(REPOSITORY)` is the real course; `scratch`
    makes a throwaway copy, which is what the test suite grades."""

    def __init__(self, root):
        self.root = Path(root)
        self.log = []  # (command, output) of every nbgrader run, for failure messages

    @classmethod
    def scratch(cls, directory, chapters, course=COURSE):
        """A copy of the course's nbgrader config and `chapters`' sources in `directory`."""
        root = Path(directory)
        (root / "course").mkdir(parents=True, exist_ok=True)
        shutil.copy2(CONFIG, root / "course" / CONFIG.name)
        for chapter in chapters:
            if not course.source(chapter).exists():
                raise PipelineError(f"{course.source(chapter)} does not exist")
            shutil.copytree(course.solutions / chapter, root / "solutions" / chapter,
                            ignore=shutil.ignore_patterns(*IGNORED))
        return cls(root)

    @property
    def db_url(self):
        return "sqlite:///" + str(self.root / "course" / "gradebook.db")

    def nbgrader(self, *args, check=True):
        """Run `nbgrader <args>` with this course's config; returns (exit status, output)."""
        command = nbgrader_command() + [str(a) for a in args]
        done = subprocess.run(command, cwd=self.root / "course",
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log.append((" ".join(args), done.stdout))
        if check and done.returncode:
            raise PipelineError(f"`nbgrader {' '.join(map(str, args))}` failed (exit {done.returncode}):\n"
                                f"{done.stdout[-6000:]}")
        return done.returncode, done.stdout

    def generate(self, chapters, database=True):
        """`nbgrader generate_assignment` for `chapters`; returns the release folder.

        With `database` the gradebook learns the chapters' cells (needed to autograde);
        without it (``--no-db``) the release is the same. When `chapters` are all the chapters
        under solutions/, one run with the pattern ``*`` makes them all.
        """
        present = sorted(p.name for p in (self.root / "solutions").iterdir() if p.is_dir())
        batches = ["*"] if len(chapters) > 1 and sorted(chapters) == present else chapters
        for assignment in batches:
            self.nbgrader("generate_assignment", assignment, "--force", *([] if database else ["--no-db"]))
        return self.root / "notebooks"

    def submission_folder(self, chapter, student):
        return self.root / "course" / "submitted" / student / chapter

    def submit(self, chapter, student, nb):
        """Place `nb` as `student`'s submission of `chapter` next to the release's other files."""
        if not student or student != student.strip() or "+" in student or os.sep in student:
            raise PipelineError(f"unusable student id {student!r}")
        folder = self.submission_folder(chapter, student)
        release = self.root / "notebooks" / chapter
        if release.is_dir():
            shutil.copytree(release, folder, dirs_exist_ok=True)
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(folder / f"{chapter}.ipynb"))

    def autograde(self, chapter, timeout=None):
        """One `nbgrader autograde` for every submission of `chapter`; returns the exit status.

        A submission nbgrader cannot grade at all shows up as missing in `results`, so a
        non-zero exit is not an error here. `timeout` overrides the per-cell timeout.
        """
        extra = [] if timeout is None else [f"--Execute.timeout={timeout}"]
        return self.nbgrader("autograde", chapter, *extra, check=False)[0]

    def autograded_notebook(self, chapter, student):
        return self.root / "course" / "autograded" / student / chapter / f"{chapter}.ipynb"

    def results(self, chapter, students):
        """{student: GradedSubmission} from the gradebook, with errors and timing from the
        autograded notebooks. Raises PipelineError naming the students nbgrader did not grade."""
        from nbgrader.api import Gradebook, MissingEntry

        results, missing = {}, []
        with Gradebook(self.db_url) as gradebook:
            for student in students:
                try:
                    submission = gradebook.find_submission_notebook(chapter, chapter, student)
                except MissingEntry:
                    missing.append(student)
                    continue
                results[student] = self._graded(chapter, student, submission)
        if missing:
            log = "\n".join(output[-4000:] for command, output in self.log if command.startswith("autograde"))
            raise PipelineError(f"nbgrader did not grade the submissions of {missing}; autograde said:\n{log}")
        return results

    def _graded(self, chapter, student, submission):
        path = self.autograded_notebook(chapter, student)
        nb = read_notebook(path) if path.exists() else None
        tests = grade_cells(nb) if nb else {}
        order = {name: index for index, name in enumerate(tests)}
        cells = {}
        for grade in sorted(submission.grades, key=lambda g: order.get(g.name, len(order))):
            if nb is not None and grade.name not in tests:
                continue  # a written answer, waiting for a person to grade it
            error = cell_error(tests[grade.name]) if grade.name in tests else None
            cells[grade.name] = GradedCell(grade.name, float(grade.score or 0), float(grade.max_score), error)
        if nb is None:  # nbgrader removes the output of a notebook it failed on, and scores it 0
            return GradedSubmission(student, cells, problem=self._failure(student))
        return GradedSubmission(student, cells, execution_seconds(nb))

    def _failure(self, student):
        """The exception nbgrader's autograde log shows for `student`'s failed notebook."""
        lines = "\n".join(output for command, output in self.log if command.startswith("autograde")).splitlines()
        marker = f"for student '{student}'"
        for end, line in enumerate(lines):
            if marker in line and "error processing" in line:
                for previous in reversed(lines[:end]):
                    text = previous.strip()
                    if ": " in text and text.split(":")[0].split(".")[-1].endswith(("Error", "Exception", "Interrupt")):
                        return text
        return "nbgrader failed on it (see its autograde log)"


# --------------------------------------------------------------------------- the pipeline's entry points
def generate_release(chapter, dest, course=COURSE):
    """Generate `chapter`'s student folder from its source into `dest` (replaced), as
    ``nbgrader generate_assignment --no-db`` does, without touching the course's own folders."""
    return _generate([chapter], [Path(dest)], course)[0]


def generate_releases(chapters, dest_root, course=COURSE):
    """Generate several chapters with one nbgrader run into `dest_root/<chapter>` (replaced)."""
    return _generate(chapters, [Path(dest_root) / chapter for chapter in chapters], course)


def _generate(chapters, targets, course):
    with tempfile.TemporaryDirectory(prefix="minigrad-release-") as scratch_dir:
        release = NbgraderCourse.scratch(scratch_dir, chapters, course).generate(chapters, database=False)
        for chapter, target in zip(chapters, targets):
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(release / chapter, target)
    return targets


def autograde_batch(chapter, submissions, directory, course=COURSE, timeout=None):
    """Autograde {student: notebook} for `chapter` with ONE nbgrader autograde run.

    Works in a scratch course under `directory` (kept for inspection); returns
    ({student: GradedSubmission}, the scratch NbgraderCourse, whose ``notebooks/`` holds a fresh release).
    """
    scratch = NbgraderCourse.scratch(directory, [chapter], course)
    scratch.generate([chapter], database=True)
    for student, nb in submissions.items():
        scratch.submit(chapter, student, nb)
    scratch.autograde(chapter, timeout=timeout)
    return scratch.results(chapter, list(submissions)), scratch


def local_verdicts(notebooks, timeout=1800):
    """{name: {grade_id: None (passed) or the error}} for {name: notebook}, each run as the student's
    own kernel runs it (drivers and checkers in one process, as Validate does): the nbgrader cells
    of each, in order, in a fresh namespace, all in one fresh Python process."""
    with tempfile.TemporaryDirectory(prefix="minigrad-local-") as scratch:
        paths = {}
        for index, (name, nb) in enumerate(notebooks.items()):
            paths[name] = os.path.join(scratch, f"{index}.ipynb")
            nbformat.write(nb, paths[name])
        code = ("import json, sys; from course.pipeline import _run_graded_cells; "
                f"print(json.dumps({{n: _run_graded_cells(p) for n, p in {paths!r}.items()}}))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=scratch,
                              timeout=timeout, env={**os.environ, "MPLBACKEND": "Agg"})
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise PipelineError(f"running the notebooks in one process failed:\n{done.stderr[-4000:]}") from None


def _run_graded_cells(path):
    nb = nbformat.read(path, as_version=4)
    namespace = {"__name__": "__main__"}
    verdicts = {}
    for cell in nb.cells:
        meta = nbgrader_metadata(cell)
        if cell.cell_type != "code" or not meta:
            continue
        try:
            exec(compile(cell.source, f"<{meta.get('grade_id')}>", "exec"), namespace)
            error = None
        except BaseException as exc:  # noqa: BLE001 - a cell's failure is its verdict
            error = f"{type(exc).__name__}: {str(exc)[:300]}"
        if meta.get("grade") and not meta.get("solution"):
            verdicts[meta["grade_id"]] = error
    return verdicts


def chapter_submissions(chapter, course=COURSE):
    """The submissions that check a chapter, {student id: notebook}:

      * ``solution``: the source notebook, which must score full marks;
      * ``release``: the committed student notebook, untouched, which must score zero;
      * ``library``: the trimmed solution with the library's implementation in place of every
        answer listed in library.json, which must score full marks (one kernel for all of them;
        `graded_name_of` tells which function a lost test cell belongs to);
      * ``wrong.<name>--<description>``: the trimmed solution with a wrong answer, which must
        lose points.
    """
    source = read_notebook(course.source(chapter))
    trimmed = trimmed_notebook(source)
    submissions = {"solution": source}
    if course.release(chapter).exists():
        submissions["release"] = read_notebook(course.release(chapter))
    answers = answer_cells(trimmed)
    # Entries naming no answer cell are left out here; the convention tests report them.
    library = {name: spec for name, spec in course.library(chapter).items() if name in answers}
    if library:
        submissions["library"] = reduce(
            lambda nb, item: replace_answer(nb, item[0], library_source(*item)), library.items(), trimmed
        )
    for variant, (name, answer) in course.wrong_answers(chapter).items():
        if name in answers:
            submissions[f"wrong.{variant}"] = replace_answer(trimmed, name, answer)
    return submissions
