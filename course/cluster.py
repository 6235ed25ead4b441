"""Grading on a Dask cluster: a drop-in for `course.autograde._Pool` that runs each task on
a `dask.distributed` worker.

    minigrad-course autograde CHAPTER --cluster tcp://scheduler:8786   an existing cluster
    minigrad-course autograde CHAPTER --cluster local:4                a local one, 4 workers

An existing cluster, for example:

    DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1 dask scheduler --host 10.0.0.1
    dask worker tcp://10.0.0.1:8786 --nworkers 4 --nthreads 1       (as root, on each grading machine)

`DaskPool(address).run({name: (function, args)})` yields `(name, result, exception)` as the tasks
finish, like `_Pool.run`. Each task runs in a fresh Python process started by the worker (so no
state of one class's grading — a worker's scratch course, its sandbox zygote — survives into the
next, and a dying grading process does not take the worker with it), as the worker's user (run
`dask worker` as root where the sandbox switches uids, as for the local pool).

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
import subprocess
import sys
import tarfile
import tempfile
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
        future = self.client.submit(_run_on_worker, function, args, places, key=f"grade-{name}-{uuid.uuid4().hex}",
                                    pure=False, **where)
        return future, {"name": name, "function": function, "args": args, "attempt": attempt}


# --------------------------------------------------------------------------- on the worker
class _Raised:
    """An exception the task's function raised (a result, not a failure of the worker)."""

    def __init__(self, error):
        self.error = error


def _run_on_worker(function, args, places):
    """Unpack the task's folders, run `function(*args)` in a fresh process, pack what changed."""
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
        request, reply = scratch / "request.pickle", scratch / "reply.pickle"
        request.write_bytes(pickle.dumps((function, tuple(args))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # the worker's imports
        done = subprocess.run([sys.executable, "-m", "course.cluster", str(request), str(reply)], cwd=scratch,
                              env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                              preexec_fn=_die_with_parent)
        if not reply.exists():
            raise GradingProcessDied(f"exit status {done.returncode}: {(done.stderr or '').strip()[-2000:]}", worker)
        outcome = pickle.loads(reply.read_bytes())
        folders = {index: (_pack(scratch / f"arg{index}") if (scratch / f"arg{index}").is_dir() else None)
                   for index in places if _digest(scratch / f"arg{index}") != before[index]}
        return outcome, folders


def _die_with_parent():
    """In the task's process, before it runs: killed when the worker that started it dies (Linux),
    so a lost worker's submission is not still being graded when it is tried again elsewhere."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _child(request, reply):
    """The task's own process: run the pickled call, write the pickled outcome."""
    function, args = pickle.loads(Path(request).read_bytes())
    try:
        outcome = function(*args)
    except Exception as error:  # noqa: BLE001 - sent back to the client as the task's error
        outcome = _Raised(error)
    try:
        data = pickle.dumps(outcome)
    except Exception as error:  # noqa: BLE001
        data = pickle.dumps(_Raised(RuntimeError(f"the task's result could not be sent back: {error!r}")))
    partial = Path(reply).with_suffix(".partial")
    partial.write_bytes(data)
    partial.rename(reply)


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
    from course.cluster import _child as child  # not __main__'s copy: the outcome's classes must unpickle

    child(*sys.argv[1:3])
