"""The text twins of the solution notebooks (twins/<chapter>/<chapter>.py, course/twins.py).

Every chapter's twin agrees with its committed notebook, and the notebook the twin makes equals the
committed one except where the percent format cannot hold the difference (trailing newlines of a
cell); the round trip keeps what nbgrader reads; `check` names what an edited twin changed; and
the release regenerates the student notebook from an edited twin without shipping the twin.
"""

import os
import shutil
from pathlib import Path

import nbformat
import pytest

from course.pipeline import COURSE, Course, nbgrader_metadata
from course.release import release
from course.twins import CONFIG_FILE, check, chapters, notebook_from_twin, pair, sync, twin_text

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "course"


@pytest.fixture
def course_copy(tmp_path):
    """A throwaway copy of the self-test course with the repository's jupytext configuration and the
    twin its notebook makes."""
    shutil.copytree(FIXTURE, tmp_path, dirs_exist_ok=True)
    shutil.copy2(COURSE.root / CONFIG_FILE, tmp_path / CONFIG_FILE)
    course = Course(tmp_path, tmp_path / "chapters")
    sync(pair(course, "selftest"), "notebook")
    return course


def _newer(path):
    """Mark `path` as edited after everything else (mtimes can tie within a test)."""
    later = max(p.stat().st_mtime for p in path.parent.parent.parent.rglob("*") if p.is_file()) + 10
    os.utime(path, (later, later))


@pytest.mark.parametrize("chapter", chapters(COURSE))
def test_twin_agrees_with_notebook(chapter):
    problems = check(pair(COURSE, chapter))
    assert not problems, (
        f"{chapter}: twins/{chapter}/{chapter}.py and solutions/{chapter}/{chapter}.ipynb disagree "
        f"(edit the twin, then `python tools/twins.py sync {chapter}` or `bash tools/release.sh {chapter}`):\n  "
        + "\n  ".join(problems))


@pytest.mark.parametrize("chapter", chapters(COURSE))
def test_twin_rebuilds_the_committed_notebook(chapter):
    twins = pair(COURSE, chapter)
    committed = nbformat.read(str(twins.notebook), as_version=4)
    rebuilt = notebook_from_twin(twins, twins.twin.read_text(), like=committed)
    assert (rebuilt.nbformat, rebuilt.nbformat_minor, rebuilt.metadata) == (
        committed.nbformat, committed.nbformat_minor, committed.metadata)
    assert len(rebuilt.cells) == len(committed.cells)
    for index, (got, want) in enumerate(zip(rebuilt.cells, committed.cells)):
        where = f"{chapter} cell {index} {nbgrader_metadata(want).get('grade_id', '')}"
        assert got.source == want.source.rstrip("\n"), f"{where}: source"
        assert {k: v for k, v in got.items() if k != "source"} == {k: v for k, v in want.items() if k != "source"}, where


def test_round_trip_keeps_what_nbgrader_reads(course_copy):
    twins = pair(course_copy, "selftest")
    answer = {"grade": False, "grade_id": "f", "locked": False, "schema_version": 3, "solution": True}
    test = {"grade": True, "grade_id": "test_f", "locked": True, "points": 2, "schema_version": 3, "solution": False}
    task = {"grade": True, "grade_id": "essay", "locked": False, "points": 1, "schema_version": 3, "solution": False,
            "task": True}
    code = nbformat.v4.new_code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n",
                                     metadata={"nbgrader": answer, "collapsed": True})
    code.outputs = [nbformat.v4.new_output("stream", text="printed")]
    code.execution_count = 3
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title\n\nSome *prose* with $x^2$."),
        code,
        nbformat.v4.new_code_cell("assert f(2) == 2", metadata={"nbgrader": test, "deletable": False,
                                                                 "editable": False, "tags": ["visible"]}),
        nbformat.v4.new_markdown_cell("Explain.", metadata={"nbgrader": task}),
        nbformat.v4.new_raw_cell("raw text"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                 "language_info": {"name": "python"}})
    text = twin_text(twins, nb)
    header = next(line for line in text.splitlines() if "test_f" in line)
    assert header.startswith("# %%") and '"points": 2' in header, header
    back = notebook_from_twin(twins, text)
    assert [c.cell_type for c in back.cells] == [c.cell_type for c in nb.cells]
    assert [c.source for c in back.cells] == [c.source.rstrip("\n") for c in nb.cells]
    assert [nbgrader_metadata(c) for c in back.cells] == [nbgrader_metadata(c) for c in nb.cells]
    assert back.cells[2].metadata == {"nbgrader": test, "deletable": False, "editable": False, "tags": ["visible"]}
    assert back.cells[1].metadata == {"nbgrader": answer}  # the editor's view (collapsed) is not the chapter's
    assert back.cells[1].outputs == [] and back.cells[1].execution_count is None
    assert back.metadata == nb.metadata
    assert (back.nbformat, back.nbformat_minor) == (4, 4) and not any("id" in c for c in back.cells)


def test_check_names_what_an_edited_twin_changed(course_copy):
    twins = pair(course_copy, "selftest")
    assert check(twins) == []
    text = twins.twin.read_text()
    header = next(line for line in text.splitlines() if '"grade_id": "test_unbroadcast_kept_axes"' in line)
    twins.twin.write_text(text.replace(header, header.replace('"points": 2', '"points": 5')))
    assert check(twins) == ["cell 6 (test_unbroadcast_kept_axes) differs in metadata"]
    _newer(twins.twin)
    assert sync(twins) == [twins.notebook]
    assert check(twins) == []
    cell = nbformat.read(str(twins.notebook), as_version=4).cells[6]
    assert nbgrader_metadata(cell)["points"] == 5 and cell.id == "cell-06"


def test_check_reports_and_sync_removes_outputs(course_copy):
    twins = pair(course_copy, "selftest")
    nb = nbformat.read(str(twins.notebook), as_version=4)
    nb.cells[8].outputs = [nbformat.v4.new_output("stream", text="[3. 3.]")]
    nb.cells[8].execution_count = 4
    nb.metadata["jupytext"] = {"notebook_metadata_filter": "kernelspec,language_info,-jupytext"}
    nbformat.write(nb, str(twins.notebook))
    assert check(twins) == ["notebook metadata 'jupytext' (the pairing lives in jupytext.toml)",
                            "cell 8 has outputs", "cell 8 has an execution count"]
    _newer(twins.notebook)
    assert sync(twins) == [twins.notebook]  # the twin had it all; the notebook loses what it should not carry
    assert check(twins) == []


def test_release_regenerates_from_the_twin(course_copy):
    twins = pair(course_copy, "selftest")
    text = twins.twin.read_text()
    assert "# ## `mul_vjp`" in text
    twins.twin.write_text(text.replace("# ## `mul_vjp`", "# ## `mul_vjp`, edited in the twin"))
    _newer(twins.twin)
    lines = release(["selftest"], course_copy)
    assert lines[0] == "synced solutions/selftest/selftest.ipynb", lines
    student = course_copy.release("selftest")
    sources = [c.source for c in nbformat.read(str(student), as_version=4).cells]
    assert any(s.startswith("## `mul_vjp`, edited in the twin\n") for s in sources), sources
    assert [p.name for p in student.parent.iterdir()] == ["selftest.ipynb"]  # the twin (a solution) is not shipped
