"""The student bundle (`minigrad-course release CH --bundle`) never misleads, for every chapter.

Each chapter's bundle is built once and run in fresh kernels (nbclient, no nbgrader) as a student
would run it: answered with the solution's answers, it runs top to bottom without an error and
nbgrader's Validate passes it; untouched, the only failing cells are the exercises' tests, each
naming its exercise; with one wrong answer per graded function (the first of the chapter's corpus
that does not patch the library's source),
no cell fails but that exercise's tests (some wrong answers only lose hidden tests, which the
bundle does not have) and the exceptions its library.json lists with a reason, whose messages
name the function. The wrong answers run the notebook's nbgrader cells only
(setup, answers, tests: what grading keeps), and Validate runs on the answered notebook's nbgrader
cells: the experiments have already run clean in the answered run, and tests must not need them.
Also: `minigrad-course validate`'s report format, and `minigrad-course mine`. The kernels are forked
from a zygote that preloaded the third-party modules (`course.kernel_zygote.student_kernels`, as
`mine` runs them): each is a fresh process that imports the bundle's minigrad, as a plain kernel does.
"""

import json
import re

import pytest

from course.bundle import answered, failed_cells, make_bundle, run_notebook
from course.kernel_zygote import student_kernels
from course.pipeline import (
    COURSE,
    answer_cells,
    grade_cells,
    graded_name_of,
    read_notebook,
    trimmed_notebook,
    written_answers,
)

CHAPTERS = [c for c in COURSE.chapters() if COURSE.library(c)]
# Notebook fixes that belong to the chapter's owner (strict: these fail the suite once fixed, to be removed).
OPEN = {}


def first_wrong_answer(chapter, name):
    """The first of `name`'s wrong answers that stands on its own: one written as a patch of the
    library's source (`inspect.getsource`) patches a stub in the bundle, which ships no source."""
    variants = sorted(v for v, (n, source) in COURSE.wrong_answers(chapter).items()
                      if n == name and "getsource" not in source)
    return variants[0] if variants else None


WRONG = [(chapter, name, first_wrong_answer(chapter, name)) for chapter in CHAPTERS for name in COURSE.library(chapter)]


class Bundle:
    """One chapter's bundle: its folder, released notebook and the solution's answers."""

    def __init__(self, chapter, dest, zygote):
        self.chapter = chapter
        self.zygote = zygote
        self.folder = make_bundle(chapter, dest)
        self.release = read_notebook(self.folder / f"{chapter}.ipynb")
        source = read_notebook(COURSE.source(chapter))
        self.solutions = {n: c.source for n, c in {**answer_cells(source), **written_answers(source)}.items()}
        self.names = list(COURSE.library(chapter))

    def run(self, answers, trimmed=False):
        nb = answered(self.release, answers)
        return run_notebook(trimmed_notebook(nb) if trimmed else nb, self.folder, zygote=self.zygote)

    def failures(self, executed):
        return failed_cells(executed, self.names)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """chapter -> Bundle, built on first use (each chapter's tests share one xdist worker)."""
    built = {}
    with student_kernels(["numba"]) as zygote:  # numba: chapter 9's bundle, wherever its tests run

        def get(chapter):
            if chapter not in built:
                built[chapter] = Bundle(chapter, tmp_path_factory.mktemp(chapter), zygote)
            return built[chapter]

        yield get


def chapter_params(items, chapter_of=lambda item: item, case=None):
    return [pytest.param(*(item if isinstance(item, tuple) else (item,)),
                         marks=[pytest.mark.xdist_group(f"bundle-{chapter_of(item)}")] +
                         ([pytest.mark.xfail(strict=True, reason=OPEN[case, item])] if (case, item) in OPEN else []) +
                         ([pytest.mark.skip(reason="every wrong answer in its corpus patches the library's source")]
                          if isinstance(item, tuple) and item[-1] is None else []),
                         id="-".join(map(str, item)) if isinstance(item, tuple) else item)
            for item in items]


def shown(failures):
    return "\n".join(f"  cell {i} {g or '(ungraded)'}: {e[:400]}" for i, g, _, e in failures)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", chapter_params(CHAPTERS, case="answered"))
def test_answered_bundle_runs_clean_and_validates(bundles, chapter):
    import nbformat

    from course.feedback import validate_notebook

    bundle = bundles(chapter)
    failures = bundle.failures(bundle.run(bundle.solutions))
    assert not failures, f"{chapter}'s bundle, answered from the solution, failed:\n{shown(failures)}"
    path = bundle.folder / "validate-answered.ipynb"
    nbformat.write(trimmed_notebook(answered(bundle.release, bundle.solutions)), str(path))
    passed, report = validate_notebook(path)
    assert passed, report


@pytest.mark.slow
@pytest.mark.parametrize("chapter", chapter_params(CHAPTERS, case="untouched"))
def test_untouched_bundle_fails_only_in_the_exercises_naming_them(bundles, chapter):
    bundle = bundles(chapter)
    failures = bundle.failures(bundle.run({}))
    stray = [f for f in failures if f[2] is None or f"not implemented yet: {f[2]}" not in f[3]]
    assert not stray, f"{chapter}'s untouched bundle failed where the message names no exercise:\n{shown(stray)}"
    tests = {g for g in grade_cells(bundle.release) if graded_name_of(g, bundle.names)}
    passing = tests - {f[1] for f in failures}
    assert not passing, f"{chapter}'s untouched bundle passes tests of exercises left undone: {sorted(passing)}"


@pytest.mark.slow
@pytest.mark.parametrize("chapter, name, variant", chapter_params(WRONG, lambda item: item[0]))
def test_one_wrong_answer_fails_only_its_exercise(bundles, chapter, name, variant):
    bundle = bundles(chapter)
    answers = {**bundle.solutions, name: COURSE.wrong_answers(chapter)[variant][1]}
    failures = bundle.failures(bundle.run(answers, trimmed=True))
    excused = COURSE.bundle_exceptions(chapter).get(name, {}).get("cells", [])
    stray = [f for f in failures if f[2] != name and f[1] not in excused]
    assert not stray, f"a wrong {name} ({variant}) fails other cells of {chapter}'s bundle:\n{shown(stray)}"
    unnamed = [f for f in failures if f[1] in excused and name not in f[3]]
    assert not unnamed, f"cells that a wrong {name} fails by design must say it is {name}:\n{shown(unnamed)}"


ANSI = re.compile(r"\x1b\[")
CLOSING = re.compile(r"^(\d+) passed, (\d+) failed \(([\d.]+) of ([\d.]+) points\)$")


@pytest.mark.slow
@pytest.mark.xdist_group("bundle-ch02_backprop")
def test_validate_report_names_points_and_whole_messages(bundles, capsys):
    """A wrong tanh_vjp (in the bundle it fails backward's tests too, with messages of several
    lines): `minigrad-course validate` lists every graded cell by grade id with its points, gives
    each failing cell's whole message as the notebook shows it, no colour codes, and closes with the
    counts and points; --json carries the same."""
    import nbformat

    from course.cli import main

    bundle = bundles("ch02_backprop")
    wrong = COURSE.wrong_answers("ch02_backprop")["tanh_vjp--forgets-g"][1]
    nb = trimmed_notebook(answered(bundle.release, {**bundle.solutions, "tanh_vjp": wrong}))
    path = bundle.folder / "validate-wrong.ipynb"
    nbformat.write(nb, str(path))
    messages = {g: e for _, g, _, e in bundle.failures(run_notebook(nb, bundle.folder, zygote=bundle.zygote))}
    points = {g: float(c.metadata["nbgrader"]["points"]) for g, c in grade_cells(nb).items()}
    assert "test_tanh_vjp_values" in messages and any("\n" in m for m in messages.values()), messages

    assert main(["validate", str(path)]) == 1
    report = capsys.readouterr().out
    assert not ANSI.search(report), report
    for grade_id, worth in points.items():
        mark = "FAIL" if grade_id in messages else "ok"
        assert re.search(rf"^\s+{mark}\s+{grade_id} \({worth:g} points?\)$", report, re.MULTILINE), report
    unindented = "\n".join(line.rstrip() for line in report.replace("\n       ", "\n").splitlines())
    for grade_id, message in messages.items():
        whole = "\n".join(line.rstrip() for line in message.strip().splitlines())
        assert whole in unindented, f"{grade_id}'s message as the notebook shows it\n{message}\nis not whole in\n{report}"
    kept = sum(p for g, p in points.items() if g not in messages)
    closing = CLOSING.match(report.strip().splitlines()[-1])
    expected = (str(len(points) - len(messages)), str(len(messages)), f"{kept:g}", f"{sum(points.values()):g}")
    assert closing and closing.groups() == expected, report

    assert main(["validate", "--json", str(path)]) == 1
    (data,) = json.loads(capsys.readouterr().out)
    assert not data["passed"] and [c["name"] for c in data["cells"]] == list(points)
    assert {c["name"]: c["message"] for c in data["cells"] if not c["passed"]} == {g: m.strip() for g, m in messages.items()}
    assert [c["points"] for c in data["cells"]] == list(points.values())


def answered_notebooks(folder, wrong=None):
    """Every chapter's release answered from its solution, in `folder/<chapter>/<chapter>.ipynb`
    (with `wrong` = (chapter, variant), that wrong answer instead)."""
    import nbformat

    for chapter in CHAPTERS:
        source = read_notebook(COURSE.source(chapter))
        answers = {n: c.source for n, c in answer_cells(source).items()}
        if wrong and wrong[0] == chapter:
            name, answers[name] = COURSE.wrong_answers(chapter)[wrong[1]]
        (folder / chapter).mkdir(parents=True)
        nbformat.write(answered(read_notebook(COURSE.release(chapter)), answers), str(folder / chapter / f"{chapter}.ipynb"))
    return folder


@pytest.mark.slow
@pytest.mark.xdist_group("mine")
def test_mine_runs_every_chapter_clean_on_correct_answers(tmp_path):
    """Every chapter's visible tests on a minigrad of the solution's answers (--quick: the notebooks'
    nbgrader cells only, to keep the suite short), clean: the solution's answers behave as the library
    wherever a later chapter relies on them."""
    from course.mine import mine

    runs = mine(answered_notebooks(tmp_path / "notebooks"), quick=True, keep=tmp_path / "mine", progress=lambda _: None)
    assert [run.chapter for run in runs] == CHAPTERS
    failed = {(run.chapter, cell[1]): cell for run in runs for cell in run.failures}
    assert not failed, f"correct answers fail on the student's own minigrad: {failed}"
    later = {run.chapter: run.calls for run in runs}
    assert later["ch04_higher_order"].get("backward") and later["ch02_backprop"].get("topological_sort"), \
        f"later chapters did not run the student's earlier functions: {later}"


@pytest.mark.slow
@pytest.mark.xdist_group("mine")
def test_mine_names_a_wrong_vjp_rule_where_later_chapters_trip(tmp_path, capsys):
    from course.cli import main

    notebooks = answered_notebooks(tmp_path / "notebooks", wrong=("ch02_backprop", "tanh_vjp--forgets-g"))
    assert main(["mine", "ch02_backprop", "--notebooks", str(notebooks), "--quick"]) == 1
    report = capsys.readouterr().out
    chapters = re.split(r"^(?=ch\d\d_\w+ \()", report, flags=re.MULTILINE)
    later = [text for text in chapters if text.startswith("ch") and not text.startswith("ch02_")]
    tripped = [text for text in later if "cells failed" in text.splitlines()[0]]
    assert tripped, f"no later chapter tripped over the wrong tanh_vjp:\n{report}"
    for text in tripped:
        blamed = set(re.findall(r"^\s+your (\w+) fails its own tests", text, re.MULTILINE))
        assert blamed == {"tanh_vjp"}, f"the report blames {blamed or 'nothing'}, not tanh_vjp:\n{text}"
