"""Text twins of the solution notebooks: ``twins/<chapter>/<chapter>.py`` in jupytext's percent format.

A solution notebook is JSON: a one-line change to a test is a noisy diff, and two edits of one
chapter merge badly. Its twin holds the same cells as plain Python, one ``# %%`` header per cell
with the cell's metadata in it (``# %% nbgrader={"grade": true, "grade_id": "test_x", ...}``,
markdown as comments), so people edit and review the twin and the notebook follows. The pairing
(``solutions///ipynb,twins///py:percent``) and the header's filters are declared once, in
``jupytext.toml`` at the course root, which JupyterLab's jupytext extension reads too.

The twins live outside ``solutions/<chapter>/`` on purpose: nbgrader copies every file of that folder
into the student release, and a twin is the full solution.

What the round trip twin -> notebook keeps: every cell's type and source, every cell's metadata
(nbgrader's grade, solution, locked, grade_id, points, schema_version, task; deletable, editable;
anything else), the notebook's kernelspec and language_info, and no outputs. What it cannot keep,
none of which nbgrader reads:
  * trailing newlines at the end of a cell's source (the percent format ends a cell at its last line);
  * cell ids and nbformat's minor version: a notebook written from its twin takes them from the
    notebook it replaces (a cell keeps its id while it stays in place), a new one is nbformat 4.4;
  * notebook metadata other than kernelspec and language_info, and the cell metadata jupytext
    leaves out of text by default (collapsed, scrolled, ExecuteTime and such: the editor's view);
  * outputs, execution counts, jupytext's settings saved into the notebook (by JupyterLab's
    jupytext) and markdown attachments: a solution notebook carries none; `check` reports them and
    `sync` removes all but attachments (an image belongs in a file beside the notebook).
"""

import copy
import difflib
import json
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat
from jupytext.config import find_jupytext_configuration_file, load_jupytext_configuration_file
from jupytext.formats import long_form_multiple_formats
from jupytext.paired_paths import paired_paths
from nbformat.corpus.words import generate_corpus_id

from .pipeline import PipelineError

CONFIG_FILE = "jupytext.toml"
# Cell metadata jupytext writes only to lay out the text (blank lines, explicit end markers): it
# says nothing about the cell, so the notebook (and the student release) never carries it.
LAYOUT_METADATA = ("lines_to_next_cell", "lines_to_end_of_cell_marker", "cell_marker", "skipline", "noskipline")
NEW_NOTEBOOK_VERSION = (4, 4)  # no cell ids: the same twin always makes the same notebook


class TwinError(PipelineError):
    """A chapter's notebook and twin cannot be paired (no configuration, neither file exists)."""


# --------------------------------------------------------------------------- where a twin lives
@dataclass(frozen=True)
class Pair:
    """One chapter's solution notebook and its twin, with the jupytext options that convert them."""

    chapter: str
    notebook: Path
    twin: Path
    config: object  # jupytext.config.JupytextConfiguration
    text_format: dict

    def write_options(self):
        fmt = dict(self.text_format)
        self.config.set_default_format_options(fmt)
        return fmt

    def read_options(self):
        fmt = dict(self.text_format)
        self.config.set_default_format_options(fmt, read=True)
        return fmt


def configuration(course):
    """The jupytext configuration at the root of `course` (a course.pipeline.Course), or None: a
    course without one (an older copy, the test suite's self-test course) has no twins."""
    path = find_jupytext_configuration_file(str(course.root), search_parent_dirs=False)
    return load_jupytext_configuration_file(path) if path else None


def pair(course, chapter):
    """The Pair of `chapter` in `course`, as the course's jupytext configuration declares it."""
    notebook = course.source(chapter)
    config = configuration(course)
    if config is None:
        raise TwinError(f"twins of {chapter}: no {CONFIG_FILE} at {course.root} declares the pairing")
    formats = long_form_multiple_formats(config.default_formats(str(notebook)) or "")
    notebook_format = next((f for f in formats if f["extension"] == ".ipynb"), None)
    text_format = next((f for f in formats if f["extension"] == ".py"), None)
    if notebook_format is None or text_format is None:
        raise TwinError(f"{course.root / CONFIG_FILE}: formats = {config.formats!r} pair no .py format with {notebook}")
    paths = dict((fmt["extension"], Path(p)) for p, fmt in paired_paths(str(notebook), notebook_format, formats))
    options = {k: v for k, v in text_format.items() if k not in ("prefix", "suffix")}
    return Pair(chapter, notebook, paths[".py"], config, options)


# --------------------------------------------------------------------------- conversions
def twin_text(paired, nb):
    """The twin's text for notebook `nb`."""
    return jupytext.writes(nb, fmt=paired.write_options())


def notebook_from_twin(paired, text, like=None):
    """The notebook that twin `text` describes. What the text cannot hold (cell ids, nbformat's
    minor version) comes from `like`, the notebook it replaces, when there is one."""
    nb = jupytext.reads(text, fmt=paired.read_options())
    nb.metadata.pop("jupytext", None)  # the pairing lives in jupytext.toml, not in each notebook
    for cell in nb.cells:
        cell.source = cell.source.rstrip("\n")  # the text cannot say whether a cell ended in newlines
        for key in LAYOUT_METADATA:
            cell.metadata.pop(key, None)
    nb.nbformat, nb.nbformat_minor = (like.nbformat, like.nbformat_minor) if like else NEW_NOTEBOOK_VERSION
    if nb.nbformat_minor >= 5:
        _keep_cell_ids(nb, like)
    else:
        for cell in nb.cells:
            cell.pop("id", None)
    return nb


def _keep_cell_ids(nb, like):
    """Cells that stay in place (same sources, or edited one for one) keep `like`'s ids; inserted
    cells get new ones, so one edit does not renumber the whole notebook."""
    old = [(c.cell_type, c.source.rstrip("\n")) for c in like.cells]
    new = [(c.cell_type, c.source) for c in nb.cells]
    kept = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            kept.update((j, like.cells[i].get("id")) for i, j in zip(range(i1, i2), range(j1, j2)))
    used = {i for i in kept.values() if i}
    for index, cell in enumerate(nb.cells):
        cell.id = kept.get(index) or _fresh_id(used)
        used.add(cell.id)


def _fresh_id(used):
    while (candidate := generate_corpus_id()) in used:
        pass
    return candidate


def notebook_json(nb):
    """The notebook's file content, as ``nbformat.write`` writes it."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------- agreement
def differences(paired, nb, text):
    """What notebook `nb` and twin `text` disagree on, as sentences ([] when they agree): both are
    read as the twin would hold them, so only what the round trip keeps is compared, and what the
    notebook carries beyond that (outputs, ...) is named too."""
    problems = leftovers(nb)
    ours, theirs = notebook_from_twin(paired, twin_text(paired, nb), nb), notebook_from_twin(paired, text, nb)
    if ours.metadata != theirs.metadata:
        problems.append(f"notebook metadata: {json.dumps(ours.metadata)} in the notebook, "
                        f"{json.dumps(theirs.metadata)} in the twin")
    if len(ours.cells) != len(theirs.cells):
        problems.append(f"{len(ours.cells)} cells in the notebook, {len(theirs.cells)} in the twin")
    for index, (mine, twins) in enumerate(zip(ours.cells, theirs.cells)):
        keys = [k for k in ("cell_type", "source", "metadata") if mine.get(k) != twins.get(k)]
        if keys:
            problems.append(f"cell {index}{_named(mine)} differs in {', '.join(keys)}")
    return problems


def leftovers(nb):
    """What `nb` carries that its twin cannot hold and a solution notebook should not, as sentences:
    outputs and execution counts of a run, jupytext's settings (JupyterLab's jupytext saves them into
    the notebook, and nbgrader would copy them to students), attachments (an image belongs in a file)."""
    found = ["notebook metadata 'jupytext' (the pairing lives in jupytext.toml)"] if "jupytext" in nb.metadata else []
    for index, cell in enumerate(nb.cells):
        found += [f"cell {index}{_named(cell)} has {what}" for what, present in (
            ("outputs", cell.get("outputs")), ("an execution count", cell.get("execution_count") is not None),
            ("attachments (save the image as a file beside the notebook)", cell.get("attachments"))) if present]
    return found


def cleaned(nb):
    """`nb` without its outputs, execution counts and jupytext settings (a copy)."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def _named(cell):
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return f" ({grade_id})" if grade_id else ""


# --------------------------------------------------------------------------- sync and check
def sync(paired, source=None):
    """Make `paired`'s notebook and twin agree; returns the paths written.

    `source` "notebook" or "twin" says which one wins; by default the only one that exists, else
    nothing when they agree, else the one modified last. The notebook is left without outputs
    (`cleaned`), and a file is rewritten only when its content changes.
    """
    have_notebook, have_twin = paired.notebook.exists(), paired.twin.exists()
    if not (have_notebook or have_twin):
        raise TwinError(f"{paired.chapter}: neither {paired.notebook} nor {paired.twin} exists")
    nb = nbformat.read(str(paired.notebook), as_version=4) if have_notebook else None
    text = paired.twin.read_text() if have_twin else None
    if source is None:
        if not (have_twin and have_notebook):
            source = "notebook" if have_notebook else "twin"
        elif not differences(paired, nb, text):
            return []
        else:
            source = "twin" if paired.twin.stat().st_mtime > paired.notebook.stat().st_mtime else "notebook"
    if source == "notebook":
        if nb is None:
            raise TwinError(f"{paired.chapter}: {paired.notebook} does not exist")
        written = [_write(paired.twin, twin_text(paired, nb))]
    elif text is None:
        raise TwinError(f"{paired.chapter}: {paired.twin} does not exist")
    else:
        nb = notebook_from_twin(paired, text, nb)
        written = []
    written.append(_write(paired.notebook, notebook_json(cleaned(nb))))
    return [path for path in written if path]


def _write(path, content):
    if path.exists() and path.read_text() == content:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def check(paired):
    """The reasons `paired`'s notebook and twin disagree ([] when they agree)."""
    if not paired.twin.exists():
        return [f"no twin {paired.twin}"]
    if not paired.notebook.exists():
        return [f"no notebook {paired.notebook}"]
    return differences(paired, nbformat.read(str(paired.notebook), as_version=4), paired.twin.read_text())


def chapters(course):
    """The chapters that have a solution notebook or a twin."""
    named = set(course.chapters())
    if configuration(course) is None:
        return sorted(named)
    twins = pair(course, "any").twin.parent.parent  # twins/<chapter>/<chapter>.py
    if twins.is_dir():
        named |= {p.name for p in twins.iterdir() if (p / f"{p.name}.py").is_file()}
    return sorted(named)
