"""Grading that a student's notebook cannot subvert: tests run where student code never ran.

Tests that run in the student's own Python process can always be subverted: a notebook can
redefine the helpers the tests call, patch `builtins`, numpy or `Tensor.__eq__`, register an
IPython transformer that wraps later cells in try/except, or return objects that equal anything.
So nbgrader's kernel here (the *judge*) runs only trusted code, the locked cells exactly as the
gradebook stores them (setup, helpers, tests), while everything the student wrote runs in a
separate, resource-limited, Landlocked process (`course.sandbox`). In the judge, each graded name
is a proxy: calling `topological_sort(y)` sends `y` to the sandbox, calls the student's function
there and brings back its result as plain data (`course.wire`); tensors keep their identity and
the changes the student's code makes to them (gradients, data). Instances of graded classes
(`Dual`) stay in the sandbox and are used through handles whose arithmetic runs the student's
methods, but which never answer `==`, `<`, `bool()` or `float()`: a test compares their plain
attributes, never asks a student object whether it is right.

`JudgedExecute` replaces nbgrader's Execute preprocessor in autograde (`course.autograde` sets
it up), so nbgrader still restores locked cells, scores grade cells from their outputs and keeps
the gradebook; only *where* code runs changes:
  * grade and locked cells: the gradebook's source, in the judge (a deleted or edited setup cell
    is put back too: its fakes would otherwise replace the real helpers);
  * answer cells: in the sandbox; then the judge binds the proxy for the graded name;
  * every other cell (experiments, the student's own): in the sandbox, outputs relayed.
A cell that runs past its time limit, a sandbox that dies (`os._exit`, memory, CPU) or a fork
bomb costs the sandbox, which is killed and restarted with the cells that had finished replayed;
a notebook past its total budget gets its remaining cells failed.
"""

import ast
import builtins
import contextlib
import json
import os
import shutil
import sys
import time
import types

import numpy as np

from . import sandbox, wire

JUDGE_NAME = "__minigrad_judge__"
ATTENTION_KEY = "minigrad_judge"  # notebook metadata where the judge leaves its report


# --------------------------------------------------------------------------- failures the grader raises
class GraderError(BaseException):
    """A failure of the student's process, not of a test: derives from BaseException so that a
    test's `except Exception` cannot swallow it and pass."""


class SandboxTimeout(GraderError):
    """The student's code ran past the cell's (or the notebook's) time limit."""


class SandboxDied(GraderError):
    """The student's process died (os._exit, out of memory or CPU, killed) or is gone for good."""


class NotPlainData(GraderError):
    """The student's code handed back something that is not plain data."""


class StudentError(Exception):
    """An exception of a class the judge does not rebuild (the student's own, or a system exit)."""


class StudentCellError(Exception):
    """A student cell that raised in the sandbox; shown with the sandbox's traceback."""

    def __init__(self, message, lines):
        super().__init__(message)
        self.lines = lines


def _safe_exceptions():
    """Exception classes the judge re-raises by name, so that `except GraphError` in a test works."""
    import minigrad
    from minigrad import errors

    classes = {name: cls for name, cls in vars(builtins).items()
               if isinstance(cls, type) and issubclass(cls, Exception) and cls not in (StopIteration, StopAsyncIteration)}
    classes.update({name: cls for name, cls in vars(errors).items() if isinstance(cls, type) and issubclass(cls, Exception)})
    classes["GradcheckError"] = minigrad.GradcheckError
    return classes


# --------------------------------------------------------------------------- handles on the student's objects
class RemoteType(type):
    """The judge's class for a student's (graded) class: `isinstance` works, calling it builds an
    instance in the sandbox, class attributes (`Dual.lift`) are fetched from there."""

    def __call__(cls, *args, **kwargs):
        return cls._remote_judge.call_handle(cls, args, kwargs, handles=True)

    def __getattr__(cls, name):
        if name.startswith("_"):  # private and special names are never asked of the student's class
            raise AttributeError(name)
        return cls._remote_judge.request("getattr", (cls, name), handles=True)

    def __repr__(cls):
        return f"<the student's class {cls.__name__}>"


class RemoteObject:
    """A student's object (an instance of a graded class) that stays in the sandbox."""

    __slots__ = ("_judge", "_key", "_generation", "__weakref__")
    __array_ufunc__ = None  # `ndarray * obj` defers to obj.__rmul__, as for the student's Dual

    def __new__(cls, *args, **kwargs):
        # Only the judge makes handles (Judge._proxy); a pickle from the sandbox must not.
        raise wire.WireError(f"a {cls.__name__} handle cannot be built from the student's data")

    def __getattr__(self, name):
        if name.startswith("_"):  # private and special names are never asked of the student's object
            raise AttributeError(name)
        return self._judge.request("getattr", (self, name), handles=True)

    def __setattr__(self, name, value):
        if name in RemoteObject.__slots__:
            object.__setattr__(self, name, value)
        else:
            self._judge.request("setattr", (self, name, value), handles=True)

    def __call__(self, *args, **kwargs):
        return self._judge.call_handle(self, args, kwargs, handles=True)

    def __bool__(self):
        raise TypeError(f"the grader does not ask a student's {type(self).__name__} whether it is true; "
                        f"tests compare its plain attributes")

    def __repr__(self):
        return self._text("__repr__")

    def __str__(self):
        return self._text("__str__")

    def __len__(self):
        value = self._judge.request("op", (self, "__len__", ()), handles=False)
        if type(value) is not int:
            raise TypeError(f"len() of a student's {type(self).__name__} gave a {type(value).__name__}")
        return value

    def __iter__(self):
        return iter(self._judge.request("call", (list, (self,), {}), handles=True))

    def _text(self, method):
        try:
            text = self._judge.request("op", (self, method, ()), handles=False)
        except (Exception, GraderError) as error:  # noqa: BLE001 - a broken __repr__ must not break a message
            return f"<{type(self).__name__}: {method} failed: {type(error).__name__}>"
        return text[:2000] if type(text) is str else f"<{type(self).__name__}>"


def _forward(name):
    def method(self, *operands):
        return self._judge.request("op", (self, name, operands), handles=True)

    method.__name__ = name
    return method


# Arithmetic runs the student's methods (that is what a graded class is); comparisons, bool(),
# float() and hashing are deliberately not forwarded (see the module docstring).
for _operator in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv",
                  "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "pos", "abs", "getitem"):
    setattr(RemoteObject, f"__{_operator}__", _forward(f"__{_operator}__"))


class RemoteFunction:
    """A function of the student's (a method, a static method, a function a method returned)."""

    __slots__ = ("_judge", "_key", "_generation", "name", "__weakref__")

    def __call__(self, *args, **kwargs):
        return self._judge.call_handle(self, args, kwargs, handles=True)

    def __repr__(self):
        return f"<the student's function {self.name}>"


class GradedFunction:
    """The judge's binding of a graded function's name: each call runs whatever the student's
    namespace binds to that name *now*, as a test cell in the student's kernel would. Its results
    must be plain data (never a handle on a student's object)."""

    def __init__(self, judge, name):
        self._judge = judge
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        return self._judge.request("callname", (self.__name__, args, kwargs), handles=False)

    def __repr__(self):
        return f"<the student's {self.__name__}>"


# --------------------------------------------------------------------------- the judge (in nbgrader's kernel)
class Judge:
    """Owns the sandbox for one notebook: starts it, runs student cells in it, calls into it."""

    MAX_RESTARTS = 8

    def __init__(self, graded, limits, cell_timeout, notebook_seconds, files_from=None, zygote=None):
        self.graded = list(graded)
        self.limits = sandbox.Limits(**limits)
        self.cell_timeout = cell_timeout
        self.notebook_deadline = time.monotonic() + notebook_seconds
        self.cell_waited = 0.0  # seconds this cell has spent waiting for the student's code
        self.files_from = files_from
        self.zygote = tuple(zygote) if zygote else None  # (socket path, token) of the worker's zygote
        self.exceptions = _safe_exceptions()
        self.history = []  # sources the sandbox ran to completion, replayed after a restart
        self.events = []  # what went wrong, for the instructor's attention table
        self.generation = 0
        self.restarts = 0
        self.dead = None  # why the sandbox is gone for good
        self.depth = 0
        self.process = self.endpoint = None  # the running sandbox (course.sandbox.Sandbox) and its socket
        self.classes = {}  # graded class name -> its RemoteType (rebound after a restart)
        self._start()

    # ------------------------------------------------------------------ set-up in the kernel
    @classmethod
    def install(cls, shell, **options):
        """Create the judge in `shell` (the judge kernel's IPython) and hook it into cell runs."""
        sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]  # no module of the submission's
        judge = cls(**options)
        shell.user_ns[JUDGE_NAME] = judge
        shell.events.register("pre_run_cell", judge._begin_cell)
        shell.set_custom_exc((BaseException,), _show_traceback)
        import atexit

        atexit.register(judge.close)
        return judge

    def _begin_cell(self, info=None):
        self.cell_waited = 0.0

    def deadline(self):
        """When the current wait for the sandbox must end: the cell's budget counts only time spent
        waiting for the student's code (not the tests' own work), the notebook's is wall time."""
        return min(time.monotonic() + self.cell_timeout - self.cell_waited, self.notebook_deadline)

    # ------------------------------------------------------------------ the sandbox's life
    def _start(self):
        judge_end, sandbox_end = wire.socket_pair()
        try:
            self.process = sandbox.launch(sandbox_end, self.limits, self.graded, self.generation, self.zygote)
        except (OSError, RuntimeError, ValueError) as error:  # the zygote is gone: start Python instead
            self.events.append(f"the sandbox zygote failed ({error}); started the sandbox directly")
            self.zygote = None
            self.process = sandbox.launch(sandbox_end, self.limits, self.graded, self.generation)
        sandbox_end.close()
        if self.files_from:
            _copy_submission_files(self.files_from, self.process.workdir, self.process.uid)
        self.endpoint = wire.Endpoint(judge_end, wire.JUDGE, True, _judge_export, self._proxy)

    def _stop(self, why):
        self.events.append(why)
        sandbox.terminate(self.process)
        with contextlib.suppress(OSError):
            self.endpoint.sock.close()
        self.endpoint.clear()
        self.process = None

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
        self.generation += 1
        self._start()
        for source in self.history:
            try:
                self._exchange("exec", (source,), handles=False)
            except GraderError as error:
                self.dead = f"replaying the student's cells after a restart failed: {error}"
                raise SandboxDied(self.dead) from None

    def close(self):
        if self.process is not None:
            sandbox.terminate(self.process)
            self.process = None

    def report(self):
        """JSON for the instructor: what went wrong in this notebook's sandbox."""
        return json.dumps({"events": self.events, "restarts": self.restarts, "dead": self.dead})

    # ------------------------------------------------------------------ cells
    def share(self, source):
        """A locked (trusted) cell the student's code may rely on: run it in the sandbox too."""
        with contextlib.suppress(GraderError):
            if self._run(source)["error"] is None:
                self.history.append(source)

    def student(self, source):
        """A cell of the student's: run it in the sandbox and show its outputs here."""
        try:
            result = self._run(source)
        except GraderError as error:
            raise StudentCellError(str(error), [f"{type(error).__name__}: {error}"]) from None
        _relay(result)
        if result["error"] is None:
            self.history.append(source)
        else:
            ename, evalue, lines = result["error"]
            raise _student_cell_error(ename, evalue, lines)

    def answer(self, source, name):
        """An answer cell: run it in the sandbox, then bind `name` here to the student's answer."""
        try:
            self.student(source)
        finally:
            self._bind(name)

    def _run(self, source):
        self._revive()
        return self._exchange("exec", (source,), handles=False)

    def _bind(self, name):
        from IPython import get_ipython

        namespace = get_ipython().user_ns
        try:
            value = self.request("lookup", (name,), handles=True)
        except (Exception, GraderError):  # noqa: BLE001 - not defined (or broken): calls will say so
            value = None
        if isinstance(value, RemoteType):
            value._graded_name = name
            self.classes[name] = value
        elif not wire.is_plain(value) or value is None:
            value = GradedFunction(self, name)
        namespace[name] = value

    # ------------------------------------------------------------------ calls into the sandbox
    def call_handle(self, target, args, kwargs, handles):
        return self.request("call", (target, args, kwargs), handles=handles)

    def request(self, kind, args, handles):
        """Ask the sandbox; its answer, or the student's exception re-raised here.

        If the sandbox dies during a call (out of memory, say, because an earlier cell hoarded
        it), the call is tried once more in a fresh sandbox, where only the cells that finished
        were replayed: what the student's honest code would have given.
        """
        if self.endpoint is not None and self.endpoint.decoding:
            raise wire.WireError("the student's data tried to use one of its objects while it was being read")
        for attempt in (1, 2):
            self._revive()
            current = tuple(self._current(a) for a in args)
            try:
                return self._exchange(kind, current, handles)
            except SandboxDied:
                if attempt == 2 or self.depth > 0 or self.dead:
                    raise

    def _current(self, obj):
        """A handle from before a restart is stale; a graded class is looked up again."""
        if isinstance(obj, RemoteType) and obj._remote_generation != self.generation:
            name = getattr(obj, "_graded_name", None)
            fresh = self._exchange("lookup", (name,), handles=True) if name else None
            if not isinstance(fresh, RemoteType):
                raise SandboxDied(f"the student's class {obj.__name__} is gone (the process was restarted)")
            key = self.endpoint.key_of(fresh)  # the same class, newly defined: keep the judge's (isinstance)
            self.endpoint.forget([key])
            self.endpoint._register(key, obj)
            obj._remote_key, obj._remote_generation = key, self.generation
        elif isinstance(obj, (RemoteObject, RemoteFunction)) and obj._generation != self.generation:
            raise SandboxDied("this object lived in the student's process, which was restarted")
        return obj

    def _exchange(self, kind, args, handles):
        import minigrad

        from minigrad import autograd

        context = {"grad": minigrad.is_grad_enabled(), "recursionlimit": sys.getrecursionlimit(),
                   "count_vjps": bool(autograd._vjp_counters)}  # a test counting backward's work
        self.depth += 1
        try:
            try:
                self.endpoint.send((kind, args, context))
                while True:
                    started = time.monotonic()
                    try:
                        reply = self.endpoint.recv(self.deadline())
                    finally:
                        self.cell_waited += time.monotonic() - started
                    if type(reply) is not tuple or not reply:
                        raise wire.WireError("malformed reply")
                    if reply[0] in ("return", "raise", "refused"):
                        break
                    self._serve(reply)
            except wire.PeerTimeout:
                what = _call_text(kind, args)
                limit = "notebook's" if time.monotonic() >= self.notebook_deadline else f"cell's {self.cell_timeout} s"
                self._stop(f"timeout: {what} ran past the {limit} time limit")
                raise SandboxTimeout(f"{what} did not finish within the {limit} time limit; the student's process "
                                     f"was stopped") from None
            except (wire.PeerClosed, ConnectionError, BrokenPipeError):
                what = _call_text(kind, args)
                self._stop(f"died: the student's process died during {what}")
                raise SandboxDied(f"the student's process died during {what} (os._exit, out of memory or CPU time, "
                                  f"or killed)") from None
            except wire.MessageTooLarge as error:
                self._stop(f"refused: {_call_text(kind, args)} sent {error}")
                raise NotPlainData(f"{_call_text(kind, args)}: {error}; the student's process was stopped") from None
            except wire.WireError as error:
                raise NotPlainData(f"{_call_text(kind, args)}: {error}") from None
            self._extras(reply[-1], args if kind in ("call", "callname") else None)
        finally:
            self.depth -= 1
            if self.depth == 0 and self.endpoint is not None:
                self.endpoint.forget_arrays()
                self.endpoint.collect()
        if reply[0] == "raise":
            raise self._exception(reply)
        if reply[0] == "refused":
            raise NotPlainData(f"{_call_text(kind, args)}: {reply[1] if type(reply[1]) is str else 'not plain data'}")
        value = reply[1]
        if not handles:
            _refuse_handles(value, kind, args)
        return value

    def _serve(self, message):
        """A callback: the student's code calls one of the judge's functions (or uses an object)."""
        import minigrad

        try:
            kind, args, context = message
            grad = context.get("grad", True) if type(context) is dict else True
            with minigrad.set_grad_enabled(bool(grad)):  # the student's no_grad() holds in what it calls
                reply = self._callback(kind, args)
        except Exception as error:  # noqa: BLE001 - the judge's code failed for the student's call
            reply = ("raise", type(error).__name__, str(error)[:2000], "", {})
        try:
            self.endpoint.send(reply, scan_own=True)
        except (wire.NotPlainData, TypeError, ValueError):
            self.endpoint.send(("raise", "TypeError", "the grader could not send this value", "", {}), scan_own=True)

    def _callback(self, kind, args):
        if kind == "call":
            target, positional, keywords = args
            if type(positional) is not tuple or type(keywords) is not dict:
                raise TypeError("malformed call")
            return ("return", _own(self.endpoint, target)(*positional, **keywords), {})
        if kind == "getattr" and type(args[1]) is str and not args[1].startswith("_"):
            return ("return", getattr(_own(self.endpoint, args[0]), args[1]), {})
        if kind == "op" and args[1] == "__iter__":
            return ("return", list(_own(self.endpoint, args[0])), {})  # the items, not an iterator handle
        if kind == "op" and args[1] in _CALLBACK_OPERATORS and type(args[2]) is tuple:
            target = _own(self.endpoint, args[0])
            return ("return", getattr(type(target), args[1])(target, *args[2]), {})
        raise PermissionError(f"the grader does not serve {kind!r} requests from the student's code")

    def _extras(self, extras, call):
        """What the reply says besides its value: output, state to mirror, arguments written into."""
        if type(extras) is not dict:
            return
        written = extras.get("arrays")
        if type(written) is dict:  # the student's code wrote into the judge's arrays: so it did here
            for key, value in written.items():
                target = self.endpoint.sent_arrays.get(key) if type(key) is int else None
                if target is not None and type(value) is np.ndarray and target.shape == value.shape \
                        and target.flags.writeable:
                    with contextlib.suppress(TypeError, ValueError):
                        np.copyto(target, value, casting="unsafe")
        changed = extras.get("args")
        if call is not None and type(changed) is dict:  # ... or into list, dict or IR arguments
            _, positional, keywords = call
            for where, value in changed.items():
                if type(where) is int and 0 <= where < len(positional):
                    _write_back(positional[where], value)
                elif type(where) is str and where in keywords:
                    _write_back(keywords[where], value)
        for stream in ("stdout", "stderr"):
            text = extras.get(stream)
            if type(text) is str and text:
                getattr(sys, stream).write(text)
        counted = extras.get("vjps")
        if type(counted) is tuple and len(counted) == 2 and all(type(n) is int and n >= 0 for n in counted):
            from minigrad import autograd

            for counter in autograd._vjp_counters:  # the student's backward passes ran there: count them here
                counter.vjps += counted[0]
                counter.discarded += counted[1]
        limit = extras.get("recursionlimit")
        if type(limit) is int and 100 <= limit <= 10**7 and limit != sys.getrecursionlimit():
            sys.setrecursionlimit(limit)  # the student's code changed it: tests may check that it did not
        observed = extras.get("observed")
        if type(observed) is dict:
            for key, count in observed.items():
                tensor = self.endpoint.objects.get(key) if type(key) is int else None
                node = getattr(tensor, "node", None)
                if node is not None and node.inputs is not None and type(count) is int:
                    for _ in range(min(count, 10_000)):
                        iter(node.inputs)  # replay the iterations on the test's own (counting) object

    def _exception(self, reply):
        _, name, message, text = reply[:4]
        name = name if type(name) is str else "Exception"
        message = message if type(message) is str else ""
        cls = self.exceptions.get(name)
        error = None
        if cls is not None:
            with contextlib.suppress(Exception):
                error = cls(message)
        if error is None:
            error = StudentError(f"{name}: {message}")
        if type(text) is str and text.strip():
            error.add_note("raised in the student's code:\n" + text.rstrip())
        return error

    # ------------------------------------------------------------------ handles
    def _proxy(self, key, descriptor):
        if type(descriptor) is not tuple or not descriptor or type(descriptor[0]) is not str:
            raise wire.WireError("malformed handle")
        kind = descriptor[0]
        if kind == "function" and len(descriptor) == 2:
            proxy = object.__new__(RemoteFunction)
            proxy.name = str(descriptor[1])[:200]
        elif kind == "class" and len(descriptor) == 2:
            proxy = self._class_proxy(key, descriptor[1])
            return proxy
        elif kind == "instance" and len(descriptor) == 3 and type(descriptor[1]) is int:
            cls = self.endpoint.objects.get(descriptor[1])
            if cls is None:
                cls = self._class_proxy(descriptor[1], descriptor[2])
                self.endpoint._register(descriptor[1], cls)
            if not isinstance(cls, RemoteType):
                raise wire.WireError("malformed handle")
            proxy = object.__new__(cls)
        else:
            raise wire.WireError("malformed handle")
        object.__setattr__(proxy, "_judge", self)
        object.__setattr__(proxy, "_key", key)
        object.__setattr__(proxy, "_generation", self.generation)
        return proxy

    def _class_proxy(self, key, name):
        name = str(name)[:100]
        clean = name.rpartition(".")[2]
        cls = RemoteType(clean if clean.isidentifier() else "StudentClass", (RemoteObject,),
                         {"__slots__": (), "__module__": "student", "__qualname__": name})
        # Not _judge/_key: class attributes of those names would shadow the instances' slots.
        cls._remote_judge, cls._remote_key, cls._remote_generation = self, key, self.generation
        return cls


_CALLBACK_OPERATORS = frozenset(
    f"__{name}__" for name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "pow", "rpow",
                               "matmul", "rmatmul", "neg", "pos", "abs", "getitem", "len", "iter", "lt", "le", "gt",
                               "ge", "eq", "ne", "bool", "float", "int", "index")
)


def _own(endpoint, target):
    """A target of a callback must be one of the judge's own objects handed to the sandbox."""
    key = endpoint.key_of(target)
    if key is None or not endpoint.own(key):
        raise PermissionError("the student's code may only call objects the grader handed to it")
    return target


def _judge_export(obj, key_for):
    """How the judge's objects reach the sandbox: library functions and classes by name (the
    sandbox imports its own), everything else by handle (its functions become callbacks)."""
    if wire.by_reference(obj):
        return None
    return ("object", type(obj).__name__, callable(obj))


def _refuse_handles(value, kind, args):
    """A graded function's result must be plain: no handle on a student's object anywhere in it."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, (RemoteObject, RemoteFunction, RemoteType)):
            raise NotPlainData(f"{_call_text(kind, args)} returned a {type(item).__name__} object of the student's; "
                               f"a graded function must return plain data (numbers, lists, tuples, arrays, tensors)")
        if type(item) in (list, tuple, set, frozenset) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item)
        elif type(item) is dict and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.keys())
            stack.extend(item.values())


def _write_back(target, value):
    """Make the judge's argument `target` what the student's code left its copy as (`value`)."""
    if type(target) is not type(value) or target is value:
        return
    if type(target) is list:
        target[:] = value
    elif type(target) in (dict, set):
        target.clear()
        target.update(value)
    elif wire.is_value_class(type(target), wire.value_classes()):
        for cls in type(target).__mro__:
            for slot in cls.__dict__.get("__slots__", ()):
                if hasattr(value, slot):
                    object.__setattr__(target, slot, getattr(value, slot))
        if hasattr(target, "__dict__"):
            target.__dict__.clear()
            target.__dict__.update(value.__dict__)


def _call_text(kind, args):
    if kind == "callname":
        return f"{args[0]}(...)"
    if kind == "exec":
        return "a cell"
    if kind in ("getattr", "op"):
        return f"{type(args[0]).__name__}.{args[1]}"
    return "a call into the student's code"


def _relay(result):
    """Show a sandbox cell's outputs in this (the judge's) cell."""
    from IPython.display import publish_display_data

    for output in result.get("outputs", [])[:100]:
        data = {k: v for k, v in output.get("data", {}).items() if k in _MIME_TYPES and type(v) in (str, bytes)}
        if data:
            publish_display_data(data, output.get("metadata") if type(output.get("metadata")) is dict else {})


_MIME_TYPES = frozenset({"text/plain", "text/html", "text/markdown", "text/latex", "image/png", "image/jpeg",
                         "image/svg+xml"})


def _student_cell_error(ename, evalue, lines):
    name = ename if type(ename) is str and ename.isidentifier() else "Error"
    cls = type(name, (StudentCellError,), {})
    lines = [line for line in lines if type(line) is str] if type(lines) is list else []
    return cls(str(evalue), lines or [f"{name}: {evalue}"])


def _show_traceback(shell, etype, value, tb, tb_offset=None):
    """Tracebacks in the judge: a student cell's as the sandbox recorded it; a test's without the
    judge's own frames (the proxies), which would only hide where the test and the student's code
    failed."""
    if isinstance(value, StudentCellError):
        return value.lines
    return shell.InteractiveTB.structured_traceback(etype, value, _without_judge_frames(tb), tb_offset=tb_offset)


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _without_judge_frames(tb):
    frames = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            frames.append(tb)
        tb = tb.tb_next
    rebuilt = None
    for frame in reversed(frames):
        rebuilt = types.TracebackType(rebuilt, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return rebuilt


def _copy_submission_files(source, workdir, uid):
    """The submission's own files (a helper module the student wrote) go into the sandbox only."""
    for name in os.listdir(source):
        path = os.path.join(source, name)
        if name.endswith(".ipynb") or name.startswith(".") or not os.path.isfile(path):
            continue
        target = os.path.join(workdir, name)
        shutil.copyfile(path, target)
        if uid is not None:
            os.chown(target, uid, uid)


def literal(text):
    """Parse the repr of a string a control execution sent back."""
    return ast.literal_eval(text)
