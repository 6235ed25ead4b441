"""The student bundle: a chapter's notebook with a copy of minigrad that does not give away answers.

The public repository is a textbook with solutions: `minigrad/` implements every exercise. For a
graded offering, students get `<chapter>/` instead: the released notebook, and beside it a
`minigrad/` in which every graded function of this chapter and of the later ones is a stub (the
notebook imports it, since a kernel puts the notebook's folder first on `sys.path`). Earlier
chapters' functions stay as they are: chapter 3 builds on a working backward pass.

A stub keeps its signature and docstring; its body asks `minigrad._exercises.exercise` (the
module `course/bundle_runtime.py`) what to run: for this chapter's exercises, the student's own
function of the same graded name once the notebook defines it (so the library runs on the
student's answers: `Tensor.backward` uses their `backward`, `mg.draw` their `topological_sort`),
otherwise a NotImplementedError naming the exercise; for everything else the reference
implementation, shipped compressed so that reading the library does not show the answer. The
private helpers a graded function calls (`_propagate` behind `backward`) hold the answer too:
their source is hidden the same way, and they always run the reference, so other library
functions that share them (`rk4_solve` beside `euler_solve`) keep working. Classes keep `__init__`
and `__repr__`; their other methods are stubs. Which library objects are graded comes from
`tests/chapters/<chapter>/library.json`.

`minigrad-course mine` builds the same copy with every chapter's exercises stubbed and the
student's answers from all their notebooks behind the stubs (course/mine.py). Grading never uses
either: the grader's judge and sandbox import the full library.
"""

import ast
import base64
import copy
import importlib
import inspect
import shutil
import sys
import textwrap
import types
import zlib
from pathlib import Path

from .bundle_runtime import Stub
from .pipeline import COURSE, PipelineError, answer_cells, graded_name_of, nbgrader_metadata, written_answers

RUNTIME = Path(__file__).with_name("bundle_runtime.py")  # becomes minigrad/_exercises.py in a bundle

_KEPT_METHODS = {"__init__", "__repr__", "__slots__"}


def graded_objects(chapters, course=COURSE):
    """[(graded name, chapter, library object, its attribute path)] for `chapters`, from their library.json."""
    found = []
    for chapter in chapters:
        for name, spec in course.library(chapter).items():
            module, _, path = spec.partition(":")
            found.append((name, chapter, _resolve(importlib.import_module(module), path), path))
    return found


def _resolve(target, path):
    for part in path.split("."):
        target = getattr(target, part)
    return target


def make_bundle(chapter, dest, course=COURSE, library=None):
    """Write the student bundle of `chapter` into `dest/<chapter>/`; returns that folder."""
    chapters = course_chapters(course)
    if chapter not in chapters:
        raise PipelineError(f"no chapter {chapter!r}; chapters: {chapters}")
    folder = Path(dest) / chapter
    if folder.exists():
        shutil.rmtree(folder)
    release = course.notebooks / chapter
    if not release.is_dir():
        raise PipelineError(f"{release} is missing: run `minigrad-course release {chapter}` first")
    shutil.copytree(release, folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    graded = stub_library(folder / "minigrad", chapters[chapters.index(chapter):], chapter, course, library)
    (folder / "README.txt").write_text(_readme(chapter, graded))
    return folder


def course_chapters(course=COURSE):
    """Every chapter: those with a solution, and those with a library.json (a later chapter's
    exercises are stubbed even where this course has only some chapters' sources)."""
    listed = {p.parent.name for p in Path(course.corpus).glob("*/library.json")}
    return sorted(set(course.chapters()) | listed)


def stub_library(package, chapters, chapter, course=COURSE, library=None, mine=False):
    """Copy minigrad into `package` with the exercises of `chapters` made stubs; `chapter` is the
    one whose exercises the notebook answers. Returns graded_objects(chapters)."""
    library = Path(library or Path(importlib.import_module("minigrad").__file__).parent)
    shutil.copytree(library, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    graded = graded_objects(chapters, course)
    edits, stubs = {}, {}
    graded_classes = {target.__name__ for _, _, target, _ in graded if isinstance(target, type)}
    for name, owner, target, attribute in graded:
        path, changes, entries = _stub_edits(name, owner, target, attribute, library, graded_classes)
        edits.setdefault(path, []).extend(changes)
        stubs.update(entries)
    for path, changes in edits.items():
        relative = Path(path).resolve().relative_to(library.resolve())
        _apply(package / relative, changes, relative)
    settings = f"\n\nCHAPTER = running_chapter = {chapter!r}\nMINE = {mine!r}\nSTUBS.update({stubs!r})\n"
    (package / "_exercises.py").write_text(RUNTIME.read_text() + settings)
    return graded


# --------------------------------------------------------------------------- source surgery
def _stub_edits(name, chapter, target, attribute, library, graded_classes=frozenset()):
    """(source file, [(start, end, replacement)], {stub key: its STUBS entry}) that turn `target`
    into a stub: its body calls `_exercise(key)`, and its source goes into the entry, packed."""
    if isinstance(target, type):
        path = inspect.getsourcefile(target)
        tree, lines = _parse(path)
        module = _module_name(path, library)
        node = _find(tree, ast.ClassDef, target.__name__, inspect.getsourcelines(target)[1])
        methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and m.name not in _KEPT_METHODS]
        edits, entries = [], {}
        for method in methods:
            key = f"{name}.{method.name}"
            edits.append(_body_edit(method, lines, key))
            entries[key] = Stub(name, chapter, module, f"{target.__name__}.{method.name}", "method",
                                _pack(_source(lines, method)))
        return path, edits, entries
    function = getattr(target, "py_func", getattr(target, "__func__", target))  # numba: the Python source
    if not isinstance(function, types.FunctionType):
        raise PipelineError(f"{name}: cannot make a stub of {target!r} (a function, lambda or class is needed)")
    path = function.__code__.co_filename
    tree, lines = _parse(path)
    module = _module_name(path, library)
    if function.__name__ == "<lambda>":
        node = _find_lambda(tree, function)
        start, end = _span(lines, node.body)
        if _resolve(importlib.import_module(module), attribute) is not target:
            raise PipelineError(f"{name}: the lambda {attribute} must be defined in {module}, where it lives")
        whole = _span(lines, node)
        entry = Stub(name, chapter, module, attribute, "lambda", _pack("".join(lines)[whole[0]:whole[1]]))
        return path, [(start, end, f"_exercise({name!r})({_forwarded(node.args)})")], {name: entry}
    node = _find(tree, (ast.FunctionDef, ast.AsyncFunctionDef), function.__name__, function.__code__.co_firstlineno)
    compiled = function is not target and hasattr(target, "py_func")  # numba's: the stub runs as plain Python
    edits = [_body_edit(node, lines, name)]
    if compiled:
        edits.append(_decorators_removed(node, lines))
    entries = {name: Stub(name, chapter, module, function.__name__, "function",
                          _pack(_source(lines, node, decorators=compiled)))}
    classes = [c for c in _helper_classes(tree, node) if c.name not in graded_classes]  # those are stubs already
    methods = [(f"{klass.name}.{m.name}", m) for klass in classes for m in klass.body
               if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name not in _KEPT_METHODS]
    for helper in _private_helpers(tree, node, *(m for _, m in methods)):
        key = f"{module}:{helper.name}"
        edits.append(_body_edit(helper, lines, key))
        entries[key] = Stub(None, chapter, module, helper.name, "function", _pack(_source(lines, helper)))
    for attribute_path, method in methods:
        key = f"{module}:{attribute_path}"
        edits.append(_body_edit(method, lines, key))
        entries[key] = Stub(None, chapter, module, attribute_path, "method", _pack(_source(lines, method)))
    return path, edits, entries


def _helper_classes(tree, function):
    """Module-level classes the graded function's own body uses (chapter 6's `Checkpoint`, the
    `minigrad.Function` that *is* the answer of `checkpoint`): their methods hold the answer too.
    Classes reached only through those (`RandomState`) are tools the chapter teaches, left readable."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    return [classes[name] for name in sorted(used & classes.keys())]


def _module_name(path, library):
    relative = Path(path).resolve().relative_to(Path(library).resolve().parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def _source(lines, node, decorators=False):
    """The definition's source, dedented (with its decorators when `decorators`)."""
    first = min([node.lineno] + [d.lineno for d in node.decorator_list]) if decorators else node.lineno
    return textwrap.dedent("".join(lines[first - 1: node.end_lineno]))


def _pack(source):
    """The source compressed: the stub's reference runs it, a reader of the library does not see it."""
    return base64.b64encode(zlib.compress(source.encode(), 9)).decode()


def _decorators_removed(node, lines):
    start = _offset(lines, min(d.lineno for d in node.decorator_list), 0)
    return start, _offset(lines, node.lineno, 0), ""


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


def _private_helpers(tree, *functions):
    """Module-level private functions `functions` call, directly or through one another."""
    private = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name.startswith("_") and not n.name.startswith("__")}
    found, stack = {}, list(functions)
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


def _body_edit(node, lines, key):
    """Replace a function's body (its docstring stays) by a call of the stub `key` with its arguments."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    indent = " " * (node.col_offset + 4)
    statement = f"return _exercise({key!r})({_forwarded(node.args)})"
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


# --------------------------------------------------------------------------- running a bundle
def answered(nb, answers):
    """A copy of `nb` whose answer cells (code or written) named in `answers` ({grade id: source})
    hold those sources."""
    filled = copy.deepcopy(nb)
    for name, cell in {**answer_cells(filled), **written_answers(filled)}.items():
        if name in answers:
            cell.source = answers[name]
    return filled


def run_notebook(nb, folder, timeout=600, zygote=None):
    """`nb` executed top to bottom in a fresh kernel whose working folder is `folder` (so it imports
    the bundle's minigrad), going on after a failing cell as if Run All did not stop there. The
    kernel is forked from `zygote` (`course.kernel_zygote.student_kernels`) if one is given."""
    from nbclient import NotebookClient
    from traitlets.config import Config

    from .kernel_zygote import ZygoteKernelManager
    from .kernels import ReadyKernelManager

    config = Config()
    if zygote is not None:
        config.ZygoteKernelManager.zygote = zygote.address
    executed = copy.deepcopy(nb)
    NotebookClient(executed, timeout=timeout, allow_errors=True, kernel_name="python3", config=config,
                   kernel_manager_class=ReadyKernelManager if zygote is None else ZygoteKernelManager,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return executed


def failed_cells(nb, names):
    """[(cell index, grade id or "", the graded name among `names` it tests or None, error line)]
    for every cell of an executed notebook that raised."""
    found = []
    for index, cell in enumerate(nb.cells):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            grade_id = nbgrader_metadata(cell).get("grade_id", "")
            owner = graded_name_of(grade_id, names) if grade_id.startswith("test_") else None
            found.append((index, grade_id, owner, f"{errors[0]['ename']}: {errors[0]['evalue']}"))
    return found


def _readme(chapter, graded):
    names = sorted({name for name, owner, *_ in graded if owner == chapter})
    later = sorted({name for name, owner, *_ in graded if owner != chapter})
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

