"""Autograder strength: how many of a chapter's plausible wrong answers lose points.

Each chapter keeps a corpus of wrong implementations (tests/chapters/<chapter>/wrong/). The
pipeline test proves each loses points under plain nbgrader; `chapter_strength` grades the same
submissions (`course.pipeline.chapter_submissions`: solution, untouched stub, library answers,
every wrong answer) through the judged autograde, in a throwaway copy of the course, and reports
the chapter's score: wrong answers caught out of all, with the solution, stub and library
scores beside them as the calibration (full, zero, full).
"""

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .autograde import Settings, grade_class
from .pipeline import COURSE, PipelineError, chapter_submissions


@dataclass
class Strength:
    chapter: str
    wrong: int = 0
    caught: int = 0
    escaped: list = field(default_factory=list)
    solution: str = "-"
    stub: str = "-"
    library: str = "-"

    def row(self):
        return (self.chapter, self.wrong, f"{self.caught}/{self.wrong}", self.solution, self.stub, self.library)

    def line(self):
        return (f"{self.chapter}: {self.caught}/{self.wrong} wrong answers lose points "
                f"(solution {self.solution}, stub {self.stub}, library {self.library})")


def chapter_strength(chapter, course=COURSE, workers=2, cell_timeout=60, progress=None):
    if not course.source(chapter).exists():
        raise PipelineError(f"no chapter {chapter!r}")
    submissions = chapter_submissions(chapter, course)
    if progress is not None:
        progress.total = len(submissions)
    with tempfile.TemporaryDirectory(prefix="minigrad-strength-") as scratch:
        root = Path(scratch) / "course"
        (root / "course").mkdir(parents=True)
        shutil.copy2(course.root / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
        shutil.copytree(course.solutions / chapter, root / "solutions" / chapter)
        folders = {}
        for student, nb in submissions.items():
            folder = Path(scratch) / "submitted" / student / chapter
            folder.mkdir(parents=True)
            nbformat.write(nb, str(folder / f"{chapter}.ipynb"))
            folders[student] = folder
        results = grade_class(Settings(chapter, root=root, workers=workers, cell_timeout=cell_timeout), folders,
                              progress)
    report = Strength(chapter)
    for student, result in results.items():
        text = f"{result.score:g}/{result.max_score:g}"
        if student.startswith("wrong."):
            report.wrong += 1
            if result.score < result.max_score:
                report.caught += 1
            else:
                report.escaped.append(student.removeprefix("wrong."))
        elif student in ("solution", "library"):
            setattr(report, student, text)
        elif student == "release":
            report.stub = text
    return report
