"""The cheating and failure corpus through the real autograde, in one class.

Every notebook in tests/chapters/ch01_graph/cheats/ (see tests/grading_helpers.py for the format) is
graded with its honest twin, the untouched student notebook and the solution, by
`course.autograde.grade_class` with two workers, exactly as `minigrad-course autograde` grades a
class. Each cheat must score exactly what its honest twin scores, cell by cell; the solution full
marks and the stub zero; the gradebook must hold every submission's scores and nothing else; no
file may appear in the course or the repository. The cheats marked "beats nbgrader" are also
graded by plain nbgrader in one batch, where they must score *more* than their honest twin: the
proof that each is a real cheat, defeated here and not there.
"""

import hashlib
import json
from pathlib import Path

import pytest
from grading_helpers import cheating_notebook, course_copy, honest_notebook, load_cheats, write_submission

from course import landlock
from course.autograde import Settings, grade_class
from course.pipeline import REPOSITORY, Course, NbgraderCourse, read_notebook, trimmed_notebook

CHAPTER = "ch01_graph"
CHEATS = load_cheats(CHAPTER)
# Limits small enough for a shared 2-core machine (the endless loop and the fork bomb each run one cell
# to its limit) and still well above what the honest code needs.
SETTINGS = dict(workers=2, cell_timeout=10, notebook_timeout=240, memory_mb=1024)
# Cheats that, were the sandbox missing, would really reach outside it: refused rather than run.
NEEDS_ISOLATION = {"write_course", "read_solutions", "kill_judge", "fork_bomb"}

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cheating")]


def _honest_key(names):
    return "honest." + ("+".join(sorted(names)) or "none")


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade the whole corpus as one class; returns (results, course root, submissions folder)."""
    if landlock.abi() < 1:
        pytest.fail("this kernel has no Landlock: the sandbox cannot keep students' code away from the course, "
                    f"and the cheats {sorted(NEEDS_ISOLATION)} would really reach it; refusing to run them", pytrace=False)
    root = course_copy(tmp_path_factory.mktemp("course"), [CHAPTER])
    submitted = tmp_path_factory.mktemp("submitted")
    write_submission(submitted / "solution" / CHAPTER, CHAPTER, trimmed_notebook(read_notebook(root / "solutions" / CHAPTER / f"{CHAPTER}.ipynb")))
    write_submission(submitted / "stub" / CHAPTER, CHAPTER, read_notebook(root / "notebooks" / CHAPTER / f"{CHAPTER}.ipynb"))
    for cheat in CHEATS.values():
        honest = honest_notebook(CHAPTER, cheat.honest, root)
        write_submission(submitted / _honest_key(cheat.honest) / CHAPTER, CHAPTER, honest)
        nb, files = cheating_notebook(honest, cheat)
        write_submission(submitted / f"cheat.{cheat.name}" / CHAPTER, CHAPTER, nb, files)
    repository_gradebook = _digest(REPOSITORY / "course" / "gradebook.db")
    submissions = {p.name: p / CHAPTER for p in sorted(submitted.iterdir())}
    results = grade_class(Settings(CHAPTER, root=root, **SETTINGS), submissions)
    assert _digest(REPOSITORY / "course" / "gradebook.db") == repository_gradebook, "the repository's gradebook changed"
    return results, root, submitted


def _scores(result):
    return {name: cell.score for name, cell in result.cells.items()}


def _show(result):
    cells = ", ".join(f"{c.name} {c.score:g}/{c.max_score:g}" + (f" ({c.error[:80]})" if c.error else "")
                      for c in result.cells.values())
    return f"{result.student}: {result.score:g}/{result.max_score:g} [{cells}] attention: {result.attention}"


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_scores_exactly_its_honest_work(graded, name):
    results, _, _ = graded
    cheat = CHEATS[name]
    got, honest = results[f"cheat.{name}"], results[_honest_key(cheat.honest)]
    assert honest.cells, f"the honest twin was not graded: {_show(honest)}"
    assert _scores(got) == _scores(honest), (
        f"{name} ({cheat.description}) must score what its honest work scores, cell by cell:\n"
        f"  cheat:  {_show(got)}\n  honest: {_show(honest)}"
    )


def test_rest_of_class_graded_normally(graded):
    results, _, _ = graded
    solution, stub = results["solution"], results["stub"]
    assert solution.cells and solution.score == solution.max_score, f"the solution lost points: {_show(solution)}"
    assert stub.cells and stub.score == 0, f"the untouched student notebook earned points: {_show(stub)}"
    honest = results[_honest_key(["topological_sort"])]
    earned = {n for n, c in honest.cells.items() if c.score > 0}
    assert earned == {n for n in honest.cells if n.startswith("test_topological_sort")}, (
        f"an honest topological_sort (and stubs elsewhere) should earn exactly its own tests: {_show(honest)}"
    )


def test_failures_are_reported_not_silent(graded):
    """Timeouts, deaths and deleted cells appear in the attention list of the submission."""
    results, _, _ = graded
    expected = {
        "infinite_loop": "ran past its time limit", "fork_bomb": "ran past its time limit", "os_exit": "died",
        "fake_setup": "locked cells deleted by the student, restored: setup",
        "fake_helpers": "locked cells deleted by the student, restored: helpers_graphs",
        "stripped_tests": "test cells deleted by the student, restored and graded",
    }
    for name, text in expected.items():
        attention = results[f"cheat.{name}"].attention
        assert any(text in line for line in attention), f"{name}: expected {text!r} in its attention list, got {attention}"


def test_gradebook_consistent(graded):
    """The course's gradebook holds every submission, each grade cell scored, exactly as reported;
    and the cheats wrote nothing anywhere."""
    from nbgrader.api import Gradebook

    results, root, submitted = graded
    with Gradebook("sqlite:///" + str(root / "course" / "gradebook.db")) as gradebook:
        students = {s.id for s in gradebook.students}
        assert students == set(results), f"gradebook students {sorted(students ^ set(results))} differ from the class"
        for student, result in results.items():
            notebook = gradebook.find_submission_notebook(CHAPTER, CHAPTER, student)
            stored = {g.name: g.auto_score for g in notebook.grades}
            assert stored == _scores(result), f"{student}: the gradebook has {stored}, the grader reported {_scores(result)}"
            assert not any(g.needs_manual_grade for g in notebook.grades), f"{student}: left for manual grading"
    planted = [str(p) for where in (root, submitted, REPOSITORY) for p in where.rglob("HACKED_BY_STUDENT")]
    planted += [str(p) for p in Path("/tmp").glob("minigrad-*/HACKED_BY_STUDENT")]
    assert not planted, f"a cheat wrote files: {planted}"


@pytest.fixture(scope="module")
def plain_nbgrader(graded, tmp_path_factory):
    """The cheats that beat plain nbgrader and their honest twins, graded by nbgrader alone."""
    _, root, submitted = graded
    names = [n for n, c in CHEATS.items() if c.beats_nbgrader]
    students = [f"cheat.{n}" for n in names] + sorted({_honest_key(CHEATS[n].honest) for n in names})
    course = NbgraderCourse.scratch(tmp_path_factory.mktemp("plain"), [CHAPTER], Course(root, root / "tests"))
    course.generate([CHAPTER], database=True)
    for student in students:
        folder = course.submission_folder(CHAPTER, student)
        course.submit(CHAPTER, student, read_notebook(submitted / student / CHAPTER / f"{CHAPTER}.ipynb"))
        for path in (submitted / student / CHAPTER).rglob("*"):
            if path.is_file() and path.suffix != ".ipynb":
                target = folder / path.relative_to(submitted / student / CHAPTER)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())
    course.autograde(CHAPTER, timeout=SETTINGS["cell_timeout"])
    return course.results(CHAPTER, students)


@pytest.mark.parametrize("name", sorted(n for n, c in CHEATS.items() if c.beats_nbgrader))
def test_cheat_beats_plain_nbgrader(plain_nbgrader, name):
    cheat = CHEATS[name]
    got, honest = plain_nbgrader[f"cheat.{name}"], plain_nbgrader[_honest_key(cheat.honest)]
    assert got.score > honest.score, (
        f"{name} is marked 'beats nbgrader' but plain nbgrader gives it {got} against its honest {honest}: "
        f"it is not a real cheat (fix the corpus)"
    )


def test_corpus_covers_the_issue():
    """The corpus holds every cheat the issue lists (by name)."""
    required = {"helper_redefined", "numpy_patched", "library_patched", "ast_transformer", "fake_setup",
                "always_equal", "edited_tests", "stripped_tests", "infinite_loop", "os_exit", "memory_bomb",
                "fork_bomb", "write_course", "fake_output", "read_solutions", "call_time_patch"}
    assert required <= set(CHEATS), f"missing cheats: {sorted(required - set(CHEATS))}"
    for cheat in CHEATS.values():
        assert cheat.edits and cheat.description, f"{cheat.name}: a cheat needs a description and edits"
    json.dumps([c.__dict__ for c in CHEATS.values()])
