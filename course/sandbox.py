"""The student's process: runs a submission's own cells and answers the judge's calls.

A submission's code (answer cells, its extra cells, the chapter's experiments as the student left
them) runs here and only here. The judge (`course.judge`), in another process, runs the tests and
calls the student's functions through `course.wire`, which lets nothing but plain data back.

Before it reads any student code the process locks itself down:
  * resource limits: memory (`memory_mb` of heap and anonymous mappings, RLIMIT_DATA; the
    address space only loosely, since Graphviz in WebAssembly reserves 4 GiB it never touches),
    CPU seconds, open files, file size, no core dumps, and a process count so that a fork bomb
    stops after a few dozen processes;
  * a uid of its own when started by root (root ignores the process limit; the uid also keeps it
    from signalling or writing as root), keeping only the capability to read files so that the
    Python installation under /root stays importable;
  * Landlock (`course.landlock`): reading only the Python installation, the system folders and the
    minigrad package, writing only its own scratch folder, no TCP, no signals outside the sandbox.
    Solution notebooks, the gradebook and other students' submissions are out of its reach.
`launch` starts it; `terminate` kills it and every process it started.
"""

import contextlib
import ctypes
import fcntl
import io
import json
import os
import pickle
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import types
from dataclasses import asdict, dataclass, field

import numpy as np

SANDBOX_UID_BASE, SANDBOX_UIDS = 61000, 4000  # uids 61000..64999: sandboxes, when grading as root


@dataclass
class Limits:
    """What one student's process may use. Small by default: a class is graded a few at a time
    on a shared machine, and a chapter's code needs little (a 100,000-node graph is ~60 MB)."""

    memory_mb: int = 1024  # heap and private anonymous mappings (RLIMIT_DATA): what allocations use
    address_space_mb: int = 16384  # RLIMIT_AS: reservations (WebAssembly's 4 GiB) pass, runaway mappings do not
    cpu_seconds: int = 600  # CPU time of the process (RLIMIT_CPU); wall-clock limits are the judge's
    processes: int = 24  # processes and threads of the sandbox's uid (RLIMIT_NPROC)
    open_files: int = 128
    file_mb: int = 64  # largest file it may write (RLIMIT_FSIZE)


@dataclass
class SandboxConfig:
    workdir: str
    fd: int
    graded: list = field(default_factory=list)  # the chapter's graded names
    limits: dict = field(default_factory=dict)
    uid: int | None = None  # switch to this uid (when started as root)
    first_key: int = 1  # where this sandbox's wire keys start (a restarted sandbox never reuses keys)
    read_paths: list = field(default_factory=list)


# --------------------------------------------------------------------------- the judge's side
def read_paths():
    """Folders the sandbox may read: the Python installation, site-packages, minigrad, the system."""
    import minigrad

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.abspath(minigrad.__file__)),
             "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt/conda", "/dev/null", "/dev/urandom",
             "/dev/zero"}
    for entry in sys.path:
        if entry and os.path.isdir(entry) and "site-packages" in entry:
            paths.add(entry)
    return sorted(paths)


@dataclass
class Sandbox:
    """A running sandbox, as the judge knows it."""

    pid: int
    workdir: str
    uid: int | None = None
    popen: subprocess.Popen | None = None  # None when a zygote forked it
    claim: int | None = None  # the file descriptor holding `uid` (see `claim_uid`)


def claim_uid():
    """(a uid no other running sandbox has, the descriptor that holds it), or (None, None) when
    not root. A claim is a lock on a file named after the uid; it ends when the descriptor
    closes, or with the process that held it, so a crashed grader leaves nothing claimed."""
    if os.geteuid() != 0:
        return None, None
    folder = os.path.join(tempfile.gettempdir(), "minigrad-sandbox-uids")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    start = (os.getpid() * 7) % SANDBOX_UIDS
    for offset in range(SANDBOX_UIDS):
        uid = SANDBOX_UID_BASE + (start + offset) % SANDBOX_UIDS
        fd = os.open(os.path.join(folder, str(uid)), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return uid, fd
    raise RuntimeError("no free sandbox uid: too many sandboxes at once")


def environment(workdir):
    return {
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
        "NUMBA_CACHE_DIR": os.path.join(workdir, ".numba"), "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "MPLCONFIGDIR": _matplotlib_cache(),
    }


def _workdir(uid):
    workdir = tempfile.mkdtemp(prefix="minigrad-sandbox-")
    if uid is not None:
        os.chown(workdir, uid, uid)
    return workdir


def launch(sock_end, limits, graded, generation, zygote=None):
    """Start a sandbox serving `sock_end`, forked by `zygote` (a `Zygote`'s (path, token)) when
    given, else as a new Python process. Returns a `Sandbox`."""
    uid, claim = claim_uid()
    first_key = 2 * (generation << 36) + 1
    if zygote:
        pid, workdir = Zygote.fork(zygote, sock_end, dict(graded=list(graded), limits=asdict(limits), uid=uid,
                                                          first_key=first_key))
        return Sandbox(pid, workdir, uid, None, claim)
    workdir = _workdir(uid)
    config = SandboxConfig(workdir=workdir, fd=sock_end.fileno(), graded=list(graded), limits=asdict(limits), uid=uid,
                           first_key=first_key, read_paths=read_paths())
    process = subprocess.Popen(
        [sys.executable, "-I", "-c", _bootstrap("main"), json.dumps(asdict(config))],
        cwd=workdir, env=environment(workdir), pass_fds=[sock_end.fileno()], stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    return Sandbox(process.pid, workdir, uid, process, claim)


def _bootstrap(function):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return f"import sys; sys.path.insert(0, {root!r}); from course.sandbox import {function}; {function}()"


def _matplotlib_cache():
    """Matplotlib's cache folder (its font list), read by the sandbox before it locks itself in."""
    try:
        import matplotlib

        return matplotlib.get_cachedir()
    except ImportError:
        return tempfile.gettempdir()


def terminate(sandbox):
    """Kill the sandbox and everything it started (all processes of its uid, or its session)."""
    if sandbox is None:
        return
    if sandbox.uid is not None:
        killer = os.fork()
        if killer == 0:  # a child that becomes the sandbox's uid and kills every process of that uid
            try:
                os.setgid(sandbox.uid)
                os.setuid(sandbox.uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(killer, 0)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(sandbox.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(sandbox.pid, signal.SIGKILL)
    if sandbox.popen is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            sandbox.popen.wait(timeout=5)
    if sandbox.claim is not None:
        os.close(sandbox.claim)
        sandbox.claim = None
    shutil.rmtree(sandbox.workdir, ignore_errors=True)


class Zygote:
    """A preloaded sandbox parent: one per grading worker, it forks a fresh sandbox for each
    notebook in milliseconds instead of starting Python and importing numpy, matplotlib, IPython
    and minigrad again (over a second of CPU per notebook on the reference machine).

    Requests come over a Unix socket in the worker's private folder and carry a secret token
    (known to the worker and the judge kernels it starts, never to a sandbox): the socket of the
    new sandbox travels with the request (SCM_RIGHTS); the zygote answers with its pid and folder.
    """

    def __init__(self, folder):
        self.path = os.path.join(folder, "zygote.sock")
        self.token = secrets.token_hex(16)
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _bootstrap("zygote_main"), json.dumps([self.path, self.token, read_paths()])],
            cwd=folder, env=environment(folder), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )

    @property
    def address(self):
        return (self.path, self.token)

    def close(self):
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)

    @staticmethod
    def fork(address, sock_end, request, timeout=60):
        """Ask the zygote at `address` for a sandbox on `sock_end`; returns (pid, workdir)."""
        import socket

        path, token = address
        deadline = time.monotonic() + timeout
        while True:  # the zygote may still be importing
            try:
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                client.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                client.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        with client:
            client.settimeout(timeout)
            socket.send_fds(client, [json.dumps({**request, "token": token}).encode()], [sock_end.fileno()])
            reply = json.loads(client.makefile("rb").readline())
        if "error" in reply:
            raise RuntimeError(f"the sandbox zygote refused: {reply['error']}")
        return reply["pid"], reply["workdir"]


# --------------------------------------------------------------------------- inside the sandbox
def main():
    config = SandboxConfig(**json.loads(sys.argv[1]))
    _serve(config, _preload())


def _serve(config, shell):
    import socket

    sock = socket.socket(fileno=config.fd)
    lock_down(config)
    sys.path.append(config.workdir)  # the submission's own modules, after everything preloaded
    Server(sock, shell, config).serve()


def zygote_main():
    """The zygote's loop (see `Zygote`): preload once, then fork a sandbox per request."""
    import socket
    import threading

    path, token, paths = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the worker's end is the zygote's
    shell = _preload()
    if threading.active_count() != 1:
        raise RuntimeError("the zygote must not run threads: forking would copy them half-done")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the sandboxes
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    while True:
        connection, _ = server.accept()
        with connection:
            message, fds, _, _ = socket.recv_fds(connection, 1 << 16, 1)
            try:
                request = json.loads(message)
                if not fds or not secrets.compare_digest(str(request.pop("token", "")), token):
                    raise PermissionError("bad token")
                uid = request.get("uid")
                if uid is not None and not (SANDBOX_UID_BASE <= uid < SANDBOX_UID_BASE + SANDBOX_UIDS):
                    raise PermissionError("bad uid")
                workdir = _workdir(uid)
                config = SandboxConfig(workdir=workdir, fd=fds[0], graded=list(request["graded"]),
                                       limits=dict(request["limits"]), uid=uid, first_key=int(request["first_key"]),
                                       read_paths=paths)
            except Exception as error:  # noqa: BLE001 - a bad request is answered, never fatal
                for fd in fds:
                    os.close(fd)
                connection.sendall(json.dumps({"error": str(error)}).encode() + b"\n")
                continue
            pid = os.fork()
            if pid == 0:
                server.close()
                connection.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.setsid()
                os.environ.update(environment(workdir))
                os.chdir(workdir)
                try:
                    _serve(config, shell)
                finally:
                    os._exit(1)
            os.close(fds[0])
            connection.sendall(json.dumps({"pid": pid, "workdir": workdir}).encode() + b"\n")


def _preload():
    """Import what a chapter's cells use while files may still be read (matplotlib's font list)."""
    import numpy  # noqa: F401

    import minigrad  # noqa: F401
    import minigrad.nn  # noqa: F401
    import minigrad.optim  # noqa: F401
    import minigrad.testing  # noqa: F401

    with contextlib.suppress(ImportError):
        import matplotlib.pyplot  # noqa: F401
        import tqdm.auto  # noqa: F401
    from course import wire  # noqa: F401

    return StudentShell.instance()


def lock_down(config):
    """Resource limits, a uid of its own (as root), then Landlock: before any student code runs."""
    from course import landlock

    limits = Limits(**config.limits)
    mb = 1 << 20
    for name, value in [("RLIMIT_DATA", limits.memory_mb * mb), ("RLIMIT_AS", limits.address_space_mb * mb),
                        ("RLIMIT_CPU", limits.cpu_seconds),
                        ("RLIMIT_NOFILE", limits.open_files), ("RLIMIT_FSIZE", limits.file_mb * mb),
                        ("RLIMIT_CORE", 0)]:
        resource.setrlimit(getattr(resource, name), (value, value))
    if config.uid is not None:
        _become(config.uid)
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    else:
        running = _processes_of(os.getuid())
        resource.setrlimit(resource.RLIMIT_NPROC, (running + limits.processes,) * 2)
    if landlock.abi() >= 1:
        landlock.restrict(read=config.read_paths, write=[config.workdir])
    os.chdir(config.workdir)


_CAP_DAC_READ_SEARCH = 2
_PR_SET_KEEPCAPS = 8
_PR_SET_PDEATHSIG = 1


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _become(uid):
    """Switch from root to `uid`, keeping only CAP_DAC_READ_SEARCH (read any file Landlock allows)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
    data = (_CapData * 2)()
    data[0].effective = data[0].permitted = 1 << _CAP_DAC_READ_SEARCH
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def _processes_of(uid):
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
    return count


def _student_shell_class():
    from IPython.core.displayhook import DisplayHook
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets import Type

    class ResultHook(DisplayHook):
        """Keeps a cell's result as a rich output (an execute result) instead of printing it."""

        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            self.shell.results.append({"data": format_dict, "metadata": md_dict or {}})

    class StudentShell(InteractiveShell):
        """IPython without a terminal: results and errors are kept for the judge."""

        displayhook_class = Type(ResultHook)
        results = []
        last_error = None

        def _showtraceback(self, etype, evalue, stb):
            self.last_error = (getattr(etype, "__name__", "Error"), str(evalue), list(stb))

        def enable_gui(self, gui=None):
            pass

    return StudentShell


class _ShellFactory:
    """StudentShell.instance(), made on first use (IPython is imported only in the sandbox)."""

    @staticmethod
    def instance():
        from traitlets.config import Config

        config = Config()
        config.HistoryManager.hist_file = ":memory:"  # no history database, no history-saving thread
        shell = _student_shell_class().instance(config=config)
        with contextlib.suppress(Exception):
            shell.enable_matplotlib("inline")
        return shell


StudentShell = _ShellFactory


class Server:
    """Answers the judge: run a cell, look up a name, call a function, use a graded object."""

    MAX_TEXT = 100_000  # characters of output kept per cell or call

    def __init__(self, sock, shell, config):
        from course import wire

        self.wire = wire
        self.shell = shell
        self.namespace = shell.user_ns
        self.graded = set(config.graded)
        self.endpoint = wire.Endpoint(sock, wire.STUDENT, False, self.export, self.judge_object,
                                      first_key=config.first_key)

    # ------------------------------------------------------------------ what leaves the sandbox
    def export(self, obj, key_for):
        """A handle descriptor for a function or a graded (or minigrad) object; anything else of
        the student's own making cannot be sent."""
        if isinstance(obj, type) and self._handled_class(obj):
            return ("class", _name(obj))
        if self._handled_class(type(obj)):
            return ("instance", key_for(type(obj)), _name(type(obj)))
        function = isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType))
        if function and (getattr(obj, "__module__", None) or "__main__").split(".")[0] in ("__main__", "minigrad"):
            return ("function", _name(obj))  # the student's or the library's (a graded class's method)
        if self.wire.by_reference(obj):
            return None  # a module-level function or class by name (numpy's internals): the judge
            # accepts only the few it needs to rebuild plain data
        if function:
            return ("function", _name(obj))
        raise self.wire.NotPlainData(
            f"a {_name(type(obj))} object cannot be handed to the grader: return plain data (numbers, strings, "
            f"lists, tuples, dicts, numpy arrays) or minigrad tensors"
        )

    def _handled_class(self, cls):
        """Graded classes, and minigrad's classes that do not travel by value, stay here as handles."""
        if any(self.namespace.get(name) is cls for name in self.graded):
            return True
        return (getattr(cls, "__module__", "") or "").split(".")[0] == "minigrad" and not self.wire.is_value_class(
            cls, self.endpoint.value_types)

    def judge_object(self, key, descriptor):
        return JudgeObject(self, key, descriptor)

    # ------------------------------------------------------------------ the loop
    def serve(self):
        while True:
            try:
                self.endpoint.forget_arrays()  # the judge forgets them after each call, too
                message = self.endpoint.recv()
                self.serve_one(message)
            except self.wire.PeerClosed:
                os._exit(0)
            except MemoryError:
                os._exit(3)  # out of memory outside a cell: the judge restarts the sandbox and retries

    def serve_one(self, message):
        kind, args, context = message
        stdout, stderr = io.StringIO(), io.StringIO()
        extras = {}
        arrays = dict(self.endpoint.received_arrays)
        before = {key: array.copy() for key, array in arrays.items()}
        arguments = _mutable_arguments(kind, args)
        counter, counting = None, contextlib.nullcontext()
        if context and context.get("count_vjps"):
            from minigrad.autograd import count_vjps

            counting = count_vjps()  # the judge's test counts VJP evaluations: count them here for it
        try:
            with _redirect(stdout, stderr), counting as counted:
                counter = counted
                self._enter(context)
                value = self.run_cell(*args) if kind == "exec" else self.dispatch(kind, args)
            reply = ("return", value)
        except MemoryError:
            raise
        except BaseException as error:  # noqa: BLE001 - everything the student's code raises goes back
            reply = ("raise", *_describe(error))
        if counter is not None:
            extras["vjps"] = (counter.vjps, counter.discarded)
        extras.update(stdout=stdout.getvalue()[: self.MAX_TEXT], stderr=stderr.getvalue()[: self.MAX_TEXT],
                      recursionlimit=sys.getrecursionlimit(), observed=self._observed(),
                      arrays={key: a for key, a in arrays.items() if _written(a, before[key])},
                      args={where: obj for where, (obj, state) in arguments.items() if _fingerprint(obj) != state})
        try:
            self.endpoint.send(reply + (extras,))
        except (self.wire.NotPlainData, TypeError, ValueError, RecursionError) as error:
            self.endpoint.send(("refused", str(error)[:2000], extras))

    def request(self, message):
        """A call into the judge (a callback) from the student's code; serves the judge's nested
        calls while it waits."""
        from minigrad.grad_mode import state

        self.endpoint.send((message[0], message[1:], {"grad": state.grad_enabled}))  # no_grad holds in callbacks too
        while True:
            reply = self.endpoint.recv()
            if reply[0] == "return":
                return reply[1]
            if reply[0] == "raise":
                raise _rebuild(reply[1], reply[2])
            self.serve_one(reply)

    def _enter(self, context):
        """Mirror the judge's state for the call: recording on or off, the recursion limit."""
        if context:
            from minigrad.grad_mode import state

            state.grad_enabled = bool(context.get("grad", True))
            if context.get("recursionlimit"):
                sys.setrecursionlimit(int(context["recursionlimit"]))

    def _observed(self):
        counts = {}
        for key, inputs in self.endpoint.observed.items():
            seen = getattr(inputs, "iterations", 0)
            new = seen - getattr(inputs, "reported", 0)
            if new:
                counts[key] = new
                inputs.reported = seen
        return counts

    def dispatch(self, kind, args):
        if kind == "callname":
            name, positional, keywords = args
            if name not in self.namespace:
                raise NameError(f"name {name!r} is not defined")
            return self.namespace[name](*positional, **keywords)
        if kind == "lookup":
            (name,) = args
            if name not in self.namespace:
                raise NameError(f"name {name!r} is not defined")
            return self.namespace[name]
        if kind == "call":
            target, positional, keywords = args
            return target(*positional, **keywords)
        if kind == "getattr":
            target, name = args
            return getattr(target, name)
        if kind == "setattr":
            target, name, value = args
            setattr(target, name, value)
            return None
        if kind == "op":
            target, name, operands = args
            return getattr(type(target), name)(target, *operands)
        raise ValueError(f"unknown request {kind!r}")

    # ------------------------------------------------------------------ cells
    def run_cell(self, source):
        """Run one cell like a kernel would; its outputs as nbformat-like dicts."""
        from IPython.utils.capture import capture_output

        shell = self.shell
        shell.results, shell.last_error = [], None
        with capture_output(stdout=False, stderr=False, display=True) as captured:
            shell.run_cell(source, store_history=True)
        outputs = [{"output_type": "display_data", "data": o.data, "metadata": o.metadata or {}}
                   for o in captured.outputs]
        outputs += [{"output_type": "execute_result", **r} for r in shell.results]
        error = shell.last_error
        return {"outputs": outputs, "error": error}


class JudgeObject:
    """The sandbox's stand-in for one of the judge's objects (a function passed to the student's
    function, a model): calling it or using it asks the judge, which runs its own code."""

    __slots__ = ("_server", "_key", "_descriptor")

    def __init__(self, server, key, descriptor):
        object.__setattr__(self, "_server", server)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_descriptor", descriptor)

    def __call__(self, *args, **kwargs):
        return self._server.request(("call", self, args, kwargs))

    def __getattr__(self, name):
        return self._server.request(("getattr", self, name))

    def __iter__(self):
        return iter(self._server.request(("op", self, "__iter__", ())))  # the judge sends the items as a list

    def __repr__(self):
        return f"<the grader's {self._descriptor[1] if len(self._descriptor) > 1 else 'object'}>"


def _judge_operator(name):
    def operator(self, *operands):
        return self._server.request(("op", self, name, operands))

    operator.__name__ = name
    return operator


for _name_ in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
               "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__", "__getitem__",
               "__len__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__bool__",
               "__float__", "__int__", "__index__"):
    setattr(JudgeObject, _name_, _judge_operator(_name_))


def _mutable_arguments(kind, args):
    """{position or keyword: (argument, fingerprint)} of a call's list, dict, set and value-class
    arguments, to tell the judge which ones the student's code changed."""
    if kind not in ("call", "callname"):
        return {}
    from course import wire

    _, positional, keywords = args
    found = {}
    for where, obj in [*enumerate(positional), *keywords.items()]:
        if type(obj) in (list, dict, set) or wire.is_value_class(type(obj), wire.value_classes()):
            found[where] = (obj, _fingerprint(obj))
    return found


def _fingerprint(obj):
    """The structure of `obj`, with tensors and the judge's objects by identity."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    from minigrad.tensor import Tensor

    pickler.persistent_id = lambda item: ("id", id(item)) if isinstance(item, (JudgeObject, Tensor)) else None
    try:
        pickler.dump(obj)
    except Exception:  # noqa: BLE001 - something that does not pickle is not watched
        return None
    return buffer.getvalue()


def _written(array, before):
    """Whether the student's code wrote into an array argument (shape or contents changed)."""
    return array.shape != before.shape or not np.array_equal(array, before, equal_nan=array.dtype.kind in "fc")


def _name(obj):
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return str(name)[:200]


def _describe(error):
    """(exception name, message, the student's traceback as text) for the judge."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith(os.path.dirname(os.path.abspath(__file__)))]
    text = "".join(traceback.format_list(frames)) if frames else ""
    return type(error).__name__, str(error)[:5000], text[-20000:]


def _rebuild(name, message):
    import builtins

    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        with contextlib.suppress(Exception):
            return cls(message)
    return RuntimeError(f"{name}: {message}")


@contextlib.contextmanager
def _redirect(stdout, stderr):
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved

