"""Grading that a student's notebook cannot subvert: tests run where student code never ran.

Tests that run in the student's own Python process can always be subverted: a notebook can
redefine the helpers the tests call, patch `builtins`, numpy or `Tensor.__eq__`, register an
IPython transformer that wraps later cells in try/except, or return objects that equal anything.
So nbgrader's kernel here (the *judge*) runs only trusted code: the locked cells exactly as the
gradebook stores them (setup, helpers, tests). Everything the student wrote runs in a separate,
resource-limited, Landlocked process (`course.sandbox`), beside the chapter's locked helper cells.

The boundary between the two is one call: a test's `drive(driver, *args)` (`minigrad.testing`)
sends the driver's *name* and plain arguments to the sandbox, which runs the driver there (it
calls the student's functions) and sends back a plain value (`minigrad.plain`), or an
exception's name and message. The test's checker compares that value with what it computes
itself. Nothing the sandbox sends is written into the judge's objects, and no object of the
student's ever exists here: a wrong type, a forged structure, an always-equal object cannot be
made from plain data.

Time: a cell's budget counts only the time spent waiting for the sandbox; past it (or past a
call's own `seconds`) the sandbox is killed and, for the next cell, restarted with the cells that
had finished replayed. A notebook past its total budget gets its remaining cells failed. Any
failure inside an exchange ends that sandbox: a stream is never read again after an error.
"""

import ast
import builtins
import contextlib
import json
import os
import resource
import shutil
import stat
import sys
import time

from . import sandbox, wire

JUDGE_NAME = "__minigrad_judge__"
ATTENTION_KEY = "minigrad_judge"  # notebook metadata where the judge leaves its report
MAX_NOTEBOOK_OUTPUT_BYTES = 16 << 20  # relayed from the sandbox for one notebook, after which outputs are cut
CALL_GRACE_SECONDS = 5  # past a call's own `seconds` (the sandbox's alarm), the judge kills it
JUDGE_MEMORY_MB = 4096  # the judge kernel's own heap (RLIMIT_DATA): decoding is capped far below it


class GraderError(BaseException):
    """A failure of the student's process, not of a test: derives from BaseException so that a
    test's `except Exception` cannot swallow it and pass."""


class SandboxTimeout(GraderError):
    """The student's code ran past the cell's (or the call's, or the notebook's) time limit."""


class SandboxDied(GraderError):
    """The student's process died (os._exit, out of memory or CPU, killed) or is gone for good."""


class StudentError(Exception):
    """An exception of a class the judge does not rebuild (the student's own, a system exit)."""


class StudentCellError(Exception):
    """A student cell that raised in the sandbox; shown with the sandbox's traceback."""

    def __init__(self, message, lines):
        super().__init__(message)
        self.lines = lines


def _rebuildable_exceptions():
    """Exception classes rebuilt by name (with the message only), so that a test's
    `except TimeoutError` or `except GraphError` works: the builtins and minigrad's own."""
    from minigrad import errors

    classes = {name: cls for name, cls in vars(builtins).items()
               if isinstance(cls, type) and issubclass(cls, Exception) and cls not in (StopIteration, StopAsyncIteration)}
    classes.update({name: cls for name, cls in vars(errors).items() if isinstance(cls, type) and issubclass(cls, Exception)})
    return classes


class Judge:
    """Owns the sandbox of one notebook: starts it, runs student cells in it, calls its drivers."""

    MAX_RESTARTS = 8

    def __init__(self, limits, cell_timeout, notebook_seconds, files_from=None, zygote=None):
        self.limits = sandbox.Limits(**limits)
        self.cell_timeout = cell_timeout
        self.notebook_deadline = time.monotonic() + notebook_seconds
        self.cell_waited = 0.0  # seconds this cell has spent waiting for the student's code
        self.files_from = files_from
        self.zygote = tuple(zygote) if zygote else None  # (socket path, token) of the worker's zygote
        self.exceptions = _rebuildable_exceptions()
        self.history = []  # sources the sandbox ran to completion, replayed after a restart
        self.events = []  # what went wrong, for the instructor's attention table
        self.output_budget = MAX_NOTEBOOK_OUTPUT_BYTES
        self.restarts = 0
        self.dead = None  # why the sandbox is gone for good
        self.process = self.sock = None
        self._start()

    # ------------------------------------------------------------------ set-up in the kernel
    @classmethod
    def install(cls, shell, **options):
        """Create the judge in `shell` (the judge kernel's IPython): tests' `drive` calls go to it."""
        import minigrad.testing

        sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]  # no module of the submission's
        _limit_self(options["notebook_seconds"])
        judge = cls(**options)
        shell.user_ns[JUDGE_NAME] = judge
        shell.events.register("pre_run_cell", judge._begin_cell)
        shell.set_custom_exc((BaseException,), _show_traceback)
        # Tracebacks without terminal colours: the same frames and lines, but no pygments, which spent
        # more CPU on a stub's failing tests (12 ms each) than the rest of its judging.
        shell.run_line_magic("colors", "nocolor")
        minigrad.testing._remote = judge.call
        import atexit

        atexit.register(judge.close)
        return judge

    def _begin_cell(self, info=None):
        self.cell_waited = 0.0

    def _deadline(self, seconds=None):
        """When the current wait for the sandbox must end: the cell's budget counts only time spent
        waiting for the student's code (not the tests' own work); the notebook's is wall time."""
        now = time.monotonic()
        deadline = min(now + self.cell_timeout - self.cell_waited, self.notebook_deadline)
        return deadline if seconds is None else min(deadline, now + seconds + CALL_GRACE_SECONDS)

    # ------------------------------------------------------------------ the sandbox's life
    def _start(self):
        judge_end, sandbox_end = wire.socket_pair()
        try:
            self.process = sandbox.launch(sandbox_end, self.limits, self.zygote)
        except (OSError, RuntimeError, ValueError) as error:  # the zygote is gone: start Python instead
            self.events.append(f"the sandbox zygote failed ({error}); started the sandbox directly")
            self.zygote = None
            self.process = sandbox.launch(sandbox_end, self.limits)
        sandbox_end.close()
        self.sock = judge_end
        if self.files_from:
            note = _copy_submission_files(self.files_from, self.process.workdir, self.process.uid)
            if note and note not in self.events:
                self.events.append(note)

    def _stop(self, why):
        self.events.append(why)
        self.close()

    def _revive(self):
        """After the sandbox was stopped: a new one, with the cells that had finished replayed."""
        if self.process is not None:
            return
        if self.dead:
            raise SandboxDied(self.dead)
        if self.restarts >= self.MAX_RESTARTS:
            self.dead = f"the student's process was restarted {self.restarts} times; the rest of the notebook is not run"
            raise SandboxDied(self.dead)
        if time.monotonic() >= self.notebook_deadline:
            self.dead = "the notebook's time budget ran out"
            raise SandboxTimeout(self.dead)
        self.restarts += 1
        self._start()
        for source in self.history:
            try:
                self._exchange(("exec", source))
            except GraderError as error:
                self.dead = f"replaying the student's cells after a restart failed: {error}"
                raise SandboxDied(self.dead) from None

    def close(self):
        if self.process is not None:
            sandbox.terminate(self.process)
            self.process = None
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
            self.sock = None

    def report(self):
        """JSON for the instructor: what went wrong in this notebook's sandbox."""
        return json.dumps({"events": self.events, "restarts": self.restarts, "dead": self.dead})

    def _exchange(self, request, seconds=None):
        """Send one request and read its reply. Any failure on the way (a timeout, a death, a
        malformed reply, an interrupt) ends this sandbox: the stream is never read again."""
        started = time.monotonic()
        try:
            wire.send(self.sock, request)
            return wire.recv(self.sock, self._deadline(seconds))
        except wire.PeerTimeout:
            self._stop(f"{_what(request)} ran past its time limit; the student's process was restarted")
            raise SandboxTimeout(f"{_what(request)} ran past its time limit") from None
        except (wire.PeerClosed, OSError) as error:
            self._stop(f"the student's process died during {_what(request)} ({type(error).__name__})")
            raise SandboxDied(f"the student's process died during {_what(request)}") from None
        except wire.WireError as error:
            self._stop(f"the student's process broke the protocol during {_what(request)}: {error}")
            raise SandboxDied(f"the student's process sent something unreadable: {error}") from None
        except BaseException:
            self._stop(f"grading was interrupted during {_what(request)}")
            raise
        finally:
            self.cell_waited += time.monotonic() - started

    # ------------------------------------------------------------------ cells
    def share(self, source):
        """A locked (trusted) cell the student's code may rely on: run it in the sandbox too."""
        with contextlib.suppress(GraderError):
            if self._run(source)[2] is None:
                self.history.append(source)

    def student(self, source):
        """A cell of the student's: run it in the sandbox and show its outputs here."""
        try:
            _, outputs, error = self._run(source)
        except GraderError as error:
            raise StudentCellError(str(error), [f"{type(error).__name__}: {error}"]) from None
        self._relay(outputs)
        if error is None:
            self.history.append(source)
        else:
            raise _student_cell_error(*error)

    def _run(self, source):
        self._revive()
        reply = self._exchange(("exec", source))
        if not (type(reply) is tuple and len(reply) == 3 and reply[0] == "done" and type(reply[1]) is list
                and (reply[2] is None or type(reply[2]) is tuple and len(reply[2]) == 3)):
            self._stop("the student's process answered a cell with something else")
            raise SandboxDied("the student's process answered a cell with something else")
        return reply

    def _relay(self, outputs):
        """Show a sandbox cell's outputs in this (the judge's) cell, within the notebook's budget."""
        from IPython.display import publish_display_data

        for output in outputs:
            size = len(repr(output))
            if size > self.output_budget:
                if self.output_budget > 0:
                    print(f"\n[output truncated: this notebook's output passed {MAX_NOTEBOOK_OUTPUT_BYTES:,} bytes]",
                          file=sys.stderr)
                    self.events.append("the notebook's output was truncated")
                self.output_budget = 0
                return
            self.output_budget -= size
            if type(output) is not tuple or len(output) != 3:
                continue
            kind, first, second = output
            if kind == "stream" and first in ("stdout", "stderr") and type(second) is str:
                print(second, end="", file=sys.stdout if first == "stdout" else sys.stderr)
            elif kind == "display" and type(first) is dict and type(second) is dict:
                data = {k: v for k, v in first.items() if k in sandbox._MIME_TYPES and type(v) in (str, bytes)}
                if data:
                    publish_display_data(data, {k: v for k, v in second.items() if type(k) is str})

    # ------------------------------------------------------------------ the one graded call
    def call(self, name, args, seconds=None):
        """`drive`'s remote half: run the driver `name` on plain `args` in the sandbox; its plain
        result, or the exception it raised (rebuilt by name when it is a builtin or minigrad's)."""
        seconds = seconds if type(seconds) in (int, float) and seconds > 0 else None
        for attempt in (1, 2):  # after a death or a MemoryError, once more in a fresh sandbox: memory an
            self._revive()      # earlier failed cell hoarded is not the call's fault
            try:
                reply = self._exchange(("call", name, tuple(args), seconds), seconds)
            except SandboxDied:
                if attempt == 2 or self.dead:
                    raise  # a death on the retry is the student's code's own
                continue
            if attempt == 1 and type(reply) is tuple and reply[:2] == ("raise", "MemoryError"):
                self._stop(f"the call of {name} ran out of memory; retried in a fresh sandbox")
                continue
            break
        if type(reply) is tuple and len(reply) == 2 and reply[0] == "return":
            return reply[1]
        if type(reply) is tuple and len(reply) == 2 and reply[0] == "refused" and type(reply[1]) is str:
            raise StudentError(f"{name} returned something that cannot be graded: {reply[1]}")
        if type(reply) is tuple and len(reply) == 4 and reply[0] == "raise" and all(type(x) is str for x in reply[1:]):
            _, ename, message, trace = reply
            error = self._rebuild(ename, message)
            error.student_traceback = trace
            raise error
        self._stop(f"the student's process answered {name} with something else")
        raise SandboxDied(f"the student's process answered {name} with something else")

    def _rebuild(self, ename, message):
        cls = self.exceptions.get(ename)
        if cls is not None:
            with contextlib.suppress(Exception):
                return cls(message)
        return StudentError(f"{ename}: {message}")


def _what(request):
    return f"the call of {request[1]}" if request[0] == "call" else "a cell"


def _limit_self(notebook_seconds):
    """The judge kernel runs under limits too: a heap far above what decoding allows, and CPU time
    a little above the notebook's budget."""
    mb = 1 << 20
    for name, value in [("RLIMIT_DATA", JUDGE_MEMORY_MB * mb), ("RLIMIT_CPU", int(notebook_seconds) + 300)]:
        soft, hard = resource.getrlimit(getattr(resource, name))
        if hard == resource.RLIM_INFINITY or value < hard:
            resource.setrlimit(getattr(resource, name), (value, hard))


def _student_cell_error(ename, evalue, lines):
    name = ename if type(ename) is str and ename.isidentifier() else "Error"
    cls = type(name, (StudentCellError,), {})
    lines = [line for line in lines if type(line) is str] if type(lines) is list else []
    return cls(str(evalue), lines or [f"{name}: {evalue}"])


def _show_traceback(shell, etype, value, tb, tb_offset=None):
    """Tracebacks in the judge: a student cell's as the sandbox recorded it; a test's as usual,
    followed by the student's frames when the student's code raised during a call. IPython ignores
    what a custom handler returns (ipython/ipython#12378), so it is shown here."""
    if isinstance(value, StudentCellError):
        lines = list(value.lines)
    else:
        lines = list(shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset))
        trace = getattr(value, "student_traceback", "")
        if trace:
            lines += ["In the student's code (most recent call last):", trace]
    shell._showtraceback(etype, value, lines)
    return lines


def _copy_submission_files(source, workdir, uid):
    """The submission's own files (a helper module the student wrote) go into the sandbox only.
    Only regular files are copied; a link is never followed. Returns a note for the instructor."""
    skipped = []
    for name in sorted(os.listdir(source))[:100]:
        path = os.path.join(source, name)
        info = os.lstat(path)
        if name.endswith(".ipynb") or name.startswith("."):
            continue
        if not stat.S_ISREG(info.st_mode):
            if stat.S_ISLNK(info.st_mode):
                skipped.append(name)
            continue
        if info.st_size > sandbox.Limits.file_mb << 20:
            skipped.append(name)
            continue
        target = os.path.join(workdir, name)
        with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW)) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        if uid is not None:
            os.chown(target, uid, uid)
    return f"files of the submission not given to the student's code (links or too large): {', '.join(skipped)}" \
        if skipped else None


def literal(text):
    """Parse the repr of a string a control execution sent back."""
    return ast.literal_eval(text)
