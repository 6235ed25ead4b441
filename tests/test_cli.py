"""`minigrad-course`, the instructor's command line, run as a console script on throwaway courses.

One small class of chapter 2 (the solution, the untouched stub, a wrong backward and a student
who forgot the notebook) goes through autograde from a zip with two workers into a gradebook at
--db-url, then feedback and grades; the tiny self-test chapter checks validate and strength; a
copy of chapter 1 checks release --bundle.
"""

import csv
import importlib
import inspect
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from grading_helpers import course_copy, write_submission

from course.feedback import leaked_lines
from course.pipeline import (
    COURSE,
    REPOSITORY,
    read_notebook,
    replace_answer,
    trimmed_notebook,
)
from course.preprocessors import secret_lines

SCRIPT = Path(sys.executable).with_name("minigrad-course")
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "course"
CH02 = "ch02_backprop"
WRONG = "backward--no-accumulation"


def run(*args, check=True):
    done = subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, f"minigrad-course {' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def ch02_class(tmp_path_factory):
    """(course root, db_url, autograde's output) after grading the class from a zip."""
    root = course_copy(tmp_path_factory.mktemp("course"), [CH02])
    source = read_notebook(root / "solutions" / CH02 / f"{CH02}.ipynb")
    wrong = (root / "tests" / "chapters" / CH02 / "wrong" / f"{WRONG}.py").read_text()
    submitted = tmp_path_factory.mktemp("class") / "submitted"
    write_submission(submitted / "ada" / CH02, CH02, trimmed_notebook(source))
    write_submission(submitted / "bob" / CH02, CH02, read_notebook(root / "notebooks" / CH02 / f"{CH02}.ipynb"))
    write_submission(submitted / "cy" / CH02, CH02, replace_answer(trimmed_notebook(source), "backward", wrong))
    (submitted / "dee" / CH02).mkdir(parents=True)
    (submitted / "dee" / CH02 / "notes.txt").write_text("forgot the notebook")
    archive = submitted.parent / "class.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in submitted.rglob("*"):
            if path.is_file():
                zipped.write(path, path.relative_to(submitted.parent))
    db_url = f"sqlite:///{submitted.parent / 'grades.db'}"
    done = run("--course", root, "autograde", CH02, "--submissions", archive, "--workers", 2, "--db-url", db_url,
               "--cell-timeout", 60, "--notebook-timeout", 300)
    return root, db_url, done


def _row(output, student):
    match = re.search(rf"^{student}\s+(\S+)\s+(\S+)\s+(\S+)", output, re.MULTILINE)
    assert match, f"no row for {student} in the table:\n{output}"
    return match.groups()


@pytest.mark.slow
@pytest.mark.xdist_group("cli")
def test_autograde_reports_every_student(ch02_class):
    _, _, done = ch02_class
    out = done.stdout
    assert _row(out, "ada")[0] == _row(out, "ada")[1] and _row(out, "ada")[2] == "100%", f"the solution lost points:\n{out}"
    assert _row(out, "bob")[0] == "0", f"the stub earned points:\n{out}"
    assert 0 < float(_row(out, "cy")[0]) < float(_row(out, "cy")[1]), f"{WRONG} should lose some points, not all:\n{out}"
    assert _row(out, "dee")[0] == "0", out
    attention = out.split("needs attention:")[-1]
    assert "dee:" in attention and f"no {CH02}.ipynb" in attention, f"the missing notebook must be reported:\n{out}"
    assert "ada:" not in attention, f"a clean submission was flagged:\n{out}"
    assert f"autograde {CH02}" in done.stderr, "expected a progress bar"


@pytest.mark.slow
@pytest.mark.xdist_group("cli")
def test_autograde_fills_the_gradebook_at_db_url(ch02_class):
    from nbgrader.api import Gradebook

    root, db_url, done = ch02_class
    assert not (root / "course" / "gradebook.db").exists(), "--db-url was ignored: course/gradebook.db was written"
    with Gradebook(db_url) as gradebook:
        assert {s.id for s in gradebook.students} == {"ada", "bob", "cy", "dee"}
        for student in ("ada", "bob", "cy", "dee"):
            notebook = gradebook.find_submission_notebook(CH02, CH02, student)
            assert notebook.grades and all(g.auto_score is not None and not g.needs_manual_grade for g in notebook.grades)
            table_score = float(_row(done.stdout, student)[0])
            assert notebook.score == pytest.approx(table_score), f"{student}: gradebook {notebook.score}, table {table_score}"
    assert (root / "course" / "autograded" / "ada" / CH02 / f"{CH02}.ipynb").exists()


@pytest.mark.slow
@pytest.mark.xdist_group("cli")
def test_feedback_never_shows_hidden_tests(ch02_class):
    root, db_url, _ = ch02_class
    done = run("--course", root, "feedback", CH02, "--db-url", db_url)
    pages = sorted((root / "course" / "feedback").rglob("*.html"))
    assert {p.parts[-3] for p in pages} == {"ada", "bob", "cy"}, f"feedback pages: {pages}\n{done.stdout}"
    source = read_notebook(root / "solutions" / CH02 / f"{CH02}.ipynb")
    secrets = secret_lines([c.source for c in source.cells if c.cell_type == "code"])
    assert len(secrets) > 20, "the chapter should have hidden tests to hide"
    for page in pages:
        text = page.read_text()
        assert "hidden tests: not shown" in text, f"{page}: hidden regions should be marked"
        assert not leaked_lines(text, secrets), f"{page} shows hidden test lines: {leaked_lines(text, secrets)[:3]}"
    stub = (root / "course" / "feedback" / "bob" / CH02 / f"{CH02}.html").read_text()
    # the failed tests' tracebacks reach the page, each with its message (IPython drops what the judge's
    # traceback handler returns unless the handler shows it)
    assert "Traceback" in stub and "not implemented yet: mul_vjp" in stub, "a failed test shows no traceback"
    assert "showtraceback was disabled" not in stub, "a failed test's traceback was lost"


@pytest.mark.slow
@pytest.mark.xdist_group("cli")
def test_grades_csv_and_exercise_summary(ch02_class, tmp_path):
    root, db_url, _ = ch02_class
    done = run("--course", root, "grades", CH02, "--db-url", db_url, "--csv", tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    assert set(rows) == {"ada", "bob", "cy", "dee"}
    assert float(rows["ada"]["score"]) == float(rows["ada"]["max_score"]) > 0
    assert float(rows["bob"]["score"]) == 0
    for exercise in ("mul_vjp", "tanh_vjp", "sum_vjp", "matmul_vjp", "unbroadcast", "backward"):
        assert re.search(rf"{CH02}\s+{exercise}\s+\d+%", done.stdout), f"no summary line for {exercise}:\n{done.stdout}"


@pytest.mark.parametrize("chapter", [c for c in COURSE.chapters() if COURSE.library(c)])
def test_bundles_show_no_answer_body(chapter, tmp_path):
    """In a chapter's bundle, every definition that holds an answer has only its docstring and the
    stub's one call left: the graded functions, the private functions they call (through one
    another), the methods of the classes their own bodies use (ch06's Checkpoint) and of graded
    classes (but __init__ and __repr__)."""
    import ast

    from course.bundle import graded_objects, make_bundle

    package = make_bundle(chapter, tmp_path) / "minigrad"
    library = Path(inspect.getfile(importlib.import_module("minigrad"))).parent
    shown = []
    for name, _, target, _ in graded_objects([chapter]):
        function = getattr(target, "py_func", getattr(target, "__func__", target))
        if getattr(function, "__name__", "") == "<lambda>":
            continue
        relative = Path(inspect.getsourcefile(function)).relative_to(library)
        original, bundled = (ast.parse((root / relative).read_text()) for root in (library, package))
        for qualname in _answer_definitions(original, function):
            if not _only_a_stub(_definition(bundled, qualname)):
                shown.append(f"{name}: {relative}:{qualname}")
    assert not shown, f"{chapter}'s bundle shows these answers' code:\n  " + "\n  ".join(shown)


def _answer_definitions(tree, function):
    """Qualified names of the definitions in `tree` that hold the answer `function`."""
    import ast

    top = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    methods = lambda klass: [f"{klass.name}.{m.name}" for m in klass.body
                             if isinstance(m, ast.FunctionDef) and m.name not in ("__init__", "__repr__")]
    if isinstance(function, type):
        return methods(top[function.__name__])
    names = [function.__name__]
    used = {n.id for n in ast.walk(top[function.__name__]) if isinstance(n, ast.Name)}
    names += [m for c in sorted(used) if isinstance(top.get(c), ast.ClassDef) for m in methods(top[c])]
    stack = [top[function.__name__]] + [top[c] for c in used if isinstance(top.get(c), ast.ClassDef)]
    while stack:
        for node in ast.walk(stack.pop()):
            helper = top.get(getattr(node, "id", None))
            if isinstance(helper, ast.FunctionDef) and helper.name.startswith("_") and helper.name not in names:
                names.append(helper.name)
                stack.append(helper)
    return names


def _definition(tree, qualname):
    import ast

    node = tree
    for part in qualname.split("."):
        node = next(n for n in node.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part)
    return node


def _only_a_stub(node):
    import ast

    body = node.body[1:] if isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant) \
        else node.body
    return len(body) == 1 and "_exercise(" in ast.unparse(body[0])


@pytest.fixture(scope="module")
def selftest(tmp_path_factory):
    return course_copy(tmp_path_factory.mktemp("selftest"), ["selftest"], FIXTURE, FIXTURE / "chapters")


@pytest.mark.slow
@pytest.mark.xdist_group("cli-selftest")
def test_validate_passes_solution_and_fails_stub(selftest, tmp_path):
    solution = write_submission(tmp_path / "solution", "selftest",
                                read_notebook(selftest / "solutions" / "selftest" / "selftest.ipynb"))
    passed = run("validate", solution / "selftest.ipynb")
    assert "selftest.ipynb: passed" in passed.stdout, passed.stdout
    failed = run("validate", selftest / "notebooks" / "selftest" / "selftest.ipynb", check=False)
    assert failed.returncode == 1 and "FAILED" in failed.stdout and "NotImplementedError" in failed.stdout, failed.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("cli-selftest")
def test_strength_counts_caught_wrong_answers(selftest):
    done = run("--course", selftest, "strength", "selftest", "--workers", 2)
    wrong = len(list((selftest / "tests" / "chapters" / "selftest" / "wrong").glob("*.py")))
    assert re.search(rf"^selftest\s+{wrong}\s+{wrong}/{wrong}\s", done.stdout, re.MULTILINE), done.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("cli-bundle")
def test_release_bundle_ships_no_answers(tmp_path):
    import minigrad.graph

    root = course_copy(tmp_path / "course", ["ch01_graph"])
    shutil.copytree(REPOSITORY / "tests" / "chapters", root / "tests" / "chapters", dirs_exist_ok=True)  # later chapters
    run("--course", root, "release", "ch01_graph", "--bundle", tmp_path / "bundle")
    bundle = tmp_path / "bundle" / "ch01_graph"
    assert (bundle / "ch01_graph.ipynb").exists() and (bundle / "minigrad" / "__init__.py").exists()
    answer = inspect.getsource(minigrad.graph.topological_sort).split('"""')[-1]
    shipped = (bundle / "minigrad" / "graph.py").read_text()
    leaked = [line for line in answer.splitlines() if len(line.strip()) > 20 and line in shipped]
    assert not leaked, f"the bundle's graph.py still holds the answer: {leaked[:3]}"
    propagate = inspect.getsource(importlib.import_module("minigrad.autograd")._propagate)
    shipped = (bundle / "minigrad" / "autograd.py").read_text()
    leaked = [line for line in propagate.split('"""')[-1].splitlines() if len(line.strip()) > 20 and line in shipped]
    assert not leaked, f"the bundle's autograd.py holds chapter 2's answer: {leaked[:3]}"
    check = textwrap.dedent("""
        import sys
        import minigrad as mg
        assert mg.__file__.startswith(sys.argv[1]), mg.__file__
        x = mg.tensor(2.0, requires_grad=True)
        y = x * x + x
        try:
            mg.topological_sort(y)
        except NotImplementedError as error:
            assert "ch01_graph" in str(error), error
        else:
            raise AssertionError("the bundle's topological_sort is not a stub")
        from minigrad import autograd
        try:  # chapter 2's backward runs the reference, which walks the graph with the student's sort
            autograd.backward(y)
        except NotImplementedError as error:
            assert "not implemented yet: topological_sort" in str(error), error
        else:
            raise AssertionError("backward ran without the student's topological_sort")
        def topological_sort(output):  # the student's answer, as the notebook would define it
            order, seen = [], set()
            def visit(t):
                if id(t) not in seen:
                    seen.add(id(t))
                    for p in t.parents:
                        visit(p)
                    order.append(t)
            visit(output)
            return order
        order = mg.topological_sort(y)  # the library runs the student's function
        assert order[-1] is y and len(order) == 3, order  # x, x * x, y
        autograd.backward(y)  # now on the student's sort: dy/dx = 2x + 1
        assert x.grad.item() == 5.0, x.grad
        print("bundle ok")
    """)
    done = subprocess.run([sys.executable, "-c", check, str(bundle)], cwd=bundle, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "bundle ok" in done.stdout, done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.xdist_group("cli-selftest")
def test_a_chapter_its_own_solution_fails_is_refused_and_nothing_written(tmp_path):
    """Fail closed: when the chapter's solution loses a point through the judge, autograde grades
    nobody another way; it exits non-zero, and neither the gradebook nor autograded/ gets a line."""
    root = course_copy(tmp_path / "course", ["selftest"], FIXTURE, FIXTURE / "chapters")
    source = root / "solutions" / "selftest" / "selftest.ipynb"
    wrong = next((root / "tests" / "chapters" / "selftest" / "wrong").glob("*.py"))
    name = wrong.stem.split("--")[0]
    import nbformat

    nbformat.write(replace_answer(read_notebook(source), name, wrong.read_text()), str(source))
    write_submission(tmp_path / "submitted" / "ada" / "selftest", "selftest", read_notebook(source))
    gradebook = tmp_path / "grades.db"
    done = run("--course", root, "autograde", "selftest", "--submissions", tmp_path / "submitted", "--workers", 2,
               "--db-url", f"sqlite:///{gradebook}", check=False)
    assert done.returncode != 0 and "cannot be graded safely" in done.stderr, f"{done.stdout}\n{done.stderr}"
    assert not list((root / "course" / "autograded").rglob("*.ipynb")), "autograded/ written despite the refusal"
    if gradebook.exists():
        import sqlite3

        with sqlite3.connect(gradebook) as db:
            assert db.execute("select count(*) from submitted_assignment").fetchone() == (0,)


def test_unknown_chapter_is_a_clear_error(tmp_path):
    done = run("--course", REPOSITORY, "autograde", "ch99_nothing", "--submissions", tmp_path, check=False)
    assert done.returncode == 1 and "no chapter 'ch99_nothing'" in done.stderr, done.stderr


@pytest.mark.slow
@pytest.mark.xdist_group("cli-selftest")
def test_notebook_budget_fails_the_rest_and_says_so(selftest, tmp_path):
    """Each sleepy cell stays under the cell limit; together they exhaust the notebook's budget:
    the cells left are failed (scored zero), and the table says why."""
    import nbformat

    nb = read_notebook(selftest / "solutions" / "selftest" / "selftest.ipynb")
    for _ in range(3):
        nb.cells.insert(2, nbformat.v4.new_code_cell("import time\ntime.sleep(2)"))
    write_submission(tmp_path / "submitted" / "sleepy" / "selftest", "selftest", nb)
    done = run("--course", selftest, "autograde", "selftest", "--submissions", tmp_path / "submitted", "--workers", 1,
               "--cell-timeout", 3, "--notebook-timeout", 5, "--db-url", f"sqlite:///{tmp_path / 'grades.db'}")
    score, top, _ = _row(done.stdout, "sleepy")
    assert score == "0" and float(top) > 0, done.stdout
    attention = done.stdout.split("needs attention:")[-1]
    assert "time limit" in attention and "not run (scored zero)" in attention and "test_mul_vjp_values" in attention, done.stdout
