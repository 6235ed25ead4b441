"""The exercises in this student copy of minigrad (made by `minigrad-course release --bundle` or `mine`).

Every graded function of the course is a stub in this copy: its body asks `exercise(key)` what to
run. For an exercise of the chapter you are working on, that is your function of the same name in
the notebook (so `Tensor.backward` runs your `backward`, `mg.draw` your `topological_sort`), or a
NotImplementedError that names the exercise. Everything else runs the course's reference
implementation, kept here compressed so that reading the library does not show an answer (the
course's public repository has them all): later chapters' exercises, the private helpers behind an
exercise, and the options the library passes that your function does not take (`trace(...,
backward=True)` when yours traces forward only). With `minigrad-course mine`, earlier chapters'
exercises run your answers from their notebooks instead, and `calls` counts each of yours.
"""

import base64
import collections
import importlib
import inspect
import sys
import textwrap
import zlib

CHAPTER = None  # the chapter this copy was made for
MINE = False  # True in `minigrad-course mine`: earlier chapters' exercises are your answers too
# One stub: the graded name (None for a private helper no exercise asks for), the chapter whose
# exercise it is, the module and attribute path of the library's object ("Tensor.backward"), its
# kind ("function", "method" or "lambda") and its reference source, compressed (see `reference`).
Stub = collections.namedtuple("Stub", "name chapter module path kind packed")

STUBS = {}  # key -> Stub
ANSWERS = {}  # chapter -> the module of your answers from its notebook (mine)

running_chapter = CHAPTER
calls = collections.Counter()  # graded name -> how often the library ran your function (mine reports it)
_running = set()
_built = {}
_signatures = {}


def exercise(key):
    """What the library's stub `key` runs: yours, the reference, or NotImplementedError."""
    name, chapter = STUBS[key].name, STUBS[key].chapter
    if name is None:  # a private helper: no exercise asks for it
        return reference(key)

    def stub(*args, **kwargs):
        if key in _running:
            raise RuntimeError(f"your {name} calls minigrad's {name}, which in this copy of minigrad is your {name}: "
                               f"write it without calling the library's {name}")
        yours = _yours(key, name, chapter)
        if yours is None and chapter == running_chapter and not MINE:
            raise NotImplementedError(
                f"not implemented yet: {name} (an exercise of {chapter}): this copy of minigrad leaves it to "
                f"you. Define {name} in the notebook (its answer cell) and the library will use yours."
            )
        call = _adapted(yours, _library_signature(key), args, kwargs) if callable(yours) else None
        if call is None:
            return reference(key)(*args, **kwargs)
        calls[name] += 1
        _running.add(key)
        try:
            return yours(*call[0], **call[1])
        finally:
            _running.discard(key)

    stub.__name__ = stub.__qualname__ = name
    return stub


def reference(key):
    """The course's implementation of `key` (a graded name, `Class.method`, or `module:_helper`)."""
    if key not in _built:
        stub = STUBS[key]
        namespace = importlib.import_module(stub.module).__dict__
        source = zlib.decompress(base64.b64decode(stub.packed)).decode()
        filename = f"<the course's reference {key}>"
        if stub.kind == "lambda":
            _built[key] = eval(compile(f"(\n{source}\n)", filename, "eval"), namespace)
        else:
            owner, _, attribute = stub.path.rpartition(".")
            if stub.kind == "method":  # a closure over __class__, so that super() works as in the class
                source = f"def _make(__class__):\n{textwrap.indent(source, '    ')}\n    return {attribute}\n"
            local = {}
            exec(compile(source, filename, "exec"), namespace, local)
            _built[key] = local["_make"](namespace[owner]) if stub.kind == "method" else local[attribute]
    return _built[key]


def _yours(key, name, chapter):
    """Your function (or method) for `key`; None when you have not written it; False for a method
    your class does not define (one the exercise does not ask for: the reference runs)."""
    kind, path = STUBS[key].kind, STUBS[key].path
    head = key.partition(".")[0] if kind == "method" else name
    if chapter == running_chapter:
        found = getattr(sys.modules.get("__main__"), head, None)
    elif MINE and chapter in ANSWERS:
        found = getattr(_answers(chapter), head, None)
    else:
        return None
    library = _library_object(key, path.rpartition(".")[0] if kind == "method" else path)
    if not callable(found) or found is library or getattr(found, "py_func", None) is library:
        return None  # the library's own, imported into the notebook: not yours
    if kind != "method":
        return found
    method = path.rpartition(".")[2]
    for klass in found.__mro__ if isinstance(found, type) else ():
        if klass is library or klass is object:
            break
        if method in vars(klass):
            return getattr(found, method)
    return False  # inherited from the library's class or from object: not written in yours


def _library_object(key, path):
    target = importlib.import_module(STUBS[key].module)
    for part in path.split("."):
        target = getattr(target, part)
    return target


def _answers(chapter):
    module = ANSWERS[chapter]
    return importlib.import_module(module) if isinstance(module, str) else module


def _library_signature(key):
    if key not in _signatures:
        target = _library_object(key, STUBS[key].path)
        _signatures[key] = inspect.signature(getattr(target, "py_func", target))
    return _signatures[key]


def _adapted(function, library, args, kwargs):
    """(args, kwargs) for `function` from the library's call, or None when the library passes an
    option `function` does not take with a value other than its default (the reference runs then)."""
    try:
        theirs = list(inspect.signature(function).parameters.values())
        bound = library.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return args, kwargs
    kinds = inspect.Parameter
    slots = sum(p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD) for p in theirs)
    names = {p.name for p in theirs if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)}
    varargs = any(p.kind is kinds.VAR_POSITIONAL for p in theirs)
    varkw = any(p.kind is kinds.VAR_KEYWORD for p in theirs)
    positional, keywords = [], {}
    for parameter in library.parameters.values():
        if parameter.name not in bound:
            continue
        value = bound[parameter.name]
        if parameter.kind is kinds.VAR_POSITIONAL:
            if varargs or len(positional) + len(value) <= slots:
                positional.extend(value)
            elif value:
                return None
        elif parameter.kind is kinds.VAR_KEYWORD:
            for name, item in value.items():
                if name not in names and not varkw:
                    return None
                keywords[name] = item
        elif parameter.kind is not kinds.KEYWORD_ONLY and len(positional) < slots and not keywords:
            positional.append(value)
        elif parameter.name in names or varkw:
            keywords[parameter.name] = value
        elif not _is_default(value, parameter.default):
            return None
    return positional, keywords


def _is_default(value, default):
    if value is default:
        return True
    plain = (bool, int, float, str, bytes, type(None))
    return type(value) is type(default) and isinstance(value, plain) and value == default
