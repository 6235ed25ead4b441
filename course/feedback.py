"""Feedback for students and the Validate step, on nbgrader's own converters.

`generate_feedback` runs nbgrader's GenerateFeedback with `HideHiddenTests` first, then reads
every page it wrote back as text and refuses to leave one that still shows a line of the hidden
tests (the instructor's private checks): a leak is an error, never a silent publication.
`validate_notebook` is nbgrader's Validator with the course's configuration, as behind the
Validate button in JupyterLab.
"""

import html
import re
from pathlib import Path

from .pipeline import PipelineError
from .preprocessors import HideHiddenTests, secret_lines

_TAG = re.compile(r"<[^>]+>")


def course_config(root, db_url=None):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(Path(root) / "course")).load_config()
    if db_url:
        config.CourseDirectory.db_url = db_url
    return config


def generate_feedback(root, chapter, students=None, db_url=None):
    """HTML feedback for `students` (default: everyone autograded); returns the pages' paths."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades

    root = Path(root)
    config = course_config(root, db_url)
    config.GenerateFeedback.preprocessors = [HideHiddenTests, GetGrades, CSSHTMLHeaderPreprocessor]
    coursedir = CourseDirectory(config=config)
    api = NbGraderAPI(coursedir=coursedir, config=config)
    autograded = root / "course" / "autograded"
    students = students or sorted(p.name for p in autograded.iterdir() if (p / chapter).is_dir()) \
        if autograded.is_dir() else []
    if not students:
        raise PipelineError(f"nothing autograded for {chapter} under {autograded}: run autograde first")
    with Gradebook(coursedir.db_url) as gradebook:
        notebooks = gradebook.find_assignment(chapter).notebooks
        hidden = secret_lines([cell.source or "" for nb in notebooks for cell in nb.source_cells])
    hidden -= released_lines(root, chapter)  # a line the student's own notebook shows anyway is no secret
    pages, failures = [], []
    for student in students:
        try:
            pages += _feedback_of(api, root, chapter, student, hidden)
        except Exception as error:  # noqa: BLE001 - one odd notebook never stops the class's feedback
            failures.append(f"{student}: {error}")
    if failures:
        raise PipelineError(f"feedback failed for {len(failures)} of {len(students)} students (the others' pages "
                            f"were written):\n" + "\n".join(failures))
    return pages


def _feedback_of(api, root, chapter, student, hidden):
    result = api.generate_feedback(chapter, student)
    if not result["success"]:
        raise PipelineError(f"nbgrader could not make it: {result.get('error') or result.get('log')}")
    pages = []
    for page in sorted((root / "course" / "feedback" / student / chapter).glob("*.html")):
        leaked = leaked_lines(page.read_text(), hidden)
        if leaked:
            page.unlink()
            raise PipelineError(f"{page} showed hidden test lines ({leaked[:3]}); it was deleted")
        pages.append(page)
    return pages


def released_lines(root, chapter):
    """Every line, stripped, of the chapter's released notebooks (prose, experiments, visible tests)."""
    import nbformat

    lines = set()
    for path in sorted((Path(root) / "notebooks" / chapter).glob("*.ipynb")):
        for cell in nbformat.read(str(path), as_version=4).cells:
            lines |= {line.strip() for line in cell.source.splitlines()}
    return lines


def leaked_lines(page, hidden):
    """The hidden lines (of at least a few characters) that a page's visible text contains."""
    text = html.unescape(_TAG.sub("", page))
    return [line for line in hidden if len(line) >= 12 and line in text]


def validate_notebook(path):
    """(passed, report) for one notebook, run as a student's Validate button runs it (nbgrader's
    Validator, the course's configuration): each graded test cell by its name and points, with
    the whole message a failing one gave, and a closing `N passed, M failed` line."""
    report = validation_report(path)
    if "error" in report:
        return False, f"{Path(path).name}: {report['error']}"
    lines = [f"{report['notebook']}: {'passed' if report['passed'] else 'FAILED'}"]
    for problem in report["problems"]:
        lines.append(f"  {problem}")
    for cell in report["cells"]:
        mark = "ok  " if cell["passed"] else "FAIL"
        lines.append(f"  {mark} {cell['name']} ({cell['points']:g} {'point' if cell['points'] == 1 else 'points'})")
        if not cell["passed"]:
            lines += [f"       {line}" for line in cell["message"].splitlines()]
    passed = [c for c in report["cells"] if c["passed"]]
    lines.append(f"{len(passed)} passed, {len(report['cells']) - len(passed)} failed "
                 f"({sum(c['points'] for c in passed):g} of {sum(c['points'] for c in report['cells']):g} points)")
    return report["passed"], "\n".join(lines)


def validation_report(path):
    """What Validate found, as data (`minigrad-course validate --json`): {notebook, passed,
    problems, cells: [{name, points, passed, message}]}."""
    import nbformat
    from nbgrader.validator import Validator

    path = Path(path).resolve()
    if not path.exists():
        return {"notebook": path.name, "error": "no such notebook"}
    results = Validator(config=course_config(Path(__file__).resolve().parent.parent)).validate(str(path))
    problems = [f"a cell's type changed from {c['old_type']} to {c['new_type']}: {_first(c['source'])}"
                for c in results.get("type_changed", [])]
    problems += [f"a read-only cell was edited: {_first(c['source'])}" for c in results.get("changed", [])]
    failures = {c["source"].strip(): _message(c.get("raw_error") or c.get("error") or "")
                for c in results.get("failed", [])}
    cells = []
    for cell in nbformat.read(str(path), as_version=4).cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            message = failures.pop(cell.source.strip(), None)
            cells.append({"name": meta.get("grade_id", "?"), "points": float(meta.get("points", 0)),
                          "passed": message is None, "message": message or ""})
    problems += [f"failed: {_first(source)}: {message}" for source, message in failures.items()]
    passed = not problems and all(c["passed"] for c in cells)
    return {"notebook": path.name, "passed": passed, "problems": problems, "cells": cells}


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")


def _message(traceback_text):
    """The failing cell's exception with its whole message (every line, as the notebook shows it),
    without terminal colours or the traceback's frames."""
    lines = _ANSI.sub("", traceback_text).rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if _EXCEPTION_LINE.match(line)]
    return "\n".join(lines[starts[-1]:] if starts else lines[-1:]).strip() or "error"


def _first(source):
    lines = [line for line in source.splitlines() if line.strip() and not line.startswith("#")]
    return lines[0][:100] if lines else "(empty)"
