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
    """(passed, report) for one notebook, run as a student's Validate button runs it."""
    from nbgrader.validator import Validator

    path = Path(path).resolve()
    if not path.exists():
        return False, f"{path}: no such notebook"
    results = Validator(config=course_config(Path(__file__).resolve().parent.parent)).validate(str(path))
    lines = []
    for cell in results.get("type_changed", []):
        lines.append(f"  a cell's type changed from {cell['old_type']} to {cell['new_type']}: {_first(cell['source'])}")
    for cell in results.get("changed", []):
        lines.append(f"  a read-only cell was edited: {_first(cell['source'])}")
    for cell in results.get("failed", []):
        error = [line for line in cell["raw_error"].strip().splitlines() if line.strip()]
        lines.append(f"  failed: {_first(cell['source'])}\n      {error[-1] if error else 'error'}")
    passed = not lines
    return passed, f"{path.name}: {'passed' if passed else 'FAILED'}" + "".join(f"\n{line}" for line in lines)


def _first(source):
    lines = [line for line in source.splitlines() if line.strip() and not line.startswith("#")]
    return lines[0][:100] if lines else "(empty)"
