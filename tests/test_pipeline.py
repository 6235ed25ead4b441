"""Every chapter through the real grading pipeline: nbgrader, and the judged autograde around it.

For each chapter (``solutions/*/``), ONE class is graded by `course.autograde.grade_class` (what
``minigrad-course autograde`` runs: nbgrader's Autograde with the student's code in the sandbox and
the tests in the judge, two workers) in a temporary copy of the course, and its per-cell scores
must show:
  (a) the solution scores full marks: its nbgrader cells as the class's preflight (grade_class
      refuses the class otherwise), and the released notebook with the solution's answers pasted
      in (what a student submits, every experiment included; how long it runs is reported);
  (b) the untouched student notebook from notebooks/ scores zero on every graded test cell;
  (c) notebooks/<chapter>/ is exactly what ``generate_assignment`` makes from the source now;
  (d) the library implementations named in tests/chapters/<chapter>/library.json, put in place
      of their answer cells, pass their functions' tests (solutions and minigrad/ agree);
  (e) each wrong answer in tests/chapters/<chapter>/wrong/ loses points, and every honest
      submission gets, cell by cell, the verdict its notebook gets in the student's own process
      (Validate: drivers and checkers one after the other; the first wrong answer of each exercise),
      though hostile notebooks share its class;
  (f) every cheat of the common corpus (tests/cheats/, applied to the student notebook)
      scores zero, the stub's score, on every cell, and the class still finishes.
(d) and (e) grade the trimmed notebook (nbgrader cells only), which also proves that tests do not
depend on ungraded cells. A tiny self-test chapter (tests/fixtures/course) runs through the same
code, so the pipeline is proven even before, and independently of, the real chapters.

The fast tests at the end check the chapter conventions the pipeline relies on.
"""

import ast
import concurrent.futures
import copy
import filecmp
import hashlib
import importlib
import json
from fnmatch import fnmatch
from functools import reduce
from pathlib import Path

import nbformat
import pytest
from conftest import PIPELINE_REPORT

from grading_helpers import cheating_notebook, course_copy, load_cheats, write_submission

from course.autograde import Settings, grade_class
from course.pipeline import (
    COURSE,
    IGNORED,
    Course,
    PipelineError,
    answer_cells,
    GradedCell,
    GradedSubmission,
    chapter_submissions,
    generate_release,
    grade_cells,
    local_verdicts,
    trimmed_notebook,
    written_answers,
    nbgrader_metadata,
    read_notebook,
    graded_name_of,
)

FIXTURE_ROOT = Path(__file__).resolve().parent / "fixtures" / "course"
FIXTURE = Course(FIXTURE_ROOT, FIXTURE_ROOT / "chapters")
CHAPTERS = [(COURSE, chapter) for chapter in COURSE.chapters()] + [(FIXTURE, c) for c in FIXTURE.chapters()]
SOLUTION_SECONDS_SANITY_BOUND = 300  # not a performance test: only catches a runaway notebook
# The self-test class's cell budget: its answers take milliseconds, and its slow experiment must
# outlast the budget, which at the default (60 s) left a grading worker asleep for a minute.
FIXTURE_CELL_TIMEOUT = 5
COMMON_CHEATS = load_cheats()


def _label(course, chapter):
    return chapter if course is COURSE else f"fixture-{chapter}"


def _cases(entries):
    """pytest params (course, chapter, *entry) grouped per chapter, so that one xdist worker
    grades each chapter once."""
    params = []
    for course, chapter in CHAPTERS:
        for values, name in entries(course, chapter):
            label = _label(course, chapter)
            params.append(pytest.param(course, chapter, *values, id=f"{label}-{name}" if name else label,
                                       marks=pytest.mark.xdist_group(label)))
    return params


def _chapter_cases():
    return _cases(lambda course, chapter: [((), None)])


def _library_cases():
    def entries(course, chapter):
        try:
            return [((name,), name) for name in course.library(chapter)]
        except PipelineError:
            return []  # test_corpus_conventions reports it

    return _cases(entries)


def _wrong_cases():
    def entries(course, chapter):
        try:
            return [((variant,), variant) for variant in course.wrong_answers(chapter)]
        except PipelineError:
            return []  # test_corpus_conventions reports it

    return _cases(entries)


def _where(course, path):
    try:
        return str(Path(path).relative_to(course.root))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- one autograde run per chapter
@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """graded(course, chapter) -> ({submission: GradedSubmission}, the fresh release folder,
    {honest submission: local verdicts}), computed once per chapter."""
    cache = {}

    def grade(course, chapter):
        key = (course.root, chapter)
        if key not in cache:
            try:
                if not course.source(chapter).exists():
                    raise PipelineError(f"{_where(course, course.source(chapter))} does not exist")
                cache[key] = _grade_chapter(course, chapter, tmp_path_factory.mktemp(chapter))
            except PipelineError as error:
                cache[key] = error
        if isinstance(cache[key], PipelineError):
            pytest.fail(f"{chapter}: grading pipeline failed: {cache[key]}", pytrace=False)
        return cache[key]

    return grade


def _grade_chapter(course, chapter, scratch):
    submissions = chapter_submissions(chapter, course)
    # The solution's own notebook is not graded a second time: the class's preflight grades its
    # nbgrader cells (grade_class refuses the class unless they score full marks), and the answered
    # notebook below is the same notebook, experiments included, as a student hands it in.
    del submissions["solution"]
    files = {}
    if "release" in submissions:
        stub = trimmed_notebook(submissions["release"])
        answered = answer_cells(read_notebook(course.source(chapter)))
        pasted = copy.deepcopy(submissions["release"])
        for name, cell in answer_cells(pasted).items():
            cell.source = answered[name].source
        submissions["answered"] = pasted
        if course is FIXTURE:  # an honest notebook with one ungraded cell slower than the cell budget
            slow = copy.deepcopy(pasted)
            slow.cells.insert(1, nbformat.v4.new_code_cell(f"import time\ntime.sleep({FIXTURE_CELL_TIMEOUT + 1})"))
            submissions["slow_experiment"] = slow
        for cheat in COMMON_CHEATS.values():
            submissions[f"cheat.{cheat.name}"], files[f"cheat.{cheat.name}"] = cheating_notebook(
                stub, cheat, chapter, course.root)
    root = course_copy(scratch / "course", [chapter], source=course.root, corpus=course.corpus)
    folders = {name: write_submission(scratch / "submitted" / name / chapter, chapter, nb, files.get(name))
               for name, nb in submissions.items()}
    before = _digests(course.root / "solutions" / chapter, root / "solutions" / chapter)
    with concurrent.futures.ThreadPoolExecutor(1) as beside:  # a subprocess: it overlaps the class
        local = beside.submit(local_verdicts, {name: trimmed_notebook(submissions[name])
                                               for name in _validated(course, chapter, submissions)})
        budget = {"cell_timeout": FIXTURE_CELL_TIMEOUT} if course is FIXTURE else {}
        results = grade_class(Settings(chapter, root=root, workers=2, **budget), folders)
    if _digests(course.root / "solutions" / chapter, root / "solutions" / chapter) != before:
        raise PipelineError("the chapter's solution notebooks changed while its class was graded")
    students = _gradebook_students(root, chapter)
    if students != set(folders):
        raise PipelineError(f"the gradebook holds {sorted(students ^ set(folders))} beyond or short of the class")
    release = generate_release(chapter, scratch / "release", course)
    return {name: _graded(result) for name, result in results.items()}, release, local.result()


def _validated(course, chapter, submissions):
    """The honest submissions whose verdicts in their own process (Validate) the grader's must equal:
    the answered notebook, the library's answers, the slow experiment, and the first wrong answer of
    each graded function. Every wrong answer is judged; its own-process run is a second, slower
    execution, so one per exercise samples the agreement (the student bundle's tests check Validate
    against the grader for every exercise too)."""
    first = {}
    for variant, (name, _) in sorted(course.wrong_answers(chapter).items()):
        first.setdefault(name, f"wrong.{variant}")
    return [name for name in submissions if name in ("library", "answered", "slow_experiment", *first.values())]


def _digests(*folders):
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for f in folders for p in sorted(f.rglob("*")) if p.is_file()}


def _gradebook_students(root, chapter):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'course' / 'gradebook.db'}") as gradebook:
        return {submission.student.id for submission in gradebook.find_assignment(chapter).submissions}


def _graded(result):
    """A StudentResult of the judged autograde as the pipeline's GradedSubmission."""
    cells = {c.name: GradedCell(c.name, float(c.score or 0), c.max_score, c.error)
             for c in result.cells.values() if not c.manual}
    problem = "; ".join(result.attention) if not cells else None
    return GradedSubmission(result.student, cells, result.seconds, problem)


def _lines(cells):
    return "\n".join(f"  {cell}" for cell in cells)


@pytest.mark.slow
@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_solution_scores_full_marks(course, chapter, graded, record_property):
    results, _, _ = graded(course, chapter)
    assert "answered" in results, (
        f"{chapter}: {_where(course, course.release(chapter))} is missing: run `bash tools/release.sh {chapter}`"
    )
    assert not results["answered"].lost(), (
        f"{chapter}: the released notebook with the solution's answers pasted in scored {results['answered']}; "
        f"these grade cells lost points:\n{_lines(results['answered'].lost())}"
    )
    if "slow_experiment" in results:
        slow = results["slow_experiment"]
        assert not slow.lost(), f"{chapter}: an honest notebook with one slow ungraded cell lost points: {slow}"
    answered = results["answered"]
    assert answered.cells, f"{chapter}: the answered notebook has no graded test cells"
    seconds = answered.seconds
    assert seconds is not None, f"{chapter}: the autograded notebook carries no execution timings"
    line = f"{_label(course, chapter)}: the answered notebook executed in {seconds:.1f} s by nbgrader autograde"
    print(line)
    record_property(PIPELINE_REPORT, line)
    assert seconds < SOLUTION_SECONDS_SANITY_BOUND, (
        f"{chapter}: the solution notebook took {seconds:.0f} s to execute (sanity bound "
        f"{SOLUTION_SECONDS_SANITY_BOUND} s; a chapter should run in about a minute)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_student_notebook_scores_zero(course, chapter, graded):
    results, _, _ = graded(course, chapter)
    assert "release" in results, (
        f"{chapter}: {_where(course, course.release(chapter))} is missing: run `bash tools/release.sh {chapter}`"
    )
    release = results["release"]
    assert release.cells, f"{chapter}: the student notebook has no graded test cells"
    assert not release.earned(), (
        f"{chapter}: the untouched student notebook (stubs only) earned points; every graded test must "
        f"fail on the stub. Cells that passed:\n{_lines(release.earned())}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_student_notebook_is_current_release(course, chapter, graded):
    _, fresh, _ = graded(course, chapter)
    committed = course.notebooks / chapter
    problems = _tree_differences(fresh, committed)
    assert not problems, (
        f"{chapter}: {_where(course, committed)}/ is not what nbgrader generate_assignment makes from "
        f"{_where(course, course.solutions / chapter)}/ now (never edit notebooks/ by hand; "
        f"run `bash tools/release.sh {chapter}`):\n" + "\n".join(f"  {p}" for p in problems)
    )


def _tree_differences(fresh, committed):
    def files(root):
        if not root.is_dir():
            return set()
        relative = (p.relative_to(root) for p in root.rglob("*") if p.is_file())
        return {str(r) for r in relative if not any(fnmatch(part, i) for part in r.parts for i in IGNORED)}

    expected, present = files(fresh), files(committed)
    problems = [f"missing {name}" for name in sorted(expected - present)]
    problems += [f"not in the release: {name}" for name in sorted(present - expected)]
    for name in sorted(expected & present):
        if name.endswith(".ipynb"):
            problems += [f"{name}: {p}" for p in _notebook_differences(fresh / name, committed / name)]
        elif not filecmp.cmp(fresh / name, committed / name, shallow=False):
            problems.append(f"{name} differs")
    return problems


def _notebook_differences(fresh_path, committed_path):
    fresh, committed = json.loads(fresh_path.read_text()), json.loads(committed_path.read_text())
    if fresh == committed:
        return []
    fresh_cells, committed_cells = fresh.get("cells", []), committed.get("cells", [])
    problems = [f"notebook-level {key!r} differs" for key in sorted(set(fresh) | set(committed))
                if key != "cells" and fresh.get(key) != committed.get(key)]
    if len(fresh_cells) != len(committed_cells):
        problems.append(f"{len(committed_cells)} cells, the release has {len(fresh_cells)}")
    for index, (want, got) in enumerate(zip(fresh_cells, committed_cells)):
        if want != got:
            grade_id = want.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            keys = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
            problems.append(f"cell {index}{f' ({grade_id})' if grade_id else ''} differs in {keys}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("course, chapter, name", _library_cases())
def test_library_implementation_scores_full_marks(course, chapter, name, graded):
    spec = course.library(chapter)[name]
    answers = answer_cells(read_notebook(course.source(chapter)))
    assert name in answers, f"{chapter}: library.json names {name!r}, but no answer cell has that grade_id"
    results, _, _ = graded(course, chapter)
    library = results["library"]
    tests = [cell for cell in library.cells.values() if graded_name_of(cell.name, answers) == name]
    assert tests, f"{chapter}: no test cell test_{name}_<aspect> grades {name}"
    assert all(cell.full for cell in tests), (
        f"{chapter}: {spec}, in place of the solution of {name}, fails its tests: the notebook's "
        f"solution and minigrad/ disagree (or a test depends on an ungraded cell). The trimmed notebook "
        f"with every library.json entry in place ({library}) lost points in:\n{_lines(library.lost())}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("course, chapter, variant", _wrong_cases())
def test_wrong_answer_loses_points(course, chapter, variant, graded, record_property):
    name = course.wrong_answers(chapter)[variant][0]
    assert name in answer_cells(read_notebook(course.source(chapter))), (
        f"{chapter}: wrong answer {variant} replaces {name!r}, but no answer cell has that grade_id"
    )
    results, _, local = graded(course, chapter)
    result = results[f"wrong.{variant}"]
    lost = ", ".join(f"{c.name} {c.score:g}/{c.max_score:g}" for c in result.lost()) or "nothing"
    record_property(PIPELINE_REPORT, f"{_label(course, chapter)}: {result} (lost: {lost})")
    assert result.lost(), (
        f"{chapter}: the wrong answer {variant} scored full marks ({result.score:g}/{result.max_score:g}): "
        f"the tests of {name} do not catch it"
    )


@pytest.mark.slow
@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_grader_and_validate_agree(course, chapter, graded):
    """Each sampled honest submission (`_validated`) passes exactly the cells in the grader that it passes in its own process."""
    results, _, local = graded(course, chapter)
    differ = []
    for name, verdicts in local.items():
        judged = {cell.name: cell.full for cell in results[name].cells.values()}
        mine = {grade_id: error is None for grade_id, error in verdicts.items()}
        for grade_id in sorted(set(judged) | set(mine)):
            if judged.get(grade_id) != mine.get(grade_id):
                cell = results[name].cells.get(grade_id)
                differ.append(f"{name} {grade_id}: grader {'passes' if judged.get(grade_id) else 'fails'} "
                              f"({cell.error if cell else 'not graded'}), own process "
                              f"{'passes' if mine.get(grade_id) else 'fails'} ({verdicts.get(grade_id)})")
    assert not differ, f"{chapter}: the grader and the notebook's own run disagree:\n" + "\n".join(differ)


@pytest.mark.slow
@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_common_cheats_score_nothing(course, chapter, graded):
    results, _, _ = graded(course, chapter)
    scored = [f"{name} ({COMMON_CHEATS[name[6:]].description}): {result}"
              for name, result in results.items() if name.startswith("cheat.") and result.earned()]
    assert not scored, f"{chapter}: cheats on the untouched notebook earned points:\n" + "\n".join(scored)
    missing = [f"cheat.{name}" for name in COMMON_CHEATS if f"cheat.{name}" not in results]
    assert not missing, f"{chapter}: these cheats were not graded: {missing}"


# --------------------------------------------------------------------------- chapter conventions (fast)
SETUP_METADATA = {"grade": False, "solution": False, "locked": True, "grade_id": "setup", "schema_version": 3}


@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_source_notebook_conventions(course, chapter):
    path = course.source(chapter)
    assert path.exists(), f"{chapter}: expected the source notebook {_where(course, path)}"
    nb = read_notebook(path)
    problems = []
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as error:
        problems.append(f"not a valid notebook: {error.message}")
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    if kernel != "python3":
        problems.append(f"kernel should be 'python3', is {kernel!r}")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
            problems.append(f"cell {index} has outputs or an execution count: strip them before committing")
    code = [c for c in nb.cells if c.cell_type == "code"]
    setup = nbgrader_metadata(code[0]) if code else {}
    if {k: setup.get(k) for k in SETUP_METADATA} != SETUP_METADATA:
        problems.append(f"the first code cell must be the locked setup cell with nbgrader metadata "
                        f"{SETUP_METADATA}, has {setup}")
    assert not problems, f"{_where(course, path)}:\n" + "\n".join(f"  {p}" for p in problems)


@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_graded_cells_follow_conventions(course, chapter):
    nb = read_notebook(course.source(chapter))
    answers, tests = answer_cells(nb), grade_cells(nb)
    problems = []
    if not answers:
        problems.append("no answer cells (nbgrader metadata solution: true)")
    for name, cell in answers.items():
        if not name.isidentifier():
            problems.append(f"answer cell grade_id {name!r} is not the graded Python name")
        if "### BEGIN SOLUTION" not in cell.source or "### END SOLUTION" not in cell.source:
            problems.append(f"answer cell {name} has no ### BEGIN SOLUTION ... ### END SOLUTION region")
    for grade_id, cell in written_answers(nb).items():
        if cell.cell_type != "markdown" or not grade_id.startswith("written_") or not nbgrader_metadata(cell).get("points", 0) > 0:
            problems.append(f"written answer {grade_id} must be a markdown cell named written_<topic> that carries points")
    owners = {}
    for grade_id, cell in tests.items():
        meta = nbgrader_metadata(cell)
        if cell.cell_type != "code" or not meta.get("locked") or meta.get("solution"):
            problems.append(f"graded cell {grade_id} must be a locked code cell that is not an answer cell")
        if not meta.get("points", 0) > 0:
            problems.append(f"test cell {grade_id} carries no points")
        owner = graded_name_of(grade_id, answers)
        if owner is None:
            problems.append(f"test cell {grade_id} should be named test_<graded name>_<aspect>, "
                            f"graded names: {sorted(answers)}")
        owners.setdefault(owner, []).append(cell)
    for name in answers:
        cells = owners.get(name, [])
        if not cells:
            problems.append(f"graded function {name} has no test cell (test_{name}_<aspect>)")
        elif not any("### BEGIN HIDDEN TESTS" in c.source for c in cells):
            problems.append(f"graded function {name} has no hidden tests (### BEGIN HIDDEN TESTS) in "
                            f"{[nbgrader_metadata(c)['grade_id'] for c in cells]}")
    assert not problems, f"{_where(course, course.source(chapter))}:\n" + "\n".join(f"  {p}" for p in problems)


@pytest.mark.parametrize("course, chapter", _chapter_cases())
def test_corpus_conventions(course, chapter):
    """library.json lists every graded name with an importable implementation, and every graded
    name has at least one wrong answer that defines it."""
    answers = answer_cells(read_notebook(course.source(chapter)))
    corpus = _where(course, course.corpus / chapter)
    problems = []
    try:
        library = course.library(chapter)
        wrong = course.wrong_answers(chapter)
    except PipelineError as error:
        pytest.fail(str(error), pytrace=False)
    for name in sorted(set(answers) - set(library)):
        problems.append(f"{corpus}/library.json does not list {name!r} (\"{name}\": \"minigrad.module:attribute\")")
    for name in sorted(set(library) - set(answers)):
        problems.append(f"{corpus}/library.json lists {name!r}, which no answer cell has as grade_id")
    for name, spec in sorted(library.items()):
        module, _, path = spec.partition(":")
        try:
            target = reduce(getattr, path.split("."), importlib.import_module(module))
        except (ImportError, AttributeError) as error:
            problems.append(f"{corpus}/library.json: {name} -> {spec} does not resolve: {error}")
            continue
        if not callable(target):
            problems.append(f"{corpus}/library.json: {name} -> {spec} is not callable")
    covered = {name for name, _ in wrong.values()}
    for name in sorted(set(answers) - covered):
        problems.append(f"graded function {name} has no wrong answer: add {corpus}/wrong/{name}--<what is wrong>.py")
    for variant, (name, source) in sorted(wrong.items()):
        if name not in answers:
            problems.append(f"{corpus}/wrong/{variant}.py replaces {name!r}, which no answer cell has as grade_id")
        try:
            tree = ast.parse(source)
        except SyntaxError as error:
            problems.append(f"{corpus}/wrong/{variant}.py does not parse: {error}")
            continue
        if name not in _defined_names(tree):
            problems.append(f"{corpus}/wrong/{variant}.py does not define {name}")
    assert not problems, f"{chapter}:\n" + "\n".join(f"  {p}" for p in problems)


def _defined_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names
