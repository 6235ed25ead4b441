"""The student bundle: a chapter's notebook with a copy of minigrad that does not give away answers.

The public repository is a textbook with solutions: `minigrad/` implements every exercise. For a
graded offering, students get `<chapter>/` instead: the released notebook, and beside it a
`minigrad/` in which every graded function of this chapter and of the later ones is a stub (the
notebook imports it, since a kernel puts the notebook's folder first on `sys.path`). Earlier
chapters' functions stay real: chapter 3 builds on a working backward pass.

A stub keeps its signature and docstring; its body asks `minigrad._exercises.exercise`, which
calls the student's own function of the same graded name when the notebook has defined one (so
the library runs on the student's answers: `Tensor.backward` uses their `backward`, `mg.draw`
their `topological_sort`), and otherwise raises NotImplementedError naming the exercise. Private
helpers of the module that a graded function calls (`_propagate` behind `backward`) are emptied
too, since they hold the answer. Classes keep `__init__` and `__repr__`; their other methods are
stubs. Which library objects are graded comes from `tests/chapters/<chapter>/library.json`.

Grading never uses the bundle: the grader's judge and sandbox import the full library.
"""

import ast
import importlib
import inspect
import shutil
import sys
import types
from pathlib import Path

from .pipeline import COURSE, PipelineError

EXERCISES_MODULE = '''"""Stubs of the exercises in this student copy of minigrad (made by `minigrad-course release --bundle`)."""

import inspect
import sys

_running = set()


def exercise(name, chapter):
    """A stand-in for the library's version of the exercise `name`: the student's function of that
    name in the notebook when there is one, otherwise NotImplementedError."""

    def stub(*args, **kwargs):
        student = getattr(sys.modules.get("__main__"), name, None)
        if callable(student) and not getattr(student, "_minigrad_exercise", False) and name not in _running:
            _running.add(name)
            try:
                positional, keywords = _adapted(student, args, kwargs)
                return student(*positional, **keywords)
            finally:
                _running.discard(name)
        raise NotImplementedError(
            f"{name} is an exercise of {chapter}: this copy of minigrad leaves it to you. "
            f"Define {name} in the notebook (its answer cell) and the library will use yours."
        )

    stub._minigrad_exercise = True
    stub.__name__ = stub.__qualname__ = name
    return stub


def _adapted(function, args, kwargs):
    """The arguments `function` takes: the library may pass more (defaults) than the exercise asks for."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return args, kwargs
    if not any(p.kind is p.VAR_POSITIONAL for p in parameters):
        args = args[: sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)]
    if not any(p.kind is p.VAR_KEYWORD for p in parameters):
        kwargs = {k: v for k, v in kwargs.items() if k in {p.name for p in parameters}}
    return args, kwargs
'''

_KEPT_METHODS = {"__init__", "__repr__", "__slots__"}


def graded_objects(chapters, course=COURSE):
    """[(graded name, chapter, library object)] for `chapters`, from their library.json."""
    found = []
    for chapter in chapters:
        for name, spec in course.library(chapter).items():
            module, _, path = spec.partition(":")
            target = importlib.import_module(module)
            for part in path.split("."):
                target = getattr(target, part)
            found.append((name, chapter, target))
    return found


def make_bundle(chapter, dest, course=COURSE, library=None):
    """Write the student bundle of `chapter` into `dest/<chapter>/`; returns that folder."""
    # Later chapters are those with a library.json too (their sources need not be in this course).
    listed = {p.parent.name for p in Path(course.corpus).glob("*/library.json")}
    chapters = sorted(set(course.chapters()) | listed)
    if chapter not in chapters:
        raise PipelineError(f"no chapter {chapter!r}; chapters: {chapters}")
    library = Path(library or Path(importlib.import_module("minigrad").__file__).parent)
    folder = Path(dest) / chapter
    if folder.exists():
        shutil.rmtree(folder)
    release = course.notebooks / chapter
    if not release.is_dir():
        raise PipelineError(f"{release} is missing: run `minigrad-course release {chapter}` first")
    shutil.copytree(release, folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    package = folder / "minigrad"
    shutil.copytree(library, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (package / "_exercises.py").write_text(EXERCISES_MODULE)
    graded = graded_objects(chapters[chapters.index(chapter):], course)
    edits = {}
    for name, owner, target in graded:
        path, stubs = _stub_edits(name, owner, target)
        edits.setdefault(path, []).extend(stubs)
    for path, changes in edits.items():
        relative = Path(path).resolve().relative_to(library.resolve())
        _apply(package / relative, changes, relative)
    (folder / "README.txt").write_text(_readme(chapter, graded))
    return folder


# --------------------------------------------------------------------------- source surgery
def _stub_edits(name, chapter, target):
    """(source file, [(start, end, replacement)]) that turn `target` into a stub."""
    call = f'_exercise({name!r}, {chapter!r})'
    if isinstance(target, type):
        path = inspect.getsourcefile(target)
        tree, lines = _parse(path)
        node = _find(tree, ast.ClassDef, target.__name__, inspect.getsourcelines(target)[1])
        methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and m.name not in _KEPT_METHODS]
        return path, [_body_edit(m, lines, f'{_exercise_qualified(name, m.name, chapter)}') for m in methods]
    function = getattr(target, "py_func", getattr(target, "__func__", target))  # numba: the Python source
    if not isinstance(function, types.FunctionType):
        raise PipelineError(f"{name}: cannot make a stub of {target!r} (a function, lambda or class is needed)")
    path = function.__code__.co_filename
    tree, lines = _parse(path)
    if function.__name__ == "<lambda>":
        node = _find_lambda(tree, function)
        params = _forwarded(node.args)
        start, end = _span(lines, node.body)
        return path, [(start, end, f"{call}({params})")]
    node = _find(tree, (ast.FunctionDef, ast.AsyncFunctionDef), function.__name__, function.__code__.co_firstlineno)
    edits = [_body_edit(node, lines, call)]
    for helper in _private_helpers(tree, node):
        edits.append(_body_edit(helper, lines, f"_exercise({f'{helper.name} (part of {name})'!r}, {chapter!r})"))
    return path, edits


def _exercise_qualified(name, method, chapter):
    return f'_exercise("{name}.{method}", {chapter!r})'


def _parse(path):
    text = Path(path).read_text()
    return ast.parse(text), text.splitlines(keepends=True)


def _find(tree, kinds, name, line):
    candidates = [n for n in ast.walk(tree) if isinstance(n, kinds) and n.name == name]
    for node in candidates:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if first <= line <= node.end_lineno:
            return node
    if len(candidates) == 1:
        return candidates[0]
    raise PipelineError(f"cannot find the definition of {name} (line {line})")


def _find_lambda(tree, function):
    code = function.__code__
    names = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno:
            args = node.args
            if [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs] == names:
                return node
    raise PipelineError(f"cannot find the lambda of line {code.co_firstlineno} in {code.co_filename}")


def _private_helpers(tree, function):
    """Module-level private functions `function` calls, directly or through one another."""
    private = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name.startswith("_") and not n.name.startswith("__")}
    found, stack = {}, [function]
    while stack:
        for node in ast.walk(stack.pop()):
            if isinstance(node, ast.Name) and node.id in private and node.id not in found:
                found[node.id] = private[node.id]
                stack.append(private[node.id])
    return list(found.values())


def _forwarded(args):
    """The call arguments that pass a function's parameters on unchanged."""
    parts = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return ", ".join(parts)


def _body_edit(node, lines, call):
    """Replace a function's body (its docstring stays) by a call of the stub with its arguments."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    indent = " " * (node.col_offset + 4)
    statement = f"return {call}({_forwarded(node.args)})"
    if not body:  # only a docstring: the stub goes after it
        end = _offset(lines, node.end_lineno, node.end_col_offset)
        return end, end, f"\n{indent}{statement}"
    start = _offset(lines, body[0].lineno, 0)
    end = _offset(lines, node.end_lineno, node.end_col_offset)
    return start, end, f"{indent}{statement}"


def _span(lines, node):
    return _offset(lines, node.lineno, node.col_offset), _offset(lines, node.end_lineno, node.end_col_offset)


def _offset(lines, line, column):
    return sum(len(text) for text in lines[: line - 1]) + len(lines[line - 1].encode()[:column].decode())


def _apply(path, changes, relative):
    text = path.read_text()
    kept = []  # one edit per span: a helper shared by two exercises, or a lambda inside a stubbed body
    for start, end, replacement in sorted(changes, key=lambda change: (change[0], -change[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, replacement))
    for start, end, replacement in reversed(kept):
        text = text[:start] + replacement + text[end:]
    depth = len(relative.parts) - 1
    text = _add_import(text, ("." * (depth + 1)) + "_exercises")
    try:
        compile(text, str(path), "exec")
    except SyntaxError as error:
        raise PipelineError(f"the stubbed {relative} does not compile: {error}") from None
    path.write_text(text)


def _add_import(text, module):
    """`from <module> import exercise as _exercise`, after the docstring and __future__ imports."""
    tree = ast.parse(text)
    line = 0
    for node in tree.body:
        is_docstring = isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)
        if is_docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            line = node.end_lineno
        else:
            break
    lines = text.splitlines(keepends=True)
    statement = f"from {module} import exercise as _exercise  # exercises are stubs in the student copy\n"
    return "".join(lines[:line]) + ("\n" if line else "") + statement + "".join(lines[line:])


def _readme(chapter, graded):
    names = sorted({name for name, owner, _ in graded if owner == chapter})
    later = sorted({name for name, owner, _ in graded if owner != chapter})
    return (
        f"minigrad course, {chapter}\n\n"
        f"Open {chapter}.ipynb in JupyterLab (pip install numpy matplotlib tqdm graphviz jupyterlab nbgrader).\n"
        f"The minigrad folder beside it is the course library without answers: your exercises in this\n"
        f"chapter ({', '.join(names)}) and later ones ({', '.join(later) or 'none'}) are stubs\n"
        f"that run your own functions once the notebook defines them.\n"
    )


def main(argv=None):
    """python -m course.bundle <chapter> <dest>"""
    chapter, dest = (sys.argv[1:] if argv is None else argv)[:2]
    print(make_bundle(chapter, dest))


if __name__ == "__main__":
    main()

