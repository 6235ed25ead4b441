"""Shared by the grading tests: a throwaway copy of the course, and the cheating corpus.

A cheat in ``tests/chapters/<chapter>/cheats/<name>.py`` (or, for every chapter, ``tests/cheats/<name>.py``)
is a few edits of the chapter's notebook:

    # <what it does>
    # honest: <answers the cheat also solves honestly, e.g. topological_sort; empty for none>
    # beats nbgrader: yes|no   (whether it earns points under plain nbgrader)
    # %% insert after: <grade_id>|start     a new ordinary cell with the lines that follow
    # %% replace: <grade_id>                the cell's source becomes the lines that follow
    # %% delete: <grade_id>                 the cell is removed
    # %% strip: <grade_id>                  its nbgrader metadata is removed (source replaced if lines follow)
    # %% file: <relative path>              a file shipped beside the notebook

Its *honest* notebook is the trimmed student notebook (nbgrader cells only) with the solution's
answers for the `honest` names; the cheat is that notebook with the edits applied. Graded, the
two must score the same on every cell.
"""

import copy
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.pipeline import REPOSITORY, answer_cells, nbgrader_metadata, read_notebook, trimmed_notebook

TESTS = Path(__file__).resolve().parent
COMMON_CHEATS = TESTS / "cheats"  # applied to every chapter's released notebook (tests/test_pipeline.py)


def course_copy(dest, chapters, source=REPOSITORY, corpus=None):
    """A standalone course in `dest`: the course's nbgrader config, and the chapters' sources,
    notebooks and test corpus (from `corpus`, default source/tests/chapters, into tests/chapters)."""
    dest = Path(dest)
    (dest / "course").mkdir(parents=True, exist_ok=True)
    shutil.copy2(REPOSITORY / "course" / "nbgrader_config.py", dest / "course" / "nbgrader_config.py")
    corpus = Path(corpus or source / "tests" / "chapters")
    for chapter in chapters:
        for origin, target in [(source / "solutions", dest / "solutions"), (source / "notebooks", dest / "notebooks"),
                               (corpus, dest / "tests" / "chapters")]:
            if (origin / chapter).is_dir():
                shutil.copytree(origin / chapter, target / chapter, dirs_exist_ok=True)
    return dest


@dataclass
class Cheat:
    name: str
    description: str
    honest: list
    beats_nbgrader: bool
    edits: list = field(default_factory=list)  # (operation, target, source or None)


def load_cheats(chapter=None):
    """{name: Cheat}: one chapter's own corpus (tests/chapters/<chapter>/cheats/), or with no
    chapter the common one."""
    folder = COMMON_CHEATS if chapter is None else TESTS / "chapters" / chapter / "cheats"
    return {path.stem: parse_cheat(path) for path in sorted(folder.glob("*.py"))}


def parse_cheat(path):
    header, edits, current = {}, [], None
    description = None
    for line in path.read_text().splitlines():
        if line.startswith("# %% "):
            operation, _, target = line[5:].partition(":")
            current = [operation.strip(), target.strip(), []]
            edits.append(current)
        elif current is not None:
            current[2].append(line)
        elif line.startswith("# ") and ":" in line and line[2:].split(":")[0] in ("honest", "beats nbgrader"):
            key, _, value = line[2:].partition(":")
            header[key] = value.strip()
        elif line.startswith("# ") and description is None:
            description = line[2:]
    operations = {"insert after", "replace", "delete", "strip", "file", "link"}
    for operation, target, _ in edits:
        if operation not in operations:
            raise ValueError(f"{path}: unknown edit {operation!r} (one of {sorted(operations)})")
    return Cheat(path.stem, description or "", header.get("honest", "").split(), header.get("beats nbgrader") == "yes",
                 [(op, target, "\n".join(lines).strip("\n") if lines else None) for op, target, lines in edits])


def honest_notebook(chapter, names, course_root=REPOSITORY):
    """The trimmed student notebook with the solution's answers for `names`."""
    release = trimmed_notebook(read_notebook(course_root / "notebooks" / chapter / f"{chapter}.ipynb"))
    solutions = answer_cells(read_notebook(course_root / "solutions" / chapter / f"{chapter}.ipynb"))
    answers = answer_cells(release)
    for name in names:
        answers[name].source = solutions[name].source
    return release


class Link(str):
    """A file of a submission that is a symbolic link to this target."""


def cheating_notebook(honest, cheat, chapter=None, course_root=REPOSITORY):
    """(notebook, {relative path: content or Link}) for `cheat` applied to its honest notebook.

    Targets may name a cell by grade_id, or a kind of cell in any chapter: ANSWERS and TESTS (the
    edit applies to each), LAST_HELPER (the last locked helper cell); a link's NOTEBOOK is the
    submitted notebook's own name and SOLUTION the course's solution notebook."""
    nb = copy.deepcopy(honest)
    files = {}
    for operation, target, source in cheat.edits:
        if operation == "file":
            files[target] = (source or "") + "\n"
            continue
        if operation == "link":
            name, _, goal = (part.strip() for part in target.partition("->"))
            solution = Path(course_root) / "solutions" / str(chapter) / f"{chapter}.ipynb"
            files[f"{chapter}.ipynb" if name == "NOTEBOOK" else name] = Link(str(solution) if goal == "SOLUTION" else goal)
            continue
        if operation == "insert after":
            at = 0 if target == "start" else _indices(nb, target)[-1] + 1
            nb.cells.insert(at, nbformat.v4.new_code_cell(source or ""))
            continue
        for index in sorted(_indices(nb, target), reverse=True):
            if operation == "delete":
                del nb.cells[index]
            elif operation == "replace":
                nb.cells[index].source = source or ""
            elif operation == "strip":
                nb.cells[index].metadata.pop("nbgrader", None)
                if source is not None:
                    nb.cells[index].source = source
    return nb, files


def _indices(nb, target):
    """The cells an edit applies to: by grade_id, or every cell of a kind (see cheating_notebook)."""
    kinds = {
        "ANSWERS": lambda meta: meta.get("solution") and not meta.get("grade"),
        "TESTS": lambda meta: meta.get("grade") and not meta.get("solution"),
        "LAST_HELPER": lambda meta: meta.get("locked") and not meta.get("grade") and meta.get("grade_id") != "setup",
    }
    match = kinds.get(target, lambda meta: meta.get("grade_id") == target)
    found = [i for i, cell in enumerate(nb.cells) if nbgrader_metadata(cell) and match(nbgrader_metadata(cell))]
    if not found:
        raise KeyError(f"no cell for {target!r}")
    return found[-1:] if target == "LAST_HELPER" else found


def write_submission(folder, chapter, nb, files=None):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = files or {}
    if f"{chapter}.ipynb" not in files:
        nbformat.write(nb, str(folder / f"{chapter}.ipynb"))
    for relative, content in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            path.symlink_to(content)
        else:
            path.write_text(content)
    return folder
