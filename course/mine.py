"""`minigrad-course mine`: the student's own minigrad, built from their answers, run on later chapters.

Each chapter is graded against the reference library, so that a bug in chapter 2 cannot cost
points in chapter 6. A student who wants to know whether *their* minigrad holds up (what
micrograd, minitorch and needle students get) runs this instead: it copies the library with every
exercise of the course made a stub (the student bundle's machinery, course/bundle.py), puts the
answers from the student's notebooks behind the stubs, then runs each chapter's notebook on that
copy — the student's own notebook where there is one, else the released notebook with the
reference answers — and reports, chapter by chapter, which of their functions from other chapters
the library called and which cells failed, with the cell's message and the functions it ran.

A function the student has not written (an unanswered cell, a chapter not started) is the
reference; so is a call with an option the exercise does not ask for (see bundle_runtime.py).
"""

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .bundle import course_chapters, failed_cells, run_notebook, stub_library
from .kernel_zygote import student_kernels
from .pipeline import (
    COURSE,
    PipelineError,
    answer_cells,
    graded_name_of,
    library_source,
    nbgrader_metadata,
    read_notebook,
    trimmed_notebook,
)
from .sandbox import heavy_imports

_REPORT = "minigrad-course mine: calls by cell "  # the marker of the last cell's printed record


def student_answers(notebook, release):
    """{graded name: source} of the answer cells the student wrote (changed from the release's stub)."""
    stubs = {name: cell.source for name, cell in answer_cells(release).items()}
    return {name: cell.source for name, cell in answer_cells(notebook).items()
            if cell.source.strip() and cell.source != stubs.get(name)}


def answers_module(notebook, answers):
    """A module's source: the chapter's setup cell (its imports), then the student's answers."""
    setup = [c.source for c in notebook.cells if nbgrader_metadata(c).get("grade_id") == "setup"]
    cells = setup + [answers[name] for name in answer_cells(notebook) if name in answers]
    lines = [line for cell in cells for line in cell.splitlines() if not line.lstrip().startswith(("%", "!"))]
    return '"""Your answers, from your notebook (minigrad-course mine)."""\n' + "\n".join(lines) + "\n"


@dataclass
class ChapterRun:
    chapter: str
    yours: bool  # the student's own notebook (else the release with reference answers)
    calls: dict = field(default_factory=dict)  # graded name -> calls of the student's function
    failures: list = field(default_factory=list)  # (cell, grade id, error, {graded name: calls})


def build(folder, notebooks_dir, chosen, course=COURSE):
    """Write the student's minigrad into `folder`: {chapter: {graded name: source}} of their answers."""
    chapters = course_chapters(course)
    answers = {}
    for chapter in chosen:
        path = Path(notebooks_dir) / chapter / f"{chapter}.ipynb"
        if path.exists() and course.release(chapter).exists():
            found = student_answers(read_notebook(path), read_notebook(course.release(chapter)))
            if found:
                answers[chapter] = found
                module = answers_module(read_notebook(path), found)
                (Path(folder) / f"yours_{chapter}.py").write_text(module)
    stub_library(Path(folder) / "minigrad", chapters, None, course, mine=True)
    runtime = Path(folder) / "minigrad" / "_exercises.py"
    runtime.write_text(runtime.read_text() + f"ANSWERS.update({ {c: f'yours_{c}' for c in answers}!r})\n")
    return answers


def mine(notebooks_dir, chapters=None, course=COURSE, quick=False, keep=None, progress=print):
    """Run the chapters from the first chosen one on, on the student's minigrad; [ChapterRun]."""
    every = [c for c in course_chapters(course) if course.release(c).exists()]
    chosen = chapters or every
    unknown = sorted(set(chosen) - set(every))
    if unknown:
        raise PipelineError(f"no chapter {unknown}; chapters: {every}")
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="minigrad-mine-") as scratch:
            return _mine_in(Path(scratch), notebooks_dir, chosen, every, course, quick, progress)
    Path(keep).mkdir(parents=True, exist_ok=True)
    return _mine_in(Path(keep), notebooks_dir, chosen, every, course, quick, progress)


def _mine_in(folder, notebooks_dir, chosen, every, course, quick, progress):
    answers = build(folder, notebooks_dir, chosen, course)
    if not answers:
        raise PipelineError(f"no answered notebook of {chosen} under {notebooks_dir}")
    owners = {name: c for c in course_chapters(course) for name in course.library(c)}
    progress("your minigrad: " + "; ".join(f"{c} ({', '.join(sorted(a))})" for c, a in answers.items()))
    runs = []
    later = every[every.index(min(answers)):]
    # One kernel per chapter, forked from a parent that imported the third-party modules once.
    with student_kernels(sorted({m for c in later for m in heavy_imports(course.release(c))})) as zygote:
        for chapter in later:
            own = Path(notebooks_dir) / chapter / f"{chapter}.ipynb"
            nb = read_notebook(own) if chapter in answers else _with_reference_answers(chapter, course)
            run = _run(chapter, trimmed_notebook(nb) if quick else nb, folder, list(owners), chapter in answers, zygote)
            runs.append(run)
            progress(describe(run, owners, runs))
    return runs


def _with_reference_answers(chapter, course):
    nb = read_notebook(course.release(chapter))
    for name, cell in answer_cells(nb).items():
        if name in course.library(chapter):
            cell.source = library_source(name, course.library(chapter)[name])
    return nb


def _run(chapter, nb, folder, names, yours, zygote=None):
    """Run `nb` on the student's minigrad, recording which of their functions each cell called."""
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        "import json as _mine_json, minigrad._exercises as _mine\n"
        f"_mine.running_chapter, _mine_log = {chapter!r}, {{}}\n"
        "def _mine_record(result):\n"
        "    _mine_log[result.execution_count] = dict(_mine.calls)\n"
        "    _mine.calls.clear()\n"
        "get_ipython().events.register('post_run_cell', _mine_record)"))
    nb.cells.append(nbformat.v4.new_code_cell(f"print({_REPORT!r} + _mine_json.dumps(_mine_log))"))
    executed = run_notebook(nb, folder, zygote=zygote)
    log = _printed_log(executed.cells[-1])
    run = ChapterRun(chapter, yours)
    for cell in executed.cells[1:-1]:
        for name, count in log.get(str(cell.get("execution_count")), {}).items():
            run.calls[name] = run.calls.get(name, 0) + count
    for index, grade_id, _, error in failed_cells(executed, names):
        if 0 < index < len(executed.cells) - 1:
            called = log.get(str(executed.cells[index].get("execution_count")), {})
            run.failures.append((index - 1, grade_id, error, called))
    return run


def _printed_log(cell):
    for output in cell.get("outputs", []):
        text = output.get("text", "")
        if output.get("name") == "stdout" and _REPORT in text:
            return json.loads(text.split(_REPORT, 1)[1])
    raise PipelineError("the chapter's run did not finish (its last cell printed nothing)")


def describe(run, owners, earlier):
    """A chapter's lines of the report."""
    theirs = {n: k for n, k in run.calls.items() if owners.get(n) != run.chapter}
    origin = "your notebook" if run.yours else "the released notebook, reference answers"
    head = f"{run.chapter} ({origin}): " + (f"{len(run.failures)} cells failed" if run.failures else "ran clean")
    lines = [head, f"  ran your {_listed(theirs, owners)}" if theirs else "  ran none of your functions from other chapters"]
    broken = _broken(earlier[:-1], owners)
    for index, grade_id, error, called in run.failures:
        lines.append(f"  cell {index} {grade_id or '(demonstration)'}: " + _indented(error))
        others = {n: k for n, k in called.items() if owners.get(n) != run.chapter}
        if others:
            suspects = [n for n in others if n in broken]
            lines.append(f"    it ran your {_listed(others, owners)}")
            for name in suspects:
                lines.append(f"    your {name} fails its own tests in {owners[name]} ({', '.join(broken[name])}): "
                             f"{name} is where this breaks")
    return "\n".join(lines)


def _broken(runs, owners):
    """{graded name: [its own failing test cells]} from the chapters already run, leaving out a
    function whose failing tests all blame another broken one (backward's tests name a wrong rule)."""
    failing = {}
    for run in runs:
        names = [name for name, chapter in owners.items() if chapter == run.chapter]
        for _, grade_id, error, _ in run.failures:
            name = graded_name_of(grade_id or "", names)
            if name:
                failing.setdefault(name, []).append((grade_id, error))
    blamed = lambda name, error: any(f"your {other}" in error for other in failing if other != name)
    return {name: [grade_id for grade_id, _ in cells] for name, cells in failing.items()
            if not all(blamed(name, error) for _, error in cells)}


def _listed(calls, owners):
    by_chapter = {}
    for name in sorted(calls):
        by_chapter.setdefault(owners.get(name, "?"), []).append(f"{name} ×{calls[name]}")
    return "; ".join(f"{', '.join(names)} ({chapter})" for chapter, names in sorted(by_chapter.items()))


def _indented(text, limit=1000):
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    text = text if len(text) <= limit else text[:limit] + " ..."
    return text.replace("\n", "\n      ")
