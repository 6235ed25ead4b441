"""The JupyterHub path on one machine: nbgrader's exchange end to end, then `minigrad-course autograde`.

A temporary exchange folder stands for the hub's shared /srv/nbgrader/exchange and a PostgreSQL
server (tests/postgres_fixture.py) for the shared gradebook. The instructor releases chapter 1
(`nbgrader release_assignment`); two students, each in a home folder of their own, fetch it
(`nbgrader fetch_assignment`), one answers it, and both submit (`nbgrader submit`); the
instructor collects (`nbgrader collect`) into course/submitted/ and grades with
`minigrad-course autograde`, whose grades and submission times land in the gradebook. This is
the sequence course/README.md ("A class on JupyterHub") describes, with the command line options
that a hub's nbgrader_config.py files would set (`Exchange.root`, the course id, the gradebook).

On a hub each student is a Unix user and nbgrader takes the student id from the user name; here
every command runs as one user, so the students name themselves with `--student`.
"""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from grading_helpers import course_copy
from postgres_fixture import new_database, postgres_server  # noqa: F401 - the session fixture

from course.pipeline import answer_cells, read_notebook

BIN = Path(sys.executable).parent
CH01 = "ch01_graph"
COURSE_ID = "minigrad"  # course/nbgrader_config.py

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("exchange")]


def run(command, cwd, timeout=1200):
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, command))} (in {cwd}) failed:\n{done.stdout}\n{done.stderr}"
    return done


def nbgrader(*args, cwd, exchange):
    return run([BIN / "nbgrader", *args, f"--Exchange.root={exchange}"], cwd)


def test_release_fetch_submit_collect_autograde(tmp_path, postgres_server):  # noqa: F811
    from nbgrader.api import Gradebook

    root = course_copy(tmp_path / "course", [CH01])
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    instructor = root / "course"  # where nbgrader finds the course's nbgrader_config.py
    with new_database(postgres_server) as db_url:
        nbgrader("release_assignment", CH01, f"--CourseDirectory.db_url={db_url}", cwd=instructor, exchange=exchange)
        assert (exchange / COURSE_ID / "outbound" / CH01 / f"{CH01}.ipynb").exists()

        answers = answer_cells(read_notebook(root / "solutions" / CH01 / f"{CH01}.ipynb"))
        for student in ("ada", "bob"):
            home = tmp_path / "home" / student
            home.mkdir(parents=True)
            listed = nbgrader("list", "--course", COURSE_ID, cwd=home, exchange=exchange)
            assert CH01 in listed.stdout + listed.stderr, f"{student} does not see the release:\n{listed.stderr}"
            nbgrader("fetch_assignment", CH01, "--course", COURSE_ID, cwd=home, exchange=exchange)
            fetched = home / CH01 / f"{CH01}.ipynb"
            assert fetched.exists(), f"{student} fetched nothing: {sorted(home.rglob('*'))}"
            if student == "ada":  # ada does the work; bob hands in the notebook as it came
                nb = read_notebook(fetched)
                for name, cell in answer_cells(nb).items():
                    cell.source = answers[name].source
                nbformat.write(nb, str(fetched))
            nbgrader("submit", CH01, "--course", COURSE_ID, f"--student={student}", cwd=home, exchange=exchange)
        inbound = sorted(p.name.split("+")[0] for p in (exchange / COURSE_ID / "inbound").iterdir())
        assert inbound == ["ada", "bob"], inbound

        nbgrader("collect", CH01, f"--CourseDirectory.db_url={db_url}", cwd=instructor, exchange=exchange)
        submitted = root / "course" / "submitted"
        for student in ("ada", "bob"):
            assert (submitted / student / CH01 / f"{CH01}.ipynb").exists(), sorted(submitted.rglob("*"))
            assert (submitted / student / CH01 / "timestamp.txt").exists()

        done = run([BIN / "minigrad-course", "--course", root, "autograde", CH01, "--workers", 2, "--db-url", db_url,
                    "--cell-timeout", 120, "--notebook-timeout", 600], tmp_path)
        assert "autograding 2 submissions" in done.stdout, done.stdout
        with Gradebook(db_url) as gradebook:
            ada = gradebook.find_submission(CH01, "ada")
            bob = gradebook.find_submission(CH01, "bob")
            assert ada.score == ada.max_score > 0, f"the answered notebook lost points:\n{done.stdout}"
            assert bob.score == 0, f"the fetched stub earned points:\n{done.stdout}"
            for submission in (ada, bob):
                stamp = (submitted / submission.student.id / CH01 / "timestamp.txt").read_text().strip()
                assert submission.timestamp is not None and str(submission.timestamp)[:19] == stamp[:19].replace(
                    "T", " "), f"{submission.student.id}: gradebook time {submission.timestamp}, submitted {stamp}"
        assert (root / "course" / "autograded" / "ada" / CH01 / f"{CH01}.ipynb").exists()

        # Feedback goes back the same way: minigrad-course writes it, the exchange returns it.
        run([BIN / "minigrad-course", "--course", root, "feedback", CH01, "--student", "ada", "--db-url", db_url],
            tmp_path)
        nbgrader("release_feedback", CH01, "--student=ada", f"--CourseDirectory.db_url={db_url}", cwd=instructor,
                 exchange=exchange)
        home = tmp_path / "home" / "ada"
        nbgrader("fetch_feedback", CH01, "--course", COURSE_ID, "--student=ada", cwd=home, exchange=exchange)
        pages = sorted((home / CH01 / "feedback").rglob("*.html"))
        assert [p.name for p in pages] == [f"{CH01}.html"], sorted(home.rglob("*"))
        page = pages[0].read_text()
        assert "hidden tests: not shown" in page and f"{ada.score:g}" in page
