"""The student's process: runs a submission's own cells and answers the judge's calls.

A submission's code (answer cells, its extra cells, the chapter's experiments as the student left
them) runs here and only here, beside the chapter's locked helper cells (its *drivers*). The judge
(`course.judge`), in another process, runs the tests; it asks this process for two things only,
over `course.wire`: run a cell (outputs come back, capped), and call a driver by name with plain
arguments (a plain value or an exception's name and message comes back).

Before it reads any student code the process locks itself down:
  * resource limits: memory (`memory_mb` of heap and anonymous mappings, RLIMIT_DATA; the
    address space only loosely, since Graphviz in WebAssembly reserves 4 GiB it never touches),
    CPU seconds, open files, file size, no core dumps, and a process count so that a fork bomb
    stops after a few dozen processes;
  * a uid of its own when started by root (root ignores the process limit; the uid also keeps it
    from signalling or writing as root), with no capabilities -- except, where the Python
    installation lies in a folder others cannot enter (under /root), the one to read files, so
    that it stays importable; Landlock then decides what may be read;
  * Landlock (`course.landlock`): reading only the Python installation, the system's libraries,
    a few files of /etc that Python needs and the minigrad package, writing only its own scratch
    folder, no TCP, no signals outside the sandbox.
    Solution notebooks, the gradebook and other students' submissions are out of its reach.
`launch` starts it; `terminate` kills it and every process it started.
"""

import contextlib
import ctypes
import fcntl
import io
import json
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field


SANDBOX_UID_BASE, SANDBOX_UIDS = 61000, 4000  # uids 61000..64999: sandboxes, when grading as root
# The files of /etc a sandbox may read: what the dynamic loader, Python and its libraries look up.
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "mime.types", "os-release")
MAX_OUTPUT_BYTES = 2 << 20  # of one cell's or call's output: more is cut, with a mark


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
    limits: dict = field(default_factory=dict)
    uid: int | None = None  # switch to this uid (when started as root)
    read_paths: list = field(default_factory=list)


# --------------------------------------------------------------------------- the judge's side
def read_paths():
    """Folders the sandbox may read: the Python installation, site-packages, minigrad, the system."""
    import minigrad

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.abspath(minigrad.__file__)),
             "/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt/conda", "/dev/null", "/dev/urandom",
             "/dev/zero", *(os.path.join("/etc", name) for name in ETC_FILES)}
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


def launch(sock_end, limits, zygote=None):
    """Start a sandbox serving `sock_end`, forked by `zygote` (a `Zygote`'s (path, token)) when
    given, else as a new Python process. Returns a `Sandbox`."""
    uid, claim = claim_uid()
    if zygote:
        pid, workdir = Zygote.fork(zygote, sock_end, dict(limits=asdict(limits), uid=uid))
        return Sandbox(pid, workdir, uid, None, claim)
    workdir = _workdir(uid)
    config = SandboxConfig(workdir=workdir, fd=sock_end.fileno(), limits=asdict(limits), uid=uid,
                           read_paths=read_paths())
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
    and minigrad again (over a second of CPU per notebook on the reference machine), and the
    chapter's `heavy` modules (see `HEAVY_MODULES`).

    Requests come over a Unix socket in the worker's private folder and carry a secret token
    (known to the worker and the judge kernels it starts, never to a sandbox): the socket of the
    new sandbox travels with the request (SCM_RIGHTS); the zygote answers with its pid and folder.
    """

    def __init__(self, folder, heavy=()):
        self.path = os.path.join(folder, "zygote.sock")
        self.token = secrets.token_hex(16)
        self.process = start_zygote(
            [sys.executable, "-I", "-c", _bootstrap("zygote_main"),
             json.dumps([self.path, read_paths(), checked_heavy(heavy)])],
            self.token, folder, environment(folder))

    @property
    def address(self):
        return (self.path, self.token)

    def close(self):
        stop_zygote(self.process)

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


def start_zygote(command, token, folder, env, pass_fds=()):
    """A preloaded parent (this Zygote, or `course.kernel_zygote`'s) started in `folder`, in its own
    session and silent, with its secret `token` on stdin: never on a command line, which any process
    may read."""
    process = subprocess.Popen(command, cwd=folder, env=env, pass_fds=pass_fds, stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    process.stdin.write(token.encode() + b"\n")
    process.stdin.close()
    return process


def stop_zygote(process):
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def die_with_parent(signum):
    """Have Linux send this process `signum` when its parent exits (PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)


# --------------------------------------------------------------------------- inside the sandbox
def main():
    config = SandboxConfig(**json.loads(sys.argv[1]))
    _serve(config, _preload())


def _serve(config, shell):
    import socket

    sock = socket.socket(fileno=config.fd)
    lock_down(config)
    sys.path.append(config.workdir)  # the submission's own modules, after everything preloaded
    Server(sock, shell).serve()


def zygote_main():
    """The zygote's loop (see `Zygote`): preload once, then fork a sandbox per request."""
    import socket
    import threading

    path, paths, heavy = json.loads(sys.argv[1])
    token = sys.stdin.readline().strip()
    die_with_parent(signal.SIGTERM)  # the worker's end is the zygote's
    shell = _preload()
    preload_heavy(heavy)
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
                config = SandboxConfig(workdir=workdir, fd=fds[0], limits=dict(request["limits"]), uid=uid,
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
                reread_settings()
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
    from minigrad import plain  # noqa: F401

    return StudentShell.instance()


# Modules too heavy to preload for every chapter: a class's two zygotes (this one and the judge
# kernels', `course.kernel_zygote`) import them only when its chapter's notebook does. numba's import
# and its compiler's first set-up cost each sandbox and each judge kernel of chapter 9 about a
# CPU-second (benchmarks/README.md); preloaded for every chapter, they would count against each
# sandbox's memory limit (RLIMIT_DATA counts the mappings a fork inherits) for nothing.
HEAVY_MODULES = ("numba",)


def heavy_imports(notebook_path):
    """The HEAVY_MODULES that a chapter's notebook imports in any code cell (the instructor's
    solution notebook: trusted code, read, never run here)."""
    import ast

    import nbformat
    from IPython.core.inputtransformer2 import TransformerManager

    imported = set()
    for cell in nbformat.read(str(notebook_path), as_version=4).cells:
        if cell.cell_type != "code":
            continue
        try:  # IPython's syntax (magics, `!`) made Python first, as the kernel would
            tree = ast.parse(TransformerManager().transform_cell(cell.source))
        except SyntaxError:
            continue  # the cell cannot run, so it imports nothing
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    return [name for name in HEAVY_MODULES if name in imported]


def checked_heavy(names):
    """`names` as a list, each one of HEAVY_MODULES (they reach a zygote's command line)."""
    unknown = sorted(set(names) - set(HEAVY_MODULES))
    if unknown:
        raise ValueError(f"zygote: {unknown} are not among the modules a zygote may preload {HEAVY_MODULES}")
    return list(names)


def preload_heavy(names, library=True):
    """Import `names` and do their one-time set-up once, in the zygote, instead of in every fork.

    For numba: minigrad's numba backend (unless `library` is false: a student's kernel imports its
    own minigrad), and one compile of a small array loop, which sets up the compiler (its CPU
    target, typing and LLVM) that a fork's first kernel would otherwise set up: ~0.3 CPU-s of the
    ~0.5 a sandbox's first `jit.compile` costs. That compile runs on this thread (no parallel
    target: a zygote must not start threads) and is not cached on disk.
    """
    if "numba" in checked_heavy(names):
        import math

        import numba
        import numpy

        if library:
            import minigrad.jit.backends.numba_backend  # noqa: F401

        def warm_up(x, out):
            for i in range(x.shape[0]):
                out[i] = math.tanh(x[i]) * 2.0

        x = numpy.ones(4)
        numba.njit(cache=False, error_model="numpy")(warm_up)(x, numpy.empty_like(x))


def reread_settings():
    """In a fork, once its environment is its own: numba read its NUMBA_* settings (the cache
    folder among them) from the zygote's environment when the zygote imported it."""
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.core.config.reload_config()


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
    """Switch from root to `uid` with no capabilities, or only CAP_DAC_READ_SEARCH where the
    Python installation cannot be reached otherwise (Landlock still limits what is read)."""
    keep = 0 if _others_can_enter(sys.base_prefix) else 1 << _CAP_DAC_READ_SEARCH
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_KEEPCAPS, 1 if keep else 0, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if keep:
        header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
        data = (_CapData * 2)()
        data[0].effective = data[0].permitted = keep
        if libc.capset(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "capset failed")


def _others_can_enter(path):
    """Whether a user with no privileges can reach `path` (every folder above it is o+x)."""
    path = os.path.abspath(path)
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        parent = os.path.dirname(path)
        if parent == path:
            return True
        path = parent


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
    """Answers the judge: `("exec", source)` runs a cell, `("call", name, args, seconds)` calls a
    driver. Replies are plain data; what cannot be sent is refused, never half sent."""

    def __init__(self, sock, shell):
        self.sock = sock
        self.shell = shell

    def serve(self):
        from course import wire

        while True:
            try:
                message = wire.recv(self.sock)
            except (wire.PeerClosed, wire.WireError):
                os._exit(0)
            try:
                reply = self.handle(message)
            except MemoryError:
                os._exit(3)  # out of memory outside the student's code: the judge restarts the sandbox
            self.send(reply)

    def send(self, reply):
        from course import wire
        from minigrad.plain import NotPlainData

        try:
            wire.send(self.sock, reply)
        except NotPlainData as error:
            if reply[0] == "done":
                reply = ("done", [], ("OutputError", f"the cell's output could not be sent: {error}"[:2000], []))
            else:
                reply = ("refused", f"{str(error)[:2000]}")
            wire.send(self.sock, reply)
        except MemoryError:
            os._exit(3)

    def handle(self, message):
        if type(message) is tuple and len(message) == 2 and message[0] == "exec" and type(message[1]) is str:
            return self.run_cell(message[1])
        if type(message) is tuple and len(message) == 4 and message[0] == "call" and type(message[1]) is str \
                and type(message[2]) is tuple:
            return self.call(*message[1:])
        return ("refused", "the sandbox does not understand the judge's request")

    def call(self, name, args, seconds):
        """A driver, by name, with the student's output discarded (it could show hidden tests' inputs)."""
        from minigrad.testing import _grad_mode, _time_limit

        driver = self.shell.user_ns.get(name)
        saved = _grad_mode()
        with _capture() as sink:
            try:
                if not callable(driver):
                    raise NameError(f"the test's helper {name!r} is not defined (was a locked cell deleted or edited?)")
                with _time_limit(seconds if type(seconds) in (int, float) else None, name):
                    value = driver(*args)
                reply = ("return", value)
            except BaseException as error:  # noqa: BLE001 - everything the student's code raises goes back
                reply = ("raise", *_describe(error))
            finally:
                _grad_mode(saved)  # an alarm can cut a `with no_grad()` between its two halves
        del sink
        return reply

    def run_cell(self, source):
        """("done", outputs, error): a cell's outputs (capped) and (name, message, traceback) or None."""
        from IPython.utils.capture import capture_output

        shell = self.shell
        shell.results, shell.last_error = [], None
        with _capture() as sink, capture_output(stdout=False, stderr=False, display=True) as captured:
            shell.run_cell(source, store_history=True)
        outputs = sink.outputs()
        for data, metadata in [(o.data, o.metadata) for o in captured.outputs] + \
                [(r["data"], r["metadata"]) for r in shell.results]:
            sink.display(data, metadata, outputs)
        sink.mark(outputs)
        error = shell.last_error
        if error is not None:
            ename, evalue, lines = error
            error = (str(ename)[:200], str(evalue)[:5000], [str(line)[:5000] for line in lines[-200:]])
        return ("done", outputs, error)


_MIME_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg", "image/svg+xml")


class _Sink:
    """stdout and stderr of a cell or call, and its rich outputs, up to MAX_OUTPUT_BYTES in all."""

    def __init__(self):
        self.budget = MAX_OUTPUT_BYTES
        self.streams = []  # [name, text] in order, neighbours of one stream merged
        self.cut = False

    def writer(self, name):
        sink = self

        class Stream(io.TextIOBase):
            def write(self, text):
                sink.write(name, str(text))
                return len(text)

        return Stream()

    def write(self, name, text):
        if self.budget <= 0:
            self.cut = True
            return
        text = text[: self.budget]
        self.budget -= len(text)
        if self.streams and self.streams[-1][0] == name:
            self.streams[-1][1] += text
        else:
            self.streams.append([name, text])

    def display(self, data, metadata, outputs):
        kept = {}
        for mime, value in (data or {}).items():
            if mime in _MIME_TYPES and type(value) in (str, bytes) and len(value) <= self.budget:
                kept[mime] = value
                self.budget -= len(value)
        if len(kept) < len(data or {}):
            self.cut = True
        if kept:
            outputs.append(("display", kept, metadata if type(metadata) is dict and len(repr(metadata)) < 2000 else {}))

    def outputs(self):
        return [("stream", name, text) for name, text in self.streams]

    def mark(self, outputs):
        if self.cut:
            outputs.append(("stream", "stderr", f"\n[output truncated: more than {MAX_OUTPUT_BYTES:,} bytes]\n"))
        return outputs


@contextlib.contextmanager
def _capture():
    sink = _Sink()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = sink.writer("stdout"), sink.writer("stderr")
    try:
        yield sink
    finally:
        sys.stdout, sys.stderr = saved


def _describe(error):
    """(exception name, message, the student's traceback as text) for the judge."""
    try:
        frames = [frame for frame in traceback.extract_tb(error.__traceback__)
                  if not frame.filename.startswith(os.path.dirname(os.path.abspath(__file__)))]
        text = "".join(traceback.format_list(frames))[-20000:] if frames else ""
        message = str(error)[:5000]
    except BaseException:  # noqa: BLE001 - a student's exception whose __str__ itself fails
        text, message = "", "(its message could not be read)"
    return type(error).__name__[:200], message, text
