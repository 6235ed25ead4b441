"""Grading on a Dask cluster: a drop-in for `course.autograde._Pool` that runs each task on
a `dask.distributed` worker.

    minigrad-course autograde CHAPTER --cluster tcp://scheduler:8786   an existing cluster
    minigrad-course autograde CHAPTER --cluster local:4                a local one, 4 workers

An existing cluster, for example:

    DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1 dask scheduler --host 10.0.0.1
    dask worker tcp://10.0.0.1:8786 --nworkers 4 --nthreads 1       (as root, on each grading machine)

`DaskPool(address).run({name: (function, args)})` yields `(name, result, exception)` as the tasks
finish, like `_Pool.run`. The tasks of one `DaskPool` (one class: its preflight and its
submissions) run one after the other in a Python process that the worker starts for it, as a
local pool's worker does: the scratch course and sandbox zygote are made once per class and
worker, not per submission (starting Python with nbgrader costs seconds), and nothing of one
class's grading survives into the next (the process ends with the pool), nor does a dying grading
process take the worker with it. It runs as the worker's user (run `dask worker` as root where
the sandbox switches uids, as for the local pool).

What a task needs travels with it: every argument that is a `pathlib.Path` naming a folder is
packed (regular files and folders only, no links) into the task itself, unpacked on the worker and
the argument pointed there; a `Path` argument that names nothing yet is an empty place on the
worker. (Inside the task, not scattered: scattered data lives on one worker, and when that worker
dies every task still needing it is cancelled; a task's own arguments are rescheduled with it.
A chapter's course is some 50 kB packed, once per task.) After the task, each such folder that
the task changed (or created, or removed) comes back and replaces the client's. The result comes back as the function's return value; only the client, which
called `run`, writes anything else (the gradebook). Workers need the same course and minigrad
installed as the client (`pip install -e '.[course,cluster]'` from the same commit).

A task whose grading process dies is tried once more on another worker (on the same one when
there is no other); a task whose Dask worker dies is rescheduled by the scheduler, once for a
local cluster (`distributed.scheduler.allowed-failures` is 1 there; start a remote scheduler with
`DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1` for the same rule). A task that dies twice is
reported as `WorkerLost`, that task's failure alone. Each result is yielded exactly once.
"""

import concurrent.futures
import hashlib
import io
import os
import pickle
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import uuid
from pathlib import Path

LOCAL = "local:"


class WorkerLost(RuntimeError):
    """The task's grading process (or its Dask worker) died on both tries."""


class GradingProcessDied(RuntimeError):
    """Raised on the worker when the task's own Python process ended without a result."""

    def __init__(self, message, worker):
        super().__init__(message)
        self.worker = worker

    def __reduce__(self):
        return type(self), (str(self), self.worker)


class DaskPool:
    """Tasks on a Dask cluster: `address` is a scheduler's (tcp://host:8786) or `local:N`."""

    def __init__(self, address, announce=None):
        self.address = address
        self.announce = announce if announce is not None else (lambda line: print(line, file=sys.stderr))
        self.client = self.cluster = None
        self.run_id = uuid.uuid4().hex  # names this pool's grading processes on the workers

    def __enter__(self):
        import dask
        from distributed import Client, LocalCluster

        if self.address.startswith(LOCAL):
            workers = int(self.address[len(LOCAL):] or 1)
            with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address="127.0.0.1:0", memory_limit=0)
            self.client = Client(self.cluster)
        else:
            self.client = Client(self.address)
        link = self._dashboard()
        self.announce(f"dask cluster {self.client.scheduler.address}: {len(self.workers())} worker(s)"
                      + (f", dashboard {link}" if link else ""))
        return self

    def __exit__(self, *exc):
        if self.client is not None:
            try:
                self.client.run(_close_grader, self.run_id)
            except Exception:  # noqa: BLE001 - a worker that is gone has no grading process left
                pass
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    def _dashboard(self):
        try:
            services = self.client.scheduler_info().get("services", {})
        except Exception:  # noqa: BLE001 - the dashboard is a convenience
            return None
        return self.client.dashboard_link if "dashboard" in services else None

    def workers(self):
        return sorted(self.client.scheduler_info().get("workers", {}))

    def run(self, tasks):
        """Yield (name, result, exception) as the tasks {name: (function, args)} finish."""
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        shipped = {}  # folder -> its packed bytes, packed once per run
        futures, infos = [], {}
        for name, (function, args) in tasks.items():
            future, info = self._submit(name, function, args, shipped)
            futures.append(future)
            infos[future.key] = info
        pending = as_completed(futures)
        for future in pending:
            info = infos.pop(future.key)
            name = info["name"]
            try:
                outcome, folders = future.result()
            except KilledWorker as error:
                yield name, None, WorkerLost(f"the Dask worker running it died twice: {error}")
                continue
            except GradingProcessDied as error:
                if info["attempt"] == 1:
                    others = [w for w in self.workers() if w != error.worker] or None
                    retry, info = self._submit(name, info["function"], info["args"], shipped, others, attempt=2)
                    infos[retry.key] = info
                    pending.add(retry)
                    continue
                yield name, None, WorkerLost(f"its grading process died twice: {error}")
                continue
            except Exception as error:  # noqa: BLE001 - reported per task, like _Pool
                yield name, None, error
                continue
            finally:
                future.release()
            for index, packed in folders.items():
                _replace(Path(info["args"][index]), packed)
            if isinstance(outcome, _Raised):
                yield name, None, outcome.error
            else:
                yield name, outcome, None

    def _submit(self, name, function, args, shipped, workers=None, attempt=1):
        places = {}
        for index, arg in enumerate(args):
            if isinstance(arg, Path):
                if arg.is_dir():
                    if arg not in shipped:
                        shipped[arg] = _pack(arg)
                    places[index] = shipped[arg]
                else:
                    places[index] = None
        where = {"workers": workers, "allow_other_workers": False} if workers else {}
        future = self.client.submit(_run_on_worker, self.run_id, function, args, places,
                                    key=f"grade-{name}-{uuid.uuid4().hex}", pure=False, **where)
        return future, {"name": name, "function": function, "args": args, "attempt": attempt}


# --------------------------------------------------------------------------- on the worker
class _Raised:
    """An exception the task's function raised (a result, not a failure of the worker)."""

    def __init__(self, error):
        self.error = error


def _run_on_worker(run, function, args, places):
    """Unpack the task's folders, run `function(*args)` in this run's grading process, pack what changed."""
    try:
        from distributed import get_worker

        worker = get_worker().address
    except (ImportError, ValueError):
        worker = None
    with tempfile.TemporaryDirectory(prefix="minigrad-dask-") as scratch:
        scratch = Path(scratch)
        args = list(args)
        before = {}
        for index, packed in places.items():
            place = scratch / f"arg{index}"
            if packed is not None:
                _unpack(packed, place)
            args[index] = place
            before[index] = _digest(place)
        outcome = _grader(run).call(function, tuple(args), worker)
        folders = {index: (_pack(scratch / f"arg{index}") if (scratch / f"arg{index}").is_dir() else None)
                   for index in places if _digest(scratch / f"arg{index}") != before[index]}
        return outcome, folders


_GRADERS = {}  # on a worker: (run id, thread) -> that run's grading process
_GRADERS_LOCK = threading.Lock()


def _grader(run):
    key = (run, threading.get_ident())  # a worker with several threads grades several at a time
    with _GRADERS_LOCK:
        if key not in _GRADERS or not _GRADERS[key].alive():
            _GRADERS[key] = _Grader()
        return _GRADERS[key]


def _close_grader(run):
    """On every worker when the pool closes: its grading processes end (their scratch goes too)."""
    with _GRADERS_LOCK:
        graders = [_GRADERS.pop(key) for key in list(_GRADERS) if key[0] == run]
    for grader in graders:
        grader.close()


class _Grader:
    """A Python process (`python -m course.cluster`) that runs calls one at a time: a request and
    its reply are pickles, each after its length, on the process's stdin and a copy of its stdout."""

    def __init__(self):
        self.scratch = tempfile.mkdtemp(prefix="minigrad-grader-")
        self.log = open(Path(self.scratch) / "stderr", "w+b")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # the worker's imports
        self.process = subprocess.Popen([sys.executable, "-m", "course.cluster"], cwd=self.scratch, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        preexec_fn=_die_with_parent)

    def alive(self):
        return self.process.poll() is None

    def call(self, function, args, worker):
        try:
            _send(self.process.stdin, pickle.dumps((function, args)))
            return pickle.loads(_receive(self.process.stdout))
        except (EOFError, OSError, ValueError):  # ValueError: closed meanwhile by _close_grader
            status = self.process.wait()
            stderr = Path(self.log.name).read_bytes().decode(errors="replace").strip()[-2000:] \
                if Path(self.log.name).exists() else ""
            self.close()
            raise GradingProcessDied(f"exit status {status}: {stderr}", worker) from None

    def close(self):
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=30)  # at the end of its input it exits, removing its scratch courses
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def _send(stream, data):
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError("the grading process closed its output")
    size, = struct.unpack("<Q", header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the grading process closed its output")
    return data


def _die_with_parent():
    """In the grading process, before it runs: killed when the worker that started it dies (Linux),
    so a lost worker's submission is not still being graded when it is tried again elsewhere."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _serve():
    """The grading process: run each pickled call from stdin, reply with its pickled outcome. What
    the calls print goes to stderr (fd 1 is pointed there), so it cannot corrupt the replies."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    while True:
        try:
            function, args = pickle.loads(_receive(requests))
        except EOFError:
            return
        try:
            outcome = function(*args)
        except Exception as error:  # noqa: BLE001 - sent back to the client as the task's error
            outcome = _Raised(error)
        try:
            data = pickle.dumps(outcome)
        except Exception as error:  # noqa: BLE001
            data = pickle.dumps(_Raised(RuntimeError(f"the task's result could not be sent back: {error!r}")))
        _send(replies, data)


# --------------------------------------------------------------------------- folders as bytes
def _regular(info):
    return info if info.isfile() or info.isdir() else None  # no links, devices or fifos


def _pack(folder):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        tar.add(str(folder), arcname=".", filter=_regular)
    return buffer.getvalue()


def _unpack(packed, folder):
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")


def _replace(folder, packed):
    """The client's `folder` becomes what the task left there (nothing, if `packed` is None)."""
    shutil.rmtree(folder, ignore_errors=True)
    if packed is not None:
        folder.parent.mkdir(parents=True, exist_ok=True)
        incoming = folder.with_name(f".{folder.name}.incoming-{os.getpid()}")
        shutil.rmtree(incoming, ignore_errors=True)
        _unpack(packed, incoming)
        incoming.rename(folder)


def _digest(folder):
    """A fingerprint of a folder's names, sizes and contents (None: no folder)."""
    if not folder.is_dir():
        return None
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def broken(error):
    """Whether `error`, from `run`, means the task was lost with its process (both pools)."""
    return isinstance(error, (WorkerLost, concurrent.futures.process.BrokenProcessPool))


if __name__ == "__main__":
    from course.cluster import _serve as serve  # not __main__'s copy: the outcome's classes must unpickle

    serve()
