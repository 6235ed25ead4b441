"""Judge kernels forked from a preloaded parent, as the sandboxes are (`course.sandbox.Zygote`).

Each submission is judged in a fresh IPython kernel. Started the usual way, that kernel spends most
of its CPU importing: Python, ipykernel, numpy, matplotlib and minigrad, about 0.7 of the judge's
1.0 CPU-s per submission on the reference machine. One `KernelZygote` per grading worker imports
them once and forks a kernel per submission.

jupyter_client still starts one process per kernel, and sees what it always sees: a process it can
poll, signal and kill. That process (`RELAY`, a few lines of bare Python) asks the zygote for a
kernel, forwards the signals it gets to the kernel's process group, and exits with the kernel's
status. When the relay dies, killed included, the zygote kills the kernel: nothing outlives it.

The zygote is the grader's own trusted code, like the judge kernels it forks. It forks only for a
request that carries its secret token, which the relay reads from its environment (never a command
line) and does not pass on; the sandboxes, which run as other users under Landlock, can read
neither.

The same zygote, preloading third-party modules only (`library=False`), starts the kernels of the
notebooks a student runs on their own machine (`minigrad-course mine`, the bundle's checks in the
suite; `student_kernels`): such a kernel imports minigrad itself, from the notebook's folder where a
bundle ships its own copy, and is otherwise as fresh as a kernel jupyter_client starts.
"""

import contextlib
import gc
import json
import os
import secrets
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading

from traitlets import List

from .kernels import ReadyKernelManager
from .sandbox import checked_heavy, die_with_parent, preload_heavy, reread_settings, start_zygote, stop_zygote

TOKEN_VARIABLE = "MINIGRAD_KERNEL_ZYGOTE"
_KERNEL_COMMAND = ["-m", "ipykernel_launcher"]

# The kernel process jupyter_client starts (`python -I -S -c RELAY -f <connection file>`): only the
# standard library, so that it starts in milliseconds.
RELAY = """
import json, os, signal, socket, sys
path, token = json.loads(os.environ.pop("%s"))
zygote = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
zygote.connect(path)
request = {"token": token, "argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}
socket.send_fds(zygote, [json.dumps(request).encode() + b"\\n"], [0, 1, 2])
replies = zygote.makefile("rb")
reply = json.loads(replies.readline())
if "error" in reply:
    sys.exit("the judge kernel zygote refused: " + reply["error"])
kernel = reply["pid"]
def forward(signum, frame):
    try:
        os.killpg(kernel, signum)
    except ProcessLookupError:
        pass
for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(signum, forward)
line = replies.readline()
os._exit(json.loads(line)["status"] if line else 1)
""" % TOKEN_VARIABLE


class KernelZygote:
    """The zygote process of one grading worker; `address` is what its kernel manager needs.
    `library`: whether it preloads minigrad and the judge (a judge kernel's) or not (a student's)."""

    def __init__(self, folder, heavy=(), library=True):
        heavy = checked_heavy(heavy)
        self.path = os.path.join(folder, "kernel-zygote.sock")
        self.token = secrets.token_hex(16)
        # Bound here, before the zygote starts: a kernel asked for while it is still importing waits
        # in the socket's backlog instead of finding no socket.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            server.bind(self.path)
            server.listen(16)
            self.process = start_zygote(
                [sys.executable, "-c", f"from course.kernel_zygote import serve; serve({server.fileno()}, {heavy!r}, {bool(library)!r})"],
                self.token, folder, _zygote_environment(), pass_fds=[server.fileno()])

    @property
    def address(self):
        return [self.path, self.token]

    def close(self):
        stop_zygote(self.process)


@contextlib.contextmanager
def student_kernels(heavy=()):
    """A KernelZygote for notebooks run as the student's own kernel runs them, preloading `heavy`
    (HEAVY_MODULES) beside the third-party modules, for `course.bundle.run_notebook`; None where
    the zygote cannot run (it needs Linux), and run_notebook then starts plain kernels."""
    if not sys.platform.startswith("linux"):
        yield None
        return
    folder = tempfile.mkdtemp(prefix="minigrad-kernels-")  # short: the socket's path must fit ~100 bytes
    zygote = KernelZygote(folder, heavy, library=False)
    try:
        yield zygote
    finally:
        zygote.close()
        shutil.rmtree(folder, ignore_errors=True)


class ZygoteKernelManager(ReadyKernelManager):
    """nbclient's kernel manager, starting the relay instead of `python -m ipykernel_launcher`."""

    zygote = List(help="[socket path, token] of a KernelZygote").tag(config=True)

    def format_kernel_cmd(self, extra_arguments=None):
        command = super().format_kernel_cmd(extra_arguments)
        if command[1:3] != _KERNEL_COMMAND:
            raise RuntimeError(f"the judge kernel zygote forks ipykernel only, not {command}")
        return [sys.executable, "-I", "-S", "-c", RELAY, *command[3:]]

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        kw["env"] = {**kw.get("env", os.environ), TOKEN_VARIABLE: json.dumps(list(self.zygote))}
        await super()._async_launch_kernel(kernel_cmd, **kw)


# --------------------------------------------------------------------------- inside the zygote
def _zygote_environment():
    # What ipykernel would set at start-up, set before matplotlib reads it at import; and debugpy's
    # check of frozen modules, which only warns (on the zygote's stderr) that breakpoints may be missed.
    return {**os.environ, "MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}


def _preload(library):
    """What every kernel imports: ipykernel and the chapters' setup cells' modules; for a judge
    kernel (`library`) also minigrad and the judge, never for a student's, which imports its own."""
    import ipykernel.debugger  # noqa: F401  (debugpy: each kernel's start imported it, 0.1 CPU-s)
    import ipykernel.kernelapp  # noqa: F401
    import numpy  # noqa: F401

    if library:
        import minigrad  # noqa: F401
        import minigrad.nn  # noqa: F401
        import minigrad.optim  # noqa: F401
        import minigrad.testing  # noqa: F401
        from course import judge, wire  # noqa: F401

    # Not tqdm.auto nor matplotlib's inline backend: both decide at import whether they run in a
    # kernel, so the kernel imports them itself (cheaply: what they need is loaded).
    with contextlib.suppress(ImportError):
        import matplotlib.pyplot  # noqa: F401
        import tqdm.notebook  # noqa: F401


def serve(fd, heavy=(), library=True):
    """The zygote's loop: preload (and the chapter's `heavy` modules, see `course.sandbox.HEAVY_MODULES`),
    then fork a kernel per request and report how each one ended. One thread and `select` (never
    threads: a fork would copy them half-done)."""
    token = sys.stdin.readline().strip()
    if sys.path and sys.path[0] == "":  # as ipykernel_launcher: the kernel's folder is not on the path
        del sys.path[0]
    die_with_parent(signal.SIGTERM)  # the worker's end is the zygote's
    _preload(library)
    preload_heavy(heavy, library)
    if not library and "minigrad" in sys.modules:
        raise RuntimeError("a student's kernel zygote must not import minigrad: its kernels import their folder's copy")
    if threading.active_count() != 1:
        raise RuntimeError("the kernel zygote must not run threads: forking would copy them half-done")
    gc.freeze()  # the kernels' collections skip what was preloaded, and leave its pages shared
    server = socket.socket(fileno=fd)
    kernels = {}  # relay connection -> (kernel pid, its pidfd)
    while True:
        pidfds = {pidfd: connection for connection, (_, pidfd) in kernels.items()}
        ready, _, _ = select.select([server, *kernels, *pidfds], [], [])
        for item in ready:
            if item is server:
                connection, _ = server.accept()
                pid = _fork_kernel(connection, token, [server, *kernels, *pidfds])
                if pid is None:
                    connection.close()
                else:
                    kernels[connection] = (pid, os.pidfd_open(pid))
            else:
                connection = pidfds.get(item, item)
                if connection in kernels:
                    _end(connection, *kernels.pop(connection))


def _fork_kernel(connection, token, inherited):
    """Fork a kernel for the request on `connection`; its pid, or None for a refused request."""
    message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    try:
        request = json.loads(message)
        if len(fds) != 3 or not secrets.compare_digest(str(request.pop("token", "")), token):
            raise PermissionError("bad token")
    except Exception as error:  # noqa: BLE001 - a bad request is answered, never fatal
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            connection.sendall(json.dumps({"error": str(error)}).encode() + b"\n")
        return None
    request["zygote"] = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            for item in [connection, *inherited]:
                os.close(item if isinstance(item, int) else item.detach())
            _become_kernel(request, fds)
        finally:
            os._exit(1)
    for fd in fds:
        os.close(fd)
    connection.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    return pid


def _end(connection, pid, pidfd):
    """The kernel exited (its status goes to the relay) or the relay went away (the kernel's whole
    session is killed)."""
    finished, status = os.waitpid(pid, os.WNOHANG)
    if not finished:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    with contextlib.suppress(OSError):
        connection.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status) % 256}).encode() + b"\n")
    connection.close()


def _become_kernel(request, fds):
    """In the forked child: the relay's standard streams, folder, environment and arguments, then
    what `python -m ipykernel_launcher` runs."""
    os.setsid()  # its own process group, as jupyter_client gives a kernel: signalled and killed whole
    # ipykernel's own watch on its parent is configured at import (in the zygote, unset): the kernel
    # goes with the zygote instead, which goes with its grading worker.
    die_with_parent(signal.SIGKILL)
    if os.getppid() != request["zygote"]:
        os._exit(1)  # the zygote went before the line above
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    reread_settings()
    # parent_handle 1: ipykernel watches no parent (see above) and prints no `ipython kernel`
    # banner to the relay's terminal, which it does when it has no parent to watch.
    sys.argv = ["ipykernel_launcher", *request["argv"], "--IPKernelApp.parent_handle=1"]
    status = 1
    try:
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        status = 0
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)
