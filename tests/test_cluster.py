"""course.cluster.DaskPool on a local Dask cluster of two worker processes, with small tasks:
results and folders come back once each, a task's own exception is its result, and a task
whose Dask worker or grading process dies is retried once and then reported alone."""

import os
import signal
import time
from pathlib import Path

import pytest

try:
    import distributed  # noqa: F401
except ImportError:
    if os.environ.get("CI") or os.geteuid() == 0:  # tools/test.sh installs the dev extra, which has it
        raise
    pytest.skip("the cluster extra is not installed: pip install -e '.[cluster]'", allow_module_level=True)

from course.cluster import DaskPool, WorkerLost  # noqa: E402

pytestmark = pytest.mark.xdist_group("cluster")


# Tasks: run in a fresh process under a Dask worker (whose pid is its parent's).
def count_and_copy(source, factor, target):
    text = (source / "words.txt").read_text()
    target.mkdir(parents=True)
    (target / "copy.txt").write_text(text.upper())
    (target / "sub").mkdir()
    (target / "sub" / "n.txt").write_text(str(len(text.split()) * factor))
    return {"words": len(text.split()), "factor": factor, "pid": os.getpid()}


def fail(message):
    raise ValueError(message)


def kill_worker_first_time(marker):
    """Kills the Dask worker running it the first time; returns on the second. (`marker` is a str:
    a Path argument would be a folder of the task's own on each try.)"""
    marker = Path(marker)
    if not marker.exists():
        marker.write_text(str(os.getppid()))
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)  # killed with the worker (PR_SET_PDEATHSIG)
    return int(marker.read_text()), os.getppid()


def kill_worker_always(pids):
    (Path(pids) / str(os.getpid())).touch()
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(30)  # killed with the worker (PR_SET_PDEATHSIG)


def die_first_time(marker):
    """Its own process dies the first time (the worker survives); returns on the second."""
    marker = Path(marker)
    if not marker.exists():
        marker.write_text(str(os.getppid()))
        os._exit(3)
    return int(marker.read_text()), os.getppid()


def die_always():
    os._exit(3)


def slow(seconds):
    time.sleep(seconds)
    return seconds


@pytest.fixture(scope="module")
def pool():
    lines = []
    with DaskPool("local:2", announce=lines.append) as running:
        running.lines = lines
        yield running


def test_results_and_folders_come_back_once(pool, tmp_path):
    assert len(pool.workers()) == 2 and "2 worker(s)" in pool.lines[0], pool.lines
    source = tmp_path / "source"
    source.mkdir()
    (source / "words.txt").write_text("one two three")
    (source / "link").symlink_to("/etc/hostname")  # links are not shipped
    tasks = {f"t{i}": (count_and_copy, (source, i, tmp_path / "out" / f"t{i}")) for i in range(5)}
    tasks["bad"] = (fail, ("wrong answer",))
    seen = {}
    for name, result, error in pool.run(tasks):
        assert name not in seen, f"{name} yielded twice"
        seen[name] = (result, error)
    assert set(seen) == set(tasks)
    assert isinstance(seen["bad"][1], ValueError) and "wrong answer" in str(seen["bad"][1])
    for i in range(5):
        result, error = seen[f"t{i}"]
        assert error is None and result["words"] == 3 and result["factor"] == i
        out = tmp_path / "out" / f"t{i}"
        assert (out / "copy.txt").read_text() == "ONE TWO THREE" and (out / "sub" / "n.txt").read_text() == str(3 * i)
        assert result["pid"] != os.getpid()
    assert sorted(p.name for p in source.iterdir()) == ["link", "words.txt"], "the input folder was changed"


def test_a_regrade_replaces_the_target_folder(pool, tmp_path):
    source, target = tmp_path / "source", tmp_path / "target"
    source.mkdir()
    (source / "words.txt").write_text("a b")
    target.mkdir()
    (target / "stale.txt").write_text("from the last run")

    [(_, result, error)] = list(pool.run({"x": (replace_folder, (source, target))}))
    assert error is None and result == ["stale.txt"]
    assert sorted(p.name for p in target.iterdir()) == ["fresh.txt"]


def replace_folder(source, target):
    before = sorted(p.name for p in target.iterdir())
    for path in target.iterdir():
        path.unlink()
    (target / "fresh.txt").write_text((source / "words.txt").read_text())
    return before


def test_a_killed_worker_costs_one_retry_and_other_tasks_nothing(pool, tmp_path):
    tasks = {"victim": (kill_worker_first_time, (str(tmp_path / "marker"),))}
    tasks.update({f"other{i}": (slow, (1,)) for i in range(3)})
    seen = {}
    for name, result, error in pool.run(tasks):
        assert name not in seen
        seen[name] = (result, error)
    assert set(seen) == set(tasks)
    (killed, second), error = seen["victim"]
    assert error is None and killed != second, "the retry ran on the worker that had died"
    assert all(seen[f"other{i}"] == (1, None) for i in range(3)), seen


def alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_task_that_kills_every_worker_fails_alone(pool, tmp_path):
    tasks = {"killer": (kill_worker_always, (str(tmp_path),)), "fine": (slow, (1,))}
    seen = {name: (result, error) for name, result, error in pool.run(tasks)}
    assert isinstance(seen["killer"][1], WorkerLost), seen
    assert seen["fine"] == (1, None)
    pids = [int(p.name) for p in tmp_path.iterdir()]
    assert len(pids) == 2, f"tried {len(pids)} times, not twice"
    deadline = time.monotonic() + 10
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(alive, pids)), "the task's process outlived its worker"
    deadline = time.monotonic() + 180  # a restart imports distributed again: slow on a loaded machine
    while len(pool.workers()) < 2 and time.monotonic() < deadline:  # the nannies restart them
        time.sleep(0.5)
    assert len(pool.workers()) == 2


def test_a_dead_grading_process_is_retried_once_on_another_worker(pool, tmp_path):
    seen = {name: (result, error) for name, result, error in pool.run({
        "once": (die_first_time, (str(tmp_path / "marker"),)), "always": (die_always, ())})}
    (first, second), error = seen["once"]
    assert error is None and first != second, "retried on the same worker while another was free"
    assert isinstance(seen["always"][1], WorkerLost) and "exit status 3" in str(seen["always"][1])
