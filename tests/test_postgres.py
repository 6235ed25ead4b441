"""The gradebook in a real PostgreSQL server (tests/postgres_fixture.py), through `minigrad-course`.

A tiny class of the self-test chapter (tests/fixtures/course: the solution, the untouched stub, a
wrong mul_vjp; what is checked here is the gradebook, so the smallest chapter does) is
autograded with two workers into sqlite and into PostgreSQL: the gradebooks hold the same rows,
and autograde's table, feedback pages and the grades CSV and summary are the same. Then two
chapters are autograded at the same time into one PostgreSQL gradebook, and a chapter graded
again (a student resubmitted) updates its rows instead of adding new ones.

Everything goes through the console script and its documented options only.
"""

import csv
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from grading_helpers import course_copy, write_submission
from postgres_fixture import new_database, postgres_server  # noqa: F401 - the session fixture

from course.pipeline import read_notebook, replace_answer, trimmed_notebook

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).with_name("minigrad-course")
CH02 = "ch02_backprop"
FIXTURE = ROOT / "tests" / "fixtures" / "course"
SELFTEST, ANSWER, WRONG = "selftest", "mul_vjp", "mul_vjp--swapped-factors"
LIMITS = ("--cell-timeout", 120, "--notebook-timeout", 600)  # a loaded 2-core machine

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("postgres")]


def cli(*args, check=True):
    done = subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=1200)
    if check:
        assert done.returncode == 0, f"minigrad-course {' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"
    return done


def submit(submitted, student, chapter, nb):
    write_submission(Path(submitted) / student / chapter, chapter, nb)


def solution(root, chapter):
    return trimmed_notebook(read_notebook(root / "solutions" / chapter / f"{chapter}.ipynb"))


def stub(root, chapter):
    return read_notebook(root / "notebooks" / chapter / f"{chapter}.ipynb")


def autograde(root, chapter, submitted, db_url, workers=2):
    return cli("--course", root, "autograde", chapter, "--submissions", submitted, "--workers", workers,
               "--db-url", db_url, *LIMITS)


def table_of(output):
    """Autograde's table and its 'needs attention' list: the lines between the header and the
    closing summary line (which names the gradebook and the time taken)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("student"))
    end = next(i for i, line in enumerate(lines) if re.match(r"\d+ submissions in ", line))
    return "\n".join(lines[start:end]).strip()


def score_of(output, student):
    match = re.search(rf"^{student}\s+(\S+)\s+(\S+)", output, re.MULTILINE)
    assert match, f"no row for {student}:\n{output}"
    return float(match.group(1)), float(match.group(2))


def snapshot(db_url):
    """Everything a grade is made of, as plain data: {(chapter, student): {...}}."""
    from nbgrader.api import Gradebook

    rows = {}
    with Gradebook(db_url) as gradebook:
        for assignment in gradebook.assignments:
            for submission in assignment.submissions:
                notebooks = {}
                for notebook in submission.notebooks:
                    notebooks[notebook.name] = {
                        "grades": sorted((g.name, g.auto_score, g.manual_score, g.max_score, g.needs_manual_grade)
                                         for g in notebook.grades),
                        "comments": sorted((c.name, c.auto_comment, c.manual_comment) for c in notebook.comments),
                        "late_penalty": notebook.late_submission_penalty,
                    }
                rows[assignment.name, submission.student.id] = {
                    "score": submission.score, "max_score": submission.max_score,
                    "timestamp": submission.timestamp, "notebooks": notebooks,
                }
    return rows


def row_counts(db_url):
    """How many rows each of nbgrader's tables holds (a regrade must not add any)."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.connect() as connection:
            return {table: connection.execute(sqlalchemy.text(f"SELECT count(*) FROM {table}")).scalar()
                    for table in ("assignment", "notebook", "base_cell", "student", "submitted_assignment",
                                  "submitted_notebook", "grade", "comment")}
    finally:
        engine.dispose()


def course_ids(db_url):
    import sqlalchemy

    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.connect() as connection:
            return sorted(connection.execute(sqlalchemy.text("SELECT id FROM course")).scalars())
    finally:
        engine.dispose()


def feedback_pages(root, chapter, db_url, students):
    """{student: (exit status, page text or None)}, one `feedback --student` run each."""
    pages = {}
    for student in students:
        page = root / "course" / "feedback" / student / chapter / f"{chapter}.html"
        page.unlink(missing_ok=True)
        done = cli("--course", root, "feedback", chapter, "--student", student, "--db-url", db_url, check=False)
        pages[student] = (done.returncode, page.read_text() if page.exists() else None)
    return pages


def grades_export(root, db_url, csv_path, *chapters):
    done = cli("--course", root, "grades", *chapters, "--db-url", db_url, "--csv", csv_path)
    with open(csv_path) as file:
        return list(csv.DictReader(file)), done.stdout.split("\n", 1)[1]  # past "wrote N rows to PATH"


# --------------------------------------------------------------------------- the class, graded twice
@pytest.fixture(scope="module")
def small_class(tmp_path_factory, postgres_server):  # noqa: F811
    """The class graded into sqlite and into a PostgreSQL database, with feedback and grades from each."""
    root = course_copy(tmp_path_factory.mktemp("course"), [SELFTEST], FIXTURE, FIXTURE / "chapters")
    submitted = tmp_path_factory.mktemp("class") / "submitted"
    wrong = (root / "tests" / "chapters" / SELFTEST / "wrong" / f"{WRONG}.py").read_text()
    submit(submitted, "ada", SELFTEST, solution(root, SELFTEST))
    submit(submitted, "bob", SELFTEST, stub(root, SELFTEST))
    submit(submitted, "cy", SELFTEST, replace_answer(solution(root, SELFTEST), ANSWER, wrong))
    students = ["ada", "bob", "cy"]
    out = tmp_path_factory.mktemp("out")
    with new_database(postgres_server) as postgres:
        runs = {}
        for name, db_url in [("sqlite", f"sqlite:///{out / 'gradebook.db'}"), ("postgres", postgres)]:
            graded = autograde(root, SELFTEST, submitted, db_url)
            runs[name] = {
                "db_url": db_url, "autograde": graded, "gradebook": snapshot(db_url),
                "feedback": feedback_pages(root, SELFTEST, db_url, students),
                "grades": grades_export(root, db_url, out / f"{name}.csv"),
            }
        yield {"root": root, "submitted": submitted, "students": students, **runs}


def test_postgres_gradebook_holds_exactly_the_sqlite_grades(small_class):
    sqlite, postgres = small_class["sqlite"], small_class["postgres"]
    assert postgres["db_url"].startswith("postgresql+psycopg://")
    assert set(postgres["gradebook"]) == {(SELFTEST, s) for s in small_class["students"]}, postgres["gradebook"].keys()
    assert postgres["gradebook"] == sqlite["gradebook"]
    assert row_counts(postgres["db_url"]) == row_counts(sqlite["db_url"])
    out = postgres["autograde"].stdout
    assert table_of(out) == table_of(sqlite["autograde"].stdout)
    assert score_of(out, "ada")[0] == score_of(out, "ada")[1] > 0, f"the solution lost points:\n{out}"
    assert score_of(out, "bob")[0] == 0, f"the stub earned points:\n{out}"
    assert 0 <= score_of(out, "cy")[0] < score_of(out, "cy")[1], f"{WRONG} should lose points:\n{out}"
    assert f"gradebook: {postgres['db_url']}" in out


def test_postgres_feedback_and_grades_match_sqlite(small_class):
    sqlite, postgres = small_class["sqlite"], small_class["postgres"]
    assert postgres["feedback"] == sqlite["feedback"]
    status, page = postgres["feedback"]["ada"]
    assert status == 0 and page and "hidden tests: not shown" in page, "no feedback page for the solution"
    rows, summary = postgres["grades"]
    assert (rows, summary) == sqlite["grades"]
    assert {r["student"]: float(r["score"]) for r in rows} == {
        s: postgres["gradebook"][SELFTEST, s]["score"] for s in small_class["students"]}
    assert re.search(rf"{SELFTEST}\s+{ANSWER}\s+\d+%", summary), summary


def test_regrading_updates_rows_instead_of_adding_them(small_class, tmp_path):
    """bob resubmits the solution: every row is updated in place, bob's score goes up, nobody else's moves."""
    root, postgres = small_class["root"], small_class["postgres"]
    db_url = postgres["db_url"]
    before_counts, before = row_counts(db_url), snapshot(db_url)
    submitted = tmp_path / "submitted"
    for student in ("ada", "cy"):
        write_submission(submitted / student / SELFTEST, SELFTEST,
                         read_notebook(small_class["submitted"] / student / SELFTEST / f"{SELFTEST}.ipynb"))
    submit(submitted, "bob", SELFTEST, solution(root, SELFTEST))
    done = autograde(root, SELFTEST, submitted, db_url)
    after = snapshot(db_url)
    assert row_counts(db_url) == before_counts, "the regrade added rows"
    assert set(after) == set(before)
    assert after[SELFTEST, "bob"]["score"] == after[SELFTEST, "bob"]["max_score"] > before[SELFTEST, "bob"]["score"] == 0
    for student in ("ada", "cy"):
        assert after[SELFTEST, student] == before[SELFTEST, student], f"{student}'s unchanged submission changed grade"
    assert score_of(done.stdout, "bob")[0] == after[SELFTEST, "bob"]["score"]
    rows, _ = grades_export(root, db_url, tmp_path / "grades.csv")
    assert sorted(r["student"] for r in rows) == ["ada", "bob", "cy"], rows


# --------------------------------------------------------------------------- two chapters at once
OPEN_GRADEBOOK = """
import os, sys, time
from course.autograde import _alembic_head_in_process, _create_gradebook
_alembic_head_in_process()
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):  # every opener waits, imports done, for the same moment
    time.sleep(0.001)
_create_gradebook(sys.argv[1], "minigrad")
"""


def test_gradebooks_opened_at_once_on_an_empty_database_all_succeed(postgres_server, tmp_path):  # noqa: F811
    """The race behind two chapters graded at once, on its own and twice over: every opener (a
    process of its own, as each `autograde` is) either creates nbgrader's tables and the course's
    rows or finds them. CI once lost ch02's class to the course-row collision, which nbgrader
    reports as its own InvalidEntry; without the retry, this test fails."""
    for round_ in range(2):
        go = tmp_path / f"go{round_}"
        with new_database(postgres_server) as db_url:
            openers = [subprocess.Popen([sys.executable, "-c", OPEN_GRADEBOOK, db_url, str(go)], cwd=ROOT,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                       for _ in range(4)]
            for opener in openers:
                assert opener.stdout.readline().strip() == "ready", opener.communicate(timeout=60)[0][-3000:]
            go.touch()
            outputs = [opener.communicate(timeout=120)[0] for opener in openers]
            failed = [out for opener, out in zip(openers, outputs) if opener.returncode]
            assert not failed, failed[0][-3000:]
            assert course_ids(db_url) == ["default_course", "minigrad"]


def test_two_chapters_autograded_concurrently_into_one_gradebook(tmp_path, postgres_server):  # noqa: F811
    root = course_copy(tmp_path / "course", [CH02])  # and the self-test chapter: two chapters, one of them small
    course_copy(root, [SELFTEST], FIXTURE, FIXTURE / "chapters")
    submitted = tmp_path / "submitted"
    for chapter in (SELFTEST, CH02):
        submit(submitted, "ada", chapter, solution(root, chapter))
        submit(submitted, "bob", chapter, stub(root, chapter))
    with new_database(postgres_server) as db_url:
        # As the guide says: the class list goes in first, alone (the first command on an empty
        # database creates nbgrader's tables, and two creating them at once collide).
        (tmp_path / "roster.csv").write_text("id,first_name,last_name,email\nada,Ada,L,\nbob,Bob,M,\n")
        done = subprocess.run([str(SCRIPT.with_name("nbgrader")), "db", "student", "import", str(tmp_path / "roster.csv"),
                               f"--CourseDirectory.db_url={db_url}"], cwd=root / "course", capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"nbgrader db student import failed:\n{done.stdout}\n{done.stderr}"
        outcomes = {}

        def grade(chapter):
            command = [str(SCRIPT), "--course", str(root), "autograde", chapter, "--submissions", str(submitted),
                       "--workers", "1", "--db-url", db_url, *map(str, LIMITS)]
            outcomes[chapter] = subprocess.run(command, capture_output=True, text=True, timeout=1200)

        threads = [threading.Thread(target=grade, args=(chapter,)) for chapter in (SELFTEST, CH02)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for chapter, done in outcomes.items():
            assert done.returncode == 0, f"autograde {chapter} failed:\n{done.stdout}\n{done.stderr}"
        grades = snapshot(db_url)
        assert set(grades) == {(c, s) for c in (SELFTEST, CH02) for s in ("ada", "bob")}, grades.keys()
        for chapter in (SELFTEST, CH02):
            out = outcomes[chapter].stdout
            ada, bob = grades[chapter, "ada"], grades[chapter, "bob"]
            assert ada["score"] == ada["max_score"] > 0, f"{chapter}: the solution lost points:\n{out}"
            assert bob["score"] == 0, f"{chapter}: the stub earned points:\n{out}"
            assert score_of(out, "ada") == (ada["score"], ada["max_score"])
            cells = [g for nb in ada["notebooks"].values() for g in nb["grades"]]
            assert cells and all(g[1] is not None for g in cells), f"{chapter}: ungraded cells {cells}"
        counts = row_counts(db_url)
        assert counts["student"] == 2 and counts["assignment"] == 2 and counts["submitted_assignment"] == 4, counts
        rows, summary = grades_export(root, db_url, tmp_path / "grades.csv")
        assert sorted((r["chapter"], r["student"]) for r in rows) == sorted(grades), rows
        assert SELFTEST in summary and CH02 in summary
