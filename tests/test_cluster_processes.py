"""`minigrad-course autograde --cluster tcp://...` on a real Dask cluster: a `dask scheduler` and two
`dask worker` processes, started from the console scripts on 127.0.0.1 as an instructor would.

A small class of the self-test chapter (the solution, the untouched stub, one wrong answer) is
graded by the local pool, and once through the cluster, where one worker's process group is
killed (SIGKILL) while each of the two workers holds a student's submission. The class still
completes: every student in the table and the gradebook exactly once, with the local pool's score
on every cell, nobody charged for the lost worker, and the Dask dashboard's address printed.
(One graded class serves both tests: the suite's time is counted.)
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from grading_helpers import course_copy, write_submission

from course.autograde import PREFLIGHT
from course.pipeline import read_notebook, replace_answer, trimmed_notebook

try:
    import distributed
except ImportError:
    if os.environ.get("CI") or os.geteuid() == 0:  # tools/test.sh installs the dev extra, which has it
        raise
    pytest.skip("the cluster extra is not installed: pip install -e '.[cluster]'", allow_module_level=True)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cluster-processes")]

BIN = Path(sys.executable).parent
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "course"
CHAPTER = "selftest"
WRONG = "mul_vjp--swapped-factors"
STUDENTS = ("ada", "bob", "cy")  # solution, stub, wrong answer
HOST = "127.0.0.1"


def free_port():
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def start(args, log):
    """A console script of the venv in its own process group (so that it dies with its children)."""
    with open(log, "w") as out:
        return subprocess.Popen([str(BIN / args[0]), *map(str, args[1:])], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def stop(process, timeout=15):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=timeout)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """{address, dashboard port, workers: {name: process}, client}: a scheduler and two workers."""
    logs = tmp_path_factory.mktemp("dask")
    port, dashboard = free_port(), free_port()
    address = f"tcp://{HOST}:{port}"
    os.environ["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] = "1"  # as course/cluster.py tells instructors
    try:
        scheduler = start(["dask", "scheduler", "--host", HOST, "--port", port,
                           "--dashboard-address", f"{HOST}:{dashboard}"], logs / "scheduler.log")
    finally:
        del os.environ["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"]
    workers = {name: start(["dask", "worker", address, "--name", name, "--host", HOST, "--nthreads", 1,
                            "--nworkers", 1, "--memory-limit", 0, "--no-dashboard",
                            "--local-directory", logs / name], logs / f"{name}.log")
               for name in ("w0", "w1")}
    try:
        client = distributed.Client(address, timeout=60)
        client.wait_for_workers(2, timeout=120)
        yield {"address": address, "dashboard": dashboard, "workers": workers, "client": client, "logs": logs}
        client.close()
    finally:
        for process in [*workers.values(), scheduler]:
            stop(process)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """(course root, submitted folder) for the class of STUDENTS."""
    base = tmp_path_factory.mktemp("class")
    root = course_copy(base / "course", [CHAPTER], FIXTURE, FIXTURE / "chapters")
    solution = trimmed_notebook(read_notebook(root / "solutions" / CHAPTER / f"{CHAPTER}.ipynb"))
    wrong = (root / "tests" / "chapters" / CHAPTER / "wrong" / f"{WRONG}.py").read_text()
    notebooks = [solution, read_notebook(root / "notebooks" / CHAPTER / f"{CHAPTER}.ipynb"),
                 replace_answer(solution, "mul_vjp", wrong)]
    for student, nb in zip(STUDENTS, notebooks):
        write_submission(base / "submitted" / student / CHAPTER, CHAPTER, nb)
    return root, base / "submitted"


def autograde(course, db, *options):
    """The console script's arguments for grading the class into the sqlite gradebook `db`."""
    root, submitted = course
    return [BIN / "minigrad-course", "--course", root, "autograde", CHAPTER, "--submissions", submitted,
            "--db-url", f"sqlite:///{db}", "--cell-timeout", 120, "--notebook-timeout", 300, *options]


def finished(done):
    assert done.returncode == 0, f"autograde failed:\n{done.stdout}\n{done.stderr}"
    return done


def grades(db):
    """{student: {grade cell: score}} and the number of submissions of the chapter in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}") as gradebook:
        submissions = gradebook.find_assignment(CHAPTER).submissions
        cells = {s.student.id: {g.name: g.score for nb in s.notebooks for g in nb.grades} for s in submissions}
        return cells, len(submissions)


def rows(output):
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+(?:\.\d+)?)\s+\d", output, re.MULTILINE)}


@pytest.fixture(scope="module")
def local(course, tmp_path_factory):
    db = tmp_path_factory.mktemp("local") / "grades.db"
    finished(subprocess.run(list(map(str, autograde(course, db, "--workers", 2))), capture_output=True, text=True,
                            timeout=600))
    cells, count = grades(db)
    assert count == len(STUDENTS) and set(cells) == set(STUDENTS), cells
    assert sum(cells["ada"].values()) > 0 and sum(cells["bob"].values()) == 0, cells
    assert 0 < sum(cells["cy"].values()) < sum(cells["ada"].values()), f"{WRONG} should lose some points: {cells}"
    return cells


def students_on(client):
    """{worker address: students whose grading task the scheduler has given it} (the chapter's own
    solution, graded as the class's first task, is no student)."""
    return {worker: [m.group(1) for key in keys if (m := re.match(r"grade-(.+)-[0-9a-f]{32}$", str(key)))
                     and m.group(1) != PREFLIGHT]
            for worker, keys in client.processing().items()}


@pytest.fixture(scope="module")
def killed(cluster, course, tmp_path_factory):
    """The class graded through the cluster, one worker's process group (its nanny, its worker, the
    grading process) killed while each of the two workers holds a student's submission:
    (stdout, stderr, gradebook, the students the victim held)."""
    client, base = cluster["client"], tmp_path_factory.mktemp("cluster")
    out, err = base / "stdout", base / "stderr"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        grading = subprocess.Popen(list(map(str, autograde(course, base / "grades.db", "--cluster", cluster["address"]))),
                                   stdout=stdout, stderr=stderr)
    try:
        deadline = time.monotonic() + 300
        while not (len(busy := students_on(client)) == 2 and all(busy.values())):
            assert grading.poll() is None, f"the class ended before both workers held a submission:\n{out.read_text()}"
            assert time.monotonic() < deadline, f"no two submissions in flight: {busy}"
            time.sleep(0.1)
        time.sleep(1)  # their grading processes are under way
        victim, victims = sorted(busy.items())[0]
        names = {w: info["name"] for w, info in client.scheduler_info()["workers"].items()}
        os.killpg(cluster["workers"][names[victim]].pid, signal.SIGKILL)
        assert grading.wait(timeout=600) == 0, f"autograde failed:\n{out.read_text()}\n{err.read_text()}"
    finally:
        if grading.poll() is None:
            grading.kill()
    return out.read_text(), err.read_text(), base / "grades.db", victims


def test_a_class_graded_on_the_cluster_gets_the_local_pools_grades(cluster, killed, local):
    output, log, db, victims = killed
    cells, count = grades(db)
    assert count == len(STUDENTS) and cells == local, f"{victims} were on the killed worker"
    assert rows(output) == {s: sum(c.values()) for s, c in local.items()}, output
    assert f"dask cluster {cluster['address']}: 2 worker(s)" in log, log
    link = re.search(rf"dashboard (http://{HOST}:{cluster['dashboard']}/\S*)", log)
    assert link, f"the dashboard's address was not printed:\n{log}"
    with urllib.request.urlopen(link.group(1), timeout=30) as page:
        assert page.status == 200


def test_a_killed_worker_costs_no_grade_and_counts_none_twice(cluster, killed):
    output, _, _, victims = killed
    assert victims and len(cluster["client"].scheduler_info()["workers"]) == 1, "the killed worker is still there"
    for student in STUDENTS:
        assert len(re.findall(rf"^{student}\s", output, re.MULTILINE)) == 1, output
    assert "needs attention" not in output, f"a submission was charged for the lost worker:\n{output}"
